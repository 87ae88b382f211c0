package faults_test

import (
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// Every registered fault, found in the registry (no list of names here):
// it parses with its defaults; each parameter it declares reaches its
// typed config; it validates on the layout it needs and refuses what it
// must (the user's servers when it needs lockbench's, Sentinel and Cluster
// when it needs a proxy, a node beyond the layout, both triggers or an
// after= it does not take, an unknown parameter, no --procs for a process
// fault); and on real redis-server processes its window opens and closes.
func TestEveryFault(t *testing.T) {
	t.Parallel()
	es := faults.Entries()
	if len(es) == 0 {
		t.Fatal("no fault registered")
	}
	for _, e := range es {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel() // each on servers (and a proxy) of its own
			def, err := faults.Parse(e.Name)
			if err != nil {
				t.Fatalf("its defaults: %v", err)
			}
			if def.Fault() == nil || def.String() != e.Name || def.Needs() != e.Value.Needs || def.Proxied() != e.Value.Proxy {
				t.Fatalf("Parse(%q) = %+v; want its config and its Info", e.Name, def)
			}
			paramsReachConfig(t, e, def)
			refusals(t, e, def)
			window(t, e)
		})
	}
}

// home is the layout e needs: a master with a replica, else one server.
func home(e registry.Entry[faults.Info]) faults.Layout {
	if e.Value.Needs == faults.NeedsReplica {
		return faults.Layout{Kind: strategies.Replicated, Servers: 2, Strategy: "atomic"}
	}
	return faults.Layout{Kind: strategies.Standalone, Servers: 1, Strategy: "atomic"}
}

// paramsReachConfig gives each parameter but the trigger a value other
// than its default and wants another typed config: a parameter declared
// but never read would leave the fault as it was.
func paramsReachConfig(t *testing.T, e registry.Entry[faults.Info], def faults.Spec) {
	t.Helper()
	for _, p := range e.Params {
		if p.Name == "at" || p.Name == "after" {
			continue
		}
		v, ok := otherValue(p)
		if !ok {
			t.Errorf("parameter %s: found no valid value other than its default %v", p.Name, p.Default)
			continue
		}
		spec := e.Name + ":" + p.Name + "=" + registry.Format(v)
		sp, err := faults.Parse(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if reflect.DeepEqual(sp.Fault(), def.Fault()) {
			t.Errorf("%s: the same config as the defaults (%+v): the parameter does not reach the fault", spec, sp.Fault())
		}
	}
}

var oneOf = regexp.MustCompile(`is not one of (.*)$`)

// otherValue returns a value of p's type other than its default that p
// accepts.
func otherValue(p registry.Param) (any, bool) {
	var candidates []any
	switch d := p.Default.(type) {
	case int:
		candidates = []any{d + 1, d - 1}
	case int64:
		candidates = []any{d + 1, d - 1}
	case float64:
		candidates = []any{d / 2, (d + 1) / 2, d + 1}
	case bool:
		candidates = []any{!d}
	case time.Duration:
		candidates = []any{d + time.Millisecond, d - time.Millisecond}
	case string:
		// A closed set (registry.OneOf) names its values when refusing one.
		if m := oneOf.FindStringSubmatch(fmt.Sprint(p.Validate("\x00"))); m != nil {
			for _, s := range strings.Split(m[1], ", ") {
				candidates = append(candidates, s)
			}
		}
		candidates = append(candidates, d+"x")
	}
	for _, c := range candidates {
		if registry.Format(c) != registry.Format(p.Default) && p.Validate(c) == nil {
			return c, true
		}
	}
	return nil, false
}

// refusals checks what every fault must refuse, from what it declares.
func refusals(t *testing.T, e registry.Entry[faults.Info], def faults.Spec) {
	t.Helper()
	l := home(e)
	if errs := def.Check(l); len(errs) != 0 {
		t.Errorf("on %+v: %v, want valid", l, errs)
	}
	refused := func(what string, errs []error, want string) {
		t.Helper()
		for _, err := range errs {
			if strings.Contains(err.Error(), want) {
				return
			}
		}
		t.Errorf("%s: %v, want an error with %q", what, errs, want)
	}
	parseErr := func(spec string) []error {
		_, err := faults.Parse(spec)
		return []error{err}
	}
	refused("an unknown parameter", parseErr(e.Name+":bogus=1"), `unknown parameter "bogus"`)
	if e.Value.AtOnly {
		refused("after=", parseErr(e.Name+":after=1"), `unknown parameter "after"`)
	} else {
		refused("at= and after=", parseErr(e.Name+":at=1s,after=1"), "give at= or after=, not both")
	}
	if e.Value.Needs != faults.NeedsNothing {
		ext := l
		ext.External = true
		refused("the user's servers", def.Check(ext), "cannot be used with --addr")
	}
	if e.Value.Proxy {
		for _, k := range []strategies.Topology{strategies.Sentinel, strategies.Cluster} {
			refused(string(k), def.Check(faults.Layout{Kind: k, Servers: 3, Strategy: "atomic"}), "finds its servers itself")
		}
	}
	if _, ok := e.Param("node"); ok {
		sp, err := faults.Parse(e.Name + ":node=5")
		if err != nil {
			t.Fatal(err)
		}
		refused("node=5", sp.Check(l), "node=5, but")
	}
	if p, ok := def.Proc(); ok {
		if err := def.CheckProcs(p); err != nil {
			t.Errorf("with --procs %d: %v, want valid", p, err)
		}
		refused("no --procs", []error{def.CheckProcs(0)}, "give --procs")
		refused(fmt.Sprintf("--procs %d", p-1), []error{def.CheckProcs(p - 1)}, fmt.Sprintf("proc=%d, but --procs %d", p, p-1))
	} else if err := def.CheckProcs(0); err != nil {
		t.Errorf("CheckProcs(0) = %v for a fault on no child process", err)
	}
}

// gentle are parameters window adds to a fault that acts on the test
// process itself: cpu-starve with its defaults would starve the package's
// parallel tests (short leases among them) for 2 x 100 ms.
var gentle = map[string]string{"cpu-starve": ",for=20ms,busy=2"}

// window runs the fault, triggered at once, on real servers (a master
// with a replica when it needs one, one server otherwise, behind a proxy
// when it acts through one) with a stand-in client that reaches every
// client point (pause, crash, cancel, kill) every 5 ms, and wants its
// window opened and closed with a note that says it acted.
func window(t *testing.T, e registry.Entry[faults.Info]) {
	t.Helper()
	sp, err := faults.Parse(e.Name + ":at=0s" + gentle[e.Name])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var topo *topology.Topology
	if e.Value.Needs == faults.NeedsReplica {
		topo, err = topology.StartReplicated(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(topo.Stop)
	} else {
		topo = start(t, 1)
	}
	open := func(addr, password string) (drivers.Driver, error) {
		return drivers.Open("goredis", drivers.Options{Endpoint: drivers.Endpoint{Addr: addr, Password: password}, PoolSize: 1})
	}
	d, err := open(topo.Servers[0].Addr, topo.Servers[0].Password)
	if err != nil {
		t.Fatal(err)
	}
	sw := drivers.NewSwitch(d)
	t.Cleanup(func() { sw.Close() })
	env := faults.Env{Servers: topo.Servers, Switches: []*drivers.Switch{sw}, Open: open, TTL: 100 * time.Millisecond, CrashPoint: "after-acquire"}
	if sp.Proxied() {
		px, err := faults.StartProxies(topo.Addrs()[:1])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(px.Close)
		env.Proxies = px
	}
	proc, isProc := sp.Proc()
	env.Proc = proc // a process fault acting in its child acts here

	in := faults.New([]faults.Spec{sp}, env)
	rctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer stop()
	in.Start(rctx)
	var g strategies.Gate
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for ; rctx.Err() == nil; <-tick.C {
		in.Acquired()
		in.Paused(0, &g)
		in.PausedBeforeWrite(0, &g)
		in.Crash(0, env.CrashPoint)
		in.Cancels(0)
		in.Kills(0) // a Killer's client would now call in.Die, which would kill this test
	}
	ws := in.Finish()

	var done []faults.Window // windows that must have opened and closed
	if isProc {
		// Its parent side, on a real process standing in for child proc.
		child := exec.Command("sleep", "30")
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
		pe := faults.ParentEnv{Signal: child.Process.Signal, Exited: func() bool { return false },
			Start: time.Now(), TTL: 100 * time.Millisecond, Stop: make(chan struct{})}
		done = append(done, sp.ChildStarted(pe)...)
		if w, ok := sp.ChildKilled(pe, time.Now()); ok {
			done = append(done, w)
		}
		switch {
		case len(done) == 0:
			t.Fatalf("process fault: the parent recorded no window")
		case len(ws) > 1:
			t.Fatalf("process fault: %d windows in its child, want at most 1: %+v", len(ws), ws)
		case len(ws) == 1 && ws[0].StartMS < 0:
			// Acting in its child, it began there (its end is the
			// process's death, which the parent records: ChildKilled).
			t.Fatalf("process fault in its child: window %+v never began", ws[0])
		}
	} else {
		if len(ws) != 1 {
			t.Fatalf("%d windows, want 1: %+v", len(ws), ws)
		}
		done = ws
	}
	for _, w := range done {
		t.Logf("window %+v", w)
		if w.Fault != sp.String() || w.StartMS < 0 || w.EndMS < w.StartMS || w.Note == "" {
			t.Errorf("window %+v: want it named %q, opened and closed, with a note", w, sp.String())
		}
		for _, bad := range []string{"not done", "not triggered", "armed, but", "failed", "no server"} {
			if strings.Contains(w.Note, bad) {
				t.Errorf("window note %q: the fault did not act", w.Note)
			}
		}
	}
}
