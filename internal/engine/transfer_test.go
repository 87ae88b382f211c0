package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

// transferRun runs the transfer workload with strategy for 1.5 s on 8
// clients over accounts accounts (uniform choice), k = 2, with ttl, the
// work and the acquire timeout given, in key order order.
func transferRun(t *testing.T, strategy, order string, accounts int, ttl, work, timeout time.Duration) report.Scenario {
	t.Helper()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "goredis", Workload: "transfer",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 8,
		Duration: 1500 * time.Millisecond, TTL: ttl, AcquireTimeout: timeout,
		Params:  workloads.Params{Work: workloads.Fixed(work)},
		Options: registry.Values{"accounts": accounts, "zipf": 0.0, "order": order}, Seed: 3,
	}}
	started := time.Now()
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	// No hang: the run ends at its duration (a deadlock is broken by the
	// acquire timeout); 20 s is far beyond any stop's grace.
	if el := time.Since(started); res.StopReason != "duration" || el > 20*time.Second {
		t.Fatalf("stop reason %q after %v, want duration, promptly", res.StopReason, el)
	}
	f, v := res.Figures, res.Violations
	t.Logf("%s order=%s: transfers %d, drift %d (initial %d, final %d), multi_timeouts %d, lost_updates %d, overlap %d, timeouts %d",
		strategy, order, f["transfers"], f["balance_drift"], f["balance_initial"], f["balance_final"], f["multi_timeouts"],
		v.LostUpdates, v.Overlap, res.Counters.Timeouts)
	if _, ok := f["balance_drift"]; !ok || f["transfers"] == 0 || f["balance_initial"] != int64(accounts)*1000 {
		t.Fatalf("figures %v: want balance_drift measured, transfers made, balance_initial %d", f, accounts*1000)
	}
	return res
}

// The transfer workload's oracle, both ways: a broken lock (naive, and
// multi itself, with a lease shorter than the work) lets two transfers
// read the same balance and write over each other, which creates or
// destroys money (balance_drift > 0) and loses writes (lost_updates > 0,
// overlaps); a correct one (atomic one key at a time in sorted order,
// multi's one script) keeps the sum exactly and sees no overlap.
func TestTransferBothWays(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		ttl      time.Duration
		broken   bool
	}{{"naive", 5 * time.Millisecond, true}, {"multi", 5 * time.Millisecond, true},
		{"atomic", 2 * time.Second, false}, {"multi", 2 * time.Second, false}} {
		t.Run(tc.strategy+"/"+tc.ttl.String(), func(t *testing.T) {
			t.Parallel() // own keys (the test's name), counts judged by kind
			res := transferRun(t, tc.strategy, "sorted", 6, tc.ttl, 20*time.Millisecond, 5*time.Second)
			drift, v := res.Figures["balance_drift"], res.Violations
			if tc.broken && (drift == 0 || v.LostUpdates == 0 || v.Overlap == 0) {
				t.Fatalf("broken %s: drift %d, lost_updates %d, overlap %d; want each > 0", tc.strategy, drift, v.LostUpdates, v.Overlap)
			}
			if !tc.broken && (drift != 0 || v.LostUpdates != 0 || v.Overlap != 0 || res.Figures["multi_timeouts"] != 0) {
				t.Fatalf("%s: drift %d, lost_updates %d, overlap %d, multi_timeouts %d; want 0", tc.strategy, drift, v.LostUpdates, v.Overlap, res.Figures["multi_timeouts"])
			}
		})
	}
}

// Keys in the order the transfer names them, holding the first while
// waiting for the second: on two accounts, clients moving money both ways
// deadlock, and the 50 ms acquire timeout breaks each deadlock
// (multi_timeouts > 0, acquire timeouts counted) instead of a hang; in
// sorted order no acquire ever times out holding a key (0). Money is kept
// either way.
func TestTransferDeadlock(t *testing.T) {
	for _, order := range []string{"given", "sorted"} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			res := transferRun(t, "atomic", order, 2, 2*time.Second, 5*time.Millisecond, 50*time.Millisecond)
			mt := res.Figures["multi_timeouts"]
			if res.Figures["balance_drift"] != 0 || res.Violations.Overlap != 0 || res.Violations.LostUpdates != 0 {
				t.Fatalf("drift %d, overlap %d, lost %d; want 0", res.Figures["balance_drift"], res.Violations.Overlap, res.Violations.LostUpdates)
			}
			if order == "given" && (mt == 0 || res.Counters.Timeouts < mt) {
				t.Fatalf("given: multi_timeouts %d, timeouts %d; want > 0, and each one an acquire timeout or a give-up", mt, res.Counters.Timeouts)
			}
			if order == "sorted" && mt != 0 {
				t.Fatalf("sorted: multi_timeouts %d, want 0", mt)
			}
		})
	}
}
