package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// plan is a validated run: the scenarios and where to run them.
type plan struct {
	scenarios []engine.Scenario
	addrs     []string
	password  string
	nodes     int                 // redlock masters to start
	topology  strategies.Topology // --topology ("" = per strategy)
	out       string              // result file
	// defaultOut: out is the default name (no --out); runMatrix reserves
	// a unique one (reserveOut).
	defaultOut bool
	// allowNonempty skips the check that --addr databases are empty.
	allowNonempty bool
	repeat        int  // runs per scenario
	docker        bool // --backend docker: servers in containers

	// username, db and tls go with addrs (the user's servers); cluster or
	// sentinelMaster say what the addresses are.
	username         string
	db               int
	tls              *tls.Config
	cluster          bool
	sentinelMaster   string
	sentinelPassword string
}

// validate checks every flag and returns all problems at once.
func validate(f *runFlags) (*plan, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	strats := splitList(f.strategies)
	for _, s := range strats {
		if !strategies.Known(s) {
			bad("unknown strategy %q%s (valid: %s)", s, suggest(s, strategies.Names()), strings.Join(strategies.Names(), ", "))
		}
	}
	drvs := splitList(f.drivers)
	for _, d := range drvs {
		if !contains(drivers.Names(), d) {
			bad("unknown driver %q%s (valid: %s)", d, suggest(d, drivers.Names()), strings.Join(drivers.Names(), ", "))
		}
	}
	wls := splitList(f.workloads)
	for _, w := range wls {
		if !contains(workloads.Names(), w) {
			bad("unknown workload %q%s (valid: %s)", w, suggest(w, workloads.Names()), strings.Join(workloads.Names(), ", "))
		}
	}
	var pols []*retry.Policy
	specs := splitRetry(f.retries)
	for _, spec := range specs {
		p, err := retry.Parse(spec)
		if err != nil {
			if errors.Is(err, retry.ErrUnknown) {
				name, _, _ := strings.Cut(spec, ":")
				err = fmt.Errorf("%w%s", err, suggest(name, retry.Names()))
			}
			errs = append(errs, err)
			continue
		}
		pols = append(pols, p)
	}
	for _, st := range strats {
		if !strategies.Known(st) {
			continue
		}
		for _, w := range wls {
			if contains(workloads.Names(), w) && !strategies.RunsWith(st, w) {
				bad("strategy %s does not run workload %s (it runs %s)", st, w, strings.Join(strategies.InfoOf(st).Workloads, ", "))
			}
		}
		b := strategies.InfoOf(st).Backend
		if b != strategies.NoBackend && len(f.faults) > 0 {
			bad("--fault acts on Redis servers and Redis locks; %s keeps its lock or data in %s", st, b)
		}
		if b == strategies.MariaDB && f.guard != "auto" {
			bad("--guard %s: %s writes its own way (sql-rowlock: a plain UPDATE under the row lock; sql-guard: the conditional UPDATE); leave --guard auto", f.guard, st)
		}
	}
	for name, l := range map[string][]string{"--strategy": strats, "--driver": drvs, "--workload": wls} {
		if len(l) == 0 {
			bad("%s is empty", name)
		}
	}
	if len(specs) == 0 {
		bad("--retry is empty")
	}
	if f.clients < 1 || f.clients > maxClients {
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
	if f.stock < 1 {
		bad("--stock must be at least 1, got %d", f.stock)
	}
	if f.skus < 1 || f.skus > 100_000 {
		bad("--skus must be from 1 to 100000, got %d", f.skus)
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
	var addrs []string
	var tlsCfg *tls.Config
	db := 0
	// password and username: the flags', or the ones in the --addr URLs
	// (validate never changes f).
	password, username := f.password, f.username
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
		if f.cluster || f.sentinelMaster != "" {
			what := "--cluster"
			if f.sentinelMaster != "" {
				what = "--sentinel-master"
			}
			for _, st := range strats {
				switch strategies.TopologyOf(st) {
				case strategies.Masters:
					bad("%s needs independent masters (an --addr list of them), not one server behind %s", st, what)
				case strategies.Replicated:
					if f.cluster {
						bad("%s sends WAIT on its own connection to one master; it cannot run on a Cluster", st)
					}
				}
			}
			for _, fs := range f.faults {
				if name, _, _ := strings.Cut(fs, ":"); name == "latency" {
					bad("fault latency stands between clients and fixed addresses; a %s client finds its servers itself", what)
				}
			}
		}
	} else {
		for _, c := range []struct {
			name string
			set  bool
		}{{"--password", f.password != ""}, {"--username", f.username != ""}, {"--tls", f.tls},
			{"--cluster", f.cluster}, {"--sentinel-master", f.sentinelMaster != ""}} {
			if c.set {
				bad("%s goes with --addr (the servers lockbench starts get a random password, no TLS)", c.name)
			}
		}
	}
	if tlsCfg == nil && (f.tlsCA != "" || f.tlsCert != "" || f.tlsKey != "" || f.tlsServerName != "" || f.tlsInsecure) {
		bad("the --tls-* flags need TLS: give rediss:// addresses or --tls (with --addr)")
	}
	if f.sentinelPassword != "" && f.sentinelMaster == "" {
		bad("--sentinel-password goes with --sentinel-master")
	}
	if f.sentinelMaster != "" && strings.TrimSpace(f.sentinelMaster) != f.sentinelMaster {
		bad("--sentinel-master %q has leading or trailing spaces", f.sentinelMaster)
	}
	if f.segments < 1 {
		bad("--segments must be at least 1, got %d", f.segments)
	} else if contains(strats, "segmented") && int64(f.segments) > f.stock {
		bad("--segments %d exceeds --stock %d: segments would start empty", f.segments, f.stock)
	}
	if f.readRatio < 0 || f.readRatio > 1 || f.readRatio != f.readRatio {
		bad("--read-ratio must be from 0 to 1, got %v", f.readRatio)
	}
	if !contains(report.Formats, f.format) {
		bad("--format %q is not one of %s", f.format, strings.Join(report.Formats, ", "))
	}
	if f.repeat < 1 || f.repeat > 1000 {
		bad("--repeat must be from 1 to 1000, got %d", f.repeat)
	}
	if f.rate < 0 || f.rate > 10_000_000 || f.rate != f.rate {
		bad("--rate must be from 0 (closed loop) to 10000000 ops/s, got %v", f.rate)
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
	if f.rate == 0 && (f.maxClients != 0 || f.arrivals != "constant") {
		bad("--max-clients and --arrivals go with --rate (an open loop)")
	}
	if f.keys < 1 || f.keys > 1_000_000 {
		bad("--keys must be from 1 to 1000000, got %d", f.keys)
	}
	if f.ownKeys && !slices.ContainsFunc(splitList(f.workloads), func(w string) bool { return w == "lock-cycle" }) {
		bad("--own-keys goes with --workload lock-cycle (each client locks a key of its own)")
	}
	if f.zipf != 0 && !(f.zipf > 1 && f.zipf <= 100) {
		bad("--zipf must be 0 (uniform) or above 1 (and at most 100), got %v", f.zipf)
	}
	var faultSpecs []faults.Spec
	for _, fs := range f.faults {
		sp, err := faults.Parse(fs)
		if err != nil {
			if errors.Is(err, faults.ErrUnknown) {
				name, _, _ := strings.Cut(fs, ":")
				err = fmt.Errorf("%w%s", err, suggest(name, faults.Names()))
			}
			errs = append(errs, err)
			continue
		}
		switch faults.NeedsOf(sp.Name) {
		case faults.NeedsOwnServer, faults.NeedsReplica:
			if f.addr != "" {
				bad("fault %s acts on servers lockbench starts itself; it cannot be used with --addr", sp.Name)
			}
		}
		if sp.Name == "latency" && (f.topology == "sentinel" || f.topology == "cluster") {
			bad("fault latency stands between clients and fixed addresses; a %s client finds its servers itself", f.topology)
		}
		if sp.Name == "failover" {
			for _, st := range strats {
				if k := strategies.TopologyOf(st); k == strategies.Masters {
					bad("fault failover needs a master with a replica; %s runs on independent masters", st)
				}
			}
			if f.topology == "sentinel" && sp.Hold >= 5*time.Second {
				bad("fault failover through Sentinel: hold=%v is too long; Sentinel does not promote a replica cut off for 5 s or more", sp.Hold)
			}
			if f.topology != "" && f.topology != "replica" && f.topology != "sentinel" {
				bad("fault failover needs --topology replica (by hand) or sentinel, not %s", f.topology)
			}
		}
		if strings.HasPrefix(sp.Name, "node-") && sp.Node > 0 {
			max := 1
			for _, st := range strats {
				if strategies.TopologyOf(st) == strategies.Masters {
					max = f.nodes
				}
			}
			switch {
			case f.topology == "replica" || f.topology == "sentinel":
				max = 2
			case f.topology == "cluster":
				max = 3
			case strings.HasPrefix(f.topology, "masters:"):
				if n, err := strconv.Atoi(strings.TrimPrefix(f.topology, "masters:")); err == nil {
					max = n
				}
			}
			if sp.Node >= max {
				bad("fault %s: node=%d, but the layout has %d server(s) (indexes from 0)", sp.Name, sp.Node, max)
			}
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
			if faults.NeedsOf(sp.Name) != faults.NeedsNothing {
				bad("fault %s acts on redis-server processes; it needs --backend local", sp.Name)
			}
		}
	default:
		bad("--backend %q is not local or docker", f.backend)
	}
	if f.instances < 1 {
		bad("--instances must be at least 1, got %d", f.instances)
	}
	if f.waitTimeout < 0 {
		bad("--wait-timeout must be >= 0, got %v", f.waitTimeout)
	}
	if f.loadSample < 0 || (f.loadSample > 0 && f.loadSample < time.Millisecond) {
		bad("--load-sample must be 0 (off) or at least 1ms, got %v", f.loadSample)
	}
	switch f.token {
	case "random":
	case "constant":
		for _, s := range strats {
			if strategies.Known(s) && !strategies.HonoursConstantToken(s) {
				bad("--token constant: strategy %q keeps its own token (constant applies to naive, atomic, watchdog, redlock)", s)
			}
		}
	default:
		bad("--token %q is not random or constant", f.token)
	}
	switch f.guard {
	case "auto", workloads.GuardNone, workloads.GuardCAS, workloads.GuardDecr:
	default:
		bad("--guard %q is not one of auto, none, cas, decr (fence comes with --strategy fencing)", f.guard)
	}
	for _, st := range strats {
		if strategies.TopologyOf(st) != strategies.Masters {
			continue
		}
		n := f.nodes
		if len(addrs) > 0 {
			n = len(addrs)
		}
		if n < 3 {
			bad("redlock needs at least 3 independent masters (a majority must survive a failure); got %d (--nodes, or the --addr list)", n)
		}
		break
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
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}

	p := &plan{addrs: addrs, password: password, nodes: nodesN, out: out, defaultOut: f.out == "", allowNonempty: f.allowNonempty, topology: topo, repeat: f.repeat,
		docker:   f.backend == "docker",
		username: username, db: db, tls: tlsCfg, cluster: f.cluster, sentinelMaster: f.sentinelMaster,
		sentinelPassword: f.sentinelPassword}
	if p.password == "" {
		p.password = os.Getenv("LOCKBENCH_PASSWORD")
	}
	clients := f.clients
	if f.rate > 0 && f.maxClients > 0 {
		clients = f.maxClients
	}
	for _, wl := range wls {
		for _, st := range strats {
			for _, pol := range pols {
				for k, d := range drvs {
					if k > 0 && strategies.InfoOf(st).Backend == strategies.MariaDB {
						break // the SQL strategies use no Redis driver: one scenario
					}
					p.scenarios = append(p.scenarios, engine.Scenario{
						Strategy: st, Driver: d, Workload: wl, Retry: pol,
						Clients: clients, Duration: f.duration, Warmup: f.warmup,
						TTL: ttl, AcquireTimeout: f.acquireTimeout, Seed: f.seed,
						Params: workloads.Params{Stock: f.stock, SKUs: f.skus, Work: work, ReadRatio: f.readRatio,
							Keys: f.keys, Zipf: f.zipf, NestedSecond: f.nestedSecond, OwnKeys: f.ownKeys && wl == "lock-cycle"},
						Guard: f.guard, Segments: f.segments, Instances: f.instances, WaitTimeout: f.waitTimeout,
						ConstantToken: f.token == "constant", LoadSample: f.loadSample,
						KeepKeys: f.keepKeys, Faults: faultSpecs,
						Rate: f.rate, Poisson: f.arrivals == "poisson", DropAfter: f.dropAfter,
					})
				}
			}
		}
	}
	return p, nil
}
