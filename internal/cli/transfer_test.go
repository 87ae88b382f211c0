package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// transferArgs run the transfer workload for 1.5 s on 8 clients over 6
// accounts (uniform), 20 ms of work per transfer.
var transferArgs = []string{"run", "-q", "--driver", "goredis", "--workload", "transfer", "--accounts", "6", "--zipf", "0",
	"--duration", "1500ms", "--clients", "8", "--work", "20ms", "--acquire-timeout", "5s", "--retry", "fixed:interval=1ms",
	"--fail-on", "balance_drift==0"}

// --fail-on balance_drift==0 end to end, both ways: naive with a lease
// shorter than the work loses money (the sum of the balances drifts),
// and the run exits 3 with its results written; atomic with a 2 s lease
// keeps the sum exactly and exits 0. balance_drift is in the JSON's
// figures and in --columns; transfer-keys above accounts is refused
// (exit 2).
func TestTransferFailOnDrift(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		strategy, ttl string
		code          int
	}{{"naive", "5ms", exitThresholds}, {"atomic", "2s", exitOK}} {
		out := filepath.Join(dir, tc.strategy+".json")
		r := lockbench(t, append(append([]string{}, transferArgs...), "--strategy", tc.strategy, "--ttl", tc.ttl, "--out", out)...)
		run, err := report.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: %v (exit %d: %s)", tc.strategy, err, r.code, r.stderr)
		}
		s := run.Scenarios[0]
		drift, ok := s.BalanceDrift()
		t.Logf("%s: exit %d, balance_drift %d (%v), transfers %d, lost_updates %d, overlap %d", tc.strategy, r.code, drift, ok,
			s.Figures["transfers"], s.Violations.LostUpdates, s.Violations.Overlap)
		if r.code != tc.code || !ok || (drift == 0) != (tc.code == exitOK) {
			t.Fatalf("%s: exit %d, balance_drift %d (measured %v); want exit %d and a drift only for the broken lock:\n%s", tc.strategy, r.code, drift, ok, tc.code, r.stderr)
		}
		if len(run.Thresholds) != 1 || run.Thresholds[0].Metric != "balance_drift" || run.Thresholds[0].Pass != (tc.code == exitOK) {
			t.Fatalf("%s: thresholds %+v", tc.strategy, run.Thresholds)
		}
	}
	show := lockbench(t, "show", "--columns", "balance_drift", filepath.Join(dir, "atomic.json"))
	if show.code != exitOK || !strings.Contains(show.stdout, "drift") {
		t.Fatalf("show --columns balance_drift: exit %d:\n%s%s", show.code, show.stdout, show.stderr)
	}
	bad := lockbench(t, "run", "--workload", "transfer", "--accounts", "2", "--transfer-keys", "3")
	if bad.code != exitUsage || !strings.Contains(bad.stderr, "--transfer-keys 3 exceeds --accounts 2") {
		t.Fatalf("transfer-keys 3 of 2 accounts: exit %d, want %d:\n%s", bad.code, exitUsage, bad.stderr)
	}
}
