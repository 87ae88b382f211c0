package locktest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// handoffLocker builds handoff with lease ttl and parameter values p.
func handoffLocker(t *testing.T, ds []drivers.Driver, ttl time.Duration, p registry.Values) strategies.Locker {
	t.Helper()
	l, err := strategies.New("handoff", strategies.Config{Nodes: ds, TTL: ttl, Params: p, Prefix: keyPrefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.(interface{ Close() error }).Close() })
	return l
}

// queueLen is LLEN of key's handoff queue.
func queueLen(t *testing.T, d drivers.Driver, key string) int64 {
	t.Helper()
	r, err := d.Do(context.Background(), "LLEN", key+":queue")
	if err != nil {
		t.Fatal(err)
	}
	return r.Int
}

// waitFor polls cond every 5 ms for up to limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// handoff is FIFO: five waiters queue in a known order while A holds the
// lock (each starts once the one before is in the queue); from A's
// release on, the lock passes from each holder to the next in exactly that
// order, each grant handed over by the release script (woken by its
// message, or found by a recheck: 5 in all), and the queue is empty after.
func TestHandoffFIFO(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := open(t, d, "handoff")
			l := handoffLocker(t, ds, 5*time.Second, nil)
			key := lockKey(t)
			a, err := l.TryAcquire(as(ctx, 0, "A"), key)
			if err != nil {
				t.Fatal(err)
			}
			const n = 5
			order := make(chan int, n)
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := 1; i <= n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wctx, cancel := context.WithTimeout(as(ctx, i, "W"), 30*time.Second)
					defer cancel()
					le, err := l.TryAcquire(wctx, key)
					if err != nil {
						errs <- err
						return
					}
					order <- i
					time.Sleep(10 * time.Millisecond)
					if err := le.Release(ctx); err != nil {
						errs <- err
					}
				}()
				waitFor(t, 10*time.Second, "waiter queued", func() bool { return queueLen(t, ds[0], key) == int64(i) })
			}
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(order)
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			want := 1
			for got := range order {
				if got != want {
					t.Fatalf("grant %d went to waiter %d, want %d (FIFO)", want, got, want)
				}
				want++
			}
			if want != n+1 {
				t.Fatalf("%d grants, want %d", want-1, n)
			}
			st := l.(strategies.StatsReporter).Stats()
			if st["woken"]+st["confirmed"] != n {
				t.Fatalf("stats %v: woken + confirmed = %v, want %d", st, st["woken"]+st["confirmed"], n)
			}
			if q := queueLen(t, ds[0], key); q != 0 {
				t.Fatalf("queue length %d after every waiter was served", q)
			}
			if existing(t, ds[0], []string{key}) != 0 {
				t.Fatal("lock still held after the last release")
			}
		})
	}
}

// A waiter that dies in the queue (an entry nobody refreshes, no abandon:
// written straight into the queue) blocks the lock no longer than its
// queue-timeout, plus one lease when the lock is handed to it. With a
// 500 ms lease and a 1 s queue-timeout: released while the dead entry is
// live, the lock goes to the dead token (the release hands it to the
// head) and B, queued behind, gets it once that lease ends; released
// after the entry expired, it goes straight to B. The bound asserted is
// generous (10 s), not a speed.
func TestHandoffDeadWaiter(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		for _, late := range []bool{false, true} {
			name := d + "/released-while-dead-entry-live"
			if late {
				name = d + "/released-after-entry-expired"
			}
			t.Run(name, func(t *testing.T) {
				ds := open(t, d, "handoff")
				l := handoffLocker(t, ds, 500*time.Millisecond, registry.Values{"queue-timeout": time.Second})
				key := lockKey(t)
				a, err := l.TryAcquire(as(ctx, 0, "A"), key)
				if err != nil {
					t.Fatal(err)
				}
				// The dead waiter: an entry with a deadline 1 s from now
				// (Redis TIME), never refreshed.
				dead := strategies.NewToken()
				now, err := ds[0].Do(ctx, "TIME")
				if err != nil {
					t.Fatal(err)
				}
				sec, err1 := strconv.ParseInt(now.Array[0].Str, 10, 64)
				usec, err2 := strconv.ParseInt(now.Array[1].Str, 10, 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("TIME %+v", now)
				}
				deadline := sec*1000 + usec/1000 + 1000
				if _, err := ds[0].Do(ctx, "RPUSH", key+":queue", strconv.FormatInt(deadline, 10)+"|"+dead); err != nil {
					t.Fatal(err)
				}
				got := make(chan error, 1)
				var bTok string
				go func() {
					bctx, cancel := context.WithTimeout(as(ctx, 1, "B"), 10*time.Second)
					defer cancel()
					b, err := l.TryAcquire(bctx, key)
					if err == nil {
						bTok = b.Token()
						err = b.Release(ctx)
					}
					got <- err
				}()
				waitFor(t, 5*time.Second, "B queued", func() bool { return queueLen(t, ds[0], key) == 2 })
				if late {
					time.Sleep(1500 * time.Millisecond) // past the dead entry's deadline
				}
				if err := a.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if !late {
					if v := stored(t, ds[0], key); len(v) != 1 || v[0] != dead {
						// B may already hold it if the machine stalled
						// past the dead entry's deadline.
						t.Logf("right after the release the lock holds %q (dead waiter %q)", v, dead)
					}
				}
				if err := <-got; err != nil {
					t.Fatalf("B behind a dead waiter: %v", err)
				}
				if bTok == "" || bTok == dead {
					t.Fatalf("B's token %q", bTok)
				}
				if q := queueLen(t, ds[0], key); q != 0 {
					t.Fatalf("queue length %d after B's release", q)
				}
			})
		}
	}
}

// handoff under the crash and pause faults, with healthy leases of
// seconds (3 s, renewed every 1 s; 10 ms of work, so that the sale of 60
// is still running when the fault strikes at 200 ms): a holder that
// crashes never releases, its lease runs out and the queue moves on; a
// holder paused 500 ms (its renewal loop with it) keeps its lease. Either
// way the stock sells out exactly with no overlap and no other violation.
func TestHandoffFaults(t *testing.T) {
	t.Parallel() // as its subtests are: beside the package's other parallel tests
	for _, d := range drivers.Names() {
		for _, spec := range []string{"crash-after-setnx:at=200ms", "pause:for=500ms,at=200ms"} {
			t.Run(d+"/"+spec, func(t *testing.T) {
				t.Parallel() // own keys (run: the test's name), client-side faults, exact counts
				sp, err := faults.Parse(spec)
				if err != nil {
					t.Fatal(err)
				}
				res := run(t, engine.Scenario{Spec: engine.Spec{
					Strategy: "handoff", Driver: d, Workload: "flash-sale", Retry: policy(t, "none"),
					Clients: 10, Duration: 60 * time.Second, TTL: 3 * time.Second, AcquireTimeout: 50 * time.Second,
					Params:  workloads.Params{Work: workloads.Fixed(10 * time.Millisecond)},
					Options: registry.Values{"stock": int64(60), "skus": 1}, Seed: 11, Faults: []faults.Spec{sp},
				}})
				t.Logf("%s: %+v sold %d fault %+v stats %v", spec, res.Violations, res.Figures["sold"], res.Faults, res.StrategyStats)
				if len(res.Faults) != 1 || res.Faults[0].StartMS < 0 || res.Faults[0].EndMS < res.Faults[0].StartMS {
					t.Fatalf("the fault did not act: %+v", res.Faults)
				}
				exact(t, res, 60)
			})
		}
	}
}

// The oracle both ways for handoff with renew=off (a lease that ends
// after its TTL, Redisson's lock(leaseTime)): the suite's broken side, a
// 5 ms lease under 20 ms of work, shows overlap, lost leases, lost updates
// and oversell; its correct side none. (With renew=on, the default, the
// conformance suite runs the renewed side.)
//
// The drivers at once, as in the conformance suite's timed pass: keys of
// their own (lockKey: the test's name; 4.7 s one after the other,
// 2026-12-04).
func TestHandoffOracleNoRenew(t *testing.T) {
	s := suite("handoff")
	s.Params = strategies.Values{"renew": "off"}
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			s.OracleBothWays(t, "handoff", d)
		})
	}
}

// fair's release wakes exactly one waiter: the head of the queue, on its
// own channel. With A holding the lock and B, C, D queued in that order,
// A's release publishes one message, on B's channel; B's, one on C's;
// and a release with nobody queued, none. Messages are counted on a
// PSUBSCRIBE of the test's whole key space, after a 300 ms settle (a
// second message would be counted).
func TestFairWakesHeadOnly(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := open(t, d, "fair")
			l := locker(t, "fair", ds, 5*time.Second)
			key := lockKey(t)
			var mu sync.Mutex
			var msgs []string
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done, err := ds[0].(drivers.Subscriber).PSubscribe(sctx, key+"*", func(ch, _ string) {
				mu.Lock()
				msgs = append(msgs, ch)
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { cancel(); <-done }()
			take := func() []string {
				time.Sleep(300 * time.Millisecond)
				mu.Lock()
				defer mu.Unlock()
				m := msgs
				msgs = nil
				return m
			}
			w := l.(strategies.WaitQueue)
			a, err := l.TryAcquire(as(ctx, 0, "A"), key)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range []string{"B", "C", "D"} {
				if _, err := l.TryAcquire(as(ctx, i+1, o), key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("%s: %v", o, err)
				}
			}
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if m := take(); len(m) != 1 || m[0] != w.WakeChannel(as(ctx, 1, "B"), key) {
				t.Fatalf("A's release published %q, want one message on B's channel", m)
			}
			b, err := l.TryAcquire(as(ctx, 1, "B"), key)
			if err != nil {
				t.Fatalf("B, woken at the head: %v", err)
			}
			if err := b.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if m := take(); len(m) != 1 || m[0] != w.WakeChannel(as(ctx, 2, "C"), key) {
				t.Fatalf("B's release published %q, want one message on C's channel", m)
			}
			// C and D leave; an uncontended cycle publishes nothing.
			for _, o := range []string{"C", "D"} {
				l.(strategies.Abandoner).Abandon(as(ctx, 0, o), key)
			}
			e, err := l.TryAcquire(as(ctx, 4, "E"), key)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if m := take(); len(m) != 0 {
				t.Fatalf("a release with nobody queued published %q", m)
			}
		})
	}
}

// The release's other outcomes, with renew=off (no renewal notices the
// changes made behind the holder's back) and B queued behind A:
//   - A's lease gone (the key deleted, as by expiry): the release reports
//     ErrNotOwner and still hands the lock to B;
//   - the lock taken by another token X meanwhile: ErrNotOwner, the key
//     keeps X, and B's entry is back in the queue;
//   - the holder's own entry left in the queue (a failed LREM after its
//     second SET NX): the release drops it and deletes the lock.
func TestHandoffReleaseNotOwner(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		for _, c := range []string{"expired", "taken", "own-entry"} {
			t.Run(d+"/"+c, func(t *testing.T) {
				ds := open(t, d, "handoff")
				l := handoffLocker(t, ds, 30*time.Second, registry.Values{"renew": "off"})
				key := lockKey(t)
				a, err := l.TryAcquire(as(ctx, 0, "A"), key)
				if err != nil {
					t.Fatal(err)
				}
				do := func(args ...string) {
					t.Helper()
					if _, err := ds[0].Do(ctx, args...); err != nil {
						t.Fatal(err)
					}
				}
				if c == "own-entry" {
					do("RPUSH", key+":queue", "99999999999999|"+a.Token())
					if err := a.Release(ctx); err != nil {
						t.Fatal(err)
					}
					if q := queueLen(t, ds[0], key); q != 0 || existing(t, ds[0], []string{key}) != 0 {
						t.Fatalf("after the release: queue %d, lock key kept %v", q, stored(t, ds[0], key))
					}
					return
				}
				bctx, cancel := context.WithTimeout(as(ctx, 1, "B"), 10*time.Second)
				defer cancel()
				got := make(chan error, 1)
				go func() {
					b, err := l.TryAcquire(bctx, key)
					if err == nil {
						err = b.Release(ctx)
					}
					got <- err
				}()
				waitFor(t, 5*time.Second, "B queued", func() bool { return queueLen(t, ds[0], key) == 1 })
				if c == "expired" {
					do("DEL", key)
				} else {
					do("SET", key, "X", "PX", "30000")
				}
				if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
					t.Fatalf("release: %v, want ErrNotOwner", err)
				}
				if c == "expired" {
					if err := <-got; err != nil {
						t.Fatalf("B, handed the free lock: %v", err)
					}
					return
				}
				if v := stored(t, ds[0], key); len(v) != 1 || v[0] != "X" {
					t.Fatalf("lock holds %q, want X restored", v)
				}
				if q := queueLen(t, ds[0], key); q != 1 {
					t.Fatalf("queue length %d, want B's entry back", q)
				}
				do("DEL", key)
				cancel()
				<-got
			})
		}
	}
}
