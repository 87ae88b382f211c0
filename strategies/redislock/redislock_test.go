package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/redislock"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

var topo *topology.Topology

func TestMain(m *testing.M) {
	var err error
	topo, err = topology.Start(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redislock tests need redis-server:", err)
		os.Exit(1)
	}
	code := m.Run()
	topo.Stop()
	os.Exit(code)
}

func nodes() []engine.Node {
	s := topo.Servers[0]
	return []engine.Node{{Addr: s.Addr, Password: s.Password}}
}

func open(t *testing.T, driver string) []drivers.Driver {
	t.Helper()
	ds, err := engine.Open(context.Background(), driver, nodes(), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds[0].Close() })
	return ds
}

func newLocker(t *testing.T, ds []drivers.Driver, ttl time.Duration, p registry.Values) strategies.Locker {
	t.Helper()
	l, err := strategies.New("redislock", strategies.Config{Nodes: ds, TTL: ttl, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func run(t *testing.T, sc engine.Scenario) report.Scenario {
	t.Helper()
	res, err := engine.Run(context.Background(), sc, nodes(), "lockbench:redislocktest:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// strategies are the retry-strategy settings the workload tests run.
var retryStrategies = []registry.Values{
	nil, // none, the library's default
	{"retry-strategy": "linear", "retry-interval": 2 * time.Millisecond},
	{"retry-strategy": "exponential"},
}

func label(p registry.Values) string {
	if p == nil {
		return "none"
	}
	return p.String("retry-strategy")
}

// The description names the pinned version (strategies/libs checks it
// against go.mod); the strategy runs on go-redis only.
func TestVersionPinned(t *testing.T) {
	info := strategies.InfoOf("redislock")
	if !strings.Contains(info.Desc, redislock.Module+" "+redislock.Version) || !info.OwnsRetry {
		t.Fatalf("%+v; want the version in Desc and OwnsRetry", info)
	}
	if !strategies.RunsOn("redislock", "goredis") || strategies.RunsOn("redislock", "rueidis") {
		t.Fatal("redislock must run on goredis only")
	}
}

// On the rueidis driver the strategy is refused with a clear error (the
// CLI skips those scenarios before it gets here).
func TestRueidisRefused(t *testing.T) {
	_, err := strategies.New("redislock", strategies.Config{Nodes: open(t, "rueidis"), TTL: time.Second})
	if err == nil || !strings.Contains(err.Error(), "goredis driver only") {
		t.Fatalf("New on rueidis = %v, want an error naming the goredis driver", err)
	}
}

// A healthy lease (2 s, 1 ms of work): 10 clients sell exactly the stock
// with no violation under each of redislock's retry strategies, and the
// liveness oracle measures the tokens.
func TestFlashSaleHealthy(t *testing.T) {
	for _, p := range retryStrategies {
		t.Run(label(p), func(t *testing.T) {
			const stock = 40
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "redislock", Driver: "goredis", Workload: "flash-sale", Retry: retry.Library(),
				Clients: 10, Duration: 60 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 30 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: mergeOpts(p, registry.Values{"stock": int64(stock), "skus": 1}),
				Liveness: 20 * time.Millisecond, Seed: 1,
			}})
			if res.Violations != (report.Violations{}) {
				t.Fatalf("violations %+v, want none", res.Violations)
			}
			if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
				t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
			}
			if res.Retry != retry.LibraryName || res.Counters.Errors != 0 || res.Counters.NotOwner != 0 {
				t.Fatalf("retry %q, counters %+v; want library, no errors, no foreign release", res.Retry, res.Counters)
			}
			if res.Liveness == nil || !res.Liveness.Measured {
				t.Fatalf("liveness %+v: the oracle did not measure redislock's tokens", res.Liveness)
			}
		})
	}
}

func mergeOpts(a, b registry.Values) registry.Values {
	out := registry.Values{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// A lease shorter than the work (50 ms lease, 200 ms of work, 4 clients)
// is not renewed by redislock: the oracle sees the overlap and the lost
// updates.
func TestShortLeaseOverlaps(t *testing.T) {
	for _, p := range retryStrategies {
		t.Run(label(p), func(t *testing.T) {
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "redislock", Driver: "goredis", Workload: "flash-sale", Retry: retry.Library(),
				Clients: 4, Duration: 10 * time.Second, TTL: 50 * time.Millisecond, AcquireTimeout: 10 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(200 * time.Millisecond)}, Options: mergeOpts(p, registry.Values{"stock": int64(8), "skus": 1}), Seed: 2,
			}})
			v := res.Violations
			t.Logf("overlap %d lost updates %d oversell %d not-owner releases %d", v.Overlap, v.LostUpdates, v.Oversell, res.Counters.NotOwner)
			if v.Overlap == 0 || v.LostUpdates == 0 {
				t.Fatalf("violations %+v; want overlap and lost updates > 0 (a 50 ms lease under 200 ms of work)", v)
			}
		})
	}
}

// scriptCalls returns how many EVALSHA and EVAL commands the server ran
// since its statistics were last reset.
func scriptCalls(t *testing.T, d drivers.Driver) int {
	t.Helper()
	r, err := d.Do(context.Background(), "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`cmdstat_(?:evalsha|eval):calls=(\d+)`).FindAllStringSubmatch(r.Str, -1) {
		c, _ := strconv.Atoi(m[1])
		n += c
	}
	return n
}

// The retry strategies reach the library: on a held lock NoRetry makes one
// attempt, LinearBackoff and ExponentialBackoff with retry-limit=N make
// 1+N (each attempt is one run of redislock's obtain script), then
// ErrNotAcquired. Without retry-limit an acquire timeout ends the loop
// (ErrAcquireTimeout); with no deadline at all, redislock bounds its own
// wait by one TTL (ErrNotAcquired).
func TestRetryStrategies(t *testing.T) {
	ctx := context.Background()
	ds := open(t, "goredis")
	key := "lockbench:redislocktest:{retry}:lock"
	a, err := newLocker(t, ds, 30*time.Second, nil).TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	for _, c := range []struct {
		p     registry.Values
		calls int
	}{
		{nil, 1},
		{registry.Values{"retry-strategy": "linear", "retry-interval": 5 * time.Millisecond, "retry-limit": 3}, 4},
		{registry.Values{"retry-strategy": "exponential", "retry-min": time.Millisecond, "retry-max": 10 * time.Millisecond, "retry-limit": 2}, 3},
	} {
		l := newLocker(t, ds, 30*time.Second, c.p)
		if _, err := ds[0].Do(ctx, "CONFIG", "RESETSTAT"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
			t.Fatalf("%v on a held lock: %v, want ErrNotAcquired", c.p, err)
		}
		if n := scriptCalls(t, ds[0]); n != c.calls {
			t.Fatalf("%v: %d obtain scripts run, want %d", c.p, n, c.calls)
		}
		if st := l.(strategies.StatsReporter).Stats(); st["gave_up"] != 1 {
			t.Fatalf("%v: stats %v, want gave_up 1", c.p, st)
		}
	}
	linear := newLocker(t, ds, 30*time.Second, registry.Values{"retry-strategy": "linear", "retry-interval": 5 * time.Millisecond})
	if _, _, err := strategies.Acquire(ctx, linear, key, retry.Library().New(nil), 200*time.Millisecond); !errors.Is(err, strategies.ErrAcquireTimeout) {
		t.Fatalf("linear without a limit under a 200ms acquire timeout: %v, want ErrAcquireTimeout", err)
	}
	short := newLocker(t, ds, 200*time.Millisecond, registry.Values{"retry-strategy": "linear", "retry-interval": 5 * time.Millisecond})
	if _, err := short.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
		t.Fatalf("linear without a limit or deadline: %v, want ErrNotAcquired after redislock's own one-TTL bound", err)
	}
}

// extend=on: the lease is an Extender whose Extend (Lock.Refresh) restores
// the TTL while it holds, and fails with ErrExtendFailed once another
// client holds the lock; extend=off leases are not Extenders.
func TestExtend(t *testing.T) {
	ctx := context.Background()
	ds := open(t, "goredis")
	key := "lockbench:redislocktest:{extend}:lock"
	off, err := newLocker(t, ds, time.Second, nil).TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := off.(strategies.Extender); ok {
		t.Fatal("extend=off: the lease is an Extender")
	}
	if err := off.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l := newLocker(t, ds, 2*time.Second, registry.Values{"extend": "on"})
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ds[0].Do(ctx, "PEXPIRE", key, "500")
	if err := a.(strategies.Extender).Extend(ctx); err != nil {
		t.Fatalf("extend of a held lease: %v", err)
	}
	if p, _ := ds[0].Do(ctx, "PTTL", key); p.Int <= 500 {
		t.Fatalf("PTTL %d ms after the extend, want above 500 (back to the 2 s TTL)", p.Int)
	}
	ds[0].Do(ctx, "DEL", key) // A's lease "expires"; B takes the lock
	b, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.(strategies.Extender).Extend(ctx); !errors.Is(err, strategies.ErrExtendFailed) {
		t.Fatalf("extend of a lease another client holds: %v, want ErrExtendFailed", err)
	}
	if st := l.(strategies.StatsReporter).Stats(); st["extends"] != 1 || st["extend_failures"] != 1 {
		t.Fatalf("stats %v, want 1 extend and 1 failure", st)
	}
	if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("A's release: %v, want ErrNotOwner", err)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Config.ConstantToken is honoured, and shows its flaw at once: redislock
// v0.9.4 re-obtains a key that already holds the caller's token, so with
// one value for every client a second client takes a held lock.
func TestConstantToken(t *testing.T) {
	ctx := context.Background()
	ds := open(t, "goredis")
	key := "lockbench:redislocktest:{constant}:lock"
	l, err := strategies.New("redislock", strategies.Config{Nodes: ds, TTL: 5 * time.Second, ConstantToken: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if a.Token() != strategies.ConstantValue {
		t.Fatalf("token %q, want the constant %q", a.Token(), strategies.ConstantValue)
	}
	if _, err := l.TryAcquire(ctx, key); err != nil {
		t.Fatalf("B's acquire of A's lock with the shared constant token: %v, want success (the flaw)", err)
	}
	_ = a.Release(ctx)
}
