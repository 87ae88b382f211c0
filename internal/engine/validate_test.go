package engine_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/baselines"
	"github.com/lockbench/lockbench/strategies/retry"
)

func fault(t *testing.T, spec string) faults.Spec {
	t.Helper()
	sp, err := faults.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// Validate reports every problem of a scenario at once, each once, and
// leaves the scenario as it was.
func TestValidate(t *testing.T) {
	ok := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Guard: "auto"}}
	standalone := engine.Layout{Kind: strategies.Standalone, Servers: 1}
	if errs := engine.Validate(ok, standalone); len(errs) != 0 {
		t.Fatalf("a valid scenario: %v", errs)
	}
	csc, err := retry.Parse("csc")
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*engine.Scenario)) engine.Scenario {
		sc := ok
		f(&sc)
		return sc
	}
	if errs := engine.Validate(with(func(s *engine.Scenario) { s.Retry = csc }), standalone); len(errs) != 0 {
		t.Fatalf("csc on rueidis: %v", errs)
	}
	cases := []struct {
		name string
		sc   engine.Scenario
		l    engine.Layout
		want []string
	}{
		{"names", with(func(s *engine.Scenario) { s.Strategy, s.Workload, s.Driver = "atomc", "flash-sal", "go-redis" }), standalone,
			[]string{`unknown strategy "atomc"; did you mean "atomic"?`, `unknown workload "flash-sal"; did you mean "flash-sale"?`, `unknown driver "go-redis"; did you mean "goredis"?`}},
		{"params", with(func(s *engine.Scenario) {
			s.Strategy = "segmented"
			s.Options = registry.Values{"segments": 0, "stock": int64(0), "read-ratio": 2.0}
		}), standalone, []string{"--segments 0: must be from 1 to 100000, got 0", "--stock 0: must be from 1", "--read-ratio 2: must be from 0 to 1, got 2"}},
		{"segments over stock", with(func(s *engine.Scenario) {
			s.Strategy, s.Options = "segmented", registry.Values{"segments": 50, "stock": 10}
		}), standalone, []string{"--segments 50 exceeds --stock 10: segments would start empty"}},
		{"pairing", with(func(s *engine.Scenario) { s.Strategy, s.Workload = "sql-rowlock", "lock-cycle" }), standalone,
			[]string{"strategy sql-rowlock does not run workload lock-cycle"}},
		{"guard and token", with(func(s *engine.Scenario) { s.Strategy, s.Guard, s.ConstantToken = "fencing", "fence", true }), standalone,
			[]string{`--guard "fence" is not one of auto, none, cas, decr`, `--token constant: strategy "fencing" keeps its own token (constant applies to atomic, multi, naive, redlock, watchdog)`}},
		{"decr on a counter", with(func(s *engine.Scenario) { s.Workload, s.Guard = "hot-key", "decr" }), standalone,
			[]string{"--guard decr: workload hot-key has no write it applies to; decr runs in flash-sale"}},
		{"cas with no data", with(func(s *engine.Scenario) { s.Workload, s.Guard = "lock-cycle", "cas" }), standalone,
			[]string{"--guard cas: workload lock-cycle has no write it applies to; cas runs in flash-sale, hot-key, long-task, nested"}},
		{"redlock nodes", with(func(s *engine.Scenario) { s.Strategy = "redlock" }), engine.Layout{Kind: strategies.Masters, Servers: 2},
			[]string{"redlock needs at least 3 independent masters"}},
		{"redlock behind sentinel", with(func(s *engine.Scenario) { s.Strategy = "redlock" }), engine.Layout{Kind: strategies.Sentinel, External: true},
			[]string{"redlock needs independent masters (a list of them), not one server behind a sentinel layout"}},
		{"faults on the user's servers", with(func(s *engine.Scenario) {
			s.Faults = []faults.Spec{fault(t, "node-kill"), fault(t, "latency")}
		}), engine.Layout{Kind: strategies.Cluster, External: true},
			[]string{"fault node-kill acts on servers lockbench starts itself", "fault latency stands between clients and fixed addresses"}},
		{"failover", with(func(s *engine.Scenario) { s.Faults = []faults.Spec{fault(t, "failover:hold=6s")} }),
			engine.Layout{Kind: strategies.Sentinel, Servers: 2}, []string{"hold=6s is too long"}},
		{"failover standalone", with(func(s *engine.Scenario) { s.Faults = []faults.Spec{fault(t, "failover")} }), standalone,
			[]string{"fault failover needs --topology replica (by hand) or sentinel, not standalone"}},
		{"node index", with(func(s *engine.Scenario) { s.Faults = []faults.Spec{fault(t, "node-pause:node=2")} }),
			engine.Layout{Kind: strategies.Replicated, Servers: 2}, []string{"fault node-pause: node=2, but the layout has 2 server(s)"}},
		{"csc on goredis", with(func(s *engine.Scenario) { s.Driver, s.Retry = "goredis", csc }), standalone,
			[]string{"retry csc runs on the rueidis driver only (it waits for RESP3 client-side-caching invalidations), not on goredis: choose --driver rueidis"}},
		{"faults on a SQL strategy", with(func(s *engine.Scenario) { s.Strategy, s.Faults = "sql-rowlock", []faults.Spec{fault(t, "pause")} }),
			standalone, []string{"--fault acts on Redis servers and Redis locks; sql-rowlock keeps its lock or data in mariadb"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.sc
			errs := engine.Validate(c.sc, c.l)
			if len(errs) != len(c.want) {
				t.Fatalf("%d errors %v, want %d: %q", len(errs), errs, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], w)
				}
			}
			if before.Strategy != c.sc.Strategy || len(before.Options) != len(c.sc.Options) {
				t.Fatal("Validate changed the scenario")
			}
		})
	}
	// LayoutOf reads a layout off the nodes Run is given.
	for _, c := range []struct {
		nodes   []engine.Node
		servers int
		want    engine.Layout
	}{
		{[]engine.Node{{Addr: "a"}}, 1, engine.Layout{Kind: strategies.Standalone, Servers: 1}},
		{[]engine.Node{{Addr: "a"}}, 2, engine.Layout{Kind: strategies.Replicated, Servers: 2}},
		{[]engine.Node{{Addr: "a"}, {Addr: "b"}, {Addr: "c"}}, 0, engine.Layout{Kind: strategies.Masters, Servers: 3, External: true}},
		{[]engine.Node{{Addr: "a", Cluster: true}}, 3, engine.Layout{Kind: strategies.Cluster, Servers: 3}},
		{[]engine.Node{{Addr: "m", Sentinels: []string{"s"}}}, 0, engine.Layout{Kind: strategies.Sentinel, External: true}},
	} {
		if got := engine.LayoutOf(c.nodes, c.servers); got != c.want {
			t.Errorf("LayoutOf(%d nodes, %d servers) = %+v, want %+v", len(c.nodes), c.servers, got, c.want)
		}
	}
}

// The client-side faults and the driver settings are checked like the
// others: node indexes, --addr, layouts, negative values.
func TestValidateClientFaults(t *testing.T) {
	ok := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Guard: "auto"}}
	redlock := engine.Scenario{Spec: engine.Spec{Strategy: "redlock", Driver: "goredis", Workload: "flash-sale", Guard: "auto"}}
	standalone := engine.Layout{Kind: strategies.Standalone, Servers: 1}
	masters := engine.Layout{Kind: strategies.Masters, Servers: 5}
	external := engine.Layout{Kind: strategies.Standalone, External: true}
	withFault := func(sc engine.Scenario, spec string) engine.Scenario {
		sc.Faults = []faults.Spec{fault(t, spec)}
		return sc
	}
	for _, c := range []struct {
		sc   engine.Scenario
		l    engine.Layout
		want string // "" = valid
	}{
		{withFault(ok, "reply-loss:p=0.5,delay=1s"), standalone, ""},
		{withFault(ok, "reply-loss"), external, ""},
		{withFault(ok, "blackhole:for=1s"), external, ""},
		{withFault(ok, "blackhole:node=1"), standalone, "clients connect to one server (node=0)"},
		{withFault(ok, "reply-loss"), engine.Layout{Kind: strategies.Cluster, Servers: 3}, "a cluster client finds its servers itself"},
		{withFault(redlock, "blackhole:node=4"), masters, ""},
		{withFault(redlock, "reply-loss:node=5"), masters, "node=5, but the layout has 5 server(s)"},
		{withFault(ok, "script-flush:every=100ms"), standalone, ""},
		{withFault(ok, "script-flush"), external, "fault script-flush acts on servers lockbench starts itself"},
		{withFault(ok, "client-pause:node=1"), standalone, "node=1, but the layout has 1 server(s)"},
		{withFault(ok, "client-pause:mode=all"), external, "cannot be used with --addr"},
		{withFault(redlock, "clock-jump:count=3,by=10s"), masters, ""},
		{withFault(redlock, "clock-jump:node=3,count=3"), masters, "node=3,count=3 needs servers 3 to 5, but the layout has 5"},
		{withFault(ok, "clock-jump"), external, "cannot be used with --addr"},
		{func() engine.Scenario { sc := ok; sc.Client.PoolSize = -1; return sc }(), standalone, "--pool-size must be >= 0"},
		{func() engine.Scenario { sc := ok; sc.Client.ReadTimeout = -1; return sc }(), standalone, "--read-timeout must be >= 0"},
		{func() engine.Scenario { sc := ok; sc.Client.DialTimeout = -1; return sc }(), standalone, "--dial-timeout must be >= 0"},
		{func() engine.Scenario { sc := ok; sc.Client.WriteTimeout = -1; return sc }(), standalone, "--write-timeout must be >= 0"},
	} {
		errs := engine.Validate(c.sc, c.l)
		name := c.sc.Strategy
		if len(c.sc.Faults) > 0 {
			name += " " + c.sc.Faults[0].String()
		}
		switch {
		case c.want == "" && len(errs) != 0:
			t.Errorf("%s on %+v: %v, want valid", name, c.l, errs)
		case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want)):
			t.Errorf("%s on %+v: %v, want one error with %q", name, c.l, errs, c.want)
		}
	}
	for spec, want := range map[string]string{
		"reply-loss:p=1.5":       "must be from 0 to 1",
		"client-pause:mode=rw":   `"rw" is not one of write, all`,
		"clock-jump:count=0":     "must be from 1 to 64",
		"script-flush:every=-1s": "must be from 0s to 1h0m0s",
	} {
		if _, err := faults.Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", spec, err, want)
		}
	}
}

// The result records the guard in force in each scenario: the strategy's
// own where the workload runs it, the lock-free strategies' increment in
// place on a counter, none where there is no data; a guard given is
// recorded where it is accepted.
func TestGuardRecorded(t *testing.T) {
	for _, c := range []struct{ strategy, workload, guard, want string }{
		{"fencing", "hot-key", "auto", "fence"},
		{"fencing", "long-task", "", "fence"},
		{"fencing", "nested", "auto", "fence"},
		{"fencing", "flash-sale", "auto", "fence"},
		{"fencing", "lock-cycle", "auto", "none"},
		{"multilevel", "hot-key", "auto", "cas"},
		{"multilevel", "lock-cycle", "auto", "none"},
		{"redis-guard", "flash-sale", "auto", "decr"},
		{"redis-guard", "hot-key", "auto", "incr"},
		{"sql-guard", "hot-key", "auto", "incr"},
		{"sql-rowlock", "hot-key", "auto", "none"},
		{"atomic", "hot-key", "cas", "cas"},
		{"atomic", "lock-cycle", "none", "none"},
		{"fencing", "hot-key", "none", "none"},
	} {
		sc := engine.Scenario{Spec: engine.Spec{Strategy: c.strategy, Driver: "rueidis", Workload: c.workload, Guard: c.guard}}
		if errs := engine.Validate(sc, engine.Layout{Kind: strategies.Standalone, Servers: 1}); len(errs) != 0 {
			t.Errorf("%s on %s, guard %q: %v", c.strategy, c.workload, c.guard, errs)
		}
		if got := sc.ParamsMap()["guard"]; got != c.want {
			t.Errorf("%s on %s, guard %q: params.guard %q, want %q", c.strategy, c.workload, c.guard, got, c.want)
		}
	}
}
