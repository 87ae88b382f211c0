package strategies_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

// openDriver connects the named driver adapter to the test server.
func openDriver(t *testing.T, name string) drivers.Driver {
	t.Helper()
	d, err := drivers.Open(name, drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// trackingHub starts a csc hub on the rueidis driver for prefix, ended
// (its client closed) at the test's end.
func trackingHub(t *testing.T, d drivers.Driver, prefix string) *strategies.Hub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := strategies.NewTrackingHub(ctx, d, prefix)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-h.Done() })
	return h
}

// woken waits up to 30 s for a wake on ch; a timeout fails the test.
func woken(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no wake-up in 30 s", what)
	}
}

// settle returns once every invalidation the server sent before it has
// been dispatched by h: it writes a key of its own under the prefix and
// waits for that key's push, which comes after the earlier ones on the
// tracking connection.
func settle(t *testing.T, h *strategies.Hub, d drivers.Driver, prefix string) {
	t.Helper()
	probe := prefix + "probe"
	ch, stop := h.Watch(probe)
	defer stop()
	do(t, d, "SET", probe, "x")
	woken(t, ch, "the probe key's write")
}

// pending reports whether ch holds a wake-up.
func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// csc waiters under Acquire: each release wakes the single waiter once
// and its second attempt takes the lock; the lease's expiry (no release)
// wakes it too. The policy's max is 10 min and each Acquire's context
// ends after 30 s, so only an invalidation can end a wait: 2 attempts
// mean exactly one wake-up. The other way, a waiter on a hub that tracks
// another prefix is not woken by the release.
func TestCSCWakesWaiter(t *testing.T) {
	d := openDriver(t, "rueidis")
	prefix := "st:" + t.Name() + ":"
	h := trackingHub(t, d, prefix)
	pol, err := retry.Parse("csc:max=10m")
	if err != nil {
		t.Fatal(err)
	}
	key := prefix + "{k}:lock"
	l, err := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	holder, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 3; round++ {
		settle(t, h, d, prefix) // the holder's SET has been dispatched
		type got struct {
			lease    strategies.Lease
			attempts int
			err      error
		}
		res := make(chan got, 1)
		tried := &signalling{Locker: l, tried: make(chan struct{}, 8)}
		go func() {
			actx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			le, n, err := strategies.Acquire(actx, tried, key, pol.NewNotified(h, 30*time.Second), 0)
			res <- got{le, n, err}
		}()
		woken(t, tried.tried, "the waiter's first attempt")
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		r := <-res
		if r.err != nil || r.attempts != 2 {
			t.Fatalf("round %d: Acquire = %v after %d attempts, want the lock at attempt 2 (one wake-up by the release's invalidation)", round, r.err, r.attempts)
		}
		holder = r.lease // the waiter holds; it is the next round's holder
	}

	// The other way: a hub tracking another prefix hears no push of the
	// key, so the release does not wake the waiter; its wait ends with
	// its 3 s context after one attempt.
	elsewhere := trackingHub(t, d, "st:elsewhere:")
	tried := &signalling{Locker: l, tried: make(chan struct{}, 8)}
	res := make(chan int, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, n, err := strategies.Acquire(actx, tried, key, pol.NewNotified(elsewhere, 30*time.Second), 0)
		if !errors.Is(err, context.DeadlineExceeded) {
			n = -1
		}
		res <- n
	}()
	woken(t, tried.tried, "the untracked waiter's first attempt")
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := <-res; n != 1 {
		t.Fatalf("a waiter on another prefix's hub: %d attempts (-1: not ended by its context), want 1", n)
	}

	// Expiry: a 3 s lease, never released.
	short, err := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := short.TryAcquire(ctx, key); err != nil {
		t.Fatal(err)
	}
	settle(t, h, d, prefix)
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	le, n, err := strategies.Acquire(actx, short, key, pol.NewNotified(h, 3*time.Second), 0)
	if err != nil || n != 2 {
		t.Fatalf("Acquire of an expiring lock = %v after %d attempts, want the lock at attempt 2 (woken by the expiry's invalidation)", err, n)
	}
	_ = le.Release(ctx)
}

// signalling is a Locker that reports each TryAcquire after it returns.
type signalling struct {
	strategies.Locker
	tried chan struct{}
}

func (s *signalling) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	le, err := s.Locker.TryAcquire(ctx, key)
	s.tried <- struct{}{}
	return le, err
}

// The hub's bookkeeping under invalidations: a push of the key wakes the
// longest waiting of two waiters, then the other; a push of another key under the prefix wakes neither; a flush-all push
// (FLUSHALL) wakes every waiter of every key.
func TestCSCHubWakes(t *testing.T) {
	d := openDriver(t, "rueidis")
	prefix := "st:" + t.Name() + ":"
	h := trackingHub(t, d, prefix)
	key, other := prefix+"a", prefix+"b"
	w1, stop1 := h.Watch(key)
	defer stop1()
	w2, stop2 := h.Watch(key)
	defer stop2()
	wo, stopo := h.Watch(other)
	defer stopo()

	do(t, d, "SET", key, "1")
	settle(t, h, d, prefix)
	if a, b, c := pending(w1), pending(w2), pending(wo); !a || b || c {
		t.Fatalf("after a write of the key: woken %v %v (other key %v), want the first waiter only", a, b, c)
	}
	do(t, d, "DEL", key)
	settle(t, h, d, prefix)
	if a, b := pending(w1), pending(w2); a || !b {
		t.Fatalf("after the DEL: woken %v %v, want the second waiter (the first moved to the back)", a, b)
	}
	do(t, d, "SET", prefix+"unwatched", "1")
	settle(t, h, d, prefix)
	if a, b, c := pending(w1), pending(w2), pending(wo); a || b || c {
		t.Fatalf("after a write of an unwatched key: woken %v %v %v, want none", a, b, c)
	}
	do(t, d, "FLUSHALL")
	woken(t, w1, "FLUSHALL, first waiter")
	woken(t, w2, "FLUSHALL, second waiter")
	woken(t, wo, "FLUSHALL, the other key's waiter")
}

// go-redis has no client-side-caching invalidations: the hub is refused
// with an error naming the driver and the one to use.
func TestCSCRefusesGoredis(t *testing.T) {
	d := openDriver(t, "goredis")
	_, err := strategies.NewTrackingHub(context.Background(), d, "st:x:")
	if err == nil || !strings.Contains(err.Error(), "driver goredis has no client-side-caching invalidations") ||
		!strings.Contains(err.Error(), "use the rueidis driver") {
		t.Fatalf("NewTrackingHub(goredis) = %v", err)
	}
	// Through a Switch (a run with faults) as well.
	_, err = strategies.NewTrackingHub(context.Background(), drivers.NewSwitch(d), "st:x:")
	if err == nil || !strings.Contains(err.Error(), "goredis has no client-side-caching invalidations") {
		t.Fatalf("NewTrackingHub(Switch(goredis)) = %v", err)
	}
}
