package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

var srv *topology.Server

func TestMain(m *testing.M) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "strategy tests need redis-server:", err)
		os.Exit(1)
	}
	srv = topo.Servers[0]
	code := m.Run()
	topo.Stop()
	os.Exit(code)
}

// each runs f once per driver adapter, with a fresh key prefix.
func each(t *testing.T, f func(t *testing.T, d drivers.Driver, prefix string)) {
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			d, err := drivers.Open(name, drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			f(t, d, "st:"+t.Name()+":")
		})
	}
}

func do(t *testing.T, d drivers.Driver, args ...string) drivers.Reply {
	t.Helper()
	r, err := d.Do(context.Background(), args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

func TestRegistry(t *testing.T) {
	names := strings.Join(strategies.Names(), ",")
	for _, want := range []string{"atomic", "naive"} {
		if !strings.Contains(names, want) || strategies.Describe(want) == "" {
			t.Errorf("strategy %s not registered with a description (have %s)", want, names)
		}
	}
	_, err := strategies.New("atomc", strategies.Config{})
	if !errors.Is(err, strategies.ErrUnknown) || !strings.Contains(err.Error(), "atomic") {
		t.Errorf("New(atomc) = %v, want ErrUnknown listing the valid names", err)
	}
}

func TestAcquireHoldsAndExpires(t *testing.T) {
	ctx := context.Background()
	for _, strat := range []string{"naive", "atomic"} {
		t.Run(strat, func(t *testing.T) {
			each(t, func(t *testing.T, d drivers.Driver, p string) {
				l, err := strategies.New(strat, strategies.Config{Nodes: []drivers.Driver{d}, TTL: 300 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				key := p + "lock"
				a, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if len(a.Token()) != 32 || a.Key() != key {
					t.Fatalf("token %q key %q", a.Token(), a.Key())
				}
				if got := do(t, d, "GET", key).Str; got != a.Token() {
					t.Fatalf("lock value %q, want the token", got)
				}
				if pttl := do(t, d, "PTTL", key).Int; pttl <= 0 || pttl > 300 {
					t.Fatalf("PTTL %d, want in (0, 300]", pttl)
				}
				if _, err := l.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("second TryAcquire = %v, want ErrNotAcquired", err)
				}
				// A waiter with a fixed retry gets the lock once the lease ends.
				fixed, _ := retry.Parse("fixed:interval=5ms")
				b, attempts, err := strategies.Acquire(ctx, l, key, fixed.New(nil), 5*time.Second)
				if err != nil || attempts < 2 {
					t.Fatalf("Acquire after expiry = %v after %d attempts", err, attempts)
				}
				if b.Token() == a.Token() {
					t.Fatal("two leases share a token")
				}
				if err := b.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if n := do(t, d, "EXISTS", key).Int; n != 0 {
					t.Fatal("lock key still exists after release")
				}
			})
		})
	}
}

// Release with a foreign token: atomic refuses and the key stays; naive's
// plain DEL removes the other client's lock.
func TestReleaseForeignToken(t *testing.T) {
	ctx := context.Background()
	want := map[string]bool{"atomic": true, "naive": false} // key survives?
	for strat, survives := range want {
		t.Run(strat, func(t *testing.T) {
			each(t, func(t *testing.T, d drivers.Driver, p string) {
				l, _ := strategies.New(strat, strategies.Config{Nodes: []drivers.Driver{d}, TTL: 10 * time.Second})
				key := p + "lock"
				a, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				// Another client now holds the lock (as after a's lease expired).
				do(t, d, "SET", key, "someone-else", "PX", "10000")
				err = a.Release(ctx)
				got := do(t, d, "GET", key)
				if survives {
					if !errors.Is(err, strategies.ErrNotOwner) {
						t.Fatalf("Release = %v, want ErrNotOwner", err)
					}
					if got.Str != "someone-else" {
						t.Fatalf("foreign lock now %+v, want it untouched", got)
					}
				} else {
					if err != nil {
						t.Fatalf("naive Release = %v", err)
					}
					if !got.IsNil() {
						t.Fatalf("naive DEL left %+v; it should delete the foreign lock", got)
					}
				}
			})
		})
	}
}

// With a constant lock value (claim S4) the compare-and-delete release of a
// lease whose lock expired deletes the next holder's lock: the owner check
// cannot tell the two apart. Strategies that keep their own token refuse
// the option.
func TestConstantTokenDefeatsOwnerCheck(t *testing.T) {
	ctx := context.Background()
	for _, strat := range []string{"atomic", "watchdog"} {
		t.Run(strat, func(t *testing.T) {
			each(t, func(t *testing.T, d drivers.Driver, p string) {
				l, _ := strategies.New(strat, strategies.Config{Nodes: []drivers.Driver{d}, TTL: 10 * time.Second, ConstantToken: true})
				key := p + "lock"
				a, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if a.Token() != strategies.ConstantValue {
					t.Fatalf("token %q, want %q", a.Token(), strategies.ConstantValue)
				}
				// a's lease expired; b took the lock with the same value.
				do(t, d, "DEL", key)
				b, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Release(ctx); err != nil {
					t.Fatalf("stale Release = %v, want nil (it deletes b's lock)", err)
				}
				if got := do(t, d, "EXISTS", key); got.Int != 0 {
					t.Fatalf("b's lock survived the stale release (EXISTS %d)", got.Int)
				}
				_ = b.Release(ctx)
			})
		})
	}
	for name, want := range map[string]bool{"naive": true, "atomic": true, "watchdog": true, "redlock": true, "fencing": false, "reentrant": false, "fair": false} {
		if got := strategies.InfoOf(name).ConstantToken; got != want {
			t.Errorf("InfoOf(%s).ConstantToken = %v, want %v", name, got, want)
		}
	}
}

func TestAcquireRetryOutcomes(t *testing.T) {
	ctx := context.Background()
	each(t, func(t *testing.T, d drivers.Driver, p string) {
		l, _ := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 10 * time.Second})
		key := p + "busy"
		if _, err := l.TryAcquire(ctx, key); err != nil {
			t.Fatal(err)
		}
		none, _ := retry.Parse("none")
		if _, n, err := strategies.Acquire(ctx, l, key, none.New(nil), time.Second); !errors.Is(err, strategies.ErrNotAcquired) || n != 1 {
			t.Fatalf("none: %v after %d attempts, want ErrNotAcquired after 1", err, n)
		}
		fixed, _ := retry.Parse("fixed:interval=10ms")
		if _, n, err := strategies.Acquire(ctx, l, key, fixed.New(nil), 100*time.Millisecond); !errors.Is(err, strategies.ErrAcquireTimeout) || n < 2 {
			t.Fatalf("fixed with timeout: %v after %d attempts, want ErrAcquireTimeout", err, n)
		}
		bo, _ := retry.Parse("backoff:start=1ms,cap=2ms,tries=4")
		if _, n, err := strategies.Acquire(ctx, l, key, bo.New(rand.New(rand.NewPCG(1, 1))), 0); !errors.Is(err, strategies.ErrNotAcquired) || n != 4 {
			t.Fatalf("backoff tries=4: %v after %d attempts, want ErrNotAcquired after 4", err, n)
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		if _, _, err := strategies.Acquire(cctx, l, key, fixed.New(nil), 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled wait: %v, want context.DeadlineExceeded", err)
		}
	})
}

// scripted is an in-process Locker whose attempts return the errors of a
// list (nil: granted), and that counts the Abandon calls Acquire makes
// when it gives up.
type scripted struct {
	errs      []error
	attempts  int
	abandoned int
	ctxs      []context.Context // the context of each attempt
	after     func()            // called after each attempt, if set
}

type scriptedLease struct{}

func (s *scripted) TryAcquire(ctx context.Context, _ string) (strategies.Lease, error) {
	s.ctxs = append(s.ctxs, ctx)
	if s.after != nil {
		defer s.after()
	}
	err := s.errs[min(s.attempts, len(s.errs)-1)]
	s.attempts++
	if err != nil {
		return nil, err
	}
	return scriptedLease{}, nil
}
func (s *scripted) Abandon(context.Context, string) { s.abandoned++ }
func (scriptedLease) Key() string                   { return "k" }
func (scriptedLease) Token() string                 { return "t" }
func (scriptedLease) Release(context.Context) error { return nil }

// Acquire's outcomes on its first-attempt path and its retry loop: the
// attempts counted, the error returned, and Abandon called exactly when
// the acquire fails.
func TestAcquireOutcomes(t *testing.T) {
	boom := errors.New("boom")
	tries5, err := retry.Parse("backoff:start=1ms,cap=1ms,tries=5")
	if err != nil {
		t.Fatal(err)
	}
	none, _ := retry.Parse("none")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name              string
		ctx               context.Context
		errs              []error
		policy            *retry.Policy
		timeout           time.Duration
		want              error
		attempts, abandon int
	}{
		{"granted at once", context.Background(), []error{nil}, none, 0, nil, 1, 0},
		{"granted at once, with a timeout", context.Background(), []error{nil}, none, time.Second, nil, 1, 0},
		{"granted on the third attempt", context.Background(), []error{strategies.ErrNotAcquired, strategies.ErrNotAcquired, nil}, tries5, 0, nil, 3, 0},
		{"held, no retry", context.Background(), []error{strategies.ErrNotAcquired}, none, 0, strategies.ErrNotAcquired, 1, 1},
		{"held, retries exhausted", context.Background(), []error{strategies.ErrNotAcquired}, tries5, 0, strategies.ErrNotAcquired, 5, 1},
		{"server error on the first attempt", context.Background(), []error{boom}, tries5, 0, boom, 1, 1},
		{"server error on a retry", context.Background(), []error{strategies.ErrNotAcquired, boom}, tries5, 0, boom, 2, 1},
		{"run already stopped", cancelled, []error{nil}, none, 0, context.Canceled, 0, 1},
	} {
		l := &scripted{errs: c.errs}
		lease, n, err := strategies.Acquire(c.ctx, l, "k", c.policy.New(rand.New(rand.NewPCG(1, 1))), c.timeout)
		if !errors.Is(err, c.want) || n != c.attempts || l.abandoned != c.abandon || (err == nil) != (lease != nil) {
			t.Errorf("%s: err %v, attempts %d, abandoned %d, lease %v; want %v, %d, %d", c.name, err, n, l.abandoned, lease, c.want, c.attempts, c.abandon)
		}
	}
}

// atomic reuses a lease handed back with Recycle: the next acquire gets a
// lease with its own key and a fresh token, whose release deletes only its
// own lock; a lease still held is never handed out again, a failed
// attempt's lease never escapes, and a lease of another locker is ignored.
func TestAtomicRecycle(t *testing.T) {
	each(t, func(t *testing.T, d drivers.Driver, prefix string) {
		ctx := context.Background()
		l, err := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r, ok := l.(strategies.Recycler)
		if !ok {
			t.Fatal("atomic is not a Recycler")
		}
		seen := map[string]bool{}
		held, err := l.TryAcquire(ctx, prefix+"held")
		if err != nil {
			t.Fatal(err)
		}
		seen[held.Token()] = true
		for i := range 20 {
			key := prefix + strconv.Itoa(i)
			a, err := l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if a == held || a.Key() != key || seen[a.Token()] || len(a.Token()) != 32 {
				t.Fatalf("acquire %d: lease %p (held %p), key %q, token %q (seen before: %v)", i, a, held, a.Key(), a.Token(), seen[a.Token()])
			}
			seen[a.Token()] = true
			if v := do(t, d, "GET", key); v.Str != a.Token() {
				t.Fatalf("key %s holds %q, want the lease's token %q", key, v.Str, a.Token())
			}
			// A failed attempt on the held lock returns no lease.
			if b, err := l.TryAcquire(ctx, prefix+"held"); b != nil || !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("acquire of a held lock: %v, %v", b, err)
			}
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			r.Recycle(a)
			r.Recycle(scriptedLease{}) // not atomic's: ignored
		}
		if n := do(t, d, "EXISTS", prefix+"held").Int; n != 1 || held.Token() != do(t, d, "GET", prefix+"held").Str {
			t.Fatalf("the held lock was touched: exists %d", n)
		}
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

type ioKey struct{}

// AcquireIO makes every attempt on io, and still ends on ctx: before the
// first attempt and between attempts.
func TestAcquireIO(t *testing.T) {
	io := context.WithValue(context.Background(), ioKey{}, "io")
	tries3, err := retry.Parse("backoff:start=1ms,cap=1ms,tries=3")
	if err != nil {
		t.Fatal(err)
	}
	l := &scripted{errs: []error{strategies.ErrNotAcquired, strategies.ErrNotAcquired, nil}}
	lease, n, err := strategies.AcquireIO(context.Background(), io, l, "k", tries3.New(rand.New(rand.NewPCG(1, 1))), 0)
	if err != nil || lease == nil || n != 3 || len(l.ctxs) != 3 {
		t.Fatalf("lease %v, attempts %d, err %v, attempts seen %d; want a lease after 3", lease, n, err, len(l.ctxs))
	}
	for i, c := range l.ctxs {
		if c.Value(ioKey{}) != "io" {
			t.Errorf("attempt %d ran on another context than io", i+1)
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	l = &scripted{errs: []error{nil}}
	if _, n, err := strategies.AcquireIO(cancelled, io, l, "k", tries3.New(nil), 0); !errors.Is(err, context.Canceled) || n != 0 || len(l.ctxs) != 0 {
		t.Fatalf("a stopped acquire: attempts %d, err %v, attempts seen %d; want none and context.Canceled", n, err, len(l.ctxs))
	}
	// Stopped during the first attempt (whose calls io kept running): no
	// second one.
	stopping, stop := context.WithCancel(context.Background())
	defer stop()
	l = &scripted{errs: []error{strategies.ErrNotAcquired}, after: stop}
	if _, n, err := strategies.AcquireIO(stopping, io, l, "k", tries3.New(rand.New(rand.NewPCG(1, 1))), 0); !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("stopped between attempts: attempts %d, err %v; want 1 and context.Canceled", n, err)
	}
}

// Blocks names the lockers whose attempts may wait in-process.
func TestBlocks(t *testing.T) {
	each(t, func(t *testing.T, d drivers.Driver, _ string) {
		for name, want := range map[string]bool{"atomic": false, "naive": false, "watchdog": false, "multilevel": true} {
			l, err := strategies.New(name, strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if got := strategies.Blocks(l); got != want {
				t.Errorf("Blocks(%s) = %v, want %v", name, got, want)
			}
		}
	})
}
