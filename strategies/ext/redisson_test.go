package ext

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies/locktest"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// redissonReady skips t when java is not on PATH (the reason is
// Available's), and fails it when the adapter is not built.
func redissonReady(t *testing.T, name string) {
	t.Helper()
	if err := Available(name); errors.Is(err, ErrNoRuntime) {
		t.Skip(err)
	} else if err != nil {
		t.Fatalf("%v (run make adapters)", err)
	}
}

// The conformance suite's checks on the Redisson adapter. Every check
// starts a JVM of its own (about a second each), so each variant runs
// the checks that judge what it adds:
//   - redisson: every check but LossReported (its leases are not
//     watched: a fixed lease, no watchdog) and FIFOOrder; OracleBothWays
//     shows the broken side (a 20 ms lease through 100 ms of work: overlap)
//     and the correct one (none);
//   - redisson-watchdog: LossReported (a lock deleted behind the holder's
//     back is reported lost: the watchdog drops it), LeaseExpires (an
//     abandoned lease is no longer renewed and expires), OwnerOnlyRelease.
//     TokensReported is left out: Redisson renews inside the JVM and
//     protocol v1 has no notice of a renewal, so lockbench's token
//     tracker is never told of one (Config.Renewing) and the check fails
//     by design of the protocol, not of Redisson;
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
			"LossReported": s.LossReported, "LeaseExpires": s.LeaseExpires, "OwnerOnlyRelease": s.OwnerOnlyRelease}},
		{"redisson-fair", map[string]func(*testing.T, string, string){"FIFOOrder": s.FIFOOrder}},
	} {
		t.Run(c.name, func(t *testing.T) {
			redissonReady(t, c.name)
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
// permit (an exclusive lock: lockbench's safety oracle does not yet count
// by permits), and its one stuck lock is the semaphore's free-permit
// counter, which RPermitExpirableSemaphore keeps without a TTL. The six
// runs go in parallel (a JVM each); the 2 s lease leaves a loaded
// machine's stalls far behind 1 ms of work.
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
			redissonReady(t, c.name)
			const stock = 40
			res := redissonRun(t, c.name, c.opts, stock)
			v := res.Violations
			t.Logf("%s: %+v sold %d ops %d, counters %+v, library %+v", c.name, v, res.Figures["sold"], res.Ops, res.Counters, res.Library)
			if v.StuckLocks != c.stuck {
				t.Errorf("stuck locks %d, want %d", v.StuckLocks, c.stuck)
			}
			v.StuckLocks = 0
			if v != (report.Violations{}) {
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
