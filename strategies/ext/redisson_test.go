package ext

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/locktest"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// The conformance suite's checks on the Redisson adapter. Every check
// starts a JVM of its own (about a second each), so each variant runs
// the checks that judge what it adds:
//   - redisson: every check but LossReported (its leases are not
//     watched: a fixed lease, no watchdog) and FIFOOrder; OracleBothWays
//     shows the broken side (a 20 ms lease through 100 ms of work: overlap)
//     and the correct one (none);
//   - redisson-watchdog: LossReported (a lock deleted behind the holder's
//     back is reported lost: the watchdog drops it), LeaseExpires (an
//     abandoned lease is no longer renewed and expires), TokensReported
//     (a 300 ms lease still held after 3 s was renewed, and the adapter
//     said so: "renewing" before each of the watchdog's renewals),
//     OwnerOnlyRelease;
//   - redisson-rw: TokensReported (the writer's field, two readers'
//     fields, "mode" declared no token, the key gone after the releases);
//   - redisson-fair: FIFOOrder.
func TestRedissonConformance(t *testing.T) {
	s := locktest.Suite{Servers: servers, RequireTokens: true}
	for _, c := range []struct {
		name   string
		checks map[string]func(*testing.T, string, string)
	}{
		{"redisson", map[string]func(*testing.T, string, string){
			"MutualExclusion": s.MutualExclusion, "OwnerOnlyRelease": s.OwnerOnlyRelease,
			"LeaseExpires": s.LeaseExpires, "TokensReported": s.TokensReported, "OracleBothWays": s.OracleBothWays,
			"OwnedAfterAcquire": s.OwnedAfterAcquire, "ReleaseAfterExpiry": s.ReleaseAfterExpiry}},
		{"redisson-watchdog", map[string]func(*testing.T, string, string){
			"LossReported": s.LossReported, "LeaseExpires": s.LeaseExpires, "TokensReported": s.TokensReported,
			"OwnerOnlyRelease": s.OwnerOnlyRelease}},
		{"redisson-rw", map[string]func(*testing.T, string, string){"TokensReported": s.TokensReported}},
		{"redisson-fair", map[string]func(*testing.T, string, string){"FIFOOrder": s.FIFOOrder}},
	} {
		t.Run(c.name, func(t *testing.T) {
			needAdapter(t, c.name)
			for name, check := range c.checks {
				t.Run(name, func(t *testing.T) { check(t, c.name, DataDriver) })
			}
		})
	}
}

// One short engine run per variant: 4 clients sell a stock of 40 on one
// item (flash-sale, 1 ms of work, a 2 s lease), through each variant's
// own wait (retry "library"); the oracle finds no violation and the
// stock sells out exactly. redisson-rw sells at read-ratio 0.5, so half
// its operations take the read side, and no acquire gives up (each waits
// with Redisson's tryLock, reads too). redisson-semaphore runs with one
// permit here (an exclusive lock: the flash sale needs one), and its one
// stuck lock is the semaphore's free-permit counter, which
// RPermitExpirableSemaphore keeps without a TTL; TestRedissonSemaphore
// runs it with 3. The runs go in parallel (a JVM each); the 2 s lease
// leaves a loaded machine's stalls far behind 1 ms of work.
func TestRedissonEngineRuns(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  registry.Values
		stuck int64
	}{
		{"redisson", nil, 0},
		{"redisson-watchdog", nil, 0},
		{"redisson-fair", nil, 0},
		{"redisson-rw", registry.Values{"read-ratio": 0.5}, 0},
		{"redisson-fenced", nil, 0},
		{"redisson-semaphore", registry.Values{"permits": 1}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			needAdapter(t, c.name)
			const stock = 40
			res := redissonRun(t, c.name, c.opts, stock)
			v := res.Violations
			t.Logf("%s: %+v sold %d ops %d, counters %+v, library %+v", c.name, v, res.Figures["sold"], res.Ops, res.Counters, res.Library)
			if v.StuckLocks != c.stuck {
				t.Errorf("stuck locks %d, want %d", v.StuckLocks, c.stuck)
			}
			v.StuckLocks = 0
			if v != (report.Violations{}) { // MaxHolders is set for a semaphore of more than 1 permit only
				t.Errorf("violations %+v, want none", v)
			}
			if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
				t.Errorf("sold %d, final stock %d, stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
			}
			if res.Counters.Failures != 0 || res.Counters.Errors != 0 {
				t.Errorf("gave up %d, errors %d (%v); want 0", res.Counters.Failures, res.Counters.Errors, res.Counters.ErrorsByKind)
			}
			if res.Library == nil || res.Library.Name != "org.redisson:redisson" || res.Library.Version != RedissonVersion {
				t.Errorf("library %+v, want org.redisson:redisson %s", res.Library, RedissonVersion)
			}
		})
	}
}

// redissonRun runs the flash sale of TestRedissonEngineRuns on strategy.
func redissonRun(t *testing.T, strategy string, opts registry.Values, stock int64) report.Scenario {
	t.Helper()
	o := registry.Values{"stock": stock, "skus": 1}
	for k, v := range opts {
		o[k] = v
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: DataDriver, Workload: "flash-sale", Retry: retry.Library(),
		Clients: 4, Duration: 20 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 5 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: o, Seed: 37,
	}}
	nodes, err := servers.Nodes(strategy)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:ext-redisson:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// redisson-semaphore with 3 permits, 8 clients on one key (lock-cycle, the
// workload a shared lock may run): the oracle counts by permits and finds
// no capacity violation, at most 3 holders at once, and no overlap.
func TestRedissonSemaphore(t *testing.T) {
	const name = "redisson-semaphore"
	needAdapter(t, name)
	permitsRun(t, name, 41, "lockbench:ext-redisson:sem3:")
}

// adapters/java/pom.xml pins the Redisson that RedissonVersion names, and
// each Redisson strategy's description (lockbench list) names it. No JVM.
func TestRedissonVersionPinned(t *testing.T) {
	b, err := os.ReadFile("../../adapters/java/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "<redisson.version>" + RedissonVersion + "</redisson.version>"; !strings.Contains(string(b), want) {
		t.Errorf("adapters/java/pom.xml does not pin %s", want)
	}
	for _, n := range []string{"redisson", "redisson-watchdog", "redisson-fair", "redisson-rw", "redisson-fenced", "redisson-semaphore"} {
		if d := strategies.InfoOf(n).Desc; !strings.Contains(d, "Redisson "+RedissonVersion) {
			t.Errorf("%s: description %q does not name Redisson %s", n, d, RedissonVersion)
		}
		if !IsExternal(n) {
			t.Errorf("%s is not registered as an external lock", n)
		}
	}
}
