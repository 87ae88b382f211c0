package ext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/locktest"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// redis-py-lock passes the whole conformance suite, tokens required (the
// adapter stores lockbench's token: caller_token).
func TestPythonRedisPyLockConformance(t *testing.T) {
	t.Parallel()
	needAdapter(t, "redis-py-lock")
	locktest.Suite{Servers: servers, RequireTokens: true}.Run(t, "redis-py-lock")
}

// The python-redis-lock variants pass the suite's checks whose leases are
// whole seconds (MutualExclusion, OwnerOnlyRelease, LossReported,
// OwnedAfterAcquire): the library's expire is whole seconds and the
// adapter refuses the suite's 5 to 300 ms leases (TestPythonRedisLockSeconds
// checks expiry, renewal and tokens at 1 s instead).
func TestPythonRedisLockConformance(t *testing.T) {
	for _, name := range []string{"python-redis-lock", "python-redis-lock-renew"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			needAdapter(t, name)
			s := locktest.Suite{Servers: servers, RequireTokens: true}
			for _, c := range []struct {
				name  string
				check func(locktest.Suite, *testing.T, string, string)
			}{
				{"MutualExclusion", locktest.Suite.MutualExclusion},
				{"OwnerOnlyRelease", locktest.Suite.OwnerOnlyRelease},
				{"LossReported", locktest.Suite.LossReported},
				{"OwnedAfterAcquire", locktest.Suite.OwnedAfterAcquire},
			} {
				t.Run(c.name, func(t *testing.T) { c.check(s, t, name, DataDriver) })
			}
		})
	}
}

// python-redis-lock at whole seconds: a 1500 ms TTL is refused at the
// start with the adapter's message; a lease stores exactly its token
// under the lock key, and after its release the only key left is the
// library's signal list, under lockbench's prefix; an abandoned 1 s lease
// frees the lock within 3 s without the renewal variant, and the renewal
// variant still holds its 1 s lease after 2.5 s, then reports the loss
// when the key is deleted behind its back.
func TestPythonRedisLockSeconds(t *testing.T) {
	t.Parallel()
	needAdapter(t, "python-redis-lock")
	ctx := context.Background()
	d := pythonDriver(t, "python-redis-lock")
	if _, err := strategies.New("python-redis-lock", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 1500 * time.Millisecond,
		Prefix: "lockbench:py-test:"}); err == nil || !strings.Contains(err.Error(), "expire is whole seconds") {
		t.Fatalf("a 1500 ms TTL: %v, want the adapter's refusal (whole seconds)", err)
	}

	const prefix = "lockbench:py-test:seconds:"
	l := pythonLocker(t, "python-redis-lock", d, time.Second, prefix)
	key := prefix + "sku:1"
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, d, key); got != a.Token() {
		t.Fatalf("the lock key holds %q, the lease's token is %q", got, a.Token())
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if keys := keysOf(t, d, prefix+"*"); len(keys) != 1 || keys[0] != prefix+"lock-signal:sku:1" {
		t.Fatalf("after the release the keys under the prefix are %q, want only %slock-signal:sku:1", keys, prefix)
	}
	for _, pattern := range []string{"lock:*", "lock-signal:*"} { // the library's own names
		if keys := keysOf(t, d, pattern); len(keys) != 0 {
			t.Fatalf("keys outside lockbench's prefix: %q", keys)
		}
	}

	a, err = l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	a.(strategies.Abandonable).Abandon()
	if _, n, err := strategies.Acquire(ctx, l, key, fixed(t).New(nil), 3*time.Second); err != nil {
		t.Fatalf("an abandoned 1 s lease: the lock not free within 3 s (%d attempts): %v", n, err)
	}

	r := pythonLocker(t, "python-redis-lock-renew", d, time.Second, prefix)
	rkey := prefix + "renewed"
	a, err = r.TryAcquire(ctx, rkey)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if got := get(t, d, rkey); got != a.Token() {
		t.Fatalf("a renewed 1 s lease after 2.5 s: the key holds %q, want its token %q", got, a.Token())
	}
	if _, err := d.Do(ctx, "DEL", rkey); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.(strategies.Watched).Context().Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the renewal variant did not report the loss of its key within 3 s (renewals every 667 ms)")
	}
	if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release of the lost lease = %v, want ErrNotOwner", err)
	}
}

// The safety oracle on each Python lock, a flash sale of one item by 4
// clients. Correct (2 s lease, 1 ms of work, stock 30): sold out exactly,
// no violation of any kind. Broken, python-redis-lock (1 s lease, 1.5 s of
// work, stock 3): a lease ends while its holder works and the next
// client enters: overlap, lost leases, lost updates and oversell all
// above 0. The same with python-redis-lock-renew: renewal keeps the lease,
// 2 sold, no violation. (redis-py-lock's broken side is the conformance
// suite's OracleBothWays.)
func TestPythonOracle(t *testing.T) {
	for _, c := range []struct {
		name      string
		ttl, work time.Duration
		stock     int64
		broken    bool
	}{
		{"redis-py-lock", 2 * time.Second, time.Millisecond, 30, false},
		{"python-redis-lock", 2 * time.Second, time.Millisecond, 30, false},
		{"python-redis-lock", time.Second, 1500 * time.Millisecond, 3, true},
		{"python-redis-lock-renew", 2 * time.Second, time.Millisecond, 30, false},
		{"python-redis-lock-renew", time.Second, 1500 * time.Millisecond, 2, false},
	} {
		t.Run(c.name+"/"+c.work.String(), func(t *testing.T) {
			t.Parallel()
			needAdapter(t, c.name)
			res := pythonRun(t, c.name, c.ttl, c.work, c.stock)
			v := res.Violations
			t.Logf("ttl %v work %v: %+v sold %d final %d stop %s", c.ttl, c.work, v, res.Figures["sold"], res.Figures["final_stock"], res.StopReason)
			if c.broken {
				if v.Overlap == 0 || v.LostLeases == 0 || v.LostUpdates == 0 || v.Oversell == 0 {
					t.Fatalf("broken: %+v; want overlap, lost leases, lost updates and oversell > 0", v)
				}
				return
			}
			if v != (report.Violations{}) {
				t.Fatalf("violations %+v, want none", v)
			}
			if res.Figures["sold"] != c.stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
				t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, c.stock)
			}
			if res.Counters.Errors != 0 {
				t.Fatalf("errors %v %v", res.Counters.ErrorsByKind, res.Counters.ErrorSamples)
			}
		})
	}
}

// Each Python strategy runs the version requirements.txt pins: its
// description names it, and its adapter's hello reports it (the result's
// scenarios[].library).
func TestPythonVersionsPinned(t *testing.T) {
	t.Parallel()
	needAdapter(t, "redis-py-lock")
	dir, err := Folder("redis-py-lock")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "requirements.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if pkg, rest, ok := strings.Cut(line, "=="); ok && !strings.HasPrefix(line, "#") {
			pins[pkg] = strings.Fields(rest)[0]
		}
	}
	d := pythonDriver(t, "redis-py-lock")
	for name, pkg := range map[string]string{"redis-py-lock": "redis", "python-redis-lock": "python-redis-lock",
		"python-redis-lock-renew": "python-redis-lock"} {
		pin := pins[pkg]
		if pin == "" {
			t.Fatalf("requirements.txt pins no %s (%q)", pkg, pins)
		}
		if desc := strategies.InfoOf(name).Desc; !strings.Contains(desc, pkg+" "+pin) {
			t.Errorf("%s: description %q does not name %s %s", name, desc, pkg, pin)
		}
		lib, version := strategies.LibraryOf(pythonLocker(t, name, d, 2*time.Second, "lockbench:py-test:versions:"))
		if lib != pkg || version != pin {
			t.Errorf("%s: the adapter runs %s %s, want %s %s", name, lib, version, pkg, pin)
		}
	}
}

// pythonRun runs a flash sale of one item of stock with 4 clients, lease
// ttl and work per order, for at most 6 s; the retry is the library's own
// (redis-py-lock) or a try every 2 ms.
func pythonRun(t *testing.T, name string, ttl, work time.Duration, stock int64) report.Scenario {
	t.Helper()
	nodes, err := servers.Nodes(name)
	if err != nil {
		t.Fatal(err)
	}
	p := retry.Library()
	if !strategies.InfoOf(name).OwnsRetry {
		p = fixed(t)
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: name, Driver: DataDriver, Workload: "flash-sale",
		Retry: p, Clients: 4, Duration: 6 * time.Second, TTL: ttl, AcquireTimeout: 2 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(work)}, Options: registry.Values{"stock": stock, "skus": 1}, Seed: 29,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:py-test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fixed is a retry every 2 ms.
func fixed(t *testing.T) *retry.Policy {
	t.Helper()
	p, err := retry.Parse("fixed:interval=2ms")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pythonDriver opens the data driver on the package's standalone server.
func pythonDriver(t *testing.T, name string) drivers.Driver {
	t.Helper()
	eps, err := servers.Nodes(name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := drivers.Open(DataDriver, drivers.Options{Endpoint: eps[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// pythonLocker opens strategy name on d with lease ttl and key prefix.
func pythonLocker(t *testing.T, name string, d drivers.Driver, ttl time.Duration, prefix string) strategies.Locker {
	t.Helper()
	l, err := strategies.New(name, strategies.Config{Nodes: []drivers.Driver{d}, TTL: ttl, Clients: 2, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.(interface{ Close() error }).Close() })
	return l
}

// get is the string value of key on d ("" when it does not exist).
func get(t *testing.T, d drivers.Driver, key string) string {
	t.Helper()
	r, err := d.Do(context.Background(), "GET", key)
	if err != nil && !errors.Is(err, drivers.ErrNil) {
		t.Fatal(err)
	}
	return r.Str
}

// keysOf are the keys of d that match pattern.
func keysOf(t *testing.T, d drivers.Driver, pattern string) []string {
	t.Helper()
	r, err := d.Do(context.Background(), "KEYS", pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range r.Array {
		out = append(out, e.Str)
	}
	return out
}
