package baselines_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	_ "github.com/lockbench/lockbench/strategies/baselines"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

var (
	nodes    []engine.Node
	backends strategies.Backends
	missing  = map[strategies.Backend]string{} // backend -> why it is not installed (the tests skip)
	broken   = map[strategies.Backend]error{}  // backend -> why it is installed but did not start (the tests fail)
	servers  []*topology.Server
	// started are the servers of backends by kind (engine.Env.BackendServer).
	started = map[strategies.Backend]*topology.Server{}
)

// startBackend starts one baseline server with start. A server that is not
// installed (topology.ErrNoMariaDB, ErrNoZooKeeper, ErrNoEtcd) gives a skip
// reason naming its package; any other failure, such as a server that is
// installed but exits at start, is returned as err (with the server's log
// tail, which topology's start functions put in it), so that the tests
// needing it fail rather than skip.
func startBackend(ctx context.Context, name string, start func(context.Context) (*topology.Server, error)) (s *topology.Server, skip string, err error) {
	s, err = start(ctx)
	switch {
	case err == nil:
		return s, "", nil
	case engine.Missing(err):
		return nil, fmt.Sprintf("%s is not installed: %v", name, err), nil
	default:
		return nil, "", fmt.Errorf("%s is installed but did not start: %w", name, err)
	}
}

// TestMain starts one redis-server and, where installed, one MariaDB, one
// ZooKeeper and one etcd; a strategy whose server is not installed skips,
// one whose server is installed but did not start fails.
func TestMain(m *testing.M) {
	ctx := context.Background()
	topo, err := topology.Start(ctx, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline tests need redis-server:", err)
		os.Exit(1)
	}
	nodes = []engine.Node{{Addr: topo.Servers[0].Addr, Password: topo.Servers[0].Password}}
	start := func(b strategies.Backend, f func(context.Context) (*topology.Server, error), set func(*topology.Server)) {
		s, skip, err := startBackend(ctx, string(b), f)
		switch {
		case err != nil:
			broken[b] = err
		case skip != "":
			missing[b] = skip
		default:
			servers = append(servers, s)
			started[b] = s
			set(s)
		}
	}
	start(strategies.MariaDB, topology.StartMariaDB, func(s *topology.Server) { backends.MySQL = s.MySQLDSN() })
	start(strategies.ZooKeeper, topology.StartZooKeeper, func(s *topology.Server) {
		backends.ZooKeeper, backends.ZooKeeperAuth = []string{s.Addr}, s.ZooKeeperAuth()
	})
	start(strategies.Etcd, topology.StartEtcd, func(s *topology.Server) {
		backends.Etcd, backends.EtcdUser, backends.EtcdPassword = []string{s.EtcdEndpoint()}, topology.EtcdUser, s.Password
	})
	code := m.Run()
	topo.Stop()
	for _, s := range servers {
		s.Stop()
	}
	// The servers are gone after the tests.
	for _, s := range append(servers, topo.Servers...) {
		if topology.Alive(s.Pid) {
			fmt.Fprintf(os.Stderr, "server pid %d (%s) still alive after Stop\n", s.Pid, s.Addr)
			code = 1
		}
		if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
			fmt.Fprintf(os.Stderr, "server directory %s left behind\n", s.Dir)
			code = 1
		}
	}
	os.Exit(code)
}

var baselines = []string{"sql-rowlock", "sql-guard", "zk", "etcd", "redis-guard"}

// need skips a test whose server is not installed and fails one whose
// server is installed but did not start.
func need(t *testing.T, strategy string) {
	t.Helper()
	if b := strategies.InfoOf(strategy).Backend; b != strategies.NoBackend {
		if err, ok := broken[b]; ok {
			t.Fatalf("%s needs %s: %v", strategy, b, err)
		}
		if why, ok := missing[b]; ok {
			t.Skipf("%s needs %s: %s", strategy, b, why)
		}
	}
}

// An etcd that is installed but exits at start is a failure carrying the
// server's log tail, not a skip; one that is not installed is a skip
// naming the package. The fake etcd is first on PATH, where
// topology.StartEtcd looks it up.
func TestStartBackendFailsOnBrokenServer(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'fake etcd: cannot bind its port' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "etcd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	if !topology.HaveEtcd() {
		t.Fatal("HaveEtcd is false with a fake etcd first on PATH")
	}
	s, skip, err := startBackend(context.Background(), "etcd", topology.StartEtcd)
	if s != nil {
		s.Stop()
		t.Fatalf("the fake etcd started (pid %d)", s.Pid)
	}
	if skip != "" {
		t.Fatalf("skip %q, want a failure", skip)
	}
	if err == nil || !strings.Contains(err.Error(), "fake etcd: cannot bind its port") || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("err %v, want a start failure with the log tail", err)
	}

	// Not installed: a skip with the package's name, no error.
	notInstalled := func(context.Context) (*topology.Server, error) {
		return nil, fmt.Errorf("wrapped: %w", topology.ErrNoEtcd)
	}
	s, skip, err = startBackend(context.Background(), "etcd", notInstalled)
	if s != nil || err != nil || !strings.Contains(skip, "etcd-server") {
		t.Fatalf("not installed: server %v, skip %q, err %v; want a skip naming etcd-server", s, skip, err)
	}
}

func policy(t *testing.T, spec string) *retry.Policy {
	t.Helper()
	p, err := retry.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, sc engine.Scenario) report.Scenario {
	t.Helper()
	sc.Env.Backends = backends
	prefix := "lockbench:test:" + strings.NewReplacer("/", ":").Replace(t.Name()) + ":"
	res, err := engine.Run(context.Background(), sc, nodes, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// lockBased: the strategies with a holder the oracle watches.
func lockBased(s string) bool { return s == "sql-rowlock" || s == "zk" || s == "etcd" }

// Flash-sale, 50 clients on one hot item: every baseline sells exactly the
// stock, with no oversell, overlap or lost update; the lock-based ones pass
// every order through the oracle (one hold per order), the lock-free ones
// none.
func TestFlashSaleExact(t *testing.T) {
	const stock = 150
	for _, st := range baselines {
		t.Run(st, func(t *testing.T) {
			need(t, st)
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: st, Driver: "rueidis", Workload: "flash-sale",
				Retry: policy(t, "fixed:interval=2ms"), Clients: 50,
				Duration: 60 * time.Second, TTL: time.Second, AcquireTimeout: 30 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(stock), "skus": 1}, Seed: 1,
			}})
			if res.StopReason != "done" {
				t.Fatalf("stop reason %q, want done (sold out)", res.StopReason)
			}
			if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.Ops != stock {
				t.Fatalf("sold %d, final_stock %d, ops %d; want %d, 0, %d", res.Figures["sold"], res.Figures["final_stock"], res.Ops, stock, stock)
			}
			if v := res.Violations; v != (report.Violations{}) {
				t.Fatalf("violations %+v, want none", v)
			}
			if res.Counters.Errors != 0 {
				t.Fatalf("errors %v", res.Counters.ErrorSamples)
			}
			wantHolds := int64(0)
			if lockBased(st) {
				wantHolds = stock // plus the one hold per client that found it sold out
				if res.HoldMS.Count < wantHolds {
					t.Fatalf("hold count %d, want at least %d (every order through the oracle)", res.HoldMS.Count, wantHolds)
				}
			} else if res.HoldMS.Count != 0 {
				t.Fatalf("hold count %d for a lock-free strategy, want 0", res.HoldMS.Count)
			}
			wantDriver := "rueidis"
			if strings.HasPrefix(st, "sql-") {
				wantDriver = "mysql"
			}
			if res.Driver != wantDriver {
				t.Fatalf("driver %q, want %q", res.Driver, wantDriver)
			}
		})
	}
}

// Hot-key, 50 clients on 20 Zipf-drawn keys for 1 s: no overlap, and every
// acknowledged increment is in the counters.
func TestHotKeyExact(t *testing.T) {
	for _, st := range baselines {
		t.Run(st, func(t *testing.T) {
			need(t, st)
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: st, Driver: "goredis", Workload: "hot-key",
				Retry: policy(t, "fixed:interval=2ms"), Clients: 50,
				Duration: time.Second, TTL: time.Second, AcquireTimeout: 30 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 20, "zipf": 1.1}, Seed: 1,
			}})
			inc, sum := res.Figures["increments"], res.Figures["counter_sum"]
			if inc == 0 || inc != sum || res.Ops != inc {
				t.Fatalf("increments %d, counter_sum %d, ops %d: want equal and > 0", inc, sum, res.Ops)
			}
			if v := res.Violations; v != (report.Violations{}) {
				t.Fatalf("violations %+v, want none", v)
			}
			if res.Counters.Errors != 0 {
				t.Fatalf("errors %v", res.Counters.ErrorSamples)
			}
		})
	}
}

// The oracle sees what the guard prevents: redis-guard with its guard
// forced off (a plain GET and SET, no lock) oversells and loses updates.
func TestUnguardedOversells(t *testing.T) {
	res := run(t, engine.Scenario{Spec: engine.Spec{
		Strategy: "redis-guard", Driver: "rueidis", Workload: "flash-sale", Guard: workloads.GuardNone,
		Retry: policy(t, "none"), Clients: 50, Duration: 30 * time.Second, TTL: time.Second,
		Params: workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)}, Options: registry.Values{"stock": int64(100), "skus": 1}, Seed: 1,
	}})
	if res.Violations.Oversell == 0 || res.Violations.LostUpdates == 0 {
		t.Fatalf("violations %+v: want oversell and lost updates without lock or guard", res.Violations)
	}
	// On hot-key the same: its write, INCR in place with --guard auto
	// (TestHotKeyExact), is a plain GET and SET with none, and loses
	// increments; with cas the optimistic check alone refuses the stale
	// writes and loses none.
	for _, c := range []struct {
		guard   string
		guarded bool
	}{{workloads.GuardNone, false}, {workloads.GuardCAS, true}} {
		res := run(t, engine.Scenario{Spec: engine.Spec{
			Strategy: "redis-guard", Driver: "rueidis", Workload: "hot-key", Guard: c.guard,
			Retry: policy(t, "none"), Clients: 50, Duration: time.Second, TTL: time.Second,
			Params: workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)}, Options: registry.Values{"keys": 1}, Seed: 1,
		}})
		v, inc := res.Violations, res.Figures["increments"]
		t.Logf("hot-key, guard %s: increments %d, counter_sum %d, lost updates %d, rejected %d", c.guard, inc, res.Figures["counter_sum"], v.LostUpdates, res.Counters.Rejected)
		if res.Params["guard"] != c.guard || inc == 0 {
			t.Fatalf("guard %s: params.guard %q, increments %d", c.guard, res.Params["guard"], inc)
		}
		if c.guarded && (v.LostUpdates != 0 || res.Counters.Rejected == 0 || inc != res.Figures["counter_sum"]) {
			t.Fatalf("hot-key with cas: lost updates %d, rejected %d; want 0 and > 0", v.LostUpdates, res.Counters.Rejected)
		}
		if !c.guarded && v.LostUpdates == 0 {
			t.Fatalf("hot-key with none: lost updates 0, want > 0 (50 clients read the same value and each wrote it plus one)")
		}
	}
}

// A fencing token grows with every acquisition (zk: the znode sequence
// number; etcd: the revision), and a scenario names its missing server.
func TestFenceAndMissingBackend(t *testing.T) {
	for _, st := range []string{"zk", "etcd"} {
		t.Run(st, func(t *testing.T) {
			need(t, st)
			l, err := strategies.New(st, strategies.Config{Nodes: []drivers.Driver{nil}, TTL: time.Second, Backends: backends})
			if err != nil {
				t.Fatal(err)
			}
			defer l.(interface{ Close() error }).Close()
			last := int64(-1)
			for i := 0; i < 3; i++ {
				ls, err := l.TryAcquire(context.Background(), "lockbench:test:fence")
				if err != nil {
					t.Fatal(err)
				}
				f := ls.(strategies.Fenced).Fence()
				if f <= last {
					t.Fatalf("fence %d after %d: want growing", f, last)
				}
				last = f
				if err := ls.Release(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := ls.Release(context.Background()); err != strategies.ErrNotOwner {
					t.Fatalf("second release: %v, want ErrNotOwner", err)
				}
			}
		})
	}
	_, err := strategies.New("sql-rowlock", strategies.Config{Nodes: []drivers.Driver{nil}, TTL: time.Second})
	if err == nil || !strings.Contains(err.Error(), "mariadb") {
		t.Fatalf("sql-rowlock without Backends.MySQL: %v, want an error naming mariadb", err)
	}
}
