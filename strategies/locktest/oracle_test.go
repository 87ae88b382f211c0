package locktest

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
)

// The safety oracle, both ways, for a strategy that renews (issue 23,
// item 4). The conformance suite's OracleBothWays shows every built-in
// strategy's broken side as a lease shorter than the work; for
// reentrant-watchdog, which renews its lease every TTL/3, a short TTL is
// not a broken configuration (the suite runs it renewed instead). Its
// broken side here is a stop-the-world pause of one holder, renewal loop
// included (it waits at strategies.Client.Gate), for 4 x the TTL (the
// "pause" fault): the lease expires, another client enters (overlap). The
// pause strikes before the work (point=work), so the woken holder learns
// of the loss before it writes: the data stays exact, and that is asserted
// (lost updates and oversell 0 — the strategy's watched lease at work).
// The correct side: a 50 ms lease through 150 ms of work, renewed.
// In the timing lane: a renewal every TTL/3 (17 ms) late by 33 ms loses
// that lease, and one did (lost_leases 1 on goredis) at load 24 with
// another package's tests beside it.
func TestOraclePausedRenewalTimed(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run("reentrant-watchdog/"+d, func(t *testing.T) {
			sc := oracleScenario("reentrant-watchdog", d, 100*time.Millisecond, 5*time.Millisecond, 1_000_000, 1200*time.Millisecond)
			sc.Retry = policy(t, "fixed:interval=2ms")
			sc.AcquireTimeout = 2 * time.Second
			sp, err := faults.Parse("pause:for=400ms,at=200ms")
			if err != nil {
				t.Fatal(err)
			}
			sc.Faults = []faults.Spec{sp}
			broken := run(t, sc) // runs its 1.2 s, pause included
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
			sc = oracleScenario("reentrant-watchdog", d, 50*time.Millisecond, 150*time.Millisecond, 10, 2*time.Second)
			sc.Retry = policy(t, "fixed:interval=2ms")
			correct := run(t, sc)
			st := correct.StrategyStats
			t.Logf("correct (ttl 50ms, work 150ms, renewed): %+v renewals %v lost_leases %v", correct.Violations, st["renewals"], st["lost_leases"])
			if st["renewals"] == 0 || st["lost_leases"] != 0 {
				t.Fatalf("correct: renewals %v lost leases %v; want > 0 and 0", st["renewals"], st["lost_leases"])
			}
			exact(t, correct, 10)
		})
	}
}
