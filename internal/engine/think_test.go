package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// A fixed think time T bounds each client's operations in a measured
// window D: a client's operations start at least T apart (it waits T
// after each ends), so at most floor(D/T)+1 of them start in the window,
// on any machine (a late stop timer could add one only by running more
// than (floor(D/T)+1) x T - D = 200 ms late). The same run without think
// time makes more than that bound (own keys: no client waits for
// another). Think time is in no latency: with T = 200 ms and 1 ms of
// work, the operations' median is far under T. The warm-up applies as
// usual: its operations are not counted.
func TestThinkTimeBoundsOps(t *testing.T) {
	const clients = 3
	think, d := 200*time.Millisecond, time.Second
	bound := int64(d/think) + 1 // 6
	spec := func(th workloads.Dist) engine.Scenario {
		return engine.Scenario{Spec: engine.Spec{
			Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
			Retry: policy(t, "fixed:interval=1ms"), Clients: clients,
			Warmup: 300 * time.Millisecond, Duration: d, TTL: time.Second, AcquireTimeout: 5 * time.Second,
			Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
			Options: registry.Values{"own-keys": true}, Seed: 3, Think: th,
		}}
	}
	res, err := engine.Run(context.Background(), spec(workloads.Fixed(think)), nodes, "lockbench:test:think:")
	if err != nil {
		t.Fatal(err)
	}
	if res.Params["think"] != "200ms" {
		t.Errorf("params think=%q, want 200ms", res.Params["think"])
	}
	ops := res.Raw.ClientOps
	if len(ops) != clients {
		t.Fatalf("%d clients' ops %v, want %d", len(ops), ops, clients)
	}
	for i, n := range ops {
		if n < 1 || n > bound {
			t.Errorf("think %v, window %v: client %d made %d operations, want 1 to floor(D/T)+1 = %d", think, d, i, n, bound)
		}
	}
	if res.Ops < 1 || res.LatencyMS.P50 >= float64(think/time.Millisecond)/2 {
		t.Errorf("op latency p50 %.2f ms with a %v think time (%d ops): the think time is in the latency", res.LatencyMS.P50, think, res.Ops)
	}
	t.Logf("think %v: ops per client %v (bound %d), op p50 %.2f ms", think, ops, bound, res.LatencyMS.P50)
	// The clients' offer: 3 / (200 ms + the mean hold), recorded with the
	// think time's mean.
	if b := res.ThinkBoundOpsPerSec; res.Raw.ThinkMS != 200 || b >= clients/think.Seconds() || b < clients/(think.Seconds()+res.HoldMS.Mean/1e3)-1e-9 {
		t.Errorf("think_ms %v, think_bound_ops_per_sec %v: want 200 and 3 / (0.2 s + hold %.2f ms)", res.Raw.ThinkMS, b, res.HoldMS.Mean)
	}
	res0, err := engine.Run(context.Background(), spec(workloads.Dist{}), nodes, "lockbench:test:think0:")
	if err != nil {
		t.Fatal(err)
	}
	if res0.ThinkBoundOpsPerSec != 0 || res0.Raw.ThinkMS != 0 {
		t.Errorf("no think time: think_bound_ops_per_sec %v, think_ms %v", res0.ThinkBoundOpsPerSec, res0.Raw.ThinkMS)
	}
	if _, has := res0.Params["think"]; has {
		t.Errorf("no think time, params think=%q", res0.Params["think"])
	}
	t.Logf("no think time: ops per client %v", res0.Raw.ClientOps)
	for i, n := range res0.Raw.ClientOps {
		if n <= bound {
			t.Errorf("no think time: client %d made %d operations, want more than %d", i, n, bound)
		}
	}
}

// A stop during a think time ends the client at once: with a 10 s think
// time and a 300 ms window, each client makes one operation, thinks, and
// the run ends with its window, not 10 s later.
func TestThinkTimeStops(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 2,
		Duration: 300 * time.Millisecond, TTL: time.Second, AcquireTimeout: 5 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"own-keys": true}, Seed: 4, Think: workloads.Fixed(10 * time.Second),
	}}
	start := time.Now()
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:thinkstop:")
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the run took %v: a client thinking at the stop did not end at once", el)
	}
	if res.StopReason != "duration" {
		t.Fatalf("stop reason %q, want duration", res.StopReason)
	}
	for i, n := range res.Raw.ClientOps {
		if n != 1 {
			t.Errorf("client %d made %d operations, want 1 (then a 10 s think)", i, n)
		}
	}
}

// Validate refuses a think time in an open loop, where arrivals decide
// when operations start.
func TestValidateThinkOpenLoop(t *testing.T) {
	exp, err := workloads.ParseDist("exp:mean=20ms")
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Think: exp}}
	l := engine.Layout{Kind: strategies.Standalone, Servers: 1}
	if errs := engine.Validate(sc, l); len(errs) != 0 {
		t.Fatalf("think time in a closed loop: %v", errs)
	}
	sc.Rate = 100
	errs := engine.Validate(sc, l)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "--think goes with a closed loop") {
		t.Fatalf("think time with --rate: %v, want the one refusal", errs)
	}
}

// A client that thinks across an interval's end hands its buffered values
// over then (as an open loop's idle worker does): each timeline entry's op
// histogram holds its own operations, give or take those in progress at
// its end (at most one per client), and the entries merge to the run's.
func TestThinkTimeTimeline(t *testing.T) {
	think, err := workloads.ParseDist("uniform:50ms-150ms")
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 4, Interval: 250 * time.Millisecond,
		Duration: 1500 * time.Millisecond, TTL: 2 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"own-keys": true}, Seed: 6, Think: think,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:think-timeline:")
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops == 0 {
		t.Fatal("no operation in the run")
	}
	checkIntervalHistograms(t, res, sc.Clients, 6)
}
