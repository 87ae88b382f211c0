// Package faults injects failures into a running scenario and records when
// each one acted, so that violations and latency can be put in its window.
//
// A fault is written NAME[:param=value,...]. Every fault takes a trigger,
// at=DURATION (after the scenario started; default 1s) or after=N (once N
// locks have been granted; 0, the default, means use at), not both; a
// fault registered with Info.AtOnly takes at= only. `lockbench list`
// prints every registered fault with its parameters.
//
// Each fault is a plugin, one file of this package (pause.go,
// nodekill.go, clockjump.go, ...), shaped like k6's executors: its
// init() calls Register with its Info (description, parameters, what it
// needs of the servers) and a Builder that turns the parsed parameter
// values into its typed config, a Fault. The Fault checks itself against
// the scenario's Layout (Check) and acts (Act) through an Action: its
// window, the servers and proxies of the scenario, and the client hooks
// (Pauser, Crasher, Canceller, Killer) it may arm. A fault on a child
// process of lockbench run --procs also implements ProcFault (process.go).
// Nothing outside the fault's file names it: the command line, the
// scenario files, the engine's validation and the proxies all ask the
// registry and the Spec.
package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
)

// Needs says what a fault requires of the servers.
type Needs int

// Requirements.
const (
	// NeedsNothing: the fault acts on the clients or through the proxies;
	// it runs on the user's servers (--addr) too.
	NeedsNothing Needs = iota
	// NeedsOwnServer: the fault acts on redis-server processes lockbench
	// started (kills, pauses, flushes them); refused with --addr and with
	// --backend docker, and the scenario gets a fresh layout.
	NeedsOwnServer
	// NeedsReplica: as NeedsOwnServer, on a master with a replica
	// (lockbench starts one when no --topology is given).
	NeedsReplica
)

// Info describes a registered fault.
type Info struct {
	// Desc is the one-line description `lockbench list` prints.
	Desc string
	// Params are the fault's own parameters, in the order `lockbench list`
	// shows them; the trigger (Trigger: at, and after unless AtOnly) is
	// added after them. Each is a parameter of the spec, NAME:param=value.
	Params []registry.Param
	// Needs is what the fault requires of the servers (default
	// NeedsNothing). Spec.Check refuses a fault that needs servers on the
	// user's servers (--addr); the command line gives such a scenario a
	// fresh layout, a master with a replica for NeedsReplica.
	Needs Needs
	// Proxy: the fault acts in the in-process toxiproxy proxies (Proxies),
	// one in front of each node, which the scenario's clients then connect
	// through from its start. Spec.Check refuses it on Sentinel and
	// Cluster layouts, whose clients find their servers themselves.
	Proxy bool
	// AtOnly: the trigger is at= only (no after=): for a fault timed from
	// outside the process that counts the locks granted (the process
	// faults).
	AtOnly bool
}

// Builder makes a fault's typed config from its parameter values: v holds
// every parameter Info.Params declares (and at and after), each of its
// declared type and accepted by its Check (Parse reports a refused value
// and builds with its default in its place). Its error reports a problem
// that involves more than one value ("jitter=1s exceeds delay=50ms");
// Parse prefixes it with "fault NAME: ". A Builder must read only
// parameters it declares.
type Builder func(v registry.Values) (Fault, error)

// Fault is one fault's typed config, as its Builder made it from a spec.
// It must not change once built: one Fault serves every scenario of a run
// (and every repeat); what it does in one scenario lives in Act.
type Fault interface {
	// Check reports every reason the fault cannot act on layout l: a node
	// index beyond its servers (Layout.CheckServers,
	// Layout.CheckProxyNode), a layout it has no meaning on. Spec.Check
	// makes the checks Info declares (Needs, Proxy) before it. Each error
	// names the fault ("fault node-kill: node=3, ...").
	Check(l Layout) []error
	// Act performs the fault in one scenario, once its trigger came, in a
	// goroutine of its own; ctx ends when the scenario stops. It calls
	// a.Begin when it starts acting and a.End (with a note for the result
	// file) when it is done; a fault that acts through a client arms a
	// hook (Action.Arm) and begins its window when a client comes. Act
	// may return before the window ends (the hook ends it), but must not
	// outlive ctx by more than its own clean-up.
	Act(ctx context.Context, a *Action)
}

type entry struct {
	info  Info
	build Builder
}

var reg = registry.New[entry]("fault")

// Trigger are the parameters every fault takes after its own: when it
// acts. A fault with Info.AtOnly takes the first only.
var Trigger = []registry.Param{
	{Name: "at", Doc: "act this long after the scenario started", Default: time.Second, Check: registry.DurationBetween(0, time.Hour)},
	{Name: "after", Doc: "act once this many locks have been granted instead; 0 = use at", Default: int64(0), Check: registry.AtLeast(int64(0))},
}

// NodeParam is the node parameter of a fault that acts on one server: its
// index in the layout (0, the default: the first server, the master).
// A negative index is refused when parsed; one beyond the layout by the
// fault's Check (Layout.CheckServers, Layout.CheckProxyNode).
var NodeParam = registry.Param{Name: "node", Doc: "server index in the layout (0 = the first; the master)", Default: 0,
	Check: func(v any) error {
		if n, _ := v.(int); n < 0 {
			return fmt.Errorf("%d is not a server index (0, 1, ...)", n)
		}
		return nil
	}}

// Span declares a duration parameter from 0 to 1 h with default def; doc
// says what 0 means where it is special.
func Span(name, doc string, def time.Duration) registry.Param {
	return registry.Param{Name: name, Doc: doc, Default: def, Check: registry.DurationBetween(0, time.Hour)}
}

// Register makes a fault available under name (lower-case words joined by
// dashes, as --fault takes it) to Parse, the command line, scenario files
// and `lockbench list`. Call it from an init function. It panics on an
// empty or duplicate name, a nil Builder, or a parameter declared wrong
// (including one named at or after, which every fault takes already):
// programming errors, found at start-up.
func Register(name string, info Info, build Builder) {
	if build == nil {
		panic("faults: Register " + name + " with a nil Builder")
	}
	trigger := Trigger
	if info.AtOnly {
		trigger = Trigger[:1]
	}
	info.Params = append(append([]registry.Param{}, info.Params...), trigger...)
	reg.Register(name, info.Desc, info.Params, entry{info, build})
}

// Names lists the faults, sorted.
func Names() []string { return reg.Names() }

// Entries lists the faults with their descriptions, parameters (the
// trigger's included) and Info, sorted by name.
func Entries() []registry.Entry[Info] {
	es := reg.Entries()
	out := make([]registry.Entry[Info], len(es))
	for i, e := range es {
		out[i] = registry.Entry[Info]{Name: e.Name, Desc: e.Desc, Params: e.Params, Value: e.Value.info}
	}
	return out
}

// ErrUnknown is wrapped by Parse for an unknown fault name.
var ErrUnknown = errors.New("unknown fault")

// Spec is a parsed fault: its name, trigger and typed config.
type Spec struct {
	// Name is the registered fault's name.
	Name string
	// At and After are the trigger: act At after the scenario started, or
	// once After locks have been granted (After > 0 wins).
	At    time.Duration
	After int64
	// Values are the parameters as parsed, every one the fault declares
	// present (defaults included; at and after too).
	Values registry.Values
	fault  Fault
	info   Info
	raw    string
}

// String is the spec as written.
func (s Spec) String() string { return s.raw }

// Fault is the fault's typed config (nil in the zero Spec).
func (s Spec) Fault() Fault { return s.fault }

// Needs says what the fault requires of the servers (Info.Needs).
func (s Spec) Needs() Needs { return s.info.Needs }

// Proxied reports whether the fault acts through proxies the clients
// connect through (Info.Proxy).
func (s Spec) Proxied() bool { return s.info.Proxy }

// Parse reads NAME[:param=value,...]. Errors: ErrUnknown (with the nearest
// name and the valid ones); every bad parameter at once (not key=value,
// given twice, unknown, of the wrong type, refused by its Check); at= and
// after= both given; the Builder's own error, prefixed "fault NAME: "; a
// parameter the Builder reads but the fault did not declare
// (registry.UndeclaredError).
func Parse(s string) (Spec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	e, err := reg.Lookup(name, ErrUnknown)
	if err != nil {
		return Spec{}, err
	}
	v, err := registry.ParseArgs("fault", name, rest, e.Params)
	errs := []error{err}
	if strings.Contains(","+rest, ",at=") && strings.Contains(","+rest, ",after=") {
		errs = append(errs, fmt.Errorf("fault %s: give at= or after=, not both", name))
	}
	f, err := build(e.Value.build, v)
	if err != nil {
		errs = append(errs, fmt.Errorf("fault %s: %w", name, err))
	}
	if err := errors.Join(errs...); err != nil {
		return Spec{}, err
	}
	// The trigger, which Register declared for every fault: read from the
	// map (after is absent, 0, for an AtOnly fault).
	at, _ := v["at"].(time.Duration)
	after, _ := v["after"].(int64)
	return Spec{Name: name, At: at, After: after, Values: v, fault: f, info: e.Value.info, raw: strings.TrimSpace(s)}, nil
}

// build runs a fault's Builder, its read of an undeclared parameter an
// error.
func build(b Builder, v registry.Values) (_ Fault, err error) {
	defer registry.Recover(&err, "")
	return b(v)
}

// Layout is what a fault's Check is told of the servers a scenario runs
// on (engine.Validate makes it from its own Layout and the scenario).
type Layout struct {
	// Kind is the layout: strategies.Standalone (also when empty),
	// Masters, Replicated, Sentinel or Cluster.
	Kind strategies.Topology
	// Servers is the number of redis-server processes, a replica
	// included; 0 = unknown: node indexes go unchecked.
	Servers int
	// External: the user's servers (--addr), which lockbench cannot kill,
	// pause or restart.
	External bool
	// Strategy is the scenario's strategy, by name
	// (strategies.TopologyOf(Strategy) is the layout it needs).
	Strategy string
	// Roles are the scenario's client roles (--mix; nil without): a
	// fault's role= must name one of them.
	Roles []string
}

func (l Layout) kind() strategies.Topology {
	if l.Kind == "" {
		return strategies.Standalone
	}
	return l.Kind
}

// CheckServers reports, for fault, servers node .. node+count-1 (count <
// 1 counts as 1) that the layout does not have: "fault NAME: node=3, but
// the layout has 1 server(s) (indexes from 0)". Nothing when the number
// of servers is unknown (0).
func (l Layout) CheckServers(fault string, node, count int) []error {
	if l.Servers == 0 || node+max(count, 1) <= l.Servers {
		return nil
	}
	if count > 1 {
		return []error{fmt.Errorf("fault %s: node=%d,count=%d needs servers %d to %d, but the layout has %d (indexes from 0)", fault, node, count, node, node+count-1, l.Servers)}
	}
	return []error{fmt.Errorf("fault %s: node=%d, but the layout has %d server(s) (indexes from 0)", fault, node, l.Servers)}
}

// CheckProxyNode reports, for a fault acting through the proxy of node
// (Info.Proxy), a node the clients do not connect to: above 0 unless the
// clients use several masters, and beyond the masters there are. Nothing
// on Sentinel and Cluster layouts (Spec.Check refuses the proxy there).
func (l Layout) CheckProxyNode(fault string, node int) []error {
	switch k := l.kind(); {
	case k == strategies.Sentinel || k == strategies.Cluster:
	case k != strategies.Masters && node > 0:
		return []error{fmt.Errorf("fault %s: node=%d, but the clients connect to one server (node=0) on a %s layout", fault, node, k)}
	case k == strategies.Masters && l.Servers > 0 && node >= l.Servers:
		return []error{fmt.Errorf("fault %s: node=%d, but the layout has %d server(s) (indexes from 0)", fault, node, l.Servers)}
	}
	return nil
}

// Check reports every reason the fault cannot act on layout l: servers it
// needs (Info.Needs) that are the user's (--addr), a proxy (Info.Proxy)
// on a Sentinel or Cluster layout, then the fault's own Check.
func (s Spec) Check(l Layout) []error {
	var errs []error
	if s.info.Needs != NeedsNothing && l.External {
		errs = append(errs, fmt.Errorf("fault %s acts on servers lockbench starts itself; it cannot be used with --addr", s.Name))
	}
	if k := l.kind(); s.info.Proxy && (k == strategies.Sentinel || k == strategies.Cluster) {
		errs = append(errs, fmt.Errorf("fault %s stands between clients and fixed addresses; a %s client finds its servers itself", s.Name, k))
	}
	if s.fault != nil {
		errs = append(errs, s.fault.Check(l)...)
	}
	return errs
}

// Window is when a fault acted (the result file's type).
type Window = report.FaultWindow
