package engine_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// --background's grammar: commands at rates (a plural and a rate without
// /s are the same), the key space, value size and connections with their
// defaults, written back in one canonical form; everything else refused
// with what is wrong.
func TestParseBackground(t *testing.T) {
	for in, want := range map[string]string{
		"get=2000/s,set=500/s":                   "get=2000/s,set=500/s,keys=10000,size=64,conns=8",
		"gets=20000/s,sets=5000/s":               "get=20000/s,set=5000/s,keys=10000,size=64,conns=8",
		"set=10, keys=5,size=1024,conns=2":       "set=10/s,keys=5,size=1024,conns=2",
		"incr=1/s,hget=2.5/s,hset=3/s,conns=256": "incr=1/s,hget=2.5/s,hset=3/s,keys=10000,size=64,conns=256",
	} {
		b, err := engine.ParseBackground(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := b.String(); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
		if again, err := engine.ParseBackground(b.String()); err != nil || again.String() != want {
			t.Errorf("%q: %q does not read back: %v", in, want, err)
		}
	}
	if b, err := engine.ParseBackground(""); b != nil || err != nil {
		t.Errorf(`"": %v, %v; want none`, b, err)
	}
	for in, want := range map[string]string{
		"get":                    "is not CMD=RATE/s",
		"none":                   "is not CMD=RATE/s",
		"del=100/s":              `"del" is not a command it sends`,
		"get=-5/s":               "want a rate like 2000/s",
		"get=0/s":                "want a rate like 2000/s",
		"get=fast":               "want a rate like 2000/s",
		"get=2e6/s":              "at most 1e+06/s",
		"get=1/s,gets=2/s":       "given twice",
		"get=1/s,keys=0":         "keys=0: want a whole number from 1 to 10000000",
		"get=1/s,size=2MB":       "size=2MB: want a whole number",
		"get=1/s,conns=1000":     "conns=1000: want a whole number from 1 to 256",
		"keys=10":                "gives no command a rate",
		"get=1/s,,set=1/s":       "is not CMD=RATE/s",
		"get=1/s,pipeline=4":     `"pipeline" is not a command`,
		"get=1/s,keys=10,keys=9": "keys is given twice",
	} {
		_, err := engine.ParseBackground(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one with %q", in, err, want)
		}
	}
}

// Background traffic on a real redis-server: get=2000/s,set=500/s over a
// 2 s window (after a 500 ms warm-up that sends but does not count)
// beside a lock-cycle scenario. The open loop's accounting is exact per
// command (offered = sent + dropped, sent = done + errors; offered plus
// undecided is rate x window within one arrival), the derived figures are
// the counts over the window, the server's INFO commandstats count at
// least the GETs and SETs done (and the result's own-command counts take
// them out of the lock's cost), no key is left under the run's prefix
// (the background's own included), and the lock's figures are there.
// Without --background the result has no background object and no param.
func TestBackgroundTraffic(t *testing.T) {
	const prefix = "lockbench:test:bg:"
	d := 2 * time.Second
	bg, err := engine.ParseBackground("get=2000/s,set=500/s")
	if err != nil {
		t.Fatal(err)
	}
	spec := func(b *engine.Background) engine.Scenario {
		return engine.Scenario{Spec: engine.Spec{
			Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
			Retry: policy(t, "fixed:interval=1ms"), Clients: 4,
			Warmup: 500 * time.Millisecond, Duration: d, TTL: time.Second, AcquireTimeout: 5 * time.Second,
			Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
			Options: registry.Values{"own-keys": true}, Seed: 5, Background: b,
		}}
	}
	ctx := context.Background()
	ds, err := engine.Open(ctx, "goredis", nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ds[0].Close()
	before, err := redisadmin.CommandStats(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(ctx, spec(bg), nodes, prefix)
	if err != nil {
		t.Fatal(err)
	}
	after, err := redisadmin.CommandStats(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	if res.Params["background"] != "get=2000/s,set=500/s,keys=10000,size=64,conns=8" {
		t.Errorf("params background=%q", res.Params["background"])
	}
	if res.Raw == nil || res.Raw.Background == nil || res.Background == nil {
		t.Fatalf("no background data: raw %+v, figures %+v", res.Raw, res.Background)
	}
	var done, offered int64
	for name, rate := range map[string]float64{"get": 2000, "set": 500} {
		c, ok := res.Raw.Background.Commands[name]
		if !ok {
			t.Errorf("no %s counts: %v", name, res.Raw.Background.Commands)
			continue
		}
		t.Logf("%s: offered %d, sent %d, done %d, errors %d, dropped %d, undecided %d (%s)", name, c.Offered, c.Sent, c.Done, c.Errors, c.Dropped, c.Undecided, c.ErrorSample)
		if c.Offered != c.Sent+c.Dropped || c.Sent != c.Done+c.Errors {
			t.Errorf("%s: offered %d, sent %d, dropped %d, done %d, errors %d: want offered = sent + dropped, sent = done + errors", name, c.Offered, c.Sent, c.Dropped, c.Done, c.Errors)
		}
		if due, want := c.Offered+c.Undecided, rate*d.Seconds(); math.Abs(float64(due)-want) > 1 {
			t.Errorf("%s: %d arrivals due in the window (offered %d + undecided %d), want %v within one", name, due, c.Offered, c.Undecided, want)
		}
		if c.Done == 0 || c.Hist == "" {
			t.Errorf("%s: %d done, hist %q", name, c.Done, c.Hist)
		}
		fig := res.Background.Commands[name]
		if fig.Done != c.Done || fig.LatencyMS.Count != c.Done || math.Abs(fig.DonePerSec-float64(c.Done)/res.DurationS) > 1e-9 {
			t.Errorf("%s figures %+v, want %d done over %v s", name, fig, c.Done, res.DurationS)
		}
		if srv := after[name] - before[name]; srv < c.Done {
			t.Errorf("INFO commandstats: %d %s calls over the run, fewer than the background's %d done", srv, name, c.Done)
		}
		if own := res.Raw.Cost[0].Own[name]; own < c.Sent {
			t.Errorf("own %s commands %d, fewer than the background sent (%d) in the window alone", name, own, c.Sent)
		}
		done += c.Done
		offered += c.Offered
	}
	b := res.Background
	if b.Done != done || b.Offered != offered || b.LatencyMS.Count != done || b.LatencyMS.P99 <= 0 {
		t.Errorf("figures %+v, want %d done of %d offered", b, done, offered)
	}
	t.Logf("background: %.0f/s offered, %.0f/s done, p99 %.2f ms; lock: %d ops, %.0f ops/s, p99 %.2f ms", b.OfferedPerSec, b.DonePerSec, b.LatencyMS.P99, res.Ops, res.OpsPerSec, res.LatencyMS.P99)
	if res.Ops == 0 || res.LatencyMS.Count != res.Ops || res.OpsPerSec <= 0 {
		t.Errorf("the lock's figures: %d ops, %v ops/s, latency %+v", res.Ops, res.OpsPerSec, res.LatencyMS)
	}
	r, err := ds[0].Do(ctx, "KEYS", prefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Array) != 0 {
		t.Errorf("%d keys left under %s after the run, e.g. %s", len(r.Array), prefix, r.Array[0].Str)
	}

	res0, err := engine.Run(ctx, spec(nil), nodes, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if res0.Background != nil || res0.Raw.Background != nil {
		t.Errorf("without --background: figures %+v, raw %+v", res0.Background, res0.Raw.Background)
	}
	if v, has := res0.Params["background"]; has {
		t.Errorf("without --background: params background=%q", v)
	}
}

// Validate refuses background traffic on Sentinel and Cluster layouts and
// for a lock kept outside Redis, and takes it on the others.
func TestValidateBackground(t *testing.T) {
	bg, _ := engine.ParseBackground("get=100/s")
	sc := func(strategy string) engine.Scenario {
		return engine.Scenario{Spec: engine.Spec{Strategy: strategy, Driver: "goredis", Workload: "lock-cycle",
			Retry: policy(t, "fixed"), Clients: 1, Duration: time.Second, TTL: time.Second, Background: bg}}
	}
	for _, c := range []struct {
		strategy string
		l        engine.Layout
		want     string
	}{
		{"atomic", engine.Layout{Kind: strategies.Sentinel}, "--background runs on a standalone server"},
		{"atomic", engine.Layout{Kind: strategies.Cluster}, "--background runs on a standalone server"},
		{"zk", engine.Layout{}, "--background loads the lock's Redis server; zk keeps its lock in"},
		{"atomic", engine.Layout{}, ""},
		{"atomic", engine.Layout{Kind: strategies.Replicated, Servers: 2}, ""},
		{"redlock", engine.Layout{Kind: strategies.Masters, Servers: 3}, ""},
	} {
		var msgs []string
		for _, err := range engine.Validate(sc(c.strategy), c.l) {
			msgs = append(msgs, err.Error())
		}
		got := strings.Join(msgs, "; ")
		if c.want == "" && strings.Contains(got, "--background") || !strings.Contains(got, c.want) {
			t.Errorf("%s on %v: %q, want %q", c.strategy, c.l.Kind, got, c.want)
		}
	}
}

// On independent masters (redlock on three) every master gets the
// background traffic at the rates given, from connections of its own:
// each server's INFO commandstats count at least the INCRs done less
// what the other two can have done, the arrivals due are three times rate x window (within one
// per master), and no key is left on any master.
func TestBackgroundMasters(t *testing.T) {
	topo, err := topology.Start(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	var ns []engine.Node
	for _, s := range topo.Servers {
		ns = append(ns, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	ctx := context.Background()
	ds, err := engine.Open(ctx, "goredis", ns, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, d := range ds {
			d.Close()
		}
	}()
	before := make([]map[string]int64, len(ds))
	for i, d := range ds {
		if before[i], err = redisadmin.CommandStats(ctx, []drivers.Driver{d}); err != nil {
			t.Fatal(err)
		}
	}
	bg, _ := engine.ParseBackground("incr=300/s,conns=2")
	d := time.Second
	const prefix = "lockbench:test:bgm:"
	res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
		Strategy: "redlock", Driver: "goredis", Workload: "lock-cycle", Retry: policy(t, "fixed:interval=1ms"), Clients: 2,
		Duration: d, TTL: time.Second, AcquireTimeout: 5 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Seed: 7, Background: bg,
	}}, ns, prefix)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Raw.Background.Commands["incr"]
	t.Logf("incr on 3 masters: offered %d, done %d, errors %d, dropped %d, undecided %d; lock %d ops", c.Offered, c.Done, c.Errors, c.Dropped, c.Undecided, res.Ops)
	if due := c.Offered + c.Undecided; math.Abs(float64(due)-3*300*d.Seconds()) > 3 || c.Sent != c.Done+c.Errors || c.Done == 0 || res.Ops == 0 {
		t.Errorf("incr counts %+v, lock ops %d: want 900 due within 3", c, res.Ops)
	}
	for i, d := range ds {
		after, err := redisadmin.CommandStats(ctx, []drivers.Driver{d})
		if err != nil {
			t.Fatal(err)
		}
		// Each master's arrivals due in the window are 300 within one, so
		// the other two did at most 602 of those done: this one the rest.
		if n, least := after["incr"]-before[i]["incr"], c.Done-2*301; n < least {
			t.Errorf("master %d: %d INCRs, want at least %d (%d done on 3 masters)", i, n, least, c.Done)
		}
		r, err := d.Do(ctx, "KEYS", prefix+"*")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Array) != 0 {
			t.Errorf("master %d: %d keys left under %s", i, len(r.Array), prefix)
		}
	}
}
