package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// ownedCycles is the number of acquires OwnedAfterAcquire checks one by
// one.
const ownedCycles = 10

// OwnedAfterAcquire: right after a granted acquire, the lock key holds
// the lease's token, read by the check of lockbench's --verify-acquire
// (workloads.HoldsToken: GET for a string key's value; HEXISTS of the
// token's field for a hash key). First ownedCycles (10) acquires (each
// retried every 10 ms for up to 10 s) and releases in turn by one client
// with a 5 s lease, each checked at once:
// a granted acquire whose key does not hold its token (a client that
// believed a stale or mismatched reply, a Token that is not what the key
// stores) fails it, and the failure message counts them ("N of 10
// granted acquires"). Then a run of the engine (flash-sale, 4 clients on
// one item of stock 20, 1 ms of work, a 5 s lease) with every granted
// acquire checked (--verify-acquire 1): no false acquire
// (violations.false_acquires 0), and the checks were made (lockbench's
// own GETs). It is skipped for a lock that check cannot judge
// (workloads.OwnershipCheckable: Redlock's keys on several masters, a
// strategies.Stored locker's keys), as --verify-acquire is.
func (s Suite) OwnedAfterAcquire(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	l := s.locker(t, strategy, ds, 5*time.Second, nil)
	if !workloads.OwnershipCheckable(strategy, l) {
		t.Skipf("%s keeps its lock where one read of its lock key cannot judge it (several masters, or strategies.Stored): lockbench's --verify-acquire does not run on it either", strategy)
	}
	key := lockKey(t)
	actx := as(ctx, 1, "owner-1")
	p := policy(t, "fixed:interval=10ms")
	bad := 0
	for i := 1; i <= ownedCycles; i++ {
		// Retried: wait-replicas refuses a lock its replica did not
		// acknowledge in time, which a loaded machine may delay.
		a, n, err := strategies.Acquire(actx, l, key, p.New(nil), 10*time.Second)
		if err != nil {
			t.Fatalf("acquire %d of a free lock: %v (%d attempts)", i, err, n)
		}
		held, err := workloads.HoldsToken(ctx, ds[0], a.Key(), a.Token(), nil)
		if err != nil {
			t.Fatalf("acquire %d: reading the lock key: %v", i, err)
		}
		if !held {
			bad++
			t.Errorf("acquire %d: granted, but the lock key %s does not hold the lease's token %q (it holds %q; none: the key is gone)", i, a.Key(), a.Token(), stored(t, ds[0], a.Key()))
		}
		if err := a.Release(ctx); err != nil && held {
			t.Fatalf("release %d: %v", i, err)
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d granted acquires did not hold their token in the lock key", bad, ownedCycles)
	}

	const stock = 20
	res := s.run(t, engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: driver, Workload: "flash-sale",
		Clients: 4, Duration: 60 * time.Second, TTL: 5 * time.Second, AcquireTimeout: 50 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(stock), "skus": 1}, Seed: 13,
		VerifyAcquire: 1,
	}}, "backoff:start=1ms,cap=20ms,tries=100000")
	if n := res.Violations.FalseAcquires; n != 0 {
		t.Fatalf("--verify-acquire 1: %d false acquires of %d granted (the lock key did not hold the lease's token right after the grant)", n, res.AcquireMS.Count)
	}
	if n := ownReads(res, "get"); n == 0 {
		t.Fatalf("--verify-acquire 1 made no check (no GET of lockbench's own in %d granted acquires)", res.AcquireMS.Count)
	}
}

// ownReads is the commands named cmd (lower case) lockbench sent of its
// own in res (raw.cost[].own: the ownership checks' reads).
func ownReads(res report.Scenario, cmd string) int64 {
	var n int64
	if res.Raw != nil {
		for _, c := range res.Raw.Cost {
			n += c.Own[cmd]
		}
	}
	return n
}
