package engine_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/export/exporttest"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

var nodes []engine.Node

func TestMain(m *testing.M) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine tests need redis-server:", err)
		os.Exit(1)
	}
	for _, s := range topo.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	code := m.Run()
	topo.Stop()
	os.Exit(code)
}

var driverNames = []string{"goredis", "rueidis"}

func policy(t *testing.T, spec string) *retry.Policy {
	t.Helper()
	p, err := retry.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A correct lock sells exactly the stock with no violation.
func TestAtomicSellsExactly(t *testing.T) {
	for _, drv := range driverNames {
		t.Run(drv, func(t *testing.T) {
			t.Parallel() // the drivers at once: own keys (the test's name), exact counts
			sc := engine.Scenario{Spec: engine.Spec{
				Strategy: "atomic", Driver: drv, Workload: "flash-sale",
				Retry: policy(t, "fixed:interval=2ms"), Clients: 50,
				Duration: 60 * time.Second, TTL: time.Second, AcquireTimeout: 30 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(300), "skus": 1}, Seed: 1,
			}}
			prefix := "lockbench:test:" + t.Name() + ":"
			res, err := engine.Run(context.Background(), sc, nodes, prefix)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != "done" {
				t.Fatalf("stop reason %q, want done (sold out)", res.StopReason)
			}
			if res.Figures["sold"] != 300 || res.Figures["final_stock"] != 0 {
				t.Fatalf("sold %d final_stock %d, want 300 and 0", res.Figures["sold"], res.Figures["final_stock"])
			}
			if res.Ops != 300 {
				t.Fatalf("ops %d, want 300", res.Ops)
			}
			if v := res.Violations; v.Oversell != 0 || v.Overlap != 0 || v.LostUpdates != 0 {
				t.Fatalf("violations %+v, want none", v)
			}
			if res.Counters.Errors != 0 || res.Counters.NotOwner != 0 {
				t.Fatalf("counters %+v, want no errors", res.Counters)
			}
			if res.Counters.Attempts < 300 {
				t.Fatalf("attempts %d < ops", res.Counters.Attempts)
			}
			// Every acquire is released; a few acquires beyond the 300 orders
			// are the holders that found the stock sold out.
			if res.LatencyMS.Count != 300 || res.AcquireMS.Count != res.ReleaseMS.Count ||
				res.AcquireMS.Count < 300 || res.AcquireMS.Count > 300+50 {
				t.Fatalf("histogram counts op %d acquire %d release %d, want 300, 300..350, = acquire",
					res.LatencyMS.Count, res.AcquireMS.Count, res.ReleaseMS.Count)
			}
			assertNoKeys(t, drv, prefix)
		})
	}
}

// The oracle catches a broken lock: with a lease shorter than the work,
// naive lets several holders in and their writes overwrite each other.
func TestNaiveShortLeaseViolates(t *testing.T) {
	for _, drv := range driverNames {
		t.Run(drv, func(t *testing.T) {
			t.Parallel() // the drivers at once: own keys (the test's name), exact counts
			sc := engine.Scenario{Spec: engine.Spec{
				Strategy: "naive", Driver: drv, Workload: "flash-sale",
				Retry: policy(t, "fixed:interval=1ms"), Clients: 50,
				Duration: 30 * time.Second, TTL: 5 * time.Millisecond, AcquireTimeout: 10 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(20 * time.Millisecond)}, Options: registry.Values{"stock": int64(100), "skus": 1}, Seed: 2,
			}}
			res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
			if err != nil {
				t.Fatal(err)
			}
			if res.Violations.Overlap == 0 || res.Violations.LostUpdates == 0 {
				t.Fatalf("violations %+v, want overlap > 0 and lost_updates > 0", res.Violations)
			}
			if got := res.Figures["sold"] - (100 - res.Figures["final_stock"]); got != res.Violations.LostUpdates {
				t.Fatalf("lost_updates %d disagrees with sold - (stock - final) = %d", res.Violations.LostUpdates, got)
			}
			// No warm-up: the timeline saw every overlap as it happened.
			var live int64
			for _, e := range res.Timeline {
				live += e.Violations
			}
			if live != res.Violations.Overlap {
				t.Fatalf("timeline violations sum %d, want overlap %d", live, res.Violations.Overlap)
			}
		})
	}
}

// The warm-up is excluded from the figures but not from the stock.
func TestWarmupExcluded(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 4,
		Warmup: 200 * time.Millisecond, Duration: 300 * time.Millisecond, TTL: time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(1_000_000), "skus": 4}, Seed: 3,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:warmup:")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "duration" {
		t.Fatalf("stop reason %q, want duration", res.StopReason)
	}
	if res.Ops <= 0 || res.Ops >= res.Figures["sold"] {
		t.Fatalf("ops %d should be > 0 and < sold %d (warm-up orders excluded)", res.Ops, res.Figures["sold"])
	}
	if res.LatencyMS.Count != res.Ops {
		t.Fatalf("latency count %d != ops %d", res.LatencyMS.Count, res.Ops)
	}
}

func TestUnreachable(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale",
		Retry: policy(t, "none"), Clients: 1, Duration: time.Second, TTL: time.Second,
		Params: workloads.Params{}, Options: registry.Values{"stock": int64(1), "skus": 1}}}
	_, err := engine.Run(context.Background(), sc, []engine.Node{{Addr: "127.0.0.1:1"}}, "lockbench:test:x:")
	if err == nil {
		t.Fatal("run against 127.0.0.1:1 succeeded")
	}
}

func assertNoKeys(t *testing.T, drv, prefix string) {
	t.Helper()
	ds, err := engine.Open(context.Background(), drv, nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ds[0].Close()
	r, err := ds[0].Do(context.Background(), "KEYS", prefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Array) != 0 {
		t.Fatalf("%d keys left under %s", len(r.Array), prefix)
	}
}

// A server that goes away mid-run: the scenario stops with a clear error
// after MaxConsecutiveErrors failures instead of measuring errors for the
// whole duration.
func TestAbortsWhenServerGone(t *testing.T) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	old := engine.MaxConsecutiveErrors
	engine.MaxConsecutiveErrors = 50
	defer func() { engine.MaxConsecutiveErrors = old }()
	go func() { time.Sleep(300 * time.Millisecond); s.Stop() }()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 4, Duration: time.Minute, TTL: time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(100_000_000), "skus": 1}, Seed: 4,
	}}
	start := time.Now()
	res, err := engine.Run(context.Background(), sc, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:test:gone:")
	if err == nil || !strings.Contains(err.Error(), "only failed operations") {
		t.Fatalf("err = %v, want the abort error", err)
	}
	if res.StopReason != "aborted" || res.Ops == 0 {
		t.Fatalf("stop %q ops %d; want aborted after some ops", res.StopReason, res.Ops)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("took %v to give up", time.Since(start))
	}
}

// Server-side cost from INFO commandstats is exact for a known run: one
// client, retry none, stock 100: 100 orders and one sold-out discovery.
func TestCommandStatsExact(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale",
		Retry: policy(t, "none"), Clients: 1, Duration: time.Minute, TTL: time.Second,
		Params: workloads.Params{}, Options: registry.Values{"stock": int64(100), "skus": 1}, Seed: 5,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:cost:")
	if err != nil {
		t.Fatal(err)
	}
	bc := res.RedisCost.ByCommand
	// Per order: SET NX, GET, SET, INCR, EVALSHA (whose script runs GET and
	// DEL). The 101st acquire finds the stock at 0: SET NX, GET, EVALSHA.
	want := map[string]int64{"incr": 100, "evalsha": 101, "get": 202, "del": 101, "set": 201}
	for k, v := range want {
		if bc[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, bc[k], v, bc)
		}
	}
	if res.Ops != 100 || res.RedisCost.CommandsPerOp < 7 || res.RedisCost.ServerCPUMS <= 0 || res.ClientCPU.CPUSeconds <= 0 {
		t.Fatalf("ops %d cost %+v client %+v", res.Ops, res.RedisCost, res.ClientCPU)
	}
}

// Open loop with a 600 ms server stall: latency from the intended start
// (corrected) shows the stall in its p99; service time from the actual
// start (uncorrected) does not, since only the operations in flight (one
// per client, two) lived through it. Two clients with 2 ms of work at 100
// ops/s (a twentieth of their 20 ms budget: the rate holds on a loaded
// machine, where one client once managed only 40 ops/s under the race
// detector): every arrival of the stall waits for its end. The stall is a node-pause fault, timed from
// the scenario's start like the pacer, not from before the setup.
func TestOpenLoopStallTimed(t *testing.T) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	stall, err := faults.Parse("node-pause:node=0,at=500ms,for=600ms")
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "hot-key", Retry: policy(t, "none"),
		Clients: 2, Duration: 4 * time.Second, TTL: time.Second,
		Rate: 100, DropAfter: 10 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)}, Options: registry.Values{"keys": 1000}, Seed: 6,
		Faults: []faults.Spec{stall},
	}, Env: engine.Env{Servers: topo.Servers}}
	res, err := engine.Run(context.Background(), sc, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:test:open:")
	if err != nil {
		t.Fatal(err)
	}
	// 400 arrivals are due; the clients keep up with room to spare and
	// drains the 60 the stall held back in well under a second.
	if res.Loop != "open" || res.ServiceMS == nil || res.Offered < 300 || res.Offered+res.Undecided != 400 || res.Dropped != 0 {
		t.Fatalf("loop %q offered %d undecided %d dropped %d; want open, >= 300 of the 400 due decided, 400 in all, 0 dropped",
			res.Loop, res.Offered, res.Undecided, res.Dropped)
	}
	if len(res.Faults) != 1 || !strings.Contains(res.Faults[0].Note, "paused") {
		t.Fatalf("fault windows %+v; want the node paused", res.Faults)
	}
	// An arrival x ms into the stall waits 600-x ms: the 15 of its first
	// 150 ms (3.75 % of the run, against the 1 % above p99) wait >= 450.
	if res.LatencyMS.P99 < 450 {
		t.Fatalf("corrected p99 %.1f ms, want >= 450 (75%% of the 600 ms stall)", res.LatencyMS.P99)
	}
	// Only the operations in flight live through the stall: at most 2 of
	// 400 take 600 ms, where p99 allows 4, so the uncorrected p99 stays
	// far under the stall: under 300 ms, half of it (a loaded 2-core
	// machine stretched a quiet 2–5 ms to 101.6 ms once; the bound is
	// about the stall, not the machine's speed).
	if res.ServiceMS.P99 >= 300 {
		t.Fatalf("uncorrected p99 %.1f ms, want < 300 (half the 600 ms stall): the stall hides from it", res.ServiceMS.P99)
	}
	if res.LatencyMS.Max < 500 {
		t.Fatalf("corrected max %.1f ms, want >= 500 (the first arrival of the stall waits >= 590)", res.LatencyMS.Max)
	}
	t.Logf("corrected p99 %.1f ms, uncorrected p99 %.1f ms, ops %d, dropped %d; %s", res.LatencyMS.P99, res.ServiceMS.P99, res.Ops, res.Dropped, res.Faults[0].Note)
}

// The exported metrics carry the scenario's figures: per scenario (its
// labels: strategy, driver, workload, retry, clients and its number)
// redis_lock_operations_total is the result's ops,
// redis_lock_acquired_total and the wait histogram's count its granted
// acquires, redis_lock_failed_total its failed acquires (acquire_failed_ms:
// those the run's stop ended are left out of both),
// redis_lock_attempts_total its attempts, the hold histogram counts its
// holds (the histograms' sums the result's mean times count),
// redis_lock_violations_total has a series for every kind with the
// result's count, zeros included, and redis_lock_ttl_seconds is the TTL.
// Two scenarios share the exporter: a safe one (atomic) and one whose 5 ms
// lease runs out in a 20 ms section (naive, no retry: busy locks are
// failures), so that failures and violations are not zero; the overlaps
// are exported while the naive scenario runs, not only at its end.
// /metrics serves the same registry.
func TestPrometheusMetrics(t *testing.T) {
	prom := export.New()
	if err := prom.Serve("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer prom.Close()
	scs := []engine.Scenario{{Spec: engine.Spec{
		Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: policy(t, "fixed:interval=1ms"),
		Clients: 4, Duration: time.Minute, TTL: time.Second,
		Params: workloads.Params{}, Options: registry.Values{"stock": int64(50), "skus": 1}, Seed: 8,
	}, Env: engine.Env{Prom: prom, Number: 1}}, {Spec: engine.Spec{
		Strategy: "naive", Driver: "rueidis", Workload: "flash-sale", Retry: policy(t, "none"),
		Clients: 8, Duration: 3 * time.Second, TTL: 5 * time.Millisecond,
		Params: workloads.Params{Work: workloads.Fixed(20 * time.Millisecond)}, Options: registry.Values{"stock": int64(1_000_000), "skus": 1}, Seed: 8,
	}, Env: engine.Env{Prom: prom, Number: 2}}}
	// liveOverlaps is the naive scenario's overlap series as the sampler's
	// first second of it reads it, while its clients still run.
	liveOverlaps := make(chan float64, 1)
	scs[1].Env.OnSecond = func(report.Second) {
		select {
		case liveOverlaps <- gathered(t, prom, "redis_lock_violations_total", map[string]string{"scenario": "2", "kind": "overlap"}):
		default:
		}
	}
	var results []report.Scenario
	for i, sc := range scs {
		res, err := engine.Run(context.Background(), sc, nodes, fmt.Sprintf("lockbench:test:prom%d:", i))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if v := results[1].Violations; v.Overlap == 0 {
		t.Fatalf("naive with a 5 ms lease over 20 ms: violations %+v, want overlaps to export", v)
	}
	if results[1].Counters.Failures == 0 {
		t.Fatalf("naive without retry: no failed acquire to export (counters %+v)", results[1].Counters)
	}
	select {
	case n := <-liveOverlaps:
		if n <= 0 || n > float64(results[1].Violations.Overlap) {
			t.Errorf("naive: overlap series %v during the run, want from 1 to the run's %d", n, results[1].Violations.Overlap)
		}
	default:
		t.Errorf("naive: the sampler read no second of its run (duration %.2f s)", results[1].DurationS)
	}

	families, err := prom.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		sc := scs[i]
		name := sc.Strategy + "/" + sc.Driver
		lv := map[string]string{"strategy": sc.Strategy, "driver": res.Driver, "workload": sc.Workload,
			"retry": res.Retry, "clients": strconv.Itoa(sc.Clients), "scenario": strconv.Itoa(sc.Env.Number)}
		one := func(metric string, extra ...string) *dto.Metric {
			t.Helper()
			want := maps.Clone(lv)
			for j := 0; j+1 < len(extra); j += 2 {
				want[extra[j]] = extra[j+1]
			}
			ms := exporttest.Matching(families, metric, want)
			if len(ms) != 1 {
				t.Fatalf("%s: %d series of %s%v, want 1", name, len(ms), metric, want)
			}
			return ms[0]
		}
		for _, c := range []struct {
			metric string
			want   int64
		}{
			{"redis_lock_operations_total", res.Ops},
			{"redis_lock_acquired_total", res.AcquireMS.Count},
			{"redis_lock_attempts_total", res.Counters.Attempts},
		} {
			if got := one(c.metric).GetCounter().GetValue(); got != float64(c.want) || c.want == 0 {
				t.Errorf("%s: %s %v, result %d", name, c.metric, got, c.want)
			}
		}
		var failed int64
		if res.AcquireFailedMS != nil {
			failed = res.AcquireFailedMS.Count
		}
		if got := one("redis_lock_failed_total").GetCounter().GetValue(); got != float64(failed) {
			t.Errorf("%s: redis_lock_failed_total %v, result acquire_failed_ms count %d", name, got, failed)
		}
		if i == 1 && failed == 0 {
			t.Errorf("%s: no failed acquire exported (counters %+v)", name, res.Counters)
		}
		for _, h := range []struct {
			metric string
			lat    metrics.Latency
		}{{"redis_lock_wait_duration_seconds", res.AcquireMS}, {"redis_lock_hold_duration_seconds", res.HoldMS}} {
			hist := one(h.metric).GetHistogram()
			if hist.GetSampleCount() != uint64(h.lat.Count) || h.lat.Count == 0 {
				t.Errorf("%s: %s count %d, result count %d", name, h.metric, hist.GetSampleCount(), h.lat.Count)
			}
			// The result's mean is from an HdrHistogram (3 digits) of µs.
			wantSum := h.lat.Mean * float64(h.lat.Count) / 1e3
			if got := hist.GetSampleSum(); math.Abs(got-wantSum) > 0.01*wantSum+1e-3 {
				t.Errorf("%s: %s sum %.6f s, result mean x count %.6f s", name, h.metric, got, wantSum)
			}
		}
		if got := one("redis_lock_ttl_seconds").GetGauge().GetValue(); got != sc.TTL.Seconds() {
			t.Errorf("%s: redis_lock_ttl_seconds %v, want %v", name, got, sc.TTL.Seconds())
		}
		for _, k := range report.ViolationKinds {
			if got, want := one("redis_lock_violations_total", "kind", k.Key).GetCounter().GetValue(), k.Of(res.Violations); got != float64(want) {
				t.Errorf("%s: redis_lock_violations_total{kind=%q} %v, want %d", name, k.Key, got, want)
			}
		}
	}
	if problems, err := testutil.GatherAndLint(prom.Gatherer()); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}

	resp, err := http.Get("http://" + prom.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		fmt.Sprintf(`redis_lock_operations_total{clients="4",driver="goredis",retry="fixed:interval=1ms",scenario="1",strategy="atomic",workload="flash-sale"} %d`, results[0].Ops),
		fmt.Sprintf(`redis_lock_hold_duration_seconds_count{clients="4",driver="goredis",retry="fixed:interval=1ms",scenario="1",strategy="atomic",workload="flash-sale"} %d`, results[0].HoldMS.Count),
		fmt.Sprintf(`redis_lock_violations_total{clients="8",driver="rueidis",kind="overlap",retry="none",scenario="2",strategy="naive",workload="flash-sale"} %d`, results[1].Violations.Overlap),
		`redis_lock_violations_total{clients="4",driver="goredis",kind="overlap",retry="fixed:interval=1ms",scenario="1",strategy="atomic",workload="flash-sale"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// gathered is the value of the one counter of family name whose labels
// include want, as prom serves it now (-1: not exactly one such series).
func gathered(t *testing.T, prom *export.Prom, name string, want map[string]string) float64 {
	families, err := prom.Gatherer().Gather()
	if err != nil {
		t.Error(err)
		return -1
	}
	ms := exporttest.Matching(families, name, want)
	if len(ms) != 1 {
		return -1
	}
	return ms[0].GetCounter().GetValue()
}

// A run of known length has one timeline entry per second of its measured
// window (the last one ending with the window, a tail under 250 ms folded
// into it), timed from the scenario's start (warm-up included), and its
// counts sum to the scenario's totals.
func TestTimeline(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale",
		Retry: policy(t, "none"), Clients: 4, // no retry: busy locks are acquire failures
		Warmup: 500 * time.Millisecond, Duration: 2200 * time.Millisecond, TTL: time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(100_000_000), "skus": 1}, Seed: 9,
	}}
	var seen atomic.Int64
	sc.Env.OnSecond = func(report.Second) { seen.Add(1) }
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:timeline:")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "duration" {
		t.Fatalf("stop reason %q, want duration", res.StopReason)
	}
	tl := res.Timeline
	whole := int(res.DurationS)
	want := whole
	if whole == 0 || res.DurationS-float64(whole) >= 0.25 {
		want++
	}
	if len(tl) != want {
		t.Fatalf("%d timeline entries for a %.3f s window, want %d: %+v", len(tl), res.DurationS, want, tl)
	}
	for i, e := range tl[:len(tl)-1] {
		if e.TS != 0.5+float64(i+1) || e.Ops == 0 {
			t.Fatalf("entry %d = %+v, want t_s %.1f and ops > 0", i, e, 0.5+float64(i+1))
		}
	}
	if last := tl[len(tl)-1].TS; math.Abs(last-(0.5+res.DurationS)) > 1e-6 {
		t.Fatalf("last entry ends at %.6f s, want warm-up + window = %.6f", last, 0.5+res.DurationS)
	}
	var sum report.Second
	for _, e := range tl {
		sum.Ops += e.Ops
		sum.Errors += e.Errors
		sum.AcquireFailures += e.AcquireFailures
	}
	c := res.Counters
	if sum.Ops != res.Ops || sum.Errors != c.Errors || sum.AcquireFailures != c.Failures+c.Timeouts {
		t.Fatalf("timeline sums ops %d errors %d acquire failures %d; want %d, %d, %d",
			sum.Ops, sum.Errors, sum.AcquireFailures, res.Ops, c.Errors, c.Failures+c.Timeouts)
	}
	if sum.AcquireFailures == 0 {
		t.Fatal("no acquire failures with 4 clients on one lock and no retry")
	}
	// The last whole second may race the stop when the sampler runs late.
	if n := seen.Load(); n != int64(whole) && n != int64(whole-1) {
		t.Fatalf("OnSecond called %d times, want %d (the whole seconds)", n, whole)
	}
}

// Each timeline entry carries the latency of the operations and acquires
// whose times reached its interval (--interval 250ms here), read from its
// interval histograms; those histograms, one per entry, merged are the
// whole run's: the same buckets and counts as latency_hist (so exactly
// the run's ops, and the same max), and the acquire count of acquire_ms.
// The warm-up's values are in none of them.
func TestTimelineLatencyMergesToRun(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 3, Interval: 250 * time.Millisecond,
		Warmup: 300 * time.Millisecond, Duration: 1200 * time.Millisecond, TTL: 2 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 2}, Seed: 4,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:timeline-latency:")
	if err != nil {
		t.Fatal(err)
	}
	if res.Params["interval_s"] != "0.25" {
		t.Fatalf("params.interval_s = %q, want 0.25", res.Params["interval_s"])
	}
	tl, iv := res.Timeline, res.Intervals
	if iv == nil || len(iv.Op) != len(tl) || len(iv.Acquire) != len(tl) || len(tl) < 4 {
		t.Fatalf("%d timeline entries, interval histograms %+v: want one of each kind per entry, at least 4", len(tl), iv)
	}
	if iv.WindowS != 0.3 || tl[0].TS != 0.55 {
		t.Fatalf("window starts at %v s, first entry ends at %v s; want 0.3 and 0.55", iv.WindowS, tl[0].TS)
	}
	decode := func(b []byte) *hdrhistogram.Histogram {
		h, err := hdrhistogram.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	whole := decode([]byte(res.LatencyHist))
	merged := [2]*hdrhistogram.Histogram{metrics.NewHistogram(), metrics.NewHistogram()}
	withLatency := 0
	for i, e := range tl {
		op, acq := decode(iv.Op[i]), decode(iv.Acquire[i])
		merged[0].Merge(op)
		merged[1].Merge(acq)
		ms := func(us int64) float64 { return float64(us) / 1000 }
		if op.TotalCount() > 0 {
			withLatency++
			if e.OpP50MS != ms(op.ValueAtQuantile(50)) || e.OpP99MS != ms(op.ValueAtQuantile(99)) || e.OpMaxMS != ms(op.Max()) || e.OpMaxMS < e.OpP99MS || e.OpP99MS < e.OpP50MS {
				t.Fatalf("entry %d: op p50/p99/max %v/%v/%v, its histogram's %v/%v/%v", i, e.OpP50MS, e.OpP99MS, e.OpMaxMS,
					ms(op.ValueAtQuantile(50)), ms(op.ValueAtQuantile(99)), ms(op.Max()))
			}
		} else if e.OpP50MS != 0 || e.OpP99MS != 0 || e.OpMaxMS != 0 {
			t.Fatalf("entry %d has op latency %+v without a value", i, e)
		}
		if acq.TotalCount() > 0 && (e.AcquireP99MS != ms(acq.ValueAtQuantile(99)) || e.AcquireMaxMS != ms(acq.Max())) {
			t.Fatalf("entry %d: acquire p99/max %v/%v, its histogram's %v/%v", i, e.AcquireP99MS, e.AcquireMaxMS, ms(acq.ValueAtQuantile(99)), ms(acq.Max()))
		}
	}
	if withLatency < len(tl)-1 {
		t.Fatalf("%d of %d entries have op latency: %+v", withLatency, len(tl), tl)
	}
	if got := merged[0]; got.TotalCount() != res.Ops || got.Max() != whole.Max() || !slices.Equal(got.Distribution(), whole.Distribution()) {
		t.Fatalf("interval histograms merge to %d ops (max %d µs), the run has %d (max %d µs), or their buckets differ",
			got.TotalCount(), got.Max(), res.Ops, whole.Max())
	}
	if got := merged[1]; got.TotalCount() != res.AcquireMS.Count || float64(got.Max())/1000 != res.AcquireMS.Max {
		t.Fatalf("acquire interval histograms merge to %d values (max %d µs), acquire_ms has %d (max %v ms)",
			got.TotalCount(), got.Max(), res.AcquireMS.Count, res.AcquireMS.Max)
	}
}

// In an open loop the workers wait between arrivals: an interval that ends
// while a worker waits gets its values then (metrics.Recorder.IntervalEnded),
// so each entry's latency is of its own operations. Each entry's op
// histogram holds its ops, give or take the operations in progress at its
// end (at most one per client), and the entries merge to the run's.
func TestOpenLoopTimelineLatency(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 4, Interval: 250 * time.Millisecond,
		Duration: 1500 * time.Millisecond, TTL: 2 * time.Second, Rate: 100, DropAfter: 10 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 4}, Seed: 5,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:openloop-latency:")
	if err != nil {
		t.Fatal(err)
	}
	checkIntervalHistograms(t, res, sc.Clients, 6)
	for i, e := range res.Timeline {
		if e.Ops > int64(sc.Clients) && e.OpMaxMS == 0 {
			t.Errorf("entry %d: %d ops and no op latency: %+v", i, e.Ops, e)
		}
	}
}

// checkIntervalHistograms checks that res's timeline has want entries,
// each with its own operation-latency histogram holding its operations
// within clients (the operations in progress at its end), and that the
// histograms together hold the run's operations.
func checkIntervalHistograms(t *testing.T, res report.Scenario, clients, want int) {
	t.Helper()
	tl, iv := res.Timeline, res.Intervals
	if iv == nil || len(iv.Op) != len(tl) || len(tl) != want {
		t.Fatalf("%d timeline entries, interval histograms %+v: want %d, one histogram each", len(tl), iv, want)
	}
	var total int64
	for i, e := range tl {
		h, err := hdrhistogram.Decode(iv.Op[i])
		if err != nil {
			t.Fatal(err)
		}
		total += h.TotalCount()
		if d := h.TotalCount() - e.Ops; d < -int64(clients) || d > int64(clients) {
			t.Errorf("entry %d: %d ops, %d op latencies; want within %d (the operations in progress at its end)", i, e.Ops, h.TotalCount(), clients)
		}
	}
	if total != res.Ops {
		t.Fatalf("interval histograms hold %d ops, the run %d", total, res.Ops)
	}
}

// --load-sample covers the measured window only: with a 600 ms warm-up
// before a 400 ms window, sampled every 10 ms, at most 41 samples (the
// window's 40 and one straddling its start) are kept of the about 100
// read; a ticker on a loaded machine may skip some, never add any.
func TestServerLoadSkipsWarmup(t *testing.T) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: policy(t, "none"),
		Clients: 2, Warmup: 600 * time.Millisecond, Duration: 400 * time.Millisecond, TTL: time.Second,
		LoadSample: 10 * time.Millisecond, Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"keys": 100}, Seed: 1,
	}}
	res, err := engine.Run(context.Background(), sc, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:test:load:")
	if err != nil {
		t.Fatal(err)
	}
	if l := res.ServerLoad; l == nil || l.Samples < 1 || l.Samples > 41 || l.MeanPerSec <= 0 {
		t.Fatalf("server load %+v; want 1 to 41 samples of the 400 ms window, with commands", l)
	}
}
