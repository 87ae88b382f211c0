package ext

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies/locktest"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// The Node.js adapter's tests (adapters/node): they skip when node or npm
// is not on PATH and fail when the adapter is not built (make adapters).

func init() {
	// TEST ONLY: adapters/node/broken.js's broken-release, a SET NX PX
	// lock whose release is a plain DEL (no owner check).
	Register("node-test-broken-release", Adapter{
		Desc: "test only: adapters/node/broken.js, a SET NX PX lock whose release deletes any holder's lock",
		Lock: "broken-release", Runtime: []string{"node", "npm"}, Folder: "node", Command: nodeCommand("broken.js"),
	})
}

// nodeFast are redlock-node's retries for the tests: 20 ms +- 10 ms
// between rounds instead of node-redlock's 200 ms +- 100 ms, so that the
// suite's sale of 150 by 50 clients ends in seconds.
var nodeFast = registry.Values{"retry-delay": 20 * time.Millisecond, "retry-jitter": 10 * time.Millisecond}

// The conformance suite passes on redlock-node and redis-semaphore-node
// (every check; goredis, since an external lock runs on DataDriver only):
// redis-semaphore's refreshes reach Config.Renewing through the adapter's
// renewing notices.
func TestNodeConformance(t *testing.T) {
	t.Run("redlock-node", func(t *testing.T) {
		t.Parallel()
		needAdapter(t, "redlock-node")
		locktest.Suite{Servers: servers, RequireTokens: true, Params: nodeFast}.Run(t, "redlock-node")
	})
	t.Run("redis-semaphore-node", func(t *testing.T) {
		t.Parallel()
		const name = "redis-semaphore-node"
		needAdapter(t, name)
		// A refresh every 100 ms rather than the library's 0.8 x TTL: the
		// suite's 300 ms and 1 s leases then keep a margin a loaded
		// machine's stalls do not eat (its probe would otherwise take a
		// late refresh for no renewal), and a lost lock is reported in
		// 100 ms rather than 4 s of a 5 s lease. TestNodeEngineRuns runs
		// the default.
		locktest.Suite{Servers: servers, RequireTokens: true, Params: registry.Values{"refresh": 100 * time.Millisecond}}.Run(t, name)
	})
}

// The suite's OwnerOnlyRelease fails on node-test-broken-release (A's
// release of its lost lease deletes B's lock and returns nil), in a child
// process (TestSuiteChild) so that its failure is observed, not fatal.
// The real variants pass it in TestNodeConformance.
func TestNodeSuiteFailsBrokenRelease(t *testing.T) {
	needAdapter(t, "node-test-broken-release")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childCheck+"=OwnerOnlyRelease/node-test-broken-release")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("OwnerOnlyRelease passed on node-test-broken-release (err %v):\n%s", err, out)
	}
	if want := "A's release = <nil>, want ErrNotOwner"; !strings.Contains(string(out), want) {
		t.Fatalf("the child failed, but not with %q:\n%s", want, out)
	}
}

// One short flash sale per variant with the safety oracle: 4 clients
// sell a stock of 40 (1 ms of work, a 2 s lease) with no violation of any
// kind, no error and no refused release; the result records the library,
// its pinned version and the node runtime; every key left on the servers
// starts with lockbench's prefix. redis-semaphore-node-sem runs with
// permits=1 (one holder at a time: a mutex), since a sale of one item is
// not safe with more holders.
func TestNodeEngineRuns(t *testing.T) {
	for _, c := range []struct {
		strategy, library, version string
		opts                       registry.Values
	}{
		{"redlock-node", "redlock", NodeRedlockVersion, nodeFast},
		{"redlock-node-quorum", "redlock", NodeRedlockVersion, nodeFast},
		{"redis-semaphore-node", "redis-semaphore", NodeSemaphoreVersion, nil},
		{"redis-semaphore-node-sem", "redis-semaphore", NodeSemaphoreVersion, registry.Values{"permits": 1}},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			t.Parallel()
			needAdapter(t, c.strategy)
			const stock = 40
			opts := registry.Values{"stock": int64(stock), "skus": 1}
			for k, v := range c.opts {
				opts[k] = v
			}
			sc := engine.Scenario{Spec: engine.Spec{
				Strategy: c.strategy, Driver: DataDriver, Workload: "flash-sale",
				Clients: 4, Duration: 20 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 10 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: opts, Seed: 5,
			}}
			sc.Retry = retry.Library()
			nodes, err := servers.Nodes(c.strategy)
			if err != nil {
				t.Fatal(err)
			}
			res, err := engine.Run(context.Background(), sc, nodes, "lockbench:node-test:"+c.strategy+":")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: sold %d, violations %+v, attempts %d, ops/s %.0f", c.strategy, res.Figures["sold"], res.Violations, res.Counters.Attempts, res.OpsPerSec)
			exactSale(t, res, stock)
			if lib := res.Library; lib == nil || lib.Name != c.library || lib.Version != c.version || !strings.HasPrefix(lib.Runtime, "node v") {
				t.Errorf("library %+v, want %s %s on node", lib, c.library, c.version)
			}
			for _, ep := range nodes {
				outsidePrefix(t, ep)
			}
		})
	}
}

// exactSale: no violation, the stock sold out exactly, no error, no
// refused release.
func exactSale(t *testing.T, res report.Scenario, stock int64) {
	t.Helper()
	if res.Violations != (report.Violations{}) {
		t.Errorf("violations %+v, want none", res.Violations)
	}
	if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
		t.Errorf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
	}
	if res.Counters.Errors != 0 || res.Counters.NotOwner != 0 {
		t.Errorf("errors %d (%v), refused releases %d; want none", res.Counters.Errors, res.Counters.ErrorSamples, res.Counters.NotOwner)
	}
}

// outsidePrefix fails t if the server at ep holds a key that does not
// start with "lockbench:" (redis-semaphore's own names would be
// "mutex:..." and "semaphore:...").
func outsidePrefix(t *testing.T, ep drivers.Endpoint) {
	t.Helper()
	d, err := drivers.Open(DataDriver, drivers.Options{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v, err := d.Do(context.Background(), "KEYS", "*")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range v.Array {
		if !strings.HasPrefix(k.Str, "lockbench:") {
			t.Errorf("%s holds key %q, outside lockbench's prefix", ep.Addr, k.Str)
		}
	}
}

// redis-semaphore's Semaphore with 3 permits, through the adapter, is
// judged as a semaphore (strategies.Semaphore from hello's caps.permits):
// 8 clients on one key never hold it more than 3 at once (capacity
// violations 0, max_holders at most 3), and overlaps are not counted for
// the holders the permits allow.
func TestNodeSemaphorePermits(t *testing.T) {
	const name = "redis-semaphore-node-sem"
	needAdapter(t, name)
	permitsRun(t, name, 5, "lockbench:node-test:sem3:")
}
