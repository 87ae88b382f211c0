package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// Layout is what Validate needs to know of the Redis servers a scenario
// runs on. The zero Layout is a standalone server of unknown origin.
type Layout struct {
	// Kind is the layout (Standalone when empty).
	Kind strategies.Topology
	// Servers is the number of redis-server processes, a replica
	// included; 0 = unknown (node indexes and node counts go unchecked).
	Servers int
	// External: the user's servers (--addr), which lockbench cannot kill,
	// pause or restart.
	External bool
}

// LayoutOf describes the layout Run is handed: nodes, and the number of
// redis-server processes lockbench started for it and can act on
// (Env.Servers; 0: none, as for the user's servers or containers,
// so faults that kill, pause or restart a server are refused).
// Nodes that name Sentinels are a Sentinel layout, Cluster clients a
// Cluster, several nodes independent masters, one node with two servers a
// master and its replica.
func LayoutOf(nodes []Node, servers int) Layout {
	l := Layout{Kind: strategies.Standalone, Servers: servers, External: servers == 0}
	switch {
	case len(nodes) == 0:
	case len(nodes[0].Sentinels) > 0:
		l.Kind = strategies.Sentinel
	case nodes[0].Cluster:
		l.Kind = strategies.Cluster
	case len(nodes) > 1:
		l.Kind, l.Servers = strategies.Masters, len(nodes)
	case servers >= 2:
		l.Kind = strategies.Replicated
	}
	return l
}

// ErrThinkOpenLoop is Validate's refusal of a think time (Spec.Think) in
// an open loop (Spec.Rate > 0).
var ErrThinkOpenLoop = errors.New("--think goes with a closed loop: with --rate (an open loop) the arrivals decide when operations start, so a client has no time between its operations to think; drop --think or --rate")

// Validate reports every reason sc cannot run on layout l, all at once,
// without changing sc: an unknown strategy, workload or driver (with the
// nearest name), a pair that does not run together, a fault or write
// guard the strategy, the workload or the layout cannot take, a retry
// policy the driver cannot run (csc off rueidis), a value of a plugin
// parameter (sc.Options) that its declaration refuses, a layout too
// small for the strategy, a --resource the strategy or workload cannot
// take, a timeline interval under MinInterval, and a
// think time in an open loop.
// Run calls it first; the command line calls it for every scenario of its
// matrix before it starts a server.
func Validate(sc Scenario, l Layout) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	info, err := strategies.Lookup(sc.Strategy)
	if err != nil {
		errs = append(errs, err)
	}
	wparams, err := workloads.Lookup(sc.Workload)
	if err != nil {
		errs = append(errs, err)
	}
	if err := drivers.Lookup(sc.Driver); err != nil {
		errs = append(errs, err)
	}
	known := len(errs) == 0 // the checks below that need the plugins
	if sc.Interval != 0 && sc.Interval < MinInterval {
		bad("timeline interval %v is shorter than %v", sc.Interval, MinInterval)
	}
	if known && !strategies.RunsWith(sc.Strategy, sc.Workload) {
		bad("strategy %s does not run workload %s (it runs %s)", sc.Strategy, sc.Workload, strings.Join(info.Workloads, ", "))
	}
	if known {
		// A strategy that declares strategies.PermitsParam tells its
		// permits before it is built; any other semaphore (an external
		// adapter) is judged once built (workloads.CheckPermits in Run).
		if err := permitsFit(sc); err != nil {
			errs = append(errs, err)
		}
	}
	if known && sc.Retry != nil && sc.Retry.Name == retry.QueueName && !info.Queues {
		bad("retry %s is only for strategies that wait in their lock's own queue, not %s", retry.QueueName, sc.Strategy)
	}
	if known && sc.Retry != nil && (sc.Retry.Name == retry.LibraryName) != info.OwnsRetry {
		if info.OwnsRetry {
			bad("strategy %s retries with its library's own loop: its retry policy is %s, not %s", sc.Strategy, retry.LibraryName, sc.Retry.Name)
		} else {
			bad("retry %s is only for strategies that own their retrying (a lock library's), not %s", retry.LibraryName, sc.Strategy)
		}
	}
	if sc.Retry != nil && drivers.Lookup(sc.Driver) == nil && !sc.Retry.RunsOn(sc.Driver) {
		bad("retry %s runs on the %s driver only (it waits for RESP3 client-side-caching invalidations), not on %s: choose --driver %s",
			sc.Retry.Name, strings.Join(sc.Retry.Drivers(), ", "), sc.Driver, sc.Retry.Drivers()[0])
	}
	if info.Backend != strategies.NoBackend && len(sc.Faults) > 0 {
		bad("--fault acts on Redis servers and Redis locks; %s keeps its lock or data in %s", sc.Strategy, info.Backend)
	}
	if sc.Background != nil {
		switch {
		case l.Kind == strategies.Sentinel || l.Kind == strategies.Cluster:
			bad("--background runs on a standalone server, a master and its replica, or independent masters, not on a %s layout (its keys and connections would follow failovers and slots)", l.Kind)
		case info.Backend != strategies.NoBackend:
			bad("--background loads the lock's Redis server; %s keeps its lock in %s", sc.Strategy, info.Backend)
		}
	}
	if sc.Rate > 0 && !sc.Think.IsZero() {
		errs = append(errs, ErrThinkOpenLoop)
	}
	if sh := sc.ClientShape; sh != nil {
		switch {
		case sc.Rate > 0:
			errs = append(errs, ErrRampOpenLoop)
		case sc.Env.Sync != nil:
			errs = append(errs, errors.New("a client ramp (--clients ramp:, stages:) runs in one process: not with execution segments (--segment, --procs)"))
		case MaxClientsOf(sh) < 1:
			errs = append(errs, fmt.Errorf("the client ramp %s never reaches one client", sh))
		case sc.Clients != MaxClientsOf(sh):
			errs = append(errs, fmt.Errorf("the client ramp %s reaches %d clients, and Clients is %d: set Clients to the ramp's maximum", sh, MaxClientsOf(sh), sc.Clients))
		}
	}
	if sc.Slowdown > 0 && sc.Params.Work.Max() != sc.Params.Work.Mean() {
		bad("the test slowdown needs a fixed --work, not %s", sc.Params.Work)
	}
	switch sc.Guard {
	case "", "auto", workloads.GuardNone, workloads.GuardCAS, workloads.GuardDecr:
	default:
		bad("--guard %q is not one of auto, none, cas, decr (fence: --guard auto with a strategy whose leases carry a fencing token, such as fencing)", sc.Guard)
	}
	// A guard forced on a workload whose write it has no meaning for
	// (decr on a counter, any guard on lock-cycle) would guard nothing.
	if g := sc.Guard; (g == workloads.GuardCAS || g == workloads.GuardDecr) && workloads.Guards(sc.Workload) != nil && !workloads.RunsGuard(sc.Workload, g) {
		bad("--guard %s: workload %s has no write it applies to; %s runs in %s", g, sc.Workload, g, strings.Join(workloads.GuardedBy(g), ", "))
	}
	if info.Backend == strategies.MariaDB && sc.Guard != "" && sc.Guard != "auto" {
		bad("--guard %s: %s writes its own way (sql-rowlock: a plain UPDATE under the row lock; sql-guard: the conditional UPDATE); leave --guard auto", sc.Guard, sc.Strategy)
	}
	switch sc.Resource {
	case "", ResourceLock:
	case ResourceSeparate:
		switch {
		case info.Backend == strategies.MariaDB:
			bad("--resource separate: %s keeps its data in MariaDB rows, not in Redis", sc.Strategy)
		case workloads.Guards(sc.Workload) != nil && len(workloads.Guards(sc.Workload)) < 2:
			bad("--resource separate: workload %s writes no protected data (the workloads that do: %s)", sc.Workload, strings.Join(guarded(), ", "))
		case sc.Env.Sync != nil:
			bad("--resource separate runs in one process: not with execution segments (--segment, --procs)")
		}
	default:
		bad("--resource %q is not lock or separate", sc.Resource)
	}
	if sc.Client.PoolSize < 0 {
		bad("--pool-size must be >= 0 (0 = --clients + 4), got %d", sc.Client.PoolSize)
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"--dial-timeout", sc.Client.DialTimeout}, {"--read-timeout", sc.Client.ReadTimeout}, {"--write-timeout", sc.Client.WriteTimeout}} {
		if t.d < 0 {
			bad("%s must be >= 0 (0 = the default, 5s), got %v", t.name, t.d)
		}
	}
	if known && sc.ConstantToken && !info.ConstantToken {
		bad("--token constant: strategy %q keeps its own token (constant applies to %s)", sc.Strategy, strings.Join(constantTokenStrategies(), ", "))
	}
	if sc.Mix != nil && known {
		errs = append(errs, validateMix(sc, info)...)
	}
	if known {
		errs = append(errs, validateLayout(sc, info, l)...)
	}
	sp := registry.Pick(strategies.ParamsOf(sc.Strategy), sc.Options)
	wp := registry.Pick(wparams, sc.Options)
	perrs := registry.Check("--", strategies.ParamsOf(sc.Strategy), sp)
	errs = append(errs, perrs...)
	errs = append(errs, registry.Check("--", wparams, wp)...)
	if known && info.Check != nil && len(perrs) == 0 {
		if err := info.Check(sp); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sc.Strategy, err))
		}
	}
	// The one rule across two plugins: a segmented strategy splits the
	// workload's stock, so each segment must start with some.
	// (Read from the maps: a strategy or workload without the parameter,
	// or a value of the wrong type reported above, is no case of it.)
	seg, segmented := sp["segments"].(int)
	stock, stocked := wp["stock"].(int64)
	if segmented && stocked && seg > 0 && stock > 0 && int64(seg) > stock {
		bad("--segments %d exceeds --stock %d: segments would start empty", seg, stock)
	}
	// transfer: one operation's accounts are distinct.
	if k, ok := wp["transfer-keys"].(int); ok {
		if n, ok := wp["accounts"].(int); ok && k > n {
			bad("--transfer-keys %d exceeds --accounts %d: a transfer locks distinct accounts", k, n)
		}
	}
	return errs
}

// validateMix checks the client roles (Spec.Mix) against the strategy,
// the workload and the clients: the read role needs a lock with a read
// side (strategies.ReadLocker) and a workload with a read-only operation
// (workloads.RoleRunner), the nested role a reentrant lock
// (strategies.Reentrant); every role needs the lock (not a lock-free
// strategy), a client at least, and no --read-ratio beside it.
func validateMix(sc Scenario, info strategies.Info) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	m := sc.Mix
	if info.Lockless {
		bad("--mix %s: strategy %s takes no lock, so its clients have no role to play", m, sc.Strategy)
		return errs
	}
	wlRoles := workloads.RolesOf(sc.Workload)
	for _, role := range m.Roles() {
		switch {
		case !slices.Contains(wlRoles, role):
			bad("--mix %s: workload %s has no %s operation (it runs the roles %s)", m, sc.Workload, role, strings.Join(wlRoles, ", "))
		case role == workloads.RoleRead && !info.Reads:
			bad("--mix %s: strategy %s has no read side (the read role needs a read-write lock: %s)", m, sc.Strategy, strings.Join(strategiesWith(func(i strategies.Info) bool { return i.Reads }), ", "))
		case role == workloads.RoleNested && !info.Reentrant:
			bad("--mix %s: strategy %s is not reentrant (the nested role re-acquires the lock it holds: %s)", m, sc.Strategy, strings.Join(strategiesWith(func(i strategies.Info) bool { return i.Reentrant }), ", "))
		}
	}
	if r, ok := registry.Pick(workloads.ParamsOf(sc.Workload), sc.Options)["read-ratio"].(float64); ok && r > 0 {
		bad("--mix %s and --read-ratio %v: the read-ratio draws reads per operation, the mix gives clients roles; use one (--mix read=%v,write=%v)", m, r, r, 1-r)
	}
	if _, err := m.Counts(sc.totalClients()); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// strategiesWith lists the registered strategies whose Info has has.
func strategiesWith(has func(strategies.Info) bool) []string {
	var out []string
	for _, e := range strategies.Entries() {
		if has(e.Value) {
			out = append(out, e.Name)
		}
	}
	return out
}

// validateLayout checks the strategy's and the faults' needs against l.
func validateLayout(sc Scenario, info strategies.Info, l Layout) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	kind := l.Kind
	if kind == "" {
		kind = strategies.Standalone
	}
	switch {
	case info.Topology == strategies.Masters && (kind == strategies.Sentinel || kind == strategies.Cluster):
		bad("%s needs independent masters (a list of them), not one server behind a %s layout", sc.Strategy, kind)
	case info.Topology == strategies.Replicated && kind == strategies.Cluster:
		bad("%s sends WAIT on its own connection to one master; it cannot run on a Cluster", sc.Strategy)
	case info.Topology == strategies.Masters && l.Servers > 0:
		if err := info.CheckNodes(sc.Strategy, l.Servers); err != nil {
			errs = append(errs, err)
		}
	}
	fl := faults.Layout{Kind: kind, Servers: l.Servers, External: l.External, Strategy: sc.Strategy}
	if sc.Mix != nil {
		fl.Roles = sc.Mix.Roles()
	}
	for _, f := range sc.Faults {
		errs = append(errs, f.Check(fl)...)
	}
	return errs
}

// validate is Validate on the layout nodes describe, as one error, for
// Run; a separate resource (Spec.Resource) needs its server (Env.Resource).
func validate(sc Scenario, nodes []Node) error {
	errs := Validate(sc, LayoutOf(nodes, len(sc.Env.Servers)))
	if sc.separate() && sc.Env.Resource == nil {
		errs = append(errs, errors.New("--resource separate: no resource server given (Env.Resource)"))
	}
	return errors.Join(errs...)
}

// guarded lists the workloads that write protected data through the
// write guards (workloads.Guarder), sorted.
func guarded() []string {
	var out []string
	for _, n := range workloads.Names() {
		if len(workloads.Guards(n)) > 1 {
			out = append(out, n)
		}
	}
	return out
}

func constantTokenStrategies() []string {
	return strategiesWith(func(i strategies.Info) bool { return i.ConstantToken })
}

// permitsFit is workloads.CheckPermits for a strategy that declares
// strategies.PermitsParam, on the value sc gives it (its default
// otherwise): nil for any other strategy, or when its workload cannot be
// made (Validate reports that).
func permitsFit(sc Scenario) error {
	ps := strategies.ParamsOf(sc.Strategy)
	if !slices.ContainsFunc(ps, func(p registry.Param) bool { return p.Name == strategies.PermitsParam.Name }) {
		return nil
	}
	n, ok := registry.Pick(ps, sc.Options)[strategies.PermitsParam.Name].(int)
	if !ok {
		return nil // a value of another type: the parameter check reports it
	}
	w, err := workloads.New(sc.Workload, sc.Options)
	if err != nil {
		return nil
	}
	return workloads.CheckPermits(sc.Workload, w, sc.Strategy, n)
}
