package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

// A client ramp inside one run (ramp:from=2,to=8,over=2s, closed loop,
// lock-cycle on own keys, 1 ms of work): the timeline's client counts are
// the shape's value at each entry's end, rounded (3 at 0.25 s up to 8
// from 2 s), and a client beyond the count makes no operation: client i
// (i >= 2) runs from (i - 1.5) / 3 s on, so in a 2.5 s window it makes at
// most one operation per ms of the time left (each holds the lock 1 ms),
// and clients 6 and 7 make fewer than clients 0 and 1. Jain's index is
// absent (clients ran for different times); every entry has its
// efficiency. The same run at a constant 8 clients has all 8 from the
// start, and none of the ramp's fields. In the timing lane (make test):
// an interval's efficiency compares its completions with its clients'
// hold time, and a stall that moves completions into the next interval
// read 1.18 beside another test package.
func TestClientRampRunTimed(t *testing.T) {
	const window = 2500 * time.Millisecond
	spec := func(clients int, shape *arrival.Shape) engine.Scenario {
		return engine.Scenario{Spec: engine.Spec{
			Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
			Retry: policy(t, "fixed:interval=1ms"), Clients: clients, ClientShape: shape,
			Duration: window, TTL: time.Second, AcquireTimeout: 5 * time.Second,
			Interval: 250 * time.Millisecond,
			Params:   workloads.Params{Work: workloads.Fixed(time.Millisecond)},
			Options:  registry.Values{"own-keys": true}, Seed: 3,
		}}
	}
	sh, err := arrival.Parse("ramp:from=2,to=8,over=2s")
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), spec(8, sh), nodes, "lockbench:test:ramp:")
	if err != nil {
		t.Fatal(err)
	}
	if res.Params["clients_shape"] != "ramp:from=2,to=8,over=2s" || res.Clients != 8 {
		t.Errorf("params clients_shape %q, clients %d: want the shape and 8", res.Params["clients_shape"], res.Clients)
	}
	var counts []int
	for i, e := range res.Timeline {
		counts = append(counts, e.Clients)
		if want := engine.ClientsAt(sh, e.TS); e.Clients != want {
			t.Errorf("entry %d at %.3f s: clients %d, want the shape's %d", i, e.TS, e.Clients, want)
		}
		if i > 0 && e.Clients < res.Timeline[i-1].Clients {
			t.Errorf("entry %d: clients fell from %d to %d on a rising ramp", i, res.Timeline[i-1].Clients, e.Clients)
		}
		if e.ClientsMean <= 0 || e.ClientsMean > float64(e.Clients)+1e-9 {
			t.Errorf("entry %d: clients_mean %v, want above 0 and at most the end's %d (a rising ramp)", i, e.ClientsMean, e.Clients)
		}
		// Own keys: an interval's ops/s is at most its clients / its own
		// mean hold (the clients start a little after the shape's count).
		if e.Ops > 0 && (e.Efficiency <= 0 || e.Efficiency > 1.05 || e.Holds == 0) {
			t.Errorf("entry %d: %d ops, %d holds, efficiency %v: want 0 to 1.05", i, e.Ops, e.Holds, e.Efficiency)
		}
	}
	if len(counts) < 9 || counts[0] != 3 || counts[len(counts)-1] != 8 {
		t.Errorf("timeline clients %v: want 3 at 0.25 s rising to 8", counts)
	}
	ops := res.Raw.ClientOps
	if len(ops) != 8 {
		t.Fatalf("client ops %v, want 8 clients", ops)
	}
	for i := 2; i < 8; i++ {
		from := (float64(i) - 1.5) / 3 // s: when the count passes i
		bound := int64((window.Seconds()-from+0.1)*1000) + 1
		if ops[i] > bound {
			t.Errorf("client %d made %d operations, want at most %d: it may run only from %.3f s", i, ops[i], bound, from)
		}
	}
	if ops[6] >= ops[0] || ops[6] >= ops[1] || ops[7] >= ops[0] || ops[7] >= ops[1] {
		t.Errorf("client ops %v: want clients 6 and 7 below clients 0 and 1", ops)
	}
	if res.Fairness.JainIndex != 0 {
		t.Errorf("jain %v in a ramped run, want absent", res.Fairness.JainIndex)
	}
	// Client-seconds over the window: 5 x 2 s + 8 x the rest.
	if cs, want := res.Raw.ClientSeconds, 10+8*(res.DurationS-2); cs < want-0.1 || cs > want+0.1 {
		t.Errorf("client_seconds %v, want about %v", cs, want)
	}
	t.Logf("ramp: timeline clients %v, client ops %v, ceiling %.0f, efficiency %.2f", counts, ops, res.CeilingOpsPerSec, res.Efficiency)

	flat, err := engine.Run(context.Background(), spec(8, nil), nodes, "lockbench:test:ramp0:")
	if err != nil {
		t.Fatal(err)
	}
	fo := flat.Raw.ClientOps
	for i, n := range fo {
		if n*10 < fo[0]*7 {
			t.Errorf("constant 8 clients: client %d made %d operations, client 0 %d: want all 8 from the start", i, n, fo[0])
		}
	}
	for i, e := range flat.Timeline {
		if e.Clients != 0 || e.ClientsMean != 0 || e.Efficiency != 0 || e.Holds != 0 || e.HoldMSSum != 0 {
			t.Errorf("constant clients: entry %d has ramp fields %+v", i, e)
		}
	}
	if _, has := flat.Params["clients_shape"]; has || flat.Raw.ClientSeconds != 0 || flat.Fairness.JainIndex == 0 {
		t.Errorf("constant clients: clients_shape %q, client_seconds %v, jain %v", flat.Params["clients_shape"], flat.Raw.ClientSeconds, flat.Fairness.JainIndex)
	}
	t.Logf("constant: client ops %v", fo)
}
