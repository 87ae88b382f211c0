package baselines_test

import (
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// cpuRun runs strategy st for 1 s, 4 clients on 100 lock-cycle keys, with
// its server's process handed to the engine (Env.BackendServer) when
// withServer is set.
func cpuRun(t *testing.T, st string, withServer bool) report.Scenario {
	t.Helper()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: st, Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 4,
		Duration: time.Second, TTL: 5 * time.Second, AcquireTimeout: 10 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 100}, Seed: 1,
	}}
	if withServer {
		sc.Env.BackendServer = started[strategies.InfoOf(st).Backend]
	}
	return run(t, sc)
}

// backendEntry is the raw.cost entry of st's server (nil: none) and the
// number of entries with command counts (the Redis node's).
func backendEntry(t *testing.T, st string, res report.Scenario) (*report.ServerCost, int) {
	t.Helper()
	want := string(strategies.InfoOf(st).Backend) + " " + started[strategies.InfoOf(st).Backend].Addr
	var e *report.ServerCost
	counted := 0
	for i, c := range res.Raw.Cost {
		switch {
		case c.Servers == want:
			if c.ByCommand != nil || len(c.Own) > 0 {
				t.Fatalf("%s: entry %+v carries command counts; its commands are not counted", st, c)
			}
			e = &res.Raw.Cost[i]
		case c.ByCommand != nil:
			counted++
		default:
			t.Fatalf("%s: entry %+v, neither the Redis node's nor %q", st, c, want)
		}
	}
	return e, counted
}

// checkCPU checks a result's CPU figures against its raw data: the sum of
// the raw.cost entries' CPU, and per 1,000 of raw.cost_ops, exactly as
// they derive.
func checkCPU(t *testing.T, what string, res report.Scenario) {
	t.Helper()
	sum := 0.0
	for _, c := range res.Raw.Cost {
		sum += c.CPUMS
	}
	c := res.RedisCost
	if c.ServerCPUMS <= 0 || c.ServerCPUMS != sum {
		t.Fatalf("%s: server_cpu_ms %v, want > 0 and the raw entries' sum %v", what, c.ServerCPUMS, sum)
	}
	if c.Ops != res.Raw.CostOps || c.Ops <= 0 {
		t.Fatalf("%s: redis_cost.ops %d, raw.cost_ops %d", what, c.Ops, res.Raw.CostOps)
	}
	if want := c.ServerCPUMS * 1000 / float64(res.Raw.CostOps); c.ServerCPUMSPer1kOps != want {
		t.Fatalf("%s: server_cpu_ms_per_1k_ops %v, want server_cpu_ms*1000/ops = %v", what, c.ServerCPUMSPer1kOps, want)
	}
}

// zk and etcd on the servers the tests started: the result has a raw.cost
// entry of the server's process CPU (no command counts) beside the Redis
// node's; server_cpu_ms is their sum, > 0, and per 1,000 ops derives
// from it exactly. Two runs combined as repeats add the server's CPU up,
// and the combination derives its figures from the sums. Without the
// server's process (not lockbench's), there is no entry: not measured.
func TestBaselineServerCPU(t *testing.T) {
	for _, st := range []string{"zk", "etcd"} {
		t.Run(st, func(t *testing.T) {
			need(t, st)
			a := cpuRun(t, st, true)
			if a.Ops == 0 || a.Counters.Errors != 0 {
				t.Fatalf("ops %d, errors %v", a.Ops, a.Counters.ErrorSamples)
			}
			ea, counted := backendEntry(t, st, a)
			if ea == nil || ea.CPUMS <= 0 {
				t.Fatalf("raw.cost %+v: no entry of %s's CPU, or 0 ms", a.Raw.Cost, st)
			}
			if counted != 1 {
				t.Fatalf("raw.cost %+v: %d entries with command counts, want the Redis node's", a.Raw.Cost, counted)
			}
			checkCPU(t, st, a)
			// Commands per op are the Redis node's alone, as before.
			commands := int64(0)
			for _, c := range a.Raw.Cost {
				for _, n := range c.ByCommand {
					commands += n
				}
			}
			if a.RedisCost.Commands != commands {
				t.Fatalf("commands %d, want the Redis node's %d", a.RedisCost.Commands, commands)
			}
			t.Logf("%s: %d ops, %s %.0f ms, servers %.1f ms, %.1f ms per 1k ops", st, a.Raw.CostOps, ea.Servers, ea.CPUMS, a.RedisCost.ServerCPUMS, a.RedisCost.ServerCPUMSPer1kOps)

			b := cpuRun(t, st, true)
			eb, _ := backendEntry(t, st, b)
			if eb == nil {
				t.Fatalf("second run: raw.cost %+v without %s's entry", b.Raw.Cost, st)
			}
			both, err := report.Combine(report.Sequential, []report.Scenario{a, b})
			if err != nil {
				t.Fatal(err)
			}
			e, _ := backendEntry(t, st, both)
			if e == nil || e.CPUMS != ea.CPUMS+eb.CPUMS {
				t.Fatalf("combined: %s's entry %+v, want %v + %v ms", st, e, ea.CPUMS, eb.CPUMS)
			}
			if both.Raw.CostOps != a.Raw.CostOps+b.Raw.CostOps {
				t.Fatalf("combined: cost_ops %d, want %d + %d", both.Raw.CostOps, a.Raw.CostOps, b.Raw.CostOps)
			}
			if got, want := both.RedisCost.ServerCPUMS, a.RedisCost.ServerCPUMS+b.RedisCost.ServerCPUMS; math.Abs(got-want) > 1e-9*want {
				t.Fatalf("combined: server_cpu_ms %v, want %v + %v", got, a.RedisCost.ServerCPUMS, b.RedisCost.ServerCPUMS)
			}
			checkCPU(t, st+" combined", both)

			// The server's process not given: no entry, the Redis node's alone.
			n := cpuRun(t, st, false)
			if e, _ := backendEntry(t, st, n); e != nil || len(n.Raw.Cost) != 1 {
				t.Fatalf("without the server's process: raw.cost %+v, want the Redis node's entry alone", n.Raw.Cost)
			}
		})
	}
}
