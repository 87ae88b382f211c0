#!/usr/bin/env bash
# The gate's own test, on a machine as loaded as a shared CI runner: two
# busy loops run beside `make regress` while it checks the unchanged tree
# (must pass: exit 0) and then an honest 10 % slowdown of the candidate
# (must fail: exit 1). Prints both verdicts; exit 0 when both are right.
set -uo pipefail
cd "$(dirname "$0")/.."
make -s build >/dev/null || exit 2
yes >/dev/null & b1=$!
yes >/dev/null & b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
echo "== unchanged tree, two busy loops beside (want exit 0)"
REGRESS_BASE_BIN="${REGRESS_BASE_BIN:-}" scripts/regress.sh; same=$?
echo "== candidate slowed by 10% (--test-slowdown atomic=10%), two busy loops beside (want exit 1)"
REGRESS_NEW="bin/lockbench:--test-slowdown atomic=10%" scripts/regress.sh; slow=$?
echo "regress-selftest: unchanged tree exit $same (want 0), 10% slowdown exit $slow (want 1)"
[ "$same" = 0 ] && [ "$slow" = 1 ]
