package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/testlocks"
	"github.com/lockbench/lockbench/workloads"
)

// semRun runs strategy as a semaphore of permits on one hot key
// (lock-cycle, --keys 1) with 8 clients, 2 ms of work, a 1 s TTL, for d,
// with the faults fs.
func semRun(t *testing.T, strategy string, permits int, d time.Duration, fs ...string) report.Scenario {
	t.Helper()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "goredis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 8,
		Duration: d, TTL: time.Second, AcquireTimeout: 30 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)},
		Options: registry.Values{"keys": 1, "permits": permits}, Seed: 1, Faults: parseFaults(t, fs...),
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":"+strategy+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The safety oracle both ways on a semaphore of 2 permits, 8 clients on
// one key: the check-then-add semaphore (ZCARD and ZADD in two calls)
// lets a third holder in (capacity violations, max_holders above 2);
// `semaphore` never (0, max_holders 2 exactly: 8 clients keep both
// permits busy). Neither counts an overlap, a foreign release or a false
// extend (the holder registry does not judge a semaphore). The ceiling
// is 2 permits / the mean hold (raw.permits 2).
func TestSemaphoreCapacity(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		bad      bool
	}{{testlocks.SemCheckThenAdd, true}, {"semaphore", false}} {
		t.Run(tc.strategy, func(t *testing.T) {
			t.Parallel()
			res := semRun(t, tc.strategy, 2, 2*time.Second)
			v := res.Violations
			t.Logf("%s: capacity_violations %d, max_holders %d, ops %d, ceiling %.0f, efficiency %.2f", tc.strategy, v.CapacityViolations, maxHolders(v), res.Ops, res.CeilingOpsPerSec, res.Efficiency)
			if v.MaxHolders == nil || res.Raw == nil || res.Raw.Permits != 2 {
				t.Fatalf("max_holders %v, raw %+v: want both measured for 2 permits", v.MaxHolders, res.Raw)
			}
			if v.Overlap != 0 || v.ForeignReleases != 0 || v.FalseExtends != 0 {
				t.Fatalf("violations %+v: a semaphore's holders are no overlap, foreign release or false extend", v)
			}
			if tc.bad && (v.CapacityViolations == 0 || *v.MaxHolders <= 2) {
				t.Fatalf("%s: capacity_violations %d, max_holders %d; want > 0 and > 2", tc.strategy, v.CapacityViolations, *v.MaxHolders)
			}
			if !tc.bad && (v.CapacityViolations != 0 || *v.MaxHolders != 2) {
				t.Fatalf("%s: capacity_violations %d, max_holders %d; want 0 and 2", tc.strategy, v.CapacityViolations, *v.MaxHolders)
			}
			if want := 2 / (res.HoldMS.Mean / 1000); res.CeilingOpsPerSec < want*0.999 || res.CeilingOpsPerSec > want*1.001 {
				t.Fatalf("ceiling %.1f ops/s, want 2 permits / mean hold %.3f ms = %.1f", res.CeilingOpsPerSec, res.HoldMS.Mean, want)
			}
		})
	}
}

// A holder crashes holding its permit (crash-after-setnx at 300 ms: it
// never releases) among 8 clients on one key of 2 permits, 1 s TTL, 4 s:
// the liveness oracle reads the sorted set's members, so the dead permit
// is seen (orphan_locks 1); `semaphore` drops it once its lease is over
// (time to free about the TTL: the permit expired and the others took it
// again, max_holders 2 and ops after it), no orphan share; the
// whole-key semaphore, which extends the key at every acquire and drops
// no expired permit, keeps it beside the live holders' past 2 x the TTL:
// exactly 1 orphan share.
func TestSemaphoreCrashedPermit(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		shares   int64
	}{{testlocks.SemWholeKey, 1}, {"semaphore", 0}} {
		t.Run(tc.strategy, func(t *testing.T) {
			t.Parallel()
			res := semRun(t, tc.strategy, 2, 4*time.Second, "crash-after-setnx:at=300ms")
			l := res.Liveness
			if l == nil || !l.Measured {
				t.Fatalf("liveness %+v, want measured", l)
			}
			t.Logf("%s: orphan_locks %d, orphan_shares %d, share ages %+v, time to free %+v, max_holders %d", tc.strategy, l.OrphanLocks, l.OrphanShares, l.OrphanShareAgeMS, l.TimeToFreeMS, maxHolders(res.Violations))
			if l.OrphanLocks != 1 || l.OrphanShares != tc.shares {
				t.Fatalf("orphan_locks %d, orphan_shares %d; want 1, %d: %+v", l.OrphanLocks, l.OrphanShares, tc.shares, l)
			}
			if tc.shares > 0 && l.OrphanShareAgeMS.Max < 2100 {
				t.Fatalf("oldest orphan share %.0f ms, want past 2 x the 1 s TTL", l.OrphanShareAgeMS.Max)
			}
			if tc.shares == 0 && (l.TimeToFreeMS.Max < 900 || l.TimeToFreeMS.Max > 2100) {
				t.Fatalf("time to free max %.0f ms, want the crashed permit's 1 s lease (up to 2 x TTL)", l.TimeToFreeMS.Max)
			}
			if res.Violations.CapacityViolations != 0 || res.Violations.MaxHolders == nil || *res.Violations.MaxHolders > 2 {
				t.Fatalf("violations %+v: want no capacity violation, max_holders at most 2", res.Violations)
			}
		})
	}
}

// maxHolders is v.MaxHolders, -1 when absent.
func maxHolders(v report.Violations) int64 {
	if v.MaxHolders == nil {
		return -1
	}
	return *v.MaxHolders
}
