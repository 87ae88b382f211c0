#!/usr/bin/env bash
# make regress: the working tree's lockbench (bin/lockbench, built by make)
# against the build of REGRESS_BASE (a commit, default HEAD) with
# `lockbench ab`: rounds of both in random order until a verdict or the
# budget. Exit 0: same, faster or undecided; 1: slower, costlier or new
# violations; 4: the baseline itself is broken. docs/ci.md.
#
#   REGRESS_BASE      commit to build the baseline from (default HEAD)
#   REGRESS_BASE_BIN  a lockbench binary to use as the baseline instead
#   REGRESS_NEW       the candidate side (default bin/lockbench); an honest
#                     10 % slowdown: 'bin/lockbench:--test-slowdown atomic=10%'
#   REGRESS_BUDGET    ab's --budget (default 2m)
#   REGRESS_AB        more ab flags (--threshold 5%, --keep DIR, --seed N)
set -euo pipefail
cd "$(dirname "$0")/.."
base_ref="${REGRESS_BASE:-HEAD}"
new="${REGRESS_NEW:-bin/lockbench}"
budget="${REGRESS_BUDGET:-2m}"
# The scenarios: each strategy's own cost, no contention (every client on
# a key of its own), 5 s leases so that a loaded runner cannot turn lease
# expiry into violations (the gate measures speed and cost; docs/ci.md).
# Runs of 500 ms: many short rounds pair the two sides closer in time than
# few long ones, so a loaded machine's swings cancel better.
scenario=(--strategy atomic,fencing --driver rueidis --workload lock-cycle --own-keys
  --clients 8 --work 1ms --ttl 5s --retry none)

base="${REGRESS_BASE_BIN:-}"
if [ -z "$base" ]; then
  tmp="$(mktemp -d)"
  trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
  commit="$(git rev-parse --short "$base_ref")"
  echo "regress: building the baseline from $base_ref ($commit)"
  git worktree add --detach -q "$tmp/src" "$commit"
  (cd "$tmp/src" && go build -ldflags "-X github.com/lockbench/lockbench/internal/cli.gitCommit=$commit" -o "$tmp/lockbench-base" ./cmd/lockbench)
  # The source is needed for the build only: its worktree goes now, the
  # binary with the temporary directory when the script exits.
  git worktree remove --force "$tmp/src"
  base="$tmp/lockbench-base"
fi
echo "regress: $base against $new, budget $budget"
# Not exec: the EXIT trap must still run to remove the baseline's
# directory; ab's exit code is the script's.
# shellcheck disable=SC2086
bin/lockbench ab "$base" "$new" --budget "$budget" --run-duration 500ms ${REGRESS_AB:-} -- "${scenario[@]}"
