// Package locktest is the conformance suite every lock strategy passes, on
// every driver it runs on, against real redis-server processes started by
// the suite: mutual exclusion under contention, owner-only release, lease
// expiry, loss reporting, token reporting for the liveness oracle, the
// safety oracle shown both ways (a lease shorter than the work shows its
// overlap, a healthy lease none), the lock key's ownership right after an
// acquire, a prompt release of an expired lease, arrival order for a
// locker that declares it (strategies.FIFO), and a semaphore's capacity
// for a locker of several permits (strategies.Semaphore). lockbench's own strategies run it in
// this package's tests, together with the per-strategy behaviours
// (watchdog renewal, reentrancy, Redlock quorum, fencing, pub/sub
// wake-ups).
//
// Code outside this module runs it on its own lock, registered with
// strategies.Register, from a test:
//
//	func TestConformance(t *testing.T) { locktest.Run(t, "my-lock") }
//
// The suite needs redis-server on PATH (apt-get install redis-server). It
// makes real runs of lockbench's engine (the flash-sale workload), so a
// strategy passes only if it works under lockbench as it will be
// benchmarked. See docs/custom-lock.md.
package locktest

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all" // the drivers the suite runs on
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// Run runs the conformance suite (Suite.Run) on strategy, on redis-server
// processes it starts and stops at the end of t.
func Run(t *testing.T, strategy string) {
	t.Helper()
	Suite{}.Run(t, strategy)
}

// Suite is the conformance suite with its settings. The zero Suite starts
// its own servers.
type Suite struct {
	// Servers are the redis-server processes to run on. Nil: Run (and each
	// check called on its own) starts its own and stops them when its test
	// ends.
	Servers *Servers
	// Params are values of the strategy's own parameters (Info.Params) for
	// every locker and run the suite makes; a parameter missing here takes
	// its default. The suite's own workload settings (stock, skus) win over
	// values given here. Nil: every default.
	Params strategies.Values
	// RequireTokens fails TokensReported for a strategy that reports no
	// token to Config.Tokens. False: that check is skipped for it, with a
	// message (lockbench then reports its liveness figures as not
	// measured, which is honest but tells less).
	RequireTokens bool
}

// A check is one conformance check of a strategy on a driver.
type check struct {
	name string
	f    func(Suite, *testing.T, string, string)
}

// checks are the checks Check runs, in order.
var checks = []check{
	{"MutualExclusion", Suite.MutualExclusion},
	{"OwnerOnlyRelease", Suite.OwnerOnlyRelease},
	{"LeaseExpires", Suite.LeaseExpires},
	{"LossReported", Suite.LossReported},
	{"TokensReported", Suite.TokensReported},
	{"OracleBothWays", Suite.OracleBothWays},
	{"OwnedAfterAcquire", Suite.OwnedAfterAcquire},
	{"ReleaseAfterExpiry", Suite.ReleaseAfterExpiry},
	{"FIFOOrder", Suite.FIFOOrder},
	{"SemaphoreCapacity", Suite.SemaphoreCapacity},
}

// Run runs every check on strategy on each registered driver
// (drivers.Names), as subtests DRIVER/CHECK; a driver the strategy does
// not run on (Info.Drivers, strategies.RunsOn) is skipped with a message.
// It fails at once for an unregistered strategy.
func (s Suite) Run(t *testing.T, strategy string) {
	t.Helper()
	if _, err := strategies.Lookup(strategy); err != nil {
		t.Fatal(err)
	}
	s = s.withServers(t)
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			if !strategies.RunsOn(strategy, d) {
				t.Skipf("%s does not run on driver %s (it runs on %v)", strategy, d, strategies.InfoOf(strategy).Drivers)
			}
			s.Check(t, strategy, d)
		})
	}
}

// Check runs every check on strategy with driver, each as a subtest
// named after its method (MutualExclusion, OwnerOnlyRelease,
// LeaseExpires, LossReported, TokensReported, OracleBothWays,
// OwnedAfterAcquire, ReleaseAfterExpiry, FIFOOrder, SemaphoreCapacity). A strategy
// that needs a server besides Redis (Info.Backend) or takes no lock
// (strategies.Lockless) is skipped: the suite has no lock holder to judge.
func (s Suite) Check(t *testing.T, strategy, driver string) {
	t.Helper()
	s.checkOnly(t, strategy, driver, nil)
}

// checkOnly is Check running only the checks whose name keep accepts
// (nil: every check).
func (s Suite) checkOnly(t *testing.T, strategy, driver string, keep func(name string) bool) {
	t.Helper()
	s = s.withServers(t)
	if b := strategies.InfoOf(strategy).Backend; b != strategies.NoBackend {
		t.Skipf("%s needs a %s server; the suite starts Redis only", strategy, b)
	}
	l := s.locker(t, strategy, s.Open(t, strategy, driver), time.Second, nil)
	if strategies.IsLockless(l) {
		t.Skipf("%s takes no lock (strategies.Lockless): nothing to conform", strategy)
	}
	for _, c := range checks {
		if keep == nil || keep(c.name) {
			t.Run(c.name, func(t *testing.T) { c.f(s, t, strategy, driver) })
		}
	}
}

// withServers returns s with Servers set: its own, or new ones stopped at
// the end of t.
func (s Suite) withServers(t *testing.T) Suite {
	if s.Servers == nil {
		s.Servers = NewServers()
		t.Cleanup(s.Servers.Close)
	}
	return s
}

// Open opens one driver per node of strategy's layout, with a pool of 8
// connections, and closes them at the end of t. It fails t when a server
// does not start or answer.
func (s Suite) Open(t *testing.T, strategy, driver string) []drivers.Driver {
	t.Helper()
	s = s.withServers(t)
	nodes, err := s.Servers.Nodes(strategy)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := engine.Open(context.Background(), driver, nodes, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range ds {
			d.Close()
		}
	})
	return ds
}

// locker builds strategy on ds with lease time ttl, s.Params and tokens
// (nil: none).
func (s Suite) locker(t *testing.T, strategy string, ds []drivers.Driver, ttl time.Duration, tokens strategies.TokenTracker) strategies.Locker {
	t.Helper()
	l, err := strategies.New(strategy, strategies.Config{Nodes: ds, TTL: ttl, Params: s.Params, Tokens: tokens, Clients: 4, Prefix: keyPrefix})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := l.(interface{ Close() error }); ok {
		t.Cleanup(func() { c.Close() })
	}
	return l
}

// run runs sc on the servers of its strategy, with s.Params under sc's
// own options, and a retry policy of spec, or the library's own for a
// strategy that owns its retrying (Info.OwnsRetry).
func (s Suite) run(t *testing.T, sc engine.Scenario, spec string) report.Scenario {
	t.Helper()
	s = s.withServers(t)
	nodes, err := s.Servers.Nodes(sc.Strategy)
	if err != nil {
		t.Fatal(err)
	}
	opts := registry.Values{}
	maps.Copy(opts, s.Params)
	maps.Copy(opts, sc.Options)
	sc.Options = opts
	sc.Retry = policyFor(t, sc.Strategy, spec)
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:locktest:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// policyFor is the retry policy spec, or retry.Library() for a strategy
// that owns its retrying.
func policyFor(t *testing.T, strategy, spec string) *retry.Policy {
	t.Helper()
	if strategies.InfoOf(strategy).OwnsRetry {
		return retry.Library()
	}
	return policy(t, spec)
}

// policy parses a retry spec (--retry's syntax).
func policy(t *testing.T, spec string) *retry.Policy {
	t.Helper()
	p, err := retry.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// as is ctx carrying the Client id, owner.
func as(ctx context.Context, id int, owner string) context.Context {
	return strategies.WithClient(ctx, strategies.Client{ID: id, Owner: owner})
}

// keyPrefix starts every key the suite's lockers use (Config.Prefix).
const keyPrefix = "lockbench:locktest:"

// lockKey is the lock key of test t: its name, in a hash tag.
func lockKey(t *testing.T) string { return keyPrefix + "{" + t.Name() + "}:lock" }

// MutualExclusion: 50 clients contend for one item of a flash sale of 150
// (flash-sale, 1 ms of work per order, a 5 s lease, backoff retries from
// 1 ms to 20 ms): they sell exactly the stock, with no overlapping
// holders, no oversell, no lost update, no error, no rejected write and no
// release refused as another's. The lease is long for 1 ms of work so that
// a loaded machine's stalls neither end a lease nor a call whose timeout a
// strategy derives from the TTL (redlock's per-node timeout is TTL/10).
func (s Suite) MutualExclusion(t *testing.T, strategy, driver string) {
	const stock = 150
	res := s.run(t, engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: driver, Workload: "flash-sale",
		Clients: 50, Duration: 60 * time.Second, TTL: 5 * time.Second, AcquireTimeout: 50 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(stock), "skus": 1}, Seed: 7,
	}}, "backoff:start=1ms,cap=20ms,tries=100000")
	if v := res.Violations; v.Overlap != 0 || v.Oversell != 0 || v.LostUpdates != 0 {
		t.Fatalf("violations %+v, want none", v)
	}
	if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
		t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
	}
	if res.Counters.Errors != 0 || res.Counters.Rejected != 0 || res.Counters.NotOwner != 0 {
		t.Fatalf("counters %+v, want no errors, rejections or foreign releases", res.Counters)
	}
}

// OwnerOnlyRelease: once a lease's keys are gone (deleted behind its
// back, as after expiry: strategies.StoredKeys) and another client holds
// the lock, the first lease's Release returns ErrNotOwner and leaves the
// second holder's lock in place (a majority of its keys, all of a single
// key); the second holder's Release returns nil and removes it. A lease
// that is Watched and whose locker runs a library's own loop (OwnRetry:
// rueidislock learns of a loss from the invalidation of its keys, and B's
// wait in the same locker may consume that invalidation first), or that
// declares it may learn of a loss only at its next renewal
// (strategies.LossAtRenewal), is given up to 5 s to learn of the loss
// (its Context cancelled) before B acquires: such a lease's Release
// returns nil for a loss it has not learned.
func (s Suite) OwnerOnlyRelease(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	l := s.locker(t, strategy, ds, 5*time.Second, nil)
	key := lockKey(t)
	ks := strategies.StoredKeys(l, key)
	a, err := l.TryAcquire(as(ctx, 1, "A"), key)
	if err != nil {
		t.Fatal(err)
	}
	deleteKeys(t, ds, ks) // a's lease "expires"
	if w, ok := a.(strategies.Watched); ok {
		_, own := l.(strategies.OwnRetry)
		_, late := a.(strategies.LossAtRenewal)
		if own || late {
			waitLost(t, w, 5*time.Second)
		}
	}
	b, err := l.TryAcquire(as(ctx, 2, "B"), key)
	if err != nil {
		t.Fatalf("B could not take the free lock: %v", err)
	}
	if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("A's release = %v, want ErrNotOwner", err)
	}
	if n := existing(t, ds[0], ks); n < len(ks)/2+1 {
		t.Fatalf("A's release removed B's lock (%d of its %d keys left)", n, len(ks))
	}
	if err := b.Release(ctx); err != nil {
		t.Fatalf("B's release: %v", err)
	}
	if n := existing(t, ds[0], ks); n != 0 {
		t.Fatalf("lock still there after its owner released it (%d of its %d keys)", n, len(ks))
	}
}

// deleteKeys deletes ks on every node of ds (another client, behind the
// holders' backs).
func deleteKeys(t *testing.T, ds []drivers.Driver, ks []string) {
	t.Helper()
	for _, d := range ds {
		if _, err := d.Do(context.Background(), append([]string{"DEL"}, ks...)...); err != nil {
			t.Fatal(err)
		}
	}
}

// existing counts the keys of ks that exist on d.
func existing(t *testing.T, d drivers.Driver, ks []string) int {
	t.Helper()
	n, err := d.Do(context.Background(), append([]string{"EXISTS"}, ks...)...)
	if err != nil {
		t.Fatal(err)
	}
	return int(n.Int)
}

// waitLost waits up to limit for a Watched lease's context to be
// cancelled, and fails t if it is not.
func waitLost(t *testing.T, w strategies.Watched, limit time.Duration) {
	t.Helper()
	select {
	case <-w.Context().Done():
	case <-time.After(limit):
		t.Fatalf("the lease's context was not cancelled within %v of its keys' deletion", limit)
	}
}

// LeaseExpires: a lease ends when its holder neither releases nor renews.
// A takes the lock with a 150 ms lease and is abandoned (an Abandonable
// lease drops its renewal, as a crashed holder's would); B's attempt
// while A's lease runs is refused (ErrNotAcquired; for a locker that waits
// in-process, a 20 ms wait ends without the lock), and B gets the lock,
// retrying every 10 ms, within 5 s.
func (s Suite) LeaseExpires(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	l := s.locker(t, strategy, ds, 150*time.Millisecond, nil)
	key := lockKey(t)
	a, err := l.TryAcquire(as(ctx, 1, "A"), key)
	if err != nil {
		t.Fatal(err)
	}
	if ab, ok := a.(strategies.Abandonable); ok {
		ab.Abandon()
	}
	bctx := as(ctx, 2, "B")
	if strategies.Blocks(l) {
		wctx, cancel := context.WithTimeout(bctx, 20*time.Millisecond)
		_, err = l.TryAcquire(wctx, key)
		cancel()
		if !errors.Is(err, strategies.ErrNotAcquired) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("B's 20 ms attempt at a held lock = %v, want ErrNotAcquired or the deadline", err)
		}
	} else if _, err := l.TryAcquire(bctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
		t.Fatalf("B's attempt at a held lock = %v, want ErrNotAcquired", err)
	}
	b, n, err := strategies.Acquire(bctx, l, key, policy(t, "fixed:interval=10ms").New(nil), 5*time.Second)
	if err != nil {
		t.Fatalf("B did not get the lock within 5 s of A's 150 ms lease: %v (%d attempts); a lease that renews itself must be strategies.Abandonable", err, n)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatalf("B's release: %v", err)
	}
}

// LossReported, for strategies whose leases are strategies.Watched: a
// lease's context is live after the acquire and cancelled once Release
// returns; and when the lock key is deleted behind the holder's back (a
// lost lock) with a 1 s lease, the context is cancelled within 5 s. It is
// skipped for other leases.
func (s Suite) LossReported(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	l := s.locker(t, strategy, ds, time.Second, nil)
	key := lockKey(t)
	a, err := l.TryAcquire(as(ctx, 1, "A"), key)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := a.(strategies.Watched)
	if !ok {
		_ = a.Release(ctx)
		t.Skipf("%s's leases are not strategies.Watched", strategy)
	}
	if err := w.Context().Err(); err != nil {
		t.Fatalf("the context of a lease just acquired: %v, want live", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if w.Context().Err() == nil {
		t.Fatal("the lease's context is live after its release")
	}
	a, err = l.TryAcquire(as(ctx, 1, "A"), key)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	deleteKeys(t, ds, strategies.StoredKeys(l, key))
	waitLost(t, a.(strategies.Watched), 5*time.Second)
}

// TokensReported: the liveness oracle's contract (strategies.TokenTracker).
// With Config.Tokens set and a 5 s lease, the lease's token is passed to
// Sent before the acquire returns; every token stored under the lock key
// on every node (a string key's value, a hash key's field names but those
// the locker declares no token, strategies.NonTokenFields) was
// passed to Sent for that key, and the lease's own is among them; every
// Sent call's context carries the worker's Client; after Release no node
// stores the key. A locker with a read side (strategies.ReadLocker) is
// checked the same way with two readers. Then, with a 300 ms lease: a
// token still stored after 3 s was renewed, and its renewals must have
// been passed to Renewing. A strategy that reports no token at all is
// skipped unless Suite.RequireTokens.
func (s Suite) TokensReported(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	rec := newRecorder()
	l := s.locker(t, strategy, ds, 5*time.Second, rec)
	key := lockKey(t)
	actx := as(ctx, 1, "owner-1")
	a, err := l.TryAcquire(actx, key)
	if err != nil {
		t.Fatal(err)
	}
	if rec.count() == 0 && !s.RequireTokens {
		_ = a.Release(ctx)
		t.Skipf("%s reports no token to Config.Tokens: its runs report the liveness figures as not measured", strategy)
	}
	if !rec.wasSent(key, a.Token()) {
		t.Fatalf("the lease's token %q was not passed to Sent (sent: %q)", a.Token(), rec.sentTo(key))
	}
	nt := strategies.NonTokenFieldsOf(l)
	checkStored(t, rec, ds, key, a, nt)
	if rl, ok := l.(strategies.ReadLocker); ok { // the read side, with two readers
		rkey := key + ":read"
		r1, err := rl.TryAcquireRead(actx, rkey)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := rl.TryAcquireRead(as(ctx, 2, "owner-2"), rkey)
		if err != nil {
			t.Fatal(err)
		}
		if got := storedTokens(t, ds[0], rkey, nt); len(got) != 2 {
			t.Fatalf("two readers: %d tokens stored (%q), want 2", len(got), got)
		}
		checkStored(t, rec, ds, rkey, r1, nt)
		checkStored(t, rec, ds, rkey, r2, nt)
		for _, r := range []strategies.Lease{r1, r2} {
			if err := r.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := stored(t, ds[0], rkey); got != nil {
			t.Fatalf("after both readers released, the lock holds %q", got)
		}
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if got := stored(t, d, key); got != nil {
			t.Fatalf("node %d: after the release the lock holds %q", i, got)
		}
	}

	// Renewals: a 300 ms lease, watched for 3 s (10 x the lease).
	const ttl, watch = 300 * time.Millisecond, 3 * time.Second
	l = s.locker(t, strategy, ds, ttl, rec)
	rkey := key + ":renewed"
	a, err = l.TryAcquire(actx, rkey)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	checkStored(t, rec, ds, rkey, a, nt)
	deadline := time.Now().Add(watch)
	for time.Now().Before(deadline) && rec.renewals(rkey, a.Token()) == 0 && holds(t, ds, rkey, a.Token()) {
		time.Sleep(10 * time.Millisecond)
	}
	if rec.renewals(rkey, a.Token()) > 0 {
		checkStored(t, rec, ds, rkey, a, nt)
	} else if holds(t, ds, rkey, a.Token()) {
		t.Fatalf("the token of a %v lease is still stored after %v, and no renewal of it was passed to Renewing", ttl, watch)
	}
	if rec.noContext() != 0 {
		t.Errorf("%d Sent calls had a context without the Client", rec.noContext())
	}
}

// holds reports whether some node stores token under key.
func holds(t *testing.T, ds []drivers.Driver, key, token string) bool {
	t.Helper()
	for _, d := range ds {
		for _, tok := range stored(t, d, key) {
			if tok == token {
				return true
			}
		}
	}
	return false
}

// profile is what the suite learns of a strategy's leases by taking one.
type profile struct {
	// renews: the lease's key still holds its token 10 x its lease time
	// after the acquire (a renewal loop keeps it).
	renews bool
	// watched: the lease is strategies.Watched.
	watched bool
}

// probe takes one lock with a 300 ms lease and watches its key for 3 s
// (less when the key lets the token go first; a Stored locker's keys:
// until fewer than a majority exist).
func (s Suite) probe(t *testing.T, strategy, driver string) profile {
	t.Helper()
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	const ttl, watch = 300 * time.Millisecond, 3 * time.Second
	l := s.locker(t, strategy, ds, ttl, nil)
	key := lockKey(t) + ":probe"
	a, err := l.TryAcquire(as(ctx, 1, "probe"), key)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	_, watched := a.(strategies.Watched)
	// The lock is held while its token is stored, or, for a locker that
	// keeps it in keys of its own (strategies.Stored, whose value the
	// suite cannot know), while a majority of those keys exist.
	ks := strategies.StoredKeys(l, key)
	_, own := l.(strategies.Stored)
	held := func() bool {
		if own {
			return existing(t, ds[0], ks) >= len(ks)/2+1
		}
		return holds(t, ds, key, a.Token())
	}
	deadline := time.Now().Add(watch)
	for time.Now().Before(deadline) {
		if !held() {
			return profile{watched: watched}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return profile{renews: true, watched: watched}
}

// OracleBothWays: lockbench's safety oracle, both ways, on a flash sale
// of one item by 4 clients. A strategy whose leases do not renew is run
// broken, with a 5 ms lease under 20 ms of work (a library's own retry
// loop: 20 ms under 100 ms of work; a quorum lock on several masters: 100 ms under
// 400 ms; a quorum lock or a library's own retry loop: a stock of 10): a lease expires while its
// holder works and the next client enters, and the oracle must show it
// (overlap > 0, lost leases > 0). The data damage is asserted too: with a
// write guard (Info.Guard) none (lost updates and oversell 0, rejected
// writes > 0: the guard at work; orders sold plus the stock left are the
// stock of 60, since the refused writes may keep the sale from selling
// out within its 2 s); without a
// guard or a Watched lease (whose holder skips its write once told of the
// loss) lost updates > 0 and oversell > 0. A strategy whose leases renew
// (probe: a 300 ms lease still held after 3 s) is run instead with a 1 s
// lease through 1.5 s of work, which renewal must make safe: 2 orders
// sold, no violation; its broken side needs a pause of its renewal loop,
// which only a strategy that waits at strategies.Client.Gate sees, so
// this check cannot make it. Then the correct configuration, a 2 s lease
// with 1 ms of work: the stock of 60 sold out exactly, no violation of
// any kind.
func (s Suite) OracleBothWays(t *testing.T, strategy, driver string) {
	p := s.probe(t, strategy, driver)
	guarded := strategies.InfoOf(strategy).Guard != ""
	if p.renews {
		renewed := s.run(t, oracleScenario(strategy, driver, time.Second, 1500*time.Millisecond, 2, 60*time.Second), "fixed:interval=5ms")
		t.Logf("renewed (ttl 1s, work 1.5s): %+v sold %d, strategy stats %v", renewed.Violations, renewed.Figures["sold"], renewed.StrategyStats)
		exact(t, renewed, 2)
	} else {
		// A quorum lock on several masters (Info.MinNodes > 1) refuses a
		// lease whose validity time (TTL less the round over every node
		// and the clock drift allowance) is gone before it is granted, so
		// a 5 ms lease is never held there: it gets 100 ms under 400 ms of
		// work, and a stock of 10 that the run sells past.
		// A lock library's own retry loop can be slow to come back
		// (redsync waits 50-250 ms between tries) while the holder, once
		// done, takes the free lock again at once: its holders work
		// 100 ms, so that a waiter's try lands inside a lapsed lease
		// (about 2 tries per order expected, 95 ms after the 5 ms lease
		// against 3 waiters each trying every 150 ms on average), and its
		// sale has a stock of 10 as well, so that overlapping holders sell
		// past it.
		ttl, work, stock := 5*time.Millisecond, 20*time.Millisecond, int64(60)
		info := strategies.InfoOf(strategy)
		if info.OwnsRetry {
			// redsync refuses a lease whose validity time (TTL less the
			// round and 1 % + 2 ms of drift) is gone when granted: a 5 ms
			// lease left 3 ms for the round, which a loaded machine passed
			// on every try (nothing sold in 8 s).
			ttl, work = 20*time.Millisecond, 100*time.Millisecond
		}
		if info.MinNodes > 1 {
			ttl, work = 100*time.Millisecond, 400*time.Millisecond
		}
		// Unguarded, those sales run until sold out, within 8 s rather
		// than 2 s: an update lost by overlapping holders leaves a unit of
		// stock that a later order sells again, so a sale that sells out
		// oversells by its lost updates, and on a loaded machine redsync's
		// slow tries sold 8 of 10 in 2 s (lost updates 2, oversell 0). A
		// guarded sale, or one whose holders skip their writes once told
		// of the loss (Watched), may never sell out, and keeps 2 s.
		d := 2 * time.Second
		if info.MinNodes > 1 || info.OwnsRetry {
			stock = 10
			if !guarded && !p.watched {
				d = 8 * time.Second
			}
		}
		broken := s.run(t, oracleScenario(strategy, driver, ttl, work, stock, d), "fixed:interval=2ms")
		v := broken.Violations
		t.Logf("broken (ttl %v, work %v): overlap %d lost_updates %d oversell %d lost_leases %d rejected %d sold %d; attempts %d failures %d timeouts %d errors %v %v",
			ttl, work, v.Overlap, v.LostUpdates, v.Oversell, v.LostLeases, broken.Counters.Rejected, broken.Figures["sold"],
			broken.Counters.Attempts, broken.Counters.Failures, broken.Counters.Timeouts, broken.Counters.ErrorsByKind, broken.Counters.ErrorSamples)
		if v.Overlap == 0 || v.LostLeases == 0 {
			t.Fatalf("broken: overlap %d, lost leases %d; want both > 0 (a %v lease under %v of work); violations %+v", v.Overlap, v.LostLeases, ttl, work, v)
		}
		switch {
		case guarded:
			if v.LostUpdates != 0 || v.Oversell != 0 || broken.Counters.Rejected == 0 {
				t.Fatalf("broken + %s guard: lost updates %d, oversell %d, rejected %d; want 0, 0 and > 0 (the guard refused the stale writes)", strategies.InfoOf(strategy).Guard, v.LostUpdates, v.Oversell, broken.Counters.Rejected)
			}
			if sold, left := broken.Figures["sold"], broken.Figures["final_stock"]; sold+left != stock {
				t.Fatalf("broken + guard: sold %d, final stock %d; want sold + final = %d (a refused write is no order)", sold, left, stock)
			}
		case p.watched:
			// The holders are told of the loss before they write; one told
			// between its check and its write can still lose an update.
		default:
			if v.LostUpdates == 0 || v.Oversell == 0 {
				t.Fatalf("broken: lost updates %d, oversell %d; want both > 0 (overlapping holders wrote the same stock-1 and each counted a sale); violations %+v", v.LostUpdates, v.Oversell, v)
			}
		}
	}
	correct := s.run(t, oracleScenario(strategy, driver, 2*time.Second, time.Millisecond, 60, 2*time.Second), "fixed:interval=2ms")
	t.Logf("correct (ttl 2s, work 1ms): %+v sold %d", correct.Violations, correct.Figures["sold"])
	exact(t, correct, 60)
}

// oracleScenario: flash-sale on one item of stock, 4 clients, lease ttl,
// work per order, ending when sold out or after d (acquire timeout: d
// less 10 s, at least 2 s).
func oracleScenario(strategy, driver string, ttl, work time.Duration, stock int64, d time.Duration) engine.Scenario {
	return engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: driver, Workload: "flash-sale",
		Clients: 4, Duration: d, TTL: ttl, AcquireTimeout: max(d-10*time.Second, 2*time.Second),
		Params: workloads.Params{Work: workloads.Fixed(work)}, Options: registry.Values{"stock": stock, "skus": 1}, Seed: 23,
	}}
}

// exact: no violation of any kind, the stock sold out exactly.
func exact(t *testing.T, res report.Scenario, stock int64) {
	t.Helper()
	if res.Violations != (report.Violations{}) {
		t.Fatalf("violations %+v, want none", res.Violations)
	}
	if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
		t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
	}
}
