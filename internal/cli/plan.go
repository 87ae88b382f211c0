package cli

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// plan is a validated run: the scenarios and where to run them.
type plan struct {
	scenarios []engine.Scenario
	addrs     []string
	nodes     int                 // redlock masters to start
	topology  strategies.Topology // --topology ("" = per strategy)
	out       string              // result file
	// defaultOut: out is the default name (no --out); runMatrix reserves
	// a unique one (reserveOut).
	defaultOut bool
	// allowNonempty skips the check that --addr databases are empty.
	allowNonempty bool
	repeat        int // runs per scenario
	// thresholds are --fail-on's, tested on every scenario after the run.
	thresholds []thresholds.Threshold
	docker     bool // --backend docker: servers in containers
	// conn is how to reach addrs (the user's servers): the login, the
	// database, TLS, and whether they are Cluster nodes (Cluster) or
	// Sentinels of MasterName. Its Addr, Seeds and Sentinels are set per
	// node (external).
	conn drivers.Endpoint
	// resource is the --resource-addr server (--resource separate with
	// --addr); nil: none given (without --addr lockbench starts one).
	resource *engine.Node
	// sweep is lockbench sweep's meta.sweep (nil for run).
	sweep *report.Sweep
	// segRunID, for a run of execution segments, is its run id: the keys
	// under lockbench:<segRunID>: (the barrier, the leader's data) do not
	// make a database non-empty.
	segRunID string
	// labels and lines are, for a file with scenarios:, each scenario's
	// name: ("" for none) and its item's line; concurrent: they run at
	// once (concurrent: true).
	labels     []string
	lines      []int
	concurrent bool
}

// validate checks every flag and returns all problems at once: the plan
// builder's steps, each reading the flags of one concern into typed
// values, in the order their messages are reported.
func validate(f *runFlags) (*plan, error) {
	b := &planBuilder{f: f, seen: map[string]bool{}}
	m := b.matrixAxes()
	counts := b.clientCounts()
	s := b.timing()
	addrs, conn, connErrs := parseConn(f)
	b.add(connErrs...)
	resource := b.resource(conn, addrs)
	b.outputs()
	b.arrivals(&s)
	b.clientRampChecks()
	s.faults = b.faultSpecs()
	topo, nodesN := b.topology(s.faults)
	s.interval = b.sampling()
	out := b.outPath()
	b.add(unusedParams(f, m.stSpecs, m.wlSpecs)...)
	b.add(unusedFlags(f, matrixUse{strats: m.strats, addrs: addrs, tls: conn.TLS != nil, topo: topo,
		topoMasters: strings.HasPrefix(f.topology, "masters:")})...)
	b.slowdown(m.strats, &s)
	ths := b.thresholds()
	s.clients = f.clients
	if s.rate > 0 && f.maxClients > 0 {
		s.clients = f.maxClients
	}
	if len(counts) > 0 {
		s.clients = counts[0] // the others: sweepScenarios
	}
	lay := func(sc engine.Scenario) engine.Layout { return layoutOf(f, sc, topo, nodesN, len(addrs)) }
	b.add(flatParamErrors(f, m.stSpecs, b.seen)...)
	scenarios := b.scenarios(m, &s, lay)
	if len(counts) > 0 {
		scenarios = b.sweepScenarios(scenarios, counts, lay)
	}
	if len(b.errs) == 0 {
		// Only on an otherwise valid matrix: a misspelt strategy would
		// make a right scope look wrong.
		for _, err := range thresholds.Unmatched(ths, scenarioNames(scenarios)) {
			b.add(fmt.Errorf("--fail-on: %w", err))
		}
	}
	if len(b.errs) > 0 {
		return nil, usageError{errors.Join(b.errs...)}
	}
	p := &plan{scenarios: scenarios, addrs: addrs, nodes: nodesN, out: out, defaultOut: f.out == "", allowNonempty: f.allowNonempty, topology: topo, repeat: f.repeat,
		thresholds: ths,
		docker:     f.backend == "docker",
		conn:       conn,
		resource:   resource,
		sweep:      sweepMeta(f, counts)}
	return p, nil
}

// planBuilder reads a run's flags into a plan (validate), collecting
// every problem.
type planBuilder struct {
	f    *runFlags
	errs []error
	// seen holds the scenario checks' messages already reported (a
	// problem common to several scenarios is reported once).
	seen map[string]bool
}

// bad records a problem.
func (b *planBuilder) bad(format string, a ...any) { b.errs = append(b.errs, fmt.Errorf(format, a...)) }

// shared runs the checks of the shared settings named (sharedSettings)
// on their values, in order, and reports whether every value passed.
func (b *planBuilder) shared(names ...string) bool {
	ok := true
	for _, name := range names {
		if err := sharedNamed(name).check(b.f); err != nil {
			b.add(err)
			ok = false
		}
	}
	return ok
}

// add records problems.
func (b *planBuilder) add(errs ...error) { b.errs = append(b.errs, errs...) }

// addOnce records the problems not recorded before (seen).
func (b *planBuilder) addOnce(errs []error) {
	for _, err := range errs {
		if !b.seen[err.Error()] {
			b.seen[err.Error()] = true
			b.errs = append(b.errs, err)
		}
	}
}

// matrixAxes are the run's matrix: --strategy and --workload with each
// plugin's own parameters, --driver and the --retry policies.
type matrixAxes struct {
	stSpecs, wlSpecs  []pluginSpec
	strats, drvs, wls []string
	pols              []*retry.Policy
}

// scenarioSettings are the values every scenario of the run shares, read
// from the flags (newScenario puts them in each scenario).
type scenarioSettings struct {
	clients          int
	work             workloads.Dist
	think            workloads.Dist     // --think; zero: none
	background       *engine.Background // --background; nil: none
	mix              *workloads.Mix     // --mix; nil: none
	ttl              time.Duration
	liveness, streak time.Duration // -1: off, never
	rate             float64
	shape            *arrival.Shape
	faults           []faults.Spec
	interval         time.Duration
	// --test-slowdown: the strategy slowed, by a duration or a share.
	slowName  string
	slowBy    time.Duration
	slowShare float64
}

// matrixAxes reads --strategy, --workload, --driver and --retry, and
// checks that each strategy and policy runs on a driver of --driver.
func (b *planBuilder) matrixAxes() matrixAxes {
	f := b.f
	var m matrixAxes
	var errs []error
	m.stSpecs, errs = parsePluginSpecs("strategy", f.strategies, strategies.ParamsOf, strategies.Known)
	b.add(errs...)
	m.wlSpecs, errs = parsePluginSpecs("workload", f.workloads, workloads.ParamsOf, func(n string) bool { _, err := workloads.Lookup(n); return err == nil })
	b.add(errs...)
	m.strats, m.drvs, m.wls = specNames(m.stSpecs), splitList(f.drivers), specNames(m.wlSpecs)
	specs := splitRetry(f.retries)
	for _, spec := range specs {
		p, err := retry.Parse(spec)
		if err != nil {
			b.add(err)
			continue
		}
		m.pols = append(m.pols, p)
	}
	for name, l := range map[string][]string{"--strategy": m.strats, "--driver": m.drvs, "--workload": m.wls} {
		if len(l) == 0 {
			b.bad("%s is empty", name)
		}
	}
	if len(specs) == 0 {
		b.bad("--retry is empty")
	}
	drvs := m.drvs
	for _, st := range m.strats {
		if !strategies.Known(st) || len(drvs) == 0 || slices.ContainsFunc(drvs, func(d string) bool { return strategies.RunsOn(st, d) }) {
			continue
		}
		b.bad("strategy %s runs on the %s driver only, and --driver is %s: add --driver %s", st, strings.Join(strategies.InfoOf(st).Drivers, ", "), strings.Join(drvs, ","), strategies.InfoOf(st).Drivers[0])
	}
	for _, pol := range m.pols {
		if len(drvs) == 0 || slices.ContainsFunc(drvs, pol.RunsOn) {
			continue
		}
		b.bad("retry %s runs on the %s driver only, and --driver is %s: add --driver %s", pol.Name, strings.Join(pol.Drivers(), ", "), strings.Join(drvs, ","), pol.Drivers()[0])
	}
	return m
}

// clientCounts checks --clients (and, for sweep, --max-clients) and
// returns lockbench sweep's client counts (nil for run).
func (b *planBuilder) clientCounts() []int {
	f := b.f
	var counts []int
	if f.sweep {
		var err error
		if counts, err = parseClientList(f.clientList); err != nil {
			b.add(err)
		}
		if f.maxClients != 0 {
			b.bad("--max-clients does not go with sweep: the --clients counts are the clients serving the arrivals")
		}
	} else if f.clients < 1 || f.clients > maxClients {
		b.bad("--clients must be from 1 to %d, got %d", maxClients, f.clients)
	}
	return counts
}

// timing reads the durations of a scenario and its operations: --duration,
// --warmup, --work, --think, --background, --acquire-timeout, --release,
// --liveness-interval, --error-streak, --verify-acquire, --mix and --ttl
// (auto: from --work).
func (b *planBuilder) timing() scenarioSettings {
	f := b.f
	var s scenarioSettings
	b.shared("duration", "warmup", "work", "think", "background", "acquire-timeout", "release", "liveness-interval", "error-streak", "verify-acquire")
	work, _ := workloads.ParseDist(f.work) // a --work that does not parse is refused above
	s.work = work
	s.think, _ = workloads.ParseDist(f.think)              // nor a --think
	s.background, _ = engine.ParseBackground(f.background) // nor a --background
	if b.shared("mix") && f.mix != "" {
		m, _ := workloads.ParseMix(f.mix)
		s.mix = &m
	}
	s.liveness, s.streak = f.livenessInterval, f.errorStreak
	if s.liveness == 0 {
		s.liveness = -1 // off
	}
	if s.streak == 0 {
		s.streak = -1 // never
	}
	s.ttl = max(3*work.Mean(), 100*time.Millisecond)
	if b.shared("ttl") && f.ttl != "auto" {
		s.ttl, _ = time.ParseDuration(f.ttl)
	}
	return s
}

// outputs checks what the run shows and serves: --metrics-addr,
// --metrics-linger, --format, --columns and --repeat.
func (b *planBuilder) outputs() {
	f := b.f
	if f.metricsAddr != "" {
		if err := checkListenAddr(f.metricsAddr); err != nil {
			b.bad("--metrics-addr %q: %v", f.metricsAddr, err)
		}
	}
	if f.metricsLinger < 0 || f.metricsLinger > 24*time.Hour {
		b.bad("--metrics-linger must be from 0 to 24h, got %v", f.metricsLinger)
	}
	if !contains(report.Formats, f.format) {
		b.bad("--format %q is not one of %s", f.format, strings.Join(report.Formats, ", "))
	} else if err := checkColumns(f.columns, f.format, f.sweep); err != nil {
		b.bad("%v", err)
	}
	if f.repeat < 1 || f.repeat > 1000 {
		b.bad("--repeat must be from 1 to 1000, got %d", f.repeat)
	}
}

// resource checks --resource separate against --addr, --resource-addr,
// --backend and execution segments, and returns the --resource-addr
// server, reached with conn's login and TLS unless its URL gives a login
// (nil: none given). A --resource-addr that is one of addrs (the lock's
// servers, host:port as given) is refused: the resource must be another
// server. --resource-addr without --resource separate and --addr is
// flagRules'.
func (b *planBuilder) resource(conn drivers.Endpoint, addrs []string) *engine.Node {
	f := b.f
	if f.resource != engine.ResourceSeparate {
		return nil
	}
	switch {
	case f.backend == "docker":
		b.bad("--resource separate starts a redis-server process for the data; it needs --backend local")
	case f.procs > 0 || f.segment != "" || f.segmentCount > 0:
		b.bad("--resource separate runs in one process: not with execution segments (--procs, --segment, --segment-count)")
	case f.addr != "" && f.resourceAddr == "":
		b.bad("--resource separate with --addr needs --resource-addr, the server that holds the data (lockbench starts it only without --addr)")
	}
	if f.resourceAddr == "" || f.addr == "" {
		return nil
	}
	u, err := parseAddr(f.resourceAddr)
	if err != nil {
		b.bad("--resource-addr %q: %v", redact(f.resourceAddr), err)
		return nil
	}
	host, port, err := net.SplitHostPort(u.hostport)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 || port[0] == '+' {
		b.bad("--resource-addr %q: want host:port with a port from 1 to 65535", u.hostport)
		return nil
	}
	if u.url && u.tls != (conn.TLS != nil) {
		b.bad("--resource-addr: a rediss:// URL takes TLS, and the resource is reached with --addr's TLS settings: use TLS on both or on neither")
	}
	n := engine.Node{Addr: net.JoinHostPort(host, port), Username: conn.Username, Password: conn.Password, DB: conn.DB, TLS: conn.TLS}
	if slices.Contains(addrs, n.Addr) {
		b.bad("--resource-addr %s is one of --addr's servers: the resource must be a server of its own, which the storage's token check and the lock do not share", n.Addr)
		return nil
	}
	if u.user != "" || u.password != "" {
		n.Username, n.Password = u.user, u.password
	}
	if u.url {
		n.DB = u.db
	}
	return &n
}

// arrivals reads the open loop's flags into s: --rate (a constant or a
// shape), --arrivals, --max-clients and --drop-after.
func (b *planBuilder) arrivals(s *scenarioSettings) {
	f := b.f
	var err error
	s.rate, s.shape, err = parseRate(f)
	if err != nil {
		b.add(err)
	}
	if !s.think.IsZero() && rateOpen(f) {
		// engine.Validate refuses it too, per scenario: reported once.
		b.addOnce([]error{engine.ErrThinkOpenLoop})
	}
	b.shared("arrivals", "max-clients", "drop-after")
}

// clientRampChecks refuses what does not go with a client ramp: --rate
// (an open loop: its arrivals decide the load; ramp them with --rate's
// own shapes instead). --procs and --segment are refused by
// parseSegment (the ramp runs in one process).
func (b *planBuilder) clientRampChecks() {
	f := b.f
	if f.clientShape == nil {
		return
	}
	if rateOpen(f) {
		// engine.Validate refuses it too, per scenario: reported once.
		b.addOnce([]error{engine.ErrRampOpenLoop})
	}
}

// faultSpecs parses every --fault.
func (b *planBuilder) faultSpecs() []faults.Spec {
	var specs []faults.Spec
	for _, fs := range b.f.faults {
		sp, err := faults.Parse(fs)
		if err != nil {
			b.add(err)
			continue
		}
		specs = append(specs, sp)
	}
	return specs
}

// topology reads --topology (the layout, "" = per strategy, and the
// masters to start: --nodes or masters:N) and checks --backend against
// it, --addr and the faults.
func (b *planBuilder) topology(faultSpecs []faults.Spec) (strategies.Topology, int) {
	f := b.f
	var topo strategies.Topology
	nodesN := f.nodes
	switch {
	case f.topology == "" || f.topology == "standalone":
		if f.topology != "" {
			topo = strategies.Standalone
		}
	case f.topology == "replica":
		topo = strategies.Replicated
	case strings.HasPrefix(f.topology, "masters:"):
		n, err := strconv.Atoi(strings.TrimPrefix(f.topology, "masters:"))
		if err != nil || n < 1 || n > 64 {
			b.bad("--topology %q: want masters:N with N from 1 to 64", f.topology)
		} else {
			topo, nodesN = strategies.Masters, n
		}
	case f.topology == "sentinel":
		topo = strategies.Sentinel
	case f.topology == "cluster":
		topo = strategies.Cluster
	default:
		b.bad("--topology %q is not one of standalone, masters:N, replica, sentinel, cluster", f.topology)
	}
	if topo != "" && f.addr != "" {
		b.bad("--topology starts servers; it cannot be used with --addr")
	}
	b.backend(topo, faultSpecs)
	return topo, nodesN
}

// backend checks --backend against --addr, the topology and the faults.
func (b *planBuilder) backend(topo strategies.Topology, faultSpecs []faults.Spec) {
	f := b.f
	switch f.backend {
	case "local":
	case "docker":
		if f.addr != "" {
			b.bad("--backend docker starts servers; it cannot be used with --addr")
		}
		if topo == strategies.Sentinel || topo == strategies.Cluster {
			b.bad("--backend docker starts %s layouts; --topology %s needs --backend local", dockertopo.Supported, f.topology)
		}
		for _, sp := range faultSpecs {
			if sp.Needs() != faults.NeedsNothing {
				b.bad("fault %s acts on redis-server processes; it needs --backend local", sp.Name)
			}
		}
	default:
		b.bad("--backend %q is not local or docker", f.backend)
	}
}

// sampling checks --interval (returned: 1s when refused, so that each
// scenario's check does not report it again), --load-sample, --token and
// --nodes.
func (b *planBuilder) sampling() time.Duration {
	f := b.f
	interval := f.interval
	if !b.shared("interval") {
		interval = time.Second // reported above: not again by each scenario's check
	}
	b.shared("load-sample", "token")
	if f.nodes < 1 || f.nodes > 64 {
		b.bad("--nodes must be from 1 to 64, got %d", f.nodes)
	}
	return interval
}

// outPath is the result file: --out, or results/<UTC timestamp>.json.
func (b *planBuilder) outPath() string {
	out := b.f.out
	if out == "" {
		out = filepath.Join("results", time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	if err := checkOut(out); err != nil {
		b.bad("--out %q: %v", out, err)
	}
	return out
}

// slowdown reads --test-slowdown into s: STRATEGY=DURATION or
// STRATEGY=PERCENT, for a strategy of the matrix.
func (b *planBuilder) slowdown(strats []string, s *scenarioSettings) {
	f := b.f
	if f.testSlowdown == "" {
		return
	}
	name, d, ok := strings.Cut(f.testSlowdown, "=")
	var err error
	if s.slowName = name; !ok || !slices.Contains(strats, name) {
		b.bad("--test-slowdown %q: want STRATEGY=DURATION or STRATEGY=PERCENT for a strategy of --strategy", f.testSlowdown)
	} else if strings.HasSuffix(d, "%") {
		if s.slowShare, err = parsePercent(d); err != nil || s.slowShare <= 0 || s.slowShare >= 0.9 {
			b.bad("--test-slowdown %q: the share must be above 0%% and below 90%%", f.testSlowdown)
		}
	} else if s.slowBy, err = time.ParseDuration(d); err != nil || s.slowBy <= 0 || s.slowBy > time.Second {
		b.bad("--test-slowdown %q: the duration must be above 0 and at most 1s", f.testSlowdown)
	}
}

// thresholds parses --fail-on.
func (b *planBuilder) thresholds() []thresholds.Threshold {
	ths, errs := thresholds.ParseList(b.f.failOn)
	for _, err := range errs {
		b.add(fmt.Errorf("--fail-on: %w", err))
	}
	return ths
}

// scenarios are the matrix's scenarios (workload x strategy x policy x
// driver), each checked by engine.Validate on the layout lay gives it.
func (b *planBuilder) scenarios(m matrixAxes, s *scenarioSettings, lay func(engine.Scenario) engine.Layout) []engine.Scenario {
	pols := m.pols
	if len(pols) == 0 {
		pols = []*retry.Policy{nil} // the scenarios are still checked (engine.Validate does not read Retry)
	}
	var scenarios []engine.Scenario
	for _, wlSpec := range m.wlSpecs {
		for _, stSpec := range m.stSpecs {
			st := stSpec.name
			// The run flags' values, with what --strategy and --workload
			// give each plugin alone on top.
			opts := maps.Clone(b.f.plugin)
			maps.Copy(opts, stSpec.own)
			maps.Copy(opts, wlSpec.own)
			for _, pol := range strategyPolicies(st, pols) {
				for k, d := range m.drvs {
					sc := newScenario(b.f, s, st, d, wlSpec.name, pol, opts)
					// A policy off its drivers (csc on goredis) is skipped at run
					// time, with a message, as a strategy off its drivers is; its
					// scenario on a driver it runs on is checked (with none in
					// --driver it was refused above).
					if pol.RunsOn(d) {
						b.addOnce(engine.Validate(sc, lay(sc)))
					}
					if k > 0 && strategies.InfoOf(st).Backend == strategies.MariaDB {
						continue // the SQL strategies use no Redis driver: one scenario
					}
					scenarios = append(scenarios, sc)
				}
			}
		}
	}
	return scenarios
}

// strategyPolicies are the retry policies strategy st runs with: pols,
// or its library's own retry, or its queue.
func strategyPolicies(st string, pols []*retry.Policy) []*retry.Policy {
	if strategies.InfoOf(st).OwnsRetry {
		return []*retry.Policy{retry.Library()} // the library retries
	} else if strategies.InfoOf(st).Queues {
		return []*retry.Policy{retry.Queue()} // it waits in its queue
	}
	return pols
}

// newScenario is the scenario of strategy st on driver d, workload wl and
// policy pol, with the plugins' options opts and the settings s.
func newScenario(f *runFlags, s *scenarioSettings, st, d, wl string, pol *retry.Policy, opts registry.Values) engine.Scenario {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: st, Driver: d, Workload: wl, Retry: pol,
		Clients: s.clients, ClientShape: f.clientShape, Duration: f.duration, Warmup: f.warmup,
		TTL: s.ttl, AcquireTimeout: f.acquireTimeout, Seed: f.seed, Think: s.think, Background: s.background, Mix: s.mix,
		Params: workloads.Params{Work: s.work, Release: f.release}, Options: opts,
		Liveness: s.liveness, ErrorStreak: s.streak, VerifyAcquire: f.verifyAcquire,
		Guard: f.guard, Resource: f.resource, ConstantToken: f.token == "constant", LoadSample: f.loadSample, Interval: s.interval,
		Faults: s.faults,
		Rate:   s.rate, Shape: s.shape, Poisson: f.arrivals == "poisson", DropAfter: f.dropAfter,
		Client: engine.Client{PoolSize: f.poolSize, DialTimeout: f.dialTimeout,
			ReadTimeout: f.readTimeout, WriteTimeout: f.writeTimeout},
	}, Env: engine.Env{KeepKeys: f.keepKeys}}
	if st == s.slowName {
		sc.Slowdown, sc.SlowdownShare = s.slowBy, s.slowShare
	}
	return sc
}

// sweepScenarios is lockbench sweep's matrix: each cell at every client
// count, the counts innermost, each checked as scenarios does.
func (b *planBuilder) sweepScenarios(scenarios []engine.Scenario, counts []int, lay func(engine.Scenario) engine.Layout) []engine.Scenario {
	var swept []engine.Scenario
	for _, sc := range scenarios {
		for _, c := range counts {
			sc.Clients = c
			if sc.Retry != nil && !sc.Retry.RunsOn(sc.Driver) {
				swept = append(swept, sc) // skipped at run time, as above
				continue
			}
			b.addOnce(engine.Validate(sc, lay(sc)))
			swept = append(swept, sc)
		}
	}
	return swept
}

// scenarioNames are the scenarios' names as their results will carry
// them (report.Scenario.Name: strategy/driver/workload/retry), the SQL
// strategies' driver being mysql.
func scenarioNames(scs []engine.Scenario) []string {
	names := make([]string, len(scs))
	for i, sc := range scs {
		drv, pol := sc.Driver, ""
		if strategies.InfoOf(sc.Strategy).Backend == strategies.MariaDB {
			drv = "mysql"
		}
		if sc.Retry != nil {
			pol = sc.Retry.Name
		}
		names[i] = sc.Strategy + "/" + drv + "/" + sc.Workload + "/" + pol
	}
	return names
}

// external returns the nodes a scenario of layout kind uses on the
// user's servers: one Cluster client seeded with every address
// (--cluster), one client of the master the Sentinels name
// (--sentinel-master), every address for independent masters, else the
// first address.
func (p *plan) external(kind strategies.Topology) []engine.Node {
	switch n := p.conn; {
	case n.Cluster:
		n.Addr, n.Seeds = p.addrs[0], p.addrs[1:]
		return []engine.Node{n}
	case n.MasterName != "":
		n.Addr = fmt.Sprintf("%s via Sentinel %s", n.MasterName, strings.Join(p.addrs, ","))
		n.Sentinels = p.addrs
		return []engine.Node{n}
	}
	var nodes []engine.Node
	for _, a := range p.addrs {
		n := p.conn
		n.Addr = a
		nodes = append(nodes, n)
	}
	if kind != strategies.Masters {
		nodes = nodes[:1]
	}
	return nodes
}

// externalName is the topology recorded for a run on the user's servers.
func (p *plan) externalName() string {
	switch {
	case p.conn.Cluster:
		return "external-cluster"
	case p.conn.MasterName != "":
		return "external-sentinel"
	}
	return "external"
}
