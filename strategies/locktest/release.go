package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// ReleaseBound is how long ReleaseAfterExpiry gives the release of an
// expired lease to return: a few round trips take milliseconds, so 2 s
// is generous for a loaded machine and short of any retry loop's wait.
const ReleaseBound = 2 * time.Second

// ReleaseAfterExpiry: the release of a lease that has expired returns at
// once, with nil or ErrNotOwner (an error wrapping it): it does not retry
// until the lock comes back to it, nor hang. A takes the lock with a
// 200 ms lease and neither releases nor abandons it; once its keys are
// gone from every node (strategies.StoredKeys: expired), or after 2 s for
// a lease that renews itself (its keys are then deleted behind its back:
// a lost lease), A's Release is called on a context that ends only with
// the test, as lockbench's worker calls it on a context without the
// run's cancellation. It must return within ReleaseBound (2 s); a release
// that has not returned by then fails the check (and is left running
// until the test ends). Then B takes the free lock and releases it with
// nil. A's and B's acquires retry every 10 ms for up to 10 s (a quorum
// lock refuses a 200 ms lease whose validity a slow round spent).
func (s Suite) ReleaseAfterExpiry(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	const ttl = 200 * time.Millisecond
	l := s.locker(t, strategy, ds, ttl, nil)
	key := lockKey(t)
	ks := strategies.StoredKeys(l, key)
	// Retried: a quorum lock refuses a lease whose validity a loaded
	// machine's round spent (a 200 ms lease leaves Redlock 20 ms a node).
	a, n, err := strategies.Acquire(as(ctx, 1, "A"), l, key, policy(t, "fixed:interval=10ms").New(nil), 10*time.Second)
	if err != nil {
		t.Fatalf("A could not take the free lock: %v (%d attempts)", err, n)
	}
	deadline := time.Now().Add(10 * ttl)
	for anyExisting(t, ds, ks) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if anyExisting(t, ds, ks) { // renewed: take it away
		deleteKeys(t, ds, ks)
	}
	rctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- a.Release(rctx) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, strategies.ErrNotOwner) {
			t.Fatalf("the release of an expired lease = %v after %v, want nil or ErrNotOwner", err, time.Since(start))
		}
	case <-time.After(ReleaseBound):
		t.Fatalf("the release of an expired lease did not return within %v (a retry loop or a hang: it must return nil or ErrNotOwner at once)", ReleaseBound)
	}
	b, n, err := strategies.Acquire(as(ctx, 2, "B"), l, key, policy(t, "fixed:interval=10ms").New(nil), 10*time.Second)
	if err != nil {
		t.Fatalf("B after A's expired lease was released: %v (%d attempts), want the lock", err, n)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatalf("B's release: %v", err)
	}
}

// anyExisting reports whether any key of ks exists on any node of ds.
func anyExisting(t *testing.T, ds []drivers.Driver, ks []string) bool {
	t.Helper()
	for _, d := range ds {
		if existing(t, d, ks) > 0 {
			return true
		}
	}
	return false
}
