package rueidislk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis/rueidislock"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/strategies/rueidislk"
	"github.com/lockbench/lockbench/workloads"
)

var (
	topo  *topology.Topology
	nodes []engine.Node
)

func TestMain(m *testing.M) {
	var err error
	topo, err = topology.Start(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rueidislk tests need redis-server:", err)
		os.Exit(1)
	}
	nodes = []engine.Node{{Addr: topo.Servers[0].Addr, Password: topo.Servers[0].Password}}
	code := m.Run()
	topo.Stop()
	os.Exit(code)
}

// open returns a driver to the test server and a rueidislock locker on
// it; both are closed at the test's end.
func open(t *testing.T, driver string, ttl time.Duration, params registry.Values) (drivers.Driver, strategies.Locker) {
	t.Helper()
	ds, err := engine.Open(context.Background(), driver, nodes, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds[0].Close() })
	l, err := strategies.New(rueidislk.Name, strategies.Config{Nodes: ds, TTL: ttl, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.(io.Closer).Close() })
	return ds[0], l
}

func lockKey(t *testing.T) string { return "lockbench:rueidislk:{" + t.Name() + "}:lock" }

// count returns how many of ks exist.
func count(t *testing.T, d drivers.Driver, ks ...string) int64 {
	t.Helper()
	r, err := d.Do(context.Background(), append([]string{"EXISTS"}, ks...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r.Int
}

// del deletes ks from another client than the locker's.
func del(t *testing.T, d drivers.Driver, ks ...string) {
	t.Helper()
	if _, err := d.Do(context.Background(), append([]string{"DEL"}, ks...)...); err != nil {
		t.Fatal(err)
	}
}

// eventually waits up to limit for cond.
func eventually(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); ; time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// scripts returns the server's count of EVALSHA and EVAL calls (INFO
// commandstats): every command rueidislock sends is one of its scripts.
func scripts(t *testing.T, d drivers.Driver) int64 {
	t.Helper()
	r, err := d.Do(context.Background(), "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(r.Str, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
				v, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				n += v
			}
		}
	}
	return n
}

func TestSplit(t *testing.T) {
	for _, c := range []struct{ key, prefix, name string }{
		{"lockbench:run1:{sku:0:1}:lock", "lockbench:run1", "{sku:0:1}:lock"},
		{"lockbench:run1:r2:{ctr:7}:lock", "lockbench:run1:r2", "{ctr:7}:lock"},
		{"a:b:c", "a:b", "c"},
		{"{x}:lock", "{x}", "lock"},
		{"plain", "plain", ""},
	} {
		p, n := rueidislk.Split(c.key)
		if p != c.prefix || n != c.name {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", c.key, p, n, c.prefix, c.name)
		}
	}
	got := rueidislk.RedisKeys("lockbench:run1:{sku:0:1}:lock", 3)
	want := []string{"lockbench:run1:0:{sku:0:1}:lock", "lockbench:run1:1:{sku:0:1}:lock", "lockbench:run1:2:{sku:0:1}:lock",
		"lockbench:run1:3:{sku:0:1}:lock", "lockbench:run1:4:{sku:0:1}:lock"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("RedisKeys = %q, want %q", got, want)
	}
}

// On go-redis the strategy is refused with the driver it needs.
func TestRefusesGoRedis(t *testing.T) {
	ds, err := engine.Open(context.Background(), "goredis", nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ds[0].Close()
	_, err = strategies.New(rueidislk.Name, strategies.Config{Nodes: ds, TTL: time.Second})
	if err == nil || !strings.Contains(err.Error(), "rueidis driver only, not on goredis") {
		t.Fatalf("New on goredis = %v, want the rueidis-only error", err)
	}
	if strategies.RunsOn(rueidislk.Name, "goredis") || !strategies.RunsOn(rueidislk.Name, "rueidis") {
		t.Fatal("Info.Drivers is not rueidis only")
	}
}

// The library's keys: a held lock is stored in 2N-1 keys under the lock
// key's namespace, and the release deletes every one.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	d, l := open(t, "rueidis", 5*time.Second, registry.Values{"key-majority": 3})
	key := lockKey(t)
	ks := rueidislk.RedisKeys(key, 3)
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	// A majority is set before TryAcquire returns, the rest in the
	// library's background.
	if n := count(t, d, ks...); n < 3 {
		t.Fatalf("%d of %d keys set, want a majority of 3", n, len(ks))
	}
	if !eventually(5*time.Second, func() bool { return count(t, d, ks...) == 5 }) {
		t.Fatalf("%d of 5 keys set after 5 s", count(t, d, ks...))
	}
	if count(t, d, key) != 0 {
		t.Fatal("the lock key itself was written")
	}
	for _, k := range ks {
		if !strings.HasPrefix(k, "lockbench:rueidislk:") {
			t.Fatalf("key %s is outside the lock key's namespace", k)
		}
		pttl, err := d.Do(ctx, "PTTL", k)
		if err != nil || pttl.Int <= 0 || pttl.Int > 5000 {
			t.Fatalf("PTTL %s = %+v (%v), want 1..5000 ms", k, pttl, err)
		}
	}
	if a.Token() == "" || len(a.Token()) != 32 {
		t.Fatalf("token %q", a.Token())
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, ks...); n != 0 {
		t.Fatalf("%d keys left after the release", n)
	}
	b, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if b.Token() == a.Token() {
		t.Fatal("two acquisitions have the same token")
	}
	_ = b.Release(ctx)
}

// The lock-as-context: deleting one of the 3 keys behind the holder's
// back leaves it a majority (2 of 3) and the lock; deleting a second
// cancels its context (the library learns of it from the invalidations),
// its release reports ErrNotOwner, and another client takes the lock.
func TestContextCancelledWhenKeysDeleted(t *testing.T) {
	ctx := context.Background()
	d, l := open(t, "rueidis", 10*time.Second, nil)
	key := lockKey(t)
	ks := rueidislk.RedisKeys(key, rueidislk.DefaultKeyMajority)
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	w := a.(strategies.Watched)
	if !eventually(5*time.Second, func() bool { return count(t, d, ks...) == 3 }) {
		t.Fatal("the third key was never set")
	}
	del(t, d, ks[0])
	// Not a speed bound: a library that gave the lock up on one lost key
	// would cancel within a round trip; 300 ms is far longer.
	time.Sleep(300 * time.Millisecond)
	if w.Context().Err() != nil {
		t.Fatal("the lease was cancelled with 2 of its 3 keys still held")
	}
	if n := count(t, d, ks...); n != 2 {
		t.Fatalf("%d keys after deleting one, want 2 (the library does not set it again)", n)
	}
	del(t, d, ks[1])
	select {
	case <-w.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease's context was not cancelled within 5 s of losing its majority")
	}
	if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release of the lost lease = %v, want ErrNotOwner", err)
	}
	if n := count(t, d, ks...); n != 0 {
		t.Fatalf("%d keys left: the lost lease's release did not delete its last key", n)
	}
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := l.TryAcquire(bctx, key)
	if err != nil {
		t.Fatalf("another client could not take the lost lock: %v", err)
	}
	_ = b.Release(ctx)
}

// A waiter sleeps on the invalidation, not a poll: while the lock is held
// (lease 20 s, so no extend falls in the test) it sends no command after
// its first attempt; the release wakes it and it takes the lock.
func TestWaiterSendsNothingUntilRelease(t *testing.T) {
	ctx := context.Background()
	d, l := open(t, "rueidis", 20*time.Second, nil)
	key := lockKey(t)
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ks := rueidislk.RedisKeys(key, rueidislk.DefaultKeyMajority)
	if !eventually(5*time.Second, func() bool { return count(t, d, ks...) == 3 }) {
		t.Fatal("the third key was never set")
	}
	before := scripts(t, d)
	type res struct {
		l   strategies.Lease
		err error
	}
	got := make(chan res, 1)
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	go func() {
		b, err := l.TryAcquire(bctx, key)
		got <- res{b, err}
	}()
	// Its first attempt: one script (the first key is held, so the
	// library does not try the others).
	if !eventually(5*time.Second, func() bool { return scripts(t, d) > before }) {
		t.Fatal("the waiter made no attempt")
	}
	first := scripts(t, d)
	if first != before+1 {
		t.Fatalf("the waiter's attempt sent %d scripts, want 1", first-before)
	}
	time.Sleep(500 * time.Millisecond)
	if n := scripts(t, d); n != first {
		t.Fatalf("the waiter sent %d scripts while the lock stayed held, want 0 (no polling)", n-first)
	}
	select {
	case r := <-got:
		t.Fatalf("the waiter returned while the lock was held: %v", r.err)
	default:
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("the waiter did not get the released lock: %v", r.err)
	}
	_ = r.l.Release(ctx)
}

// A held lock: TryAcquire waits until ctx's deadline and returns it;
// strategies.Acquire turns it into ErrAcquireTimeout after one call; the
// holder keeps its keys.
func TestAcquireTimeout(t *testing.T) {
	ctx := context.Background()
	d, l := open(t, "rueidis", 10*time.Second, nil)
	key := lockKey(t)
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = l.TryAcquire(tctx, key)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryAcquire on a held lock = %v, want context.DeadlineExceeded", err)
	}
	_, n, err := strategies.Acquire(ctx, l, key, retry.Library().New(nil), 300*time.Millisecond)
	if !errors.Is(err, strategies.ErrAcquireTimeout) || n != 1 {
		t.Fatalf("Acquire = %v after %d calls, want ErrAcquireTimeout after 1", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.TryAcquire(cctx, key); !errors.Is(err, context.Canceled) {
		t.Fatalf("TryAcquire on a cancelled context = %v", err)
	}
	if a.(strategies.Watched).Context().Err() != nil {
		t.Fatal("the holder lost its lease to the waiters")
	}
	if n := count(t, d, rueidislk.RedisKeys(key, rueidislk.DefaultKeyMajority)...); n < 2 {
		t.Fatalf("the holder has %d keys", n)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Abandon (a crash) keeps the lock for one validity, then frees it.
func TestAbandon(t *testing.T) {
	ctx := context.Background()
	d, l := open(t, "rueidis", time.Second, nil)
	key := lockKey(t)
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a.(strategies.Abandonable).Abandon()
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := l.TryAcquire(bctx, key)
	if err != nil {
		t.Fatalf("the abandoned lock was not freed: %v", err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("the abandoned lock was free after %v, before its 1 s validity", waited)
	}
	if a.(strategies.Watched).Context().Err() == nil {
		t.Fatal("the abandoned lease's context is live after its lock was taken")
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, rueidislk.RedisKeys(key, rueidislk.DefaultKeyMajority)...); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

// Close ends held leases and refuses new acquires.
func TestClose(t *testing.T) {
	ctx := context.Background()
	_, l := open(t, "rueidis", 10*time.Second, nil)
	a, err := l.TryAcquire(ctx, lockKey(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.(strategies.Watched).Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a held lease outlived Close by 5 s")
	}
	if _, err := l.TryAcquire(ctx, lockKey(t)); !errors.Is(err, rueidislock.ErrLockerClosed) {
		t.Fatalf("TryAcquire after Close = %v, want ErrLockerClosed", err)
	}
}

// flashSale runs flash-sale on one item until it is sold out or for
// duration, and checks that no key is left under the run's prefix.
func flashSale(t *testing.T, clients int, stock int64, ttl, work, duration time.Duration, params registry.Values) report.Scenario {
	t.Helper()
	opts := registry.Values{"stock": stock, "skus": 1}
	for k, v := range params {
		opts[k] = v
	}
	prefix := "lockbench:rueidislk:" + t.Name() + ":"
	res, err := engine.Run(context.Background(), engine.Scenario{Spec: engine.Spec{
		Strategy: rueidislk.Name, Driver: "rueidis", Workload: "flash-sale", Retry: retry.Library(),
		Clients: clients, Duration: duration, TTL: ttl, AcquireTimeout: 50 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(work)}, Options: opts, Seed: 7,
	}}, nodes, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := topology.Command(nodes[0].Addr, nodes[0].Password, time.Second, "EVAL",
		"return #redis.call('keys', ARGV[1])", "0", prefix+"*"); err != nil || n != "0" {
		t.Fatalf("%s keys left under %s after the run (%v)", n, prefix, err)
	}
	return res
}

// A healthy lease (2 s, renewed every 1 s) sells exactly the stock to 20
// contending clients with no violation; the liveness oracle reports it
// not measured (its lock is kept in keys other than its lock key,
// strategies.Stored, and the library's stored value is not a reported
// token).
func TestFlashSaleExact(t *testing.T) {
	const stock = 100
	res := flashSale(t, 20, stock, 2*time.Second, time.Millisecond, 60*time.Second, nil)
	if v := res.Violations; v.Total() != 0 {
		t.Fatalf("violations %+v, want none", v)
	}
	if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
		t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
	}
	if c := res.Counters; c.Errors != 0 || c.Timeouts != 0 || c.NotOwner != 0 {
		t.Fatalf("counters %+v, want no errors, timeouts or foreign releases", c)
	}
	if res.Retry != retry.LibraryName {
		t.Fatalf("retry %q, want %q", res.Retry, retry.LibraryName)
	}
	if lv := res.Liveness; lv == nil || lv.Measured || lv.NotMeasured == "" {
		t.Fatalf("liveness %+v, want not measured with a reason", lv)
	}
}

// A critical section of 2.5 leases (lease 1 s, work 2.5 s): rueidislock
// renews every half lease, so no waiter enters while the holder works
// (only a renewal late by 500 ms would lose it). With an extend interval
// longer than the lease (5 s) the keys expire mid-section, a waiter takes
// the lock, and the oracle sees the overlap: the same run both ways.
func TestRenewalOutlivesTTL(t *testing.T) {
	t.Run("renewed", func(t *testing.T) {
		res := flashSale(t, 4, 2, time.Second, 2500*time.Millisecond, 60*time.Second, nil)
		if v := res.Violations; v.Overlap != 0 || v.Total() != 0 {
			t.Fatalf("violations %+v, want none: the renewal kept the lock", v)
		}
		if res.Figures["sold"] != 2 {
			t.Fatalf("sold %d, want 2", res.Figures["sold"])
		}
	})
	t.Run("extend-interval-past-the-lease", func(t *testing.T) {
		// Every section loses its lease, so the sale never completes
		// (flash-sale rejects the write of a lease reported lost): 8 s.
		res := flashSale(t, 4, 1, time.Second, 2500*time.Millisecond, 8*time.Second, registry.Values{"extend-interval": 5 * time.Second})
		if v := res.Violations; v.Overlap == 0 || v.LostLeases == 0 {
			t.Fatalf("violations %+v, want an overlap and a lost lease: the keys expired mid-section", v)
		}
		if res.Counters.Rejected == 0 || res.Figures["sold"] != 0 {
			t.Fatalf("rejected %d sold %d: want the lost leases' writes rejected", res.Counters.Rejected, res.Figures["sold"])
		}
	})
}

// On a 3-master Redis Cluster the library's client routes each key by
// slot (the keys keep the lock key's hash tag): exact sales over 6 items,
// and no key left on any node after the run.
func TestOnCluster(t *testing.T) {
	ctx := context.Background()
	ct, err := topology.StartCluster(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer ct.Stop()
	s0 := ct.Servers[0]
	res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
		Strategy: rueidislk.Name, Driver: "rueidis", Workload: "flash-sale", Retry: retry.Library(),
		Clients: 20, Duration: 30 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 15 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"stock": int64(40), "skus": 6}, Seed: 4,
	}}, []engine.Node{{Addr: s0.Addr, Password: s0.Password, Cluster: true}}, "lockbench:rueidislk-cluster:")
	if err != nil {
		t.Fatal(err)
	}
	if res.Violations.Total() != 0 || res.Counters.Errors != 0 || res.Figures["sold"] != 240 {
		t.Fatalf("violations %+v errors %v sold %d; want none, none, 240 (6 x 40)", res.Violations, res.Counters.ErrorsByKind, res.Figures["sold"])
	}
	for _, s := range ct.Servers {
		if n, err := topology.Command(s.Addr, s.Password, time.Second, "DBSIZE"); err != nil || n != "0" {
			t.Fatalf("node %s holds %s keys after the run (%v)", s.Addr, n, err)
		}
	}
}
