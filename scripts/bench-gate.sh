#!/usr/bin/env bash
# make bench-gate: how often the regression gate (make regress: lockbench ab
# of the build against itself or against a slowed candidate) cries wolf and
# how often it catches an honest 10 % slowdown, on a machine as loaded as a
# shared CI runner (two busy loops beside every gate). Goals: at most 1
# false alarm in BENCH_GATE_N (20) A/A gates; at least 18 of 20 slowdowns
# detected within the 2-minute budget each. Printed, not asserted.
set -uo pipefail
cd "$(dirname "$0")/.."
n="${BENCH_GATE_N:-20}"
log="${BENCH_GATE_LOG:-results/bench-gate.log}"
mkdir -p "$(dirname "$log")"
: >"$log"
yes >/dev/null & b1=$!
yes >/dev/null & b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
gate() { # kind i: runs one gate, prints "exit verdict seconds"
  local start end code verdict
  start=$(date +%s)
  if [ "$1" = aa ]; then
    REGRESS_BASE_BIN=bin/lockbench REGRESS_AB="--seed $((1000 + $2))" scripts/regress.sh >"$log.one" 2>&1; code=$?
  else
    REGRESS_BASE_BIN=bin/lockbench REGRESS_NEW="bin/lockbench:--test-slowdown atomic=10%" REGRESS_AB="--seed $((2000 + $2))" \
      scripts/regress.sh >"$log.one" 2>&1; code=$?
  fi
  end=$(date +%s)
  verdict=$(grep -o '^verdict: [a-zA-Z]*' "$log.one" | head -1 | cut -d' ' -f2)
  { echo "== $1 $2: exit $code verdict ${verdict:-none} $((end - start))s"; cat "$log.one"; } >>"$log"
  echo "$code ${verdict:-none} $((end - start))"
}
fa=0; undecided_aa=0; det=0; secs_ab=0
for i in $(seq 1 "$n"); do
  read -r code verdict secs < <(gate aa "$i")
  [ "$code" = 1 ] && fa=$((fa + 1))
  [ "$verdict" = undecided ] && undecided_aa=$((undecided_aa + 1))
  echo "A/A $i/$n: exit $code, $verdict, ${secs}s"
done
for i in $(seq 1 "$n"); do
  read -r code verdict secs < <(gate ab "$i")
  [ "$code" = 1 ] && det=$((det + 1)) && secs_ab=$((secs_ab + secs))
  echo "A/B (10% slower) $i/$n: exit $code, $verdict, ${secs}s"
done
rm -f "$log.one"
echo "bench-gate: false alarms $fa of $n A/A gates (goal <= 1; $undecided_aa undecided, the rest same)"
echo "bench-gate: 10% slowdown detected in $det of $n A/B gates (goal >= 18)$( [ "$det" -gt 0 ] && echo ", mean time to the verdict $((secs_ab / det))s")"
echo "bench-gate: every gate's output: $log"
