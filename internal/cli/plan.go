package cli

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
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
	// sweep is lockbench sweep's meta.sweep (nil for run).
	sweep *report.Sweep
	// segRunID, for a run of execution segments, is its run id: the keys
	// under lockbench:<segRunID>: (the barrier, the leader's data) do not
	// make a database non-empty.
	segRunID string
}

// validate checks every flag and returns all problems at once.
func validate(f *runFlags) (*plan, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	stSpecs, stErrs := parsePluginSpecs("strategy", f.strategies, strategies.ParamsOf, strategies.Known)
	wlSpecs, wlErrs := parsePluginSpecs("workload", f.workloads, workloads.ParamsOf, func(n string) bool { _, err := workloads.Lookup(n); return err == nil })
	errs = append(append(errs, stErrs...), wlErrs...)
	strats, drvs, wls := specNames(stSpecs), splitList(f.drivers), specNames(wlSpecs)
	var pols []*retry.Policy
	specs := splitRetry(f.retries)
	for _, spec := range specs {
		p, err := retry.Parse(spec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pols = append(pols, p)
	}
	for name, l := range map[string][]string{"--strategy": strats, "--driver": drvs, "--workload": wls} {
		if len(l) == 0 {
			bad("%s is empty", name)
		}
	}
	if len(specs) == 0 {
		bad("--retry is empty")
	}
	for _, st := range strats {
		if !strategies.Known(st) || len(drvs) == 0 || slices.ContainsFunc(drvs, func(d string) bool { return strategies.RunsOn(st, d) }) {
			continue
		}
		bad("strategy %s runs on the %s driver only, and --driver is %s: add --driver %s", st, strings.Join(strategies.InfoOf(st).Drivers, ", "), strings.Join(drvs, ","), strategies.InfoOf(st).Drivers[0])
	}
	for _, pol := range pols {
		if len(drvs) == 0 || slices.ContainsFunc(drvs, pol.RunsOn) {
			continue
		}
		bad("retry %s runs on the %s driver only, and --driver is %s: add --driver %s", pol.Name, strings.Join(pol.Drivers(), ", "), strings.Join(drvs, ","), pol.Drivers()[0])
	}
	var counts []int // lockbench sweep's client counts
	if f.sweep {
		var err error
		if counts, err = parseClientList(f.clientList); err != nil {
			errs = append(errs, err)
		}
		if f.maxClients != 0 {
			bad("--max-clients does not go with sweep: the --clients counts are the clients serving the arrivals")
		}
	} else if f.clients < 1 || f.clients > maxClients {
		bad("--clients must be from 1 to %d, got %d", maxClients, f.clients)
	}
	if f.duration <= 0 || f.duration > 24*time.Hour {
		bad("--duration must be > 0 and at most 24h, got %v", f.duration)
	}
	if f.warmup < 0 || f.warmup > 24*time.Hour {
		bad("--warmup must be from 0 to 24h, got %v", f.warmup)
	}
	work, err := workloads.ParseDist(f.work)
	if err != nil {
		bad("--work: %v", err)
	} else if work.Max() > time.Hour {
		bad("--work must stay within 1h, got %v", f.work)
	}
	if f.acquireTimeout < 0 {
		bad("--acquire-timeout must be >= 0, got %v", f.acquireTimeout)
	}
	if f.release != workloads.ReleaseDetached && f.release != workloads.ReleaseCaller {
		bad("--release must be detached or caller, got %q", f.release)
	}
	if f.livenessInterval < 0 || f.livenessInterval > time.Minute || (f.livenessInterval > 0 && f.livenessInterval < time.Millisecond) {
		bad("--liveness-interval must be 0 (off) or from 1ms to 1m, got %v", f.livenessInterval)
	}
	if f.errorStreak < 0 {
		bad("--error-streak must be >= 0 (0 = never stop), got %v", f.errorStreak)
	}
	liveness, streak := f.livenessInterval, f.errorStreak
	if liveness == 0 {
		liveness = -1 // off
	}
	if streak == 0 {
		streak = -1 // never
	}
	ttl := max(3*work.Mean(), 100*time.Millisecond)
	if f.ttl != "auto" {
		d, err := time.ParseDuration(f.ttl)
		switch {
		case err != nil:
			bad("--ttl %q is not a duration (like 500ms) or auto", f.ttl)
		case d < time.Millisecond:
			bad("--ttl must be at least 1ms (Redis PX resolution), got %v", d)
		default:
			ttl = d
		}
	}
	addrs, conn, connErrs := parseConn(f)
	errs = append(errs, connErrs...)
	if f.metricsAddr != "" {
		if err := checkListenAddr(f.metricsAddr); err != nil {
			bad("--metrics-addr %q: %v", f.metricsAddr, err)
		}
	}
	if f.metricsLinger < 0 || f.metricsLinger > 24*time.Hour {
		bad("--metrics-linger must be from 0 to 24h, got %v", f.metricsLinger)
	}
	if !contains(report.Formats, f.format) {
		bad("--format %q is not one of %s", f.format, strings.Join(report.Formats, ", "))
	} else if err := checkColumns(f.columns, f.format, f.sweep); err != nil {
		bad("%v", err)
	}
	if f.repeat < 1 || f.repeat > 1000 {
		bad("--repeat must be from 1 to 1000, got %d", f.repeat)
	}
	rate, shape, err := parseRate(f)
	if err != nil {
		errs = append(errs, err)
	}
	if f.arrivals != "constant" && f.arrivals != "poisson" {
		bad("--arrivals %q is not constant or poisson", f.arrivals)
	}
	if f.maxClients < 0 || f.maxClients > maxClients {
		bad("--max-clients must be from 1 to %d, got %d", maxClients, f.maxClients)
	}
	if f.dropAfter <= 0 {
		bad("--drop-after must be > 0, got %v", f.dropAfter)
	}
	var faultSpecs []faults.Spec
	for _, fs := range f.faults {
		sp, err := faults.Parse(fs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		faultSpecs = append(faultSpecs, sp)
	}
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
			bad("--topology %q: want masters:N with N from 1 to 64", f.topology)
		} else {
			topo, nodesN = strategies.Masters, n
		}
	case f.topology == "sentinel":
		topo = strategies.Sentinel
	case f.topology == "cluster":
		topo = strategies.Cluster
	default:
		bad("--topology %q is not one of standalone, masters:N, replica, sentinel, cluster", f.topology)
	}
	if topo != "" && f.addr != "" {
		bad("--topology starts servers; it cannot be used with --addr")
	}
	switch f.backend {
	case "local":
	case "docker":
		if f.addr != "" {
			bad("--backend docker starts servers; it cannot be used with --addr")
		}
		if topo == strategies.Sentinel || topo == strategies.Cluster {
			bad("--backend docker starts %s layouts; --topology %s needs --backend local", dockertopo.Supported, f.topology)
		}
		for _, sp := range faultSpecs {
			if sp.Needs() != faults.NeedsNothing {
				bad("fault %s acts on redis-server processes; it needs --backend local", sp.Name)
			}
		}
	default:
		bad("--backend %q is not local or docker", f.backend)
	}
	interval := f.interval
	if interval < engine.MinInterval || interval > 24*time.Hour {
		bad("--interval must be from %v to 24h, got %v", engine.MinInterval, interval)
		interval = time.Second // reported above: not again by each scenario's check
	}
	if f.loadSample < 0 || (f.loadSample > 0 && f.loadSample < time.Millisecond) {
		bad("--load-sample must be 0 (off) or at least 1ms, got %v", f.loadSample)
	}
	switch f.token {
	case "random", "constant":
	default:
		bad("--token %q is not random or constant", f.token)
	}
	if f.nodes < 1 || f.nodes > 64 {
		bad("--nodes must be from 1 to 64, got %d", f.nodes)
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	if err := checkOut(out); err != nil {
		bad("--out %q: %v", out, err)
	}
	errs = append(errs, unusedParams(f, stSpecs, wlSpecs)...)
	errs = append(errs, unusedFlags(f, matrixUse{strats: strats, addrs: addrs, tls: conn.TLS != nil, topo: topo,
		topoMasters: strings.HasPrefix(f.topology, "masters:")})...)
	var slowName string
	var slowBy time.Duration
	var slowShare float64
	if f.testSlowdown != "" {
		name, d, ok := strings.Cut(f.testSlowdown, "=")
		var err error
		if slowName = name; !ok || !slices.Contains(strats, name) {
			bad("--test-slowdown %q: want STRATEGY=DURATION or STRATEGY=PERCENT for a strategy of --strategy", f.testSlowdown)
		} else if strings.HasSuffix(d, "%") {
			if slowShare, err = parsePercent(d); err != nil || slowShare <= 0 || slowShare >= 0.9 {
				bad("--test-slowdown %q: the share must be above 0%% and below 90%%", f.testSlowdown)
			}
		} else if slowBy, err = time.ParseDuration(d); err != nil || slowBy <= 0 || slowBy > time.Second {
			bad("--test-slowdown %q: the duration must be above 0 and at most 1s", f.testSlowdown)
		}
	}
	ths, thErrs := thresholds.ParseList(f.failOn)
	for _, err := range thErrs {
		errs = append(errs, fmt.Errorf("--fail-on: %w", err))
	}
	if len(pols) == 0 {
		pols = []*retry.Policy{nil} // the scenarios are still checked (engine.Validate does not read Retry)
	}
	// The scenarios, each checked by engine.Validate (a problem common to
	// several of them is reported once).
	clients := f.clients
	if rate > 0 && f.maxClients > 0 {
		clients = f.maxClients
	}
	if len(counts) > 0 {
		clients = counts[0] // the others below
	}
	var scenarios []engine.Scenario
	seen := map[string]bool{}
	errs = append(errs, flatParamErrors(f, stSpecs, seen)...)
	for _, wlSpec := range wlSpecs {
		wl := wlSpec.name
		for _, stSpec := range stSpecs {
			st := stSpec.name
			// The run flags' values, with what --strategy and --workload
			// give each plugin alone on top.
			opts := maps.Clone(f.plugin)
			maps.Copy(opts, stSpec.own)
			maps.Copy(opts, wlSpec.own)
			stPols := pols
			if strategies.InfoOf(st).OwnsRetry {
				stPols = []*retry.Policy{retry.Library()} // the library retries
			} else if strategies.InfoOf(st).Queues {
				stPols = []*retry.Policy{retry.Queue()} // it waits in its queue
			}
			for _, pol := range stPols {
				for k, d := range drvs {
					sc := engine.Scenario{Spec: engine.Spec{
						Strategy: st, Driver: d, Workload: wl, Retry: pol,
						Clients: clients, Duration: f.duration, Warmup: f.warmup,
						TTL: ttl, AcquireTimeout: f.acquireTimeout, Seed: f.seed,
						Params: workloads.Params{Work: work, Release: f.release}, Options: opts,
						Liveness: liveness, ErrorStreak: streak,
						Guard: f.guard, ConstantToken: f.token == "constant", LoadSample: f.loadSample, Interval: interval,
						Faults: faultSpecs,
						Rate:   rate, Shape: shape, Poisson: f.arrivals == "poisson", DropAfter: f.dropAfter,
						Client: engine.Client{PoolSize: f.poolSize, DialTimeout: f.dialTimeout,
							ReadTimeout: f.readTimeout, WriteTimeout: f.writeTimeout},
					}, Env: engine.Env{KeepKeys: f.keepKeys}}
					if st == slowName {
						sc.Slowdown, sc.SlowdownShare = slowBy, slowShare
					}
					// A policy off its drivers (csc on goredis) is skipped at run
					// time, with a message, as a strategy off its drivers is; its
					// scenario on a driver it runs on is checked (with none in
					// --driver it was refused above).
					var problems []error
					if pol.RunsOn(d) {
						problems = engine.Validate(sc, layoutOf(f, sc, topo, nodesN, len(addrs)))
					}
					for _, err := range problems {
						if !seen[err.Error()] {
							seen[err.Error()] = true
							errs = append(errs, err)
						}
					}
					if k > 0 && strategies.InfoOf(st).Backend == strategies.MariaDB {
						continue // the SQL strategies use no Redis driver: one scenario
					}
					scenarios = append(scenarios, sc)
				}
			}
		}
	}
	if len(counts) > 0 {
		// lockbench sweep: each cell at every count, the counts innermost.
		var swept []engine.Scenario
		for _, sc := range scenarios {
			for _, c := range counts {
				sc.Clients = c
				if sc.Retry != nil && !sc.Retry.RunsOn(sc.Driver) {
					swept = append(swept, sc) // skipped at run time, as above
					continue
				}
				for _, err := range engine.Validate(sc, layoutOf(f, sc, topo, nodesN, len(addrs))) {
					if !seen[err.Error()] {
						seen[err.Error()] = true
						errs = append(errs, err)
					}
				}
				swept = append(swept, sc)
			}
		}
		scenarios = swept
	}
	if len(errs) == 0 {
		// Only on an otherwise valid matrix: a misspelt strategy would
		// make a right scope look wrong.
		for _, err := range thresholds.Unmatched(ths, scenarioNames(scenarios)) {
			errs = append(errs, fmt.Errorf("--fail-on: %w", err))
		}
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	p := &plan{scenarios: scenarios, addrs: addrs, nodes: nodesN, out: out, defaultOut: f.out == "", allowNonempty: f.allowNonempty, topology: topo, repeat: f.repeat,
		thresholds: ths,
		docker:     f.backend == "docker",
		conn:       conn,
		sweep:      sweepMeta(f, counts)}
	return p, nil
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

// layoutOf is the layout scenario sc will run on, as the flags say: the
// user's servers (--addr, as a Cluster or behind Sentinels), or what
// lockbench starts (layoutKind). masters is the
// number of independent masters to start (--nodes or masters:N), addrs
// the number of --addr servers.
func layoutOf(f *runFlags, sc engine.Scenario, topo strategies.Topology, masters, addrs int) engine.Layout {
	kind := strategies.TopologyOf(sc.Strategy)
	if f.addr != "" {
		switch {
		case f.cluster:
			return engine.Layout{Kind: strategies.Cluster, External: true}
		case f.sentinelMaster != "":
			return engine.Layout{Kind: strategies.Sentinel, External: true}
		case kind == strategies.Masters:
			return engine.Layout{Kind: kind, Servers: addrs, External: true}
		}
		return engine.Layout{Kind: strategies.Standalone, External: true}
	}
	kind = layoutKind(sc, topo)
	servers := map[strategies.Topology]int{strategies.Standalone: 1, strategies.Masters: masters,
		strategies.Replicated: 2, strategies.Sentinel: 2, strategies.Cluster: 3}[kind]
	return engine.Layout{Kind: kind, Servers: servers}
}

// checkListenAddr checks a [host]:port to listen on: the port a number
// from 0 (any) to 65535. Whether it is free is known when listening.
func checkListenAddr(a string) error {
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("want [host]:port, like :9091 or 127.0.0.1:9091")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || port[0] == '+' {
		return fmt.Errorf("the port must be a number from 0 (any free port) to 65535")
	}
	return nil
}

// parseConn reads the connection flags run and clean share (connFlags):
// the --addr servers, the login (the flags', or the ones in the --addr
// URLs, else $LOCKBENCH_PASSWORD), the database, TLS, Cluster or
// Sentinel; every problem is returned (usage errors). It never changes f.
func parseConn(f *runFlags) ([]string, drivers.Endpoint, []error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	var addrs []string
	var tlsCfg *tls.Config
	db := 0
	// password and username: the flags', or the ones in the --addr URLs
	// (validate never changes f).
	password, username := f.password, f.username
	if f.passwordFile != "" {
		pw, err := readSecretFile(f.passwordFile)
		switch {
		case err != nil:
			bad("--password-file: %v", err)
		case f.password != "":
			bad("--password and --password-file both give the password; give one (--password-file keeps it out of ps)")
		default:
			password = pw
		}
	}
	sentinelPassword := f.sentinelPassword
	if f.sentinelPasswordFile != "" {
		pw, err := readSecretFile(f.sentinelPasswordFile)
		switch {
		case err != nil:
			bad("--sentinel-password-file: %v", err)
		case f.sentinelPassword != "":
			bad("--sentinel-password and --sentinel-password-file both give the Sentinels' password; give one")
		default:
			sentinelPassword = pw
		}
	}
	if f.addr != "" {
		items := splitList(f.addr)
		nTLS, nPlain := 0, 0
		for _, raw := range items {
			u, err := parseAddr(raw)
			if err != nil {
				bad("--addr %q: %v", redact(raw), err)
				continue
			}
			if u.url && u.tls {
				nTLS++
			} else if u.url {
				nPlain++
			}
			if u.password != "" {
				if password != "" && password != u.password {
					bad("--addr: two different passwords (in the URLs or --password)")
				}
				password = u.password
			}
			if u.user != "" {
				if username != "" && username != u.user {
					bad("--addr: two different usernames (in the URLs or --username)")
				}
				username = u.user
			}
			if u.db != 0 {
				if db != 0 && db != u.db {
					bad("--addr: two different database numbers (%d and %d)", db, u.db)
				}
				db = u.db
			}
			a := u.hostport
			host, port, err := net.SplitHostPort(a)
			n, perr := strconv.Atoi(port)
			switch {
			case err != nil:
				bad("--addr %q: want host:port ([::1]:6379 for IPv6): %v", a, err)
			case host == "":
				bad("--addr %q: the host is missing", a)
			case perr != nil || n < 1 || n > 65535 || port[0] == '+':
				bad("--addr %q: the port must be a number from 1 to 65535", a)
			default:
				addrs = append(addrs, net.JoinHostPort(host, port))
			}
		}
		if len(items) == 0 {
			bad("--addr is empty")
		}
		if nTLS > 0 && nPlain > 0 {
			bad("--addr mixes redis:// and rediss:// URLs; a run uses TLS on every server or on none")
		}
		if nTLS > 0 || f.tls {
			if nPlain > 0 && nTLS == 0 {
				bad("--tls with a redis:// URL: write rediss:// for TLS")
			}
			var err error
			if tlsCfg, err = tlsConfig(f); err != nil {
				errs = append(errs, err)
			}
		}
		if f.cluster && f.sentinelMaster != "" {
			bad("--cluster and --sentinel-master exclude each other: the --addr servers are Cluster nodes or Sentinels")
		}
		if f.cluster && db != 0 {
			bad("--addr selects database %d, but a Redis Cluster has only database 0", db)
		}
	}
	if f.sentinelMaster != "" && strings.TrimSpace(f.sentinelMaster) != f.sentinelMaster {
		bad("--sentinel-master %q has leading or trailing spaces", f.sentinelMaster)
	}
	if password == "" {
		password = os.Getenv("LOCKBENCH_PASSWORD")
	}
	return addrs, drivers.Endpoint{Username: username, Password: password, DB: db, TLS: tlsCfg, Cluster: f.cluster,
		MasterName: f.sentinelMaster, SentinelPassword: sentinelPassword}, errs
}

// rateOpen reports whether --rate makes an open loop: a constant above 0
// or a shape (a --rate that does not parse is refused on its own, by
// parseRate).
func rateOpen(f *runFlags) bool {
	r, err := strconv.ParseFloat(strings.TrimSpace(f.rateSpec), 64)
	return err != nil || r > 0
}

// parseRate reads --rate (f.rateSpec): a constant from 0 (closed loop)
// to arrival.MaxRate ops/s (shape nil), or an arrival shape
// (arrival.Parse), whose rate is its mean over the measured window
// (--warmup to --warmup + --duration on the shape's clock, which starts
// with the scenario). Errors: a constant out of range, a shape that does
// not parse, or one with no arrival due in the measured window.
func parseRate(f *runFlags) (rate float64, shape *arrival.Shape, err error) {
	spec := strings.TrimSpace(f.rateSpec)
	if r, err := strconv.ParseFloat(spec, 64); err == nil {
		if r < 0 || r > arrival.MaxRate || r != r {
			return 0, nil, fmt.Errorf("--rate must be from 0 (closed loop) to %d ops/s, got %v", arrival.MaxRate, r)
		}
		return r, nil, nil
	}
	sh, err := arrival.Parse(spec)
	if err != nil {
		return 0, nil, fmt.Errorf("--rate %q: %w", f.rateSpec, err)
	}
	if sh.IsConstant() {
		return sh.Rate(0), nil, nil
	}
	from := f.warmup.Seconds()
	mean := sh.Mean(from, from+f.duration.Seconds())
	if f.duration > 0 && mean <= 0 {
		return 0, nil, fmt.Errorf("--rate %q: no arrival is due in the measured window (--warmup %v to --warmup + --duration %v): the shape's rate is 0 there", f.rateSpec, f.warmup, f.warmup+f.duration)
	}
	return mean, sh, nil
}
