package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// slowReply is a master whose SET NX replies reach the client late: the
// command runs on the server at once, then the caller is held for delay,
// whatever its context (a client starved or paused between the reply and
// its validity check, which a per-node timeout cannot cut short).
type slowReply struct {
	drivers.Driver
	delay time.Duration
}

func (s slowReply) SetNX(ctx context.Context, key, val string, ttl time.Duration) (bool, error) {
	ok, err := s.Driver.SetNX(ctx, key, val, ttl)
	time.Sleep(s.delay)
	return ok, err
}

// A Redlock acquire slower than the TTL must not grant (issue 36, item
// 8): every master says OK (a full quorum), but each reply is held for
// 1.5 x the TTL, so the validity, TTL - elapsed - drift, is spent before
// the acquire ends. redlock refuses every attempt (0 granted, exact),
// counts each in validity_expired (none in no_quorum) and deletes what it
// set. The same masters with the delay removed grant every attempt; with
// a delay of a tenth of a 2 s TTL they grant a lease whose validity left
// at the grant is at most TTL - delay. A Redlock that granted on the
// quorum alone would fail the first half.
func TestRedlockSlowerThanTTL(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			t.Parallel() // own key (the test's name)
			ds := open(t, d, "redlock")
			key := "lockbench:locktest:{" + t.Name() + "}:lock"
			with := func(delay, ttl time.Duration) strategies.Locker {
				slow := make([]drivers.Driver, len(ds))
				for i, n := range ds {
					slow[i] = slowReply{n, delay}
				}
				return locker(t, "redlock", slow, ttl)
			}
			const attempts = 4
			const ttl = 200 * time.Millisecond
			l := with(ttl*3/2, ttl)
			for i := range attempts {
				start := time.Now()
				le, err := l.TryAcquire(ctx, key)
				if err == nil {
					_ = le.Release(ctx)
					t.Fatalf("attempt %d: granted after %v with a %v TTL; want ErrNotAcquired (validity spent)", i+1, time.Since(start), ttl)
				}
				if !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("attempt %d: %v, want ErrNotAcquired", i+1, err)
				}
				for j, n := range ds { // the failed attempt deleted its keys
					if r, _ := n.Do(ctx, "EXISTS", key); r.Int != 0 {
						t.Fatalf("attempt %d: node %d kept the key after a refused acquire", i+1, j)
					}
				}
			}
			st := l.(strategies.StatsReporter).Stats()
			if st["validity_expired"] != attempts || st["no_quorum"] != 0 {
				t.Fatalf("stats %v: want validity_expired %d and no_quorum 0", st, attempts)
			}

			// The delay removed: every attempt is granted (with a 2 s TTL:
			// its per-node timeout, TTL/10, outlasts a loaded machine's
			// round trip; 200 ms would give 25 ms).
			const long = 2 * time.Second
			l = with(0, long)
			for i := range attempts {
				le, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatalf("without the delay, attempt %d: %v; want the lock", i+1, err)
				}
				if err := le.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if st := l.(strategies.StatsReporter).Stats(); st["validity_expired"] != 0 {
				t.Fatalf("without the delay: stats %v, want validity_expired 0", st)
			}

			// A delay inside the TTL: granted, the validity left at the
			// grant shortened by at least the delay (it ends by start +
			// TTL, as the keys expire TTL after they were set).
			delay := long / 10
			l = with(delay, long)
			start := time.Now()
			le, err := l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("a %v delay in a %v TTL: %v; want the lock", delay, long, err)
			}
			defer le.Release(ctx)
			granted := time.Now()
			dl, ok := le.(strategies.Watched).Context().Deadline()
			if !ok || dl.After(start.Add(long)) || dl.Sub(granted) > long-delay {
				t.Fatalf("validity ends at start + %v, %v after the grant; want at most start + %v and at most %v (TTL - delay) after the grant",
					dl.Sub(start), dl.Sub(granted), long, long-delay)
			}
		})
	}
}
