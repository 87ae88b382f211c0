package locktest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// SemaphoreCapacity, for a locker that is a semaphore of N > 1 permits
// (strategies.PermitsOf; skipped for an exclusive lock): N clients hold
// one key at once, each with a token of its own stored in the lock key
// and passed to Sent, and the N+1th is refused (ErrNotAcquired) until one
// of them releases; then a run of the engine (lock-cycle on one key,
// 2N clients, 2 ms of work, a 5 s lease) counts no capacity violation,
// and at most N holders at once (violations.max_holders), and no error.
// A semaphore of N > 1 runs only the workloads that are
// workloads.SharedSafe, so the suite's flash-sale checks need N = 1:
// run them with the permits set to 1 (Suite.Params), and this one with N.
func (s Suite) SemaphoreCapacity(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	rec := newRecorder()
	l := s.locker(t, strategy, ds, 5*time.Second, rec)
	n := strategies.PermitsOf(l)
	if n <= 1 {
		t.Skipf("%s is no semaphore of more than 1 permit (strategies.PermitsOf: %d)", strategy, n)
	}
	key := lockKey(t)
	var held []strategies.Lease
	for i := range n {
		a, err := l.TryAcquire(as(ctx, i+1, "owner-"+strconv.Itoa(i+1)), key)
		if err != nil {
			t.Fatalf("permit %d of %d on a free semaphore: %v", i+1, n, err)
		}
		held = append(held, a)
	}
	if len(storedTokens(t, ds[0], key, strategies.NonTokenFieldsOf(l))) < n {
		t.Fatalf("%d holders, the lock key stores %q", n, stored(t, ds[0], key))
	}
	for _, a := range held {
		checkStored(t, rec, ds, key, a, strategies.NonTokenFieldsOf(l))
	}
	if a, err := l.TryAcquire(as(ctx, n+1, "owner-extra"), key); err == nil {
		_ = a.Release(ctx)
		t.Fatalf("holder %d of %d permits was granted", n+1, n)
	}
	if err := held[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := l.TryAcquire(as(ctx, n+1, "owner-extra"), key)
	if err != nil {
		t.Fatalf("after a release, a permit of %d: %v", n, err)
	}
	for _, h := range append(held[1:], a) {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	res := s.run(t, engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: driver, Workload: "lock-cycle",
		Clients: 2 * n, Duration: 1500 * time.Millisecond, TTL: 5 * time.Second, AcquireTimeout: 50 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)}, Options: registry.Values{"keys": 1}, Seed: 5,
	}}, "fixed:interval=1ms")
	v := res.Violations
	if v.CapacityViolations != 0 || v.MaxHolders == nil || *v.MaxHolders > int64(n) || v.Overlap != 0 {
		t.Fatalf("violations %+v: want no capacity violation and at most %d holders at once", v, n)
	}
	if res.Counters.Errors != 0 || res.Ops == 0 {
		t.Fatalf("ops %d, counters %+v: want operations and no error", res.Ops, res.Counters)
	}
}
