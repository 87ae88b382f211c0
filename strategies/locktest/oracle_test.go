package locktest

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

// The safety oracle, both ways (issue 23, item 4): for each strategy a
// broken configuration shows its violation and the correct one shows none.
//
// Broken, for the fixed-lease Redis strategies: a 5 ms lease with 20 ms of
// critical-section work, so a lease expires while its holder works and the
// next client enters. Correct: a 2 s lease with 1 ms of work. The
// workload's own end checks are asserted too: overlapping holders read the
// same stock and each writes stock-1 and counts a sale, so decrements are
// lost (lost_updates) and more is sold than the stock (oversell).
//
// multilevel adds the optimistic "cas" guard to the write: with the short
// lease its holders overlap (the oracle sees it) but the guard refuses
// every stale write, so the data stays exact; the refusals (Rejected) are
// the guard at work.
//
// reentrant-watchdog renews its lease every TTL/3, so a short TTL is not
// a broken configuration for it (the correct side shows a 50 ms lease
// through 150 ms of work, renewed). Its broken side is a stop-the-world
// pause of one holder, renewal loop included, for 4 x the TTL (the
// "pause" fault): the lease expires, another client enters (overlap). The
// pause strikes before the work (point=work), so the woken holder learns of
// the loss before it writes: the data stays exact, and that is asserted
// (lost updates and oversell 0 — the strategy's watched lease at work).
func TestOracleBothWays(t *testing.T) {
	for _, c := range []struct {
		strategy string
		options  registry.Values
		// guarded: the strategy's write guard keeps the data exact even
		// with overlapping holders (lost updates asserted 0, not > 0).
		guarded bool
	}{
		{"reentrant", nil, false},
		{"segmented", registry.Values{"segments": 2}, false},
		{"multilevel", registry.Values{"instances": 4}, true},
		{"rwlock", registry.Values{"read-ratio": 0.0}, false}, // write side only
		{"fair", nil, false},
	} {
		for _, d := range drivers.Names() {
			t.Run(c.strategy+"/"+d, func(t *testing.T) {
				broken := run(t, oracleScenario(t, c.strategy, d, c.options, 5*time.Millisecond, 20*time.Millisecond))
				v := broken.Violations
				t.Logf("broken (ttl 5ms, work 20ms): overlap %d lost_updates %d oversell %d rejected %d sold %d",
					v.Overlap, v.LostUpdates, v.Oversell, broken.Counters.Rejected, broken.Figures["sold"])
				if v.Overlap == 0 {
					t.Fatalf("broken: overlap 0, want > 0 (a 5 ms lease under 20 ms of work); violations %+v", v)
				}
				if c.guarded {
					if v.LostUpdates != 0 || v.Oversell != 0 || broken.Counters.Rejected == 0 {
						t.Fatalf("broken + cas guard: lost updates %d, oversell %d, rejected %d; want 0, 0 and > 0 (the guard refused the stale writes)", v.LostUpdates, v.Oversell, broken.Counters.Rejected)
					}
					if broken.Figures["sold"] != 60 || broken.Figures["final_stock"] != 0 {
						t.Fatalf("broken + cas guard: sold %d final %d, want 60 and 0", broken.Figures["sold"], broken.Figures["final_stock"])
					}
				} else if v.LostUpdates == 0 || v.Oversell == 0 {
					t.Fatalf("broken: lost updates %d, oversell %d; want both > 0 (overlapping holders wrote the same stock-1 and each counted a sale); violations %+v", v.LostUpdates, v.Oversell, v)
				}
				correct := run(t, oracleScenario(t, c.strategy, d, c.options, 2*time.Second, time.Millisecond))
				t.Logf("correct (ttl 2s, work 1ms): %+v sold %d", correct.Violations, correct.Figures["sold"])
				exact(t, correct, 60)
			})
		}
	}
	for _, d := range drivers.Names() {
		t.Run("reentrant-watchdog/"+d, func(t *testing.T) {
			sc := oracleScenario(t, "reentrant-watchdog", d, nil, 100*time.Millisecond, 5*time.Millisecond)
			sp, err := faults.Parse("pause:for=400ms,at=200ms")
			if err != nil {
				t.Fatal(err)
			}
			sc.Faults = []faults.Spec{sp}
			sc.Options["stock"] = int64(1_000_000) // runs its 1.2 s, pause included
			sc.Duration = 1200 * time.Millisecond
			broken := run(t, sc)
			v := broken.Violations
			t.Logf("broken (ttl 100ms, 400ms pause): overlap %d lost_updates %d lost_leases(stat) %v fault %s",
				v.Overlap, v.LostUpdates, broken.StrategyStats["lost_leases"], broken.Faults[0].Note)
			if v.Overlap == 0 || broken.StrategyStats["lost_leases"] != 1 {
				t.Fatalf("broken: overlap %d, lost leases %v; want > 0 and 1 (the paused holder's lease expired)", v.Overlap, broken.StrategyStats["lost_leases"])
			}
			if v.LostUpdates != 0 || v.Oversell != 0 || v.WorkedAfterLoss != 0 {
				t.Fatalf("broken: lost updates %d oversell %d worked after loss %d; want 0 (the holder saw the loss before writing)", v.LostUpdates, v.Oversell, v.WorkedAfterLoss)
			}
			// Renewal makes a short lease safe: a 50 ms TTL through 150 ms
			// of work is renewed, never lost.
			correct := run(t, oracleScenario(t, "reentrant-watchdog", d, nil, 50*time.Millisecond, 150*time.Millisecond))
			st := correct.StrategyStats
			t.Logf("correct (ttl 50ms, work 150ms, renewed): %+v renewals %v lost_leases %v", correct.Violations, st["renewals"], st["lost_leases"])
			if st["renewals"] == 0 || st["lost_leases"] != 0 {
				t.Fatalf("correct: renewals %v lost leases %v; want > 0 and 0", st["renewals"], st["lost_leases"])
			}
			exact(t, correct, 10)
		})
	}
}

// oracleScenario: flash-sale on one item, 4 clients, stock 60 (10 when
// the work is long), ending when sold out or after 2 s.
func oracleScenario(t *testing.T, strategy, driver string, options registry.Values, ttl, work time.Duration) engine.Scenario {
	t.Helper()
	stock := int64(60)
	if work > 100*time.Millisecond {
		stock = 10
	}
	opts := registry.Values{"stock": stock, "skus": 1}
	for k, v := range options {
		opts[k] = v
	}
	return engine.Scenario{
		Strategy: strategy, Driver: driver, Workload: "flash-sale", Retry: policy(t, "fixed:interval=2ms"),
		Clients: 4, Duration: 2 * time.Second, TTL: ttl, AcquireTimeout: 2 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(work)}, Options: opts, Seed: 23,
	}
}

// exact: no violation of any kind, the stock sold out exactly.
func exact(t *testing.T, res report.Scenario, stock int64) {
	t.Helper()
	if res.Violations != (report.Violations{}) {
		t.Fatalf("correct: violations %+v, want none", res.Violations)
	}
	if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
		t.Fatalf("correct: sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
	}
}
