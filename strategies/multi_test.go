package strategies_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

// multi's script is all or nothing: one key of three held by another
// token sets none of the others; all free sets all three with the token
// and the TTL; a lease whose key was taken away releases the others and
// reports ErrNotOwner, leaving the new holder's key alone. A key given
// twice, or none, is refused before anything is sent.
func TestMultiAllOrNothing(t *testing.T) {
	each(t, func(t *testing.T, d drivers.Driver, p string) {
		ctx := context.Background()
		l, err := strategies.New("multi", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ml := l.(strategies.MultiLocker)
		keys := []string{p + "a", p + "b", p + "c"}
		do(t, d, "SET", keys[1], "other", "PX", "5000")
		if _, err := ml.TryAcquireMulti(ctx, keys); !errors.Is(err, strategies.ErrNotAcquired) {
			t.Fatalf("one key held: %v, want ErrNotAcquired", err)
		}
		if n := do(t, d, "EXISTS", keys[0], keys[2]).Int; n != 0 {
			t.Fatalf("%d of the free keys set by a refused attempt, want 0", n)
		}
		do(t, d, "DEL", keys[1])
		lease, err := ml.TryAcquireMulti(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if got := strategies.KeysOf(lease); !slices.Equal(got, keys) || lease.Key() != keys[0] {
			t.Fatalf("lease keys %v (key %s), want %v", got, lease.Key(), keys)
		}
		for _, k := range keys {
			if v := do(t, d, "GET", k).Str; v != lease.Token() {
				t.Fatalf("%s holds %q, want the token %q", k, v, lease.Token())
			}
			if ttl := do(t, d, "PTTL", k).Int; ttl <= 0 || ttl > 5000 {
				t.Fatalf("%s PTTL %d, want in (0, 5000]", k, ttl)
			}
		}
		if _, err := l.TryAcquire(ctx, keys[2]); !errors.Is(err, strategies.ErrNotAcquired) {
			t.Fatalf("single-key acquire of a held key: %v, want ErrNotAcquired", err)
		}
		do(t, d, "SET", keys[1], "successor", "PX", "5000")
		if err := lease.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
			t.Fatalf("release with one key taken away: %v, want ErrNotOwner", err)
		}
		if n := do(t, d, "EXISTS", keys[0], keys[2]).Int; n != 0 || do(t, d, "GET", keys[1]).Str != "successor" {
			t.Fatalf("after release: %d own keys left, successor's key %q; want 0 and kept", n, do(t, d, "GET", keys[1]).Str)
		}
		for _, bad := range [][]string{nil, {keys[0], keys[0]}} {
			if _, err := ml.TryAcquireMulti(ctx, bad); err == nil || errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("keys %v: %v, want a refusal", bad, err)
			}
		}
	})
}

// AcquireMulti with a one-key lock (atomic), another client holding key
// b: in the given order [a, b] it takes a, waits for b until the 50 ms
// timeout and returns a *PartialError holding 1 of 2 (a deadlock's
// signature), a released; in sorted order [b, a] it never holds a key
// while waiting: a plain timeout, nothing held. With b free, the sorted
// acquire holds both, in sorted order.
func TestAcquireMultiOrders(t *testing.T) {
	each(t, func(t *testing.T, d drivers.Driver, p string) {
		ctx := context.Background()
		l, err := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		a, b := p+"a", p+"b"
		do(t, d, "SET", b, "other", "PX", "5000")
		b1, err := retry.Parse("fixed:interval=5ms")
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = strategies.AcquireMulti(ctx, ctx, l, []string{a, b}, strategies.OrderGiven, b1.New(nil), 50*time.Millisecond)
		var pe *strategies.PartialError
		if !errors.As(err, &pe) || pe.Held != 1 || pe.Of != 2 || !errors.Is(err, strategies.ErrAcquireTimeout) {
			t.Fatalf("given order: %v, want a PartialError holding 1 of 2 keys, wrapping ErrAcquireTimeout", err)
		}
		if do(t, d, "EXISTS", a).Int != 0 {
			t.Fatal("given order: a still held after the timeout")
		}
		_, _, err = strategies.AcquireMulti(ctx, ctx, l, []string{b, a}, strategies.OrderSorted, b1.New(nil), 50*time.Millisecond)
		if !errors.Is(err, strategies.ErrAcquireTimeout) || errors.As(err, &pe) || do(t, d, "EXISTS", a).Int != 0 {
			t.Fatalf("sorted order: %v (a exists %d), want a plain timeout with nothing held", err, do(t, d, "EXISTS", a).Int)
		}
		do(t, d, "DEL", b)
		lease, _, err := strategies.AcquireMulti(ctx, ctx, l, []string{b, a}, strategies.OrderSorted, b1.New(nil), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := strategies.KeysOf(lease); !slices.Equal(got, []string{a, b}) {
			t.Fatalf("sorted lease keys %v, want [a b]", got)
		}
		if err := lease.Release(ctx); err != nil || do(t, d, "EXISTS", a, b).Int != 0 {
			t.Fatalf("release: %v, want both keys deleted", err)
		}
		if _, _, err := strategies.AcquireMulti(ctx, ctx, l, []string{a}, "bogus", b1.New(nil), time.Second); err == nil {
			t.Fatal("unknown order accepted")
		}
	})
}
