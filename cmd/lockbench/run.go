package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// gitCommit is set by the Makefile with -ldflags "-X main.gitCommit=...".
var gitCommit string

type runFlags struct {
	strategies, drivers, workloads, retries string
	clients                                 int
	duration, warmup                        time.Duration
	ttl                                     string
	acquireTimeout                          time.Duration
	work                                    string
	stock                                   int64
	skus                                    int
	addr, password                          string
	out                                     string
	seed                                    uint64
	quiet                                   bool
	nodes, segments, instances              int
	guard                                   string
	readRatio                               float64
	allowNonempty, keepKeys                 bool
	keys                                    int
	zipf                                    float64
	nestedSecond, ownKeys                   bool
	faults                                  []string
	topology                                string
	rate                                    float64
	repeat                                  int
	format                                  string
	metricsAddr                             string
	arrivals                                string
	maxClients                              int
	dropAfter                               time.Duration
	waitTimeout                             time.Duration
	token                                   string
	loadSample                              time.Duration
	backend                                 string
	// External servers (--addr): ACL user, TLS, Cluster, Sentinel.
	username               string
	tls, tlsInsecure       bool
	tlsCA, tlsCert, tlsKey string
	tlsServerName          string
	cluster                bool
	sentinelMaster         string
	sentinelPassword       string
	file                   string // -f scenario file
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a matrix of strategy x driver x workload x retry scenarios",
		Long: `run starts a redis-server on a free loopback port (or uses --addr), runs
every combination of the comma-separated --strategy, --driver, --workload and
--retry lists as one scenario each, prints a summary table, and writes a JSON
result file (results/<UTC timestamp>.json unless --out is given).

A scenario is a closed loop of --clients workers. It ends when --duration
has passed after --warmup, or earlier when the workload has nothing left to
do (flash-sale: all stock sold). Latency is per operation (acquire, critical
section, release) in ms; violations count over the whole run.`,
		Example: `  # the default matrix: naive and atomic on both drivers, flash-sale
  lockbench run

  # a lease shorter than the critical section: naive and atomic overlap
  lockbench run --strategy naive,atomic --ttl 5ms --work 20ms --retry fixed:interval=1ms

  # backoff against fixed polling, 200 clients, 10 hot items
  lockbench run --strategy atomic --retry fixed,backoff --clients 200 --skus 10

  # your own server (keys are written under lockbench:<run-id>: and deleted after)
  lockbench run --addr 127.0.0.1:6379 --password secret

  # TLS with an ACL user, against a Cluster
  lockbench run --addr rediss://bench:secret@10.0.0.5:6380 --tls-ca-file ca.pem --cluster

  # the fields of a scenario file, with --duration overriding the file's
  lockbench run -f scenarios/flash-sale-short-ttl.yaml --duration 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.file != "" {
				if err := applyFile(cmd.Flags(), f.file); err != nil {
					return err
				}
			}
			return runMatrix(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.strategies, "strategy", "naive,atomic", "lock strategies, comma-separated (see 'lockbench list')")
	fl.StringVar(&f.drivers, "driver", "goredis,rueidis", "Redis drivers, comma-separated")
	fl.StringVar(&f.workloads, "workload", "flash-sale", "workloads, comma-separated")
	fl.StringVar(&f.retries, "retry", "fixed", "retry policies, comma-separated, each NAME[:param=value,...] (e.g. fixed:interval=20ms,backoff)")
	fl.IntVar(&f.clients, "clients", 50, "concurrent clients (closed-loop workers)")
	fl.DurationVar(&f.duration, "duration", 30*time.Second, "measured time per scenario, after the warm-up (a scenario ends earlier when stock is sold out)")
	fl.DurationVar(&f.warmup, "warmup", 0, "warm-up time per scenario, excluded from ops/s and latency")
	fl.StringVar(&f.ttl, "ttl", "auto", "lock lease time (TTL); auto = 3 x --work, at least 100ms")
	fl.StringVar(&f.work, "work", "1ms", "critical-section time: a duration (80ms), uniform:10ms-40ms, or lognormal:median=5ms,p99=80ms")
	fl.DurationVar(&f.acquireTimeout, "acquire-timeout", 10*time.Second, "bound on one acquire, retries included (0 = none)")
	fl.Int64Var(&f.stock, "stock", 1000, "flash-sale: initial stock per SKU")
	fl.IntVar(&f.skus, "skus", 1, "flash-sale: number of items, each with its own lock")
	fl.StringVar(&f.addr, "addr", "", "use these Redis servers instead of starting redis-server: host:port[,...] or redis://[user:password@]host:port[/db] (rediss:// for TLS)")
	fl.StringVar(&f.password, "password", "", "password for --addr servers (or $LOCKBENCH_PASSWORD)")
	fl.StringVar(&f.username, "username", "", "ACL user for --addr servers (AUTH username password; default: the default user)")
	fl.BoolVar(&f.tls, "tls", false, "connect to host:port --addr servers over TLS (rediss:// addresses imply it)")
	fl.StringVar(&f.tlsCA, "tls-ca-file", "", "TLS: PEM file of the CA(s) that signed the servers' certificates (default: the system's)")
	fl.StringVar(&f.tlsCert, "tls-cert-file", "", "TLS: client certificate (PEM), for servers with tls-auth-clients; with --tls-key-file")
	fl.StringVar(&f.tlsKey, "tls-key-file", "", "TLS: the client certificate's private key (PEM)")
	fl.StringVar(&f.tlsServerName, "tls-server-name", "", "TLS: the name the servers' certificates must carry (default: each address's host)")
	fl.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false, "TLS: accept any server certificate (test servers only: anyone in the middle can read and change the traffic)")
	fl.BoolVar(&f.cluster, "cluster", false, "the --addr servers are nodes of a Redis Cluster (seeds; the client finds the rest)")
	fl.StringVar(&f.sentinelMaster, "sentinel-master", "", "the --addr servers are Sentinels: run on the master they know as NAME, following failovers")
	fl.StringVar(&f.sentinelPassword, "sentinel-password", "", "with --sentinel-master: the Sentinels' own password (--password is the master's)")
	fl.StringVarP(&f.file, "file", "f", "", "read flags from a YAML scenario file (field names = flag names; flags given on the command line win)")
	fl.StringVar(&f.out, "out", "", "result file (default results/<UTC timestamp>.json)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed for key choice and retry jitter")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr (live bars when stdout and stderr are terminals, else one line per scenario)")
	fl.IntVar(&f.nodes, "nodes", 5, "redlock: independent masters to start (with --addr: the addresses given)")
	fl.IntVar(&f.segments, "segments", 8, "segmented: stock segments per item, each with its own lock")
	fl.IntVar(&f.instances, "instances", 4, "multilevel: simulated app instances, each with its own in-process mutex per key")
	fl.StringVar(&f.guard, "guard", "auto", "write guard beyond the lock: auto (the strategy's: fencing->fence, multilevel->cas), none, cas, decr")
	fl.Float64Var(&f.readRatio, "read-ratio", 0, "share of operations that only read (0..1), under rwlock's read side or the lock itself")
	fl.IntVar(&f.keys, "keys", 1000, "hot-key, nested, lock-cycle: number of lock keys")
	fl.BoolVar(&f.ownKeys, "own-keys", false, "lock-cycle: each client locks a key of its own instead of one of --keys (no contention at all)")
	fl.Float64Var(&f.zipf, "zipf", 1.1, "hot-key: Zipf exponent of the key choice (> 1; 0 = uniform)")
	fl.BoolVar(&f.nestedSecond, "nested-second", false, "nested: also take a second lock inside the first (in a fixed order)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address while running (e.g. :9091): redis_lock_wait_duration_seconds, redis_lock_hold_duration_seconds, redis_lock_failed_total, ...")
	fl.StringVar(&f.format, "format", "table", "output on stdout: table, json, csv or benchstat (the JSON file is written either way)")
	fl.IntVar(&f.repeat, "repeat", 1, "run each scenario this many times on fresh keys; report median, min, max and a 95% bootstrap interval of ops/s and p99")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: start operations at this rate (ops/s) whatever their latency; 0 = closed loop")
	fl.StringVar(&f.arrivals, "arrivals", "constant", "open loop: arrival process, constant or poisson")
	fl.IntVar(&f.maxClients, "max-clients", 0, "open loop: clients available to serve arrivals (default --clients)")
	fl.DurationVar(&f.dropAfter, "drop-after", 100*time.Millisecond, "open loop: an arrival that finds no free client within this is dropped")
	fl.StringArrayVar(&f.faults, "fault", nil, "inject a fault, NAME[:param=value,...] (repeatable; see 'lockbench list')")
	fl.StringVar(&f.topology, "topology", "", "server layout for strategies without their own: standalone, masters:N, replica, sentinel, cluster (default standalone; replica when a fault needs one)")
	fl.BoolVar(&f.allowNonempty, "allow-nonempty", false, "with --addr: run even when the database already holds keys (lockbench still touches only its own)")
	fl.BoolVar(&f.keepKeys, "keep-keys", false, "leave the run's keys in Redis for inspection instead of deleting them")
	fl.StringVar(&f.token, "token", "random", "lock value: random (128 random bits per lease) or constant (\"1\" for every client: the owner check then protects nothing; naive, atomic, watchdog, redlock)")
	fl.DurationVar(&f.loadSample, "load-sample", 0, "sample the servers' command rate at this interval (e.g. 10ms) and report its mean, peak and variation (server_load); 0 = off")
	fl.StringVar(&f.backend, "backend", "local", "where the servers lockbench starts run: local (redis-server processes) or docker (containers through a Docker engine, via testcontainers-go; "+dockertopo.Supported+" layouts)")
	fl.DurationVar(&f.waitTimeout, "wait-timeout", 50*time.Millisecond, "wait-replicas: WAIT timeout for a replica's acknowledgement")
	return cmd
}

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
				if f.password != "" && f.password != u.password {
					bad("--addr: two different passwords (in the URLs or --password)")
				}
				f.password = u.password
			}
			if u.user != "" {
				if f.username != "" && f.username != u.user {
					bad("--addr: two different usernames (in the URLs or --username)")
				}
				f.username = u.user
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

	p := &plan{addrs: addrs, password: f.password, nodes: nodesN, out: out, defaultOut: f.out == "", allowNonempty: f.allowNonempty, topology: topo, repeat: f.repeat,
		docker:   f.backend == "docker",
		username: f.username, db: db, tls: tlsCfg, cluster: f.cluster, sentinelMaster: f.sentinelMaster,
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

func runMatrix(parent context.Context, f *runFlags, stdout, stderr io.Writer) error {
	p, err := validate(f)
	if err != nil {
		return err
	}
	if p.defaultOut {
		// Two runs started in the same second must not write one file.
		out, placeholder, err := reserveOut(filepath.Dir(p.out), time.Now().UTC())
		if err != nil {
			return fmt.Errorf("result file: %w", err)
		}
		p.out = out
		defer removeUnwritten(out, placeholder)
	}
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	started := time.Now().UTC()
	runID := randomID()
	run := &report.Run{Schema: report.Schema, Meta: report.Meta{
		StartedAt: started.Format(time.RFC3339), GitCommit: commit(), GoVersion: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GODEBUG: os.Getenv("GODEBUG"), Args: redactArgs(os.Args[1:]), RunID: runID,
	}}

	// Live bars on stderr when both stdout and stderr are terminals (never
	// on stdout, never into a pipe or a file); else plain lines, or none
	// with -q.
	var live *liveProgress
	logw := stderr // warnings: above the bars while they are drawn
	if !f.quiet && isTerminal(stdout) && sizedTerminal(stderr) {
		live = newLiveProgress(stderr, len(p.scenarios))
		defer live.close()
		logw = live
	}

	// First Ctrl-C: stop starting operations, finish, write results. Second:
	// kill the servers lockbench started and exit at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(logw, "\nlockbench: interrupted; finishing the current operations and writing results (Ctrl-C again to quit now)")
		cancel()
		if _, ok := <-sigs; ok {
			quitting.Store(true) // whatever the run returns now, the exit is 130
			topology.KillAll()
			dockertopo.KillAll()
			if len(p.addrs) > 0 { // never leave keys on the user's servers
				cleanExternal(p, "lockbench:"+runID+":")
			}
			fmt.Fprintln(stderr, "lockbench: stopped")
			os.Exit(exitInterrupted)
		}
	}()

	if p.docker {
		if err := dockertopo.Check(ctx); err != nil {
			return fmt.Errorf("--backend docker: %w", err)
		}
	}
	topos := &topologies{plan: p, started: map[strategies.Topology]*topology.Topology{}}
	defer topos.stop()
	var prom *export.Prom
	if f.metricsAddr != "" {
		prom = export.New()
		if err := prom.Serve(f.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %s: %w", f.metricsAddr, err)
		}
		defer prom.Close()
		fmt.Fprintf(logw, "lockbench: Prometheus metrics on http://%s/metrics\n", prom.Addr())
	}
	out := p.out
	for i, sc := range p.scenarios {
		if ctx.Err() != nil {
			break
		}
		var bar *scenarioBar
		if live != nil {
			bar = live.scenario(i, fmt.Sprintf("%s %s %s %s, %d clients", sc.Strategy, sc.Driver, sc.Workload, sc.Retry.Name, sc.Clients),
				(sc.Warmup+sc.Duration)*time.Duration(p.repeat))
			sc.OnSecond = bar.second
		} else if !f.quiet {
			fmt.Fprintf(stderr, "[%d/%d] %s %s %s %s, %d clients ...", i+1, len(p.scenarios),
				sc.Strategy, sc.Driver, sc.Workload, sc.Retry.Name, sc.Clients)
		}
		lay, err := topos.layoutFor(ctx, sc)
		var skip errSkip
		if errors.As(err, &skip) {
			if !f.quiet {
				fmt.Fprintln(stderr, " skipped")
			}
			fmt.Fprintf(stderr, "lockbench: skipping scenario %d (%s): %v\n", i+1, sc.Strategy, skip.err)
			run.Skipped = append(run.Skipped, fmt.Sprintf("%s/%s/%s: %v", sc.Strategy, sc.Driver, sc.Workload, skip.err))
			continue
		}
		nodes, servers, name, release := lay.nodes, lay.servers, lay.name, lay.release
		if err == nil && run.Meta.RedisVersion == "" {
			run.Meta.RedisVersion, err = probeVersion(ctx, sc.Driver, nodes)
		}
		if err != nil {
			if bar != nil {
				bar.finish("failed")
			} else if !f.quiet {
				fmt.Fprintln(stderr, " failed")
			}
			if errors.Is(err, context.Canceled) {
				break
			}
			return err
		}
		sc.Topology, sc.Servers, sc.Sentinels, sc.ReplLink = name, servers, lay.sentinels, lay.link
		sc.Backends = lay.backends
		sc.Prom = prom
		res, err := runRepeated(ctx, sc, nodes, fmt.Sprintf("lockbench:%s:%d:", run.Meta.RunID, i), p.repeat)
		release()
		if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Ctrl-C before the scenario measured anything (while
			// connecting): an interruption, not a failure.
			if bar != nil {
				bar.finish("interrupted")
			} else if !f.quiet {
				fmt.Fprintln(stderr, " interrupted")
			}
			break
		}
		if err != nil {
			if bar != nil {
				bar.finish("failed")
				live.close()
			} else if !f.quiet {
				fmt.Fprintln(stderr, " failed")
			}
			err = fmt.Errorf("scenario %d (%s/%s/%s): %w", i+1, sc.Strategy, sc.Driver, sc.Workload, err)
			run.Failed = err.Error()
			run.Meta.Topology, run.Meta.Servers = topos.describe()
			if len(run.Scenarios) > 0 {
				_ = report.Table(stdout, run.Scenarios)
			}
			if werr := report.WriteFile(out, run); werr == nil {
				fmt.Fprintf(stdout, "partial results written to %s\n", out)
			}
			return err
		}
		if !f.quiet {
			v := res.Violations
			summary := fmt.Sprintf("%.0f ops/s, overlap %d, oversell %d, lost updates %d (%.1fs, %s)",
				res.OpsPerSec, v.Overlap, v.Oversell, v.LostUpdates, res.DurationS, res.StopReason)
			if bar != nil {
				bar.finish(summary)
			} else {
				fmt.Fprintln(stderr, " "+summary)
			}
		}
		if res.VerifyError != "" {
			fmt.Fprintf(logw, "lockbench: warning: scenario %d: no end check after its faults: %s\n", i+1, res.VerifyError)
		}
		if sc.Warmup > 0 && res.Ops == 0 && res.StopReason == "done" {
			fmt.Fprintf(logw, "lockbench: warning: scenario %d finished during the %v warm-up; nothing was measured (raise --stock or lower --warmup)\n", i+1, sc.Warmup)
		}
		if res.StopReason == "interrupted" {
			run.Interrupted = true
		}
		run.Scenarios = append(run.Scenarios, res)
	}
	if ctx.Err() != nil {
		run.Interrupted = true
	}
	run.Meta.Topology, run.Meta.Servers = topos.describe()
	run.Meta.MaxRSSMB = maxRSSMB()
	if live != nil {
		live.close() // the last bar drawn before the table
	}
	// The files first: a table that cannot be printed (stdout closed,
	// `| head -1`: SIGPIPE) must not lose the results.
	if err := report.WriteFile(out, run); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := report.WriteHGRM(out, run); err != nil {
		return fmt.Errorf("write .hgrm files: %w", err)
	}
	if err := report.Write(stdout, f.format, run); err != nil {
		return err
	}
	if f.format == "table" {
		fmt.Fprintf(stdout, "results written to %s\n", out)
	} else {
		fmt.Fprintf(stderr, "results written to %s\n", out)
	}
	if run.Interrupted {
		return errInterrupted
	}
	return nil
}

// topologies starts each server layout the first time a scenario needs it
// and keeps it for the rest of the matrix — except when the scenario's
// faults damage servers (node-*, failover): then it gets a fresh layout,
// stopped after it.
type topologies struct {
	plan    *plan
	started map[strategies.Topology]*topology.Topology
	order   []strategies.Topology
	checked map[string]bool // external addresses already checked
	fresh   []*topology.Topology
	linker  func(master string) (string, error)
	docker  map[strategies.Topology]*dockertopo.Layout // --backend docker
	// backends are the baseline servers started so far (MariaDB,
	// ZooKeeper, etcd), one of each for the whole matrix.
	backends map[strategies.Backend]backend
	border   []strategies.Backend
}

// errSkip marks a scenario skipped because its server is not installed.
type errSkip struct{ err error }

func (e errSkip) Error() string { return e.err.Error() }
func (e errSkip) Unwrap() error { return e.err }

// backendsFor starts (once) the server the scenario's strategy needs
// besides Redis and returns the Backends to put in the scenario. A server
// that is not installed gives errSkip.
func (t *topologies) backendsFor(ctx context.Context, sc engine.Scenario) (strategies.Backends, error) {
	var b strategies.Backends
	kind := strategies.InfoOf(sc.Strategy).Backend
	if kind == strategies.NoBackend {
		return b, nil
	}
	if t.backends == nil {
		t.backends = map[strategies.Backend]backend{}
	}
	if be, ok := t.backends[kind]; ok {
		return be.b, nil
	}
	s, b, err := engine.StartBackend(ctx, kind)
	if engine.Missing(err) {
		return b, errSkip{err}
	}
	if err != nil {
		return b, err
	}
	t.backends[kind] = backend{s, b}
	t.border = append(t.border, kind)
	return b, nil
}

// backend is a started baseline server and what clients use to reach it.
type backend struct {
	s *topology.Server
	b strategies.Backends
}

// kindFor is the layout a scenario runs on: the strategy's own need
// (redlock: masters; wait-replicas: replica), else --topology, else a
// replica when a fault needs one, else standalone.
func (t *topologies) kindFor(sc engine.Scenario) strategies.Topology {
	if k := strategies.TopologyOf(sc.Strategy); k != strategies.Standalone {
		return k
	}
	if t.plan.topology != "" {
		return t.plan.topology
	}
	for _, f := range sc.Faults {
		if faults.NeedsOf(f.Name) == faults.NeedsReplica {
			return strategies.Replicated
		}
	}
	return strategies.Standalone
}

func damaging(sc engine.Scenario) bool {
	for _, f := range sc.Faults {
		if faults.NeedsOf(f.Name) != faults.NeedsNothing {
			return true
		}
	}
	return false
}

// runRepeated runs sc n times, each on fresh keys (prefix + "r<k>:"), and
// returns the run with the median ops/s with the spread of ops/s and p99
// over all runs. One run is returned as it is. A run that fails, or an
// interruption, ends the repeats.
func runRepeated(ctx context.Context, sc engine.Scenario, nodes []engine.Node, prefix string, n int) (report.Scenario, error) {
	if n <= 1 {
		return engine.Run(ctx, sc, nodes, prefix)
	}
	var runs []report.Scenario
	for k := 0; k < n; k++ {
		res, err := engine.Run(ctx, sc, nodes, prefix+"r"+strconv.Itoa(k)+":")
		if err != nil {
			return res, err
		}
		runs = append(runs, res)
		if res.StopReason == "interrupted" {
			break
		}
	}
	ops := make([]float64, len(runs))
	p99 := make([]float64, len(runs))
	for k, r := range runs {
		ops[k], p99[k] = r.OpsPerSec, r.LatencyMS.P99
	}
	order := make([]int, len(runs))
	for k := range order {
		order[k] = k
	}
	sort.Slice(order, func(a, b int) bool { return ops[order[a]] < ops[order[b]] })
	med := runs[order[len(order)/2]]
	med.Repeats = &report.Repeats{N: len(runs), OpsPerSec: report.NewSpread(ops, sc.Seed), P99MS: report.NewSpread(p99, sc.Seed)}
	// Violations are summed over every repeat: a violation in any run counts.
	var v report.Violations
	for _, r := range runs {
		v.Add(r.Violations)
	}
	med.Violations = v
	return med, nil
}

// layout is where a scenario runs.
type layout struct {
	nodes     []engine.Node      // what clients connect to
	servers   []*topology.Server // every server (replica included)
	sentinels []string
	link      *faults.Proxies // the replica's link on a Sentinel layout with a failover
	name      string
	release   func() // call after the scenario
	// backends are the baseline strategies' servers besides Redis.
	backends strategies.Backends
}

// layoutFor starts or reuses the scenario's layout.
func (t *topologies) layoutFor(ctx context.Context, sc engine.Scenario) (layout, error) {
	var link *faults.Proxies
	if t.kindFor(sc) == strategies.Sentinel && damaging(sc) {
		// The replica replicates through a proxy that the failover cuts.
		t.linker = func(master string) (string, error) {
			px, err := faults.StartProxies([]string{master})
			if err != nil {
				return "", err
			}
			link = px
			return px.Addr(0), nil
		}
	} else {
		t.linker = nil
	}
	backends, err := t.backendsFor(ctx, sc)
	if err != nil {
		return layout{release: func() {}}, err
	}
	nodes, servers, name, release, err := t.nodes(ctx, sc)
	if err != nil && link != nil {
		link.Close()
		link = nil
	}
	l := layout{nodes: nodes, servers: servers, name: name, release: release, link: link, backends: backends}
	if link != nil {
		l.release = func() { release(); link.Close() }
	}
	if len(nodes) > 0 {
		l.sentinels = nodes[0].Sentinels
	}
	return l, err
}

// nodes returns the client-facing nodes for a scenario, every server of
// its layout (replica included), the layout's name, and a release
// function to call after the scenario.
func (t *topologies) nodes(ctx context.Context, sc engine.Scenario) ([]engine.Node, []*topology.Server, string, func(), error) {
	kind := t.kindFor(sc)
	none := func() {}
	if len(t.plan.addrs) > 0 {
		nodes := t.plan.external(kind)
		if err := t.checkExternal(ctx, nodes, kind); err != nil {
			return nil, nil, "", none, err
		}
		return nodes, nil, t.plan.externalName(), none, nil
	}
	if t.plan.docker {
		return t.dockerNodes(ctx, kind)
	}
	start := func() (*topology.Topology, error) {
		switch kind {
		case strategies.Masters:
			return topology.Start(ctx, t.plan.nodes)
		case strategies.Replicated:
			return topology.StartReplicated(ctx)
		case strategies.Sentinel:
			return topology.StartSentinel(ctx, t.linker)
		case strategies.Cluster:
			return topology.StartCluster(ctx, 3)
		}
		return topology.Start(ctx, 1)
	}
	release := none
	topo, ok := t.started[kind]
	switch {
	case damaging(sc):
		var err error
		if topo, err = start(); err != nil {
			return nil, nil, "", none, err
		}
		t.fresh = append(t.fresh, topo)
		release = topo.Stop
	case !ok:
		var err error
		if topo, err = start(); err != nil {
			return nil, nil, "", none, err
		}
		t.started[kind] = topo
		t.order = append(t.order, kind)
	}
	var nodes []engine.Node
	for _, s := range topo.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	switch kind {
	case strategies.Masters:
		return nodes, topo.Servers, fmt.Sprintf("masters:%d", len(nodes)), release, nil
	case strategies.Replicated:
		return nodes[:1], topo.Servers, "replica", release, nil // clients use the master
	case strategies.Cluster:
		n := engine.Node{Addr: topo.Servers[0].Addr, Password: topo.Servers[0].Password, Cluster: true}
		return []engine.Node{n}, topo.Servers, "cluster", release, nil
	case strategies.Sentinel:
		n := engine.Node{Addr: "sentinel:" + topology.MasterName, Password: topo.Servers[0].Password,
			Sentinels: topo.SentinelAddrs(), MasterName: topology.MasterName}
		return []engine.Node{n}, topo.Servers, "sentinel", release, nil
	}
	return nodes, topo.Servers, "standalone", release, nil
}

// dockerNodes starts (once) or reuses a layout in containers. validate
// has refused the faults that damage servers and the layouts the docker
// backend does not start.
func (t *topologies) dockerNodes(ctx context.Context, kind strategies.Topology) ([]engine.Node, []*topology.Server, string, func(), error) {
	l, ok := t.docker[kind]
	if !ok {
		var err error
		if l, err = dockertopo.Start(ctx, kind, t.plan.nodes); err != nil {
			return nil, nil, "", func() {}, fmt.Errorf("--backend docker: %w", err)
		}
		if t.docker == nil {
			t.docker = map[strategies.Topology]*dockertopo.Layout{}
		}
		t.docker[kind] = l
		t.order = append(t.order, kind)
	}
	var nodes []engine.Node
	for _, s := range l.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	name := "docker:" + string(kind)
	switch kind {
	case strategies.Masters:
		name = fmt.Sprintf("docker:masters:%d", len(nodes))
	case strategies.Replicated:
		nodes = nodes[:1] // clients use the master
	}
	return nodes, nil, name, func() {}, nil
}

// checkExternal refuses a user's server that holds keys (unless
// --allow-nonempty) and, for wait-replicas, a master without a replica.
// Each address is checked once.
func (t *topologies) checkExternal(ctx context.Context, nodes []engine.Node, kind strategies.Topology) error {
	if t.checked == nil {
		t.checked = map[string]bool{}
	}
	for _, n := range nodes {
		key := n.Addr + "/" + string(kind)
		if t.checked[key] {
			continue
		}
		ds, err := engine.Open(ctx, t.plan.scenarios[0].Driver, []engine.Node{n}, 1)
		if err != nil {
			return tlsHint(err, t.plan.tls != nil)
		}
		d := ds[0]
		if !t.plan.allowNonempty && !t.checked[n.Addr] {
			keys, err := redisadmin.KeyCount(ctx, d)
			if err != nil {
				d.Close()
				return fmt.Errorf("count the keys on %s to check that its database is empty (--allow-nonempty skips the check): %w", n.Addr, err)
			}
			if keys > 0 {
				d.Close()
				return usageError{fmt.Errorf("refusing to run on %s: its database already holds %d keys; lockbench only ever touches keys under lockbench:<run-id>:, but pass --allow-nonempty to confirm", n.Addr, keys)}
			}
		}
		if kind == strategies.Replicated {
			r, err := d.Do(ctx, "INFO", "replication")
			if err == nil && strings.Contains(r.Str, "connected_slaves:0") {
				d.Close()
				return usageError{fmt.Errorf("wait-replicas needs a master with a replica, and %s has none connected (connected_slaves:0)", n.Addr)}
			}
		}
		d.Close()
		t.checked[key], t.checked[n.Addr] = true, true
	}
	return nil
}

// describe names the layouts used and lists the servers started.
func (t *topologies) describe() (string, []report.ServerInfo) {
	if len(t.plan.addrs) > 0 {
		return t.plan.externalName(), nil
	}
	var names []string
	var servers []report.ServerInfo
	for _, k := range t.order {
		if l, ok := t.docker[k]; ok {
			name := "docker:" + string(k)
			if k == strategies.Masters {
				name = fmt.Sprintf("docker:masters:%d", len(l.Servers))
			}
			names = append(names, name)
			for _, s := range l.Servers {
				servers = append(servers, report.ServerInfo{Addr: s.Addr})
			}
			continue
		}
		topo := t.started[k]
		name := string(k)
		if k == strategies.Masters {
			name = fmt.Sprintf("masters:%d", len(topo.Servers))
		}
		names = append(names, name)
		servers = append(servers, serverInfo(topo)...)
	}
	for _, topo := range t.fresh {
		servers = append(servers, serverInfo(topo)...)
	}
	for _, k := range t.border {
		names = append(names, string(k))
		s := t.backends[k].s
		servers = append(servers, report.ServerInfo{Addr: s.Addr, Pid: s.Pid})
	}
	if len(t.fresh) > 0 {
		names = append(names, fmt.Sprintf("%d fresh for faults", len(t.fresh)))
	}
	return strings.Join(names, ","), servers
}

func serverInfo(topo *topology.Topology) []report.ServerInfo {
	var out []report.ServerInfo
	for _, s := range append(append([]*topology.Server(nil), topo.Servers...), topo.Sentinels...) {
		out = append(out, report.ServerInfo{Addr: s.Addr, Pid: s.Pid})
	}
	return out
}

func (t *topologies) stop() {
	for _, topo := range t.started {
		topo.Stop()
	}
	for _, topo := range t.fresh {
		topo.Stop()
	}
	for _, l := range t.docker {
		l.Stop()
	}
	for _, be := range t.backends {
		be.s.Stop()
	}
}

// cleanExternal deletes the run's keys on the user's servers, within 2 s
// (the quit-now path of a second Ctrl-C).
func cleanExternal(p *plan, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, n := range p.external(strategies.Masters) {
		ds, err := engine.Open(ctx, p.scenarios[0].Driver, []engine.Node{n}, 1)
		if err != nil {
			continue
		}
		_, _ = redisadmin.DeleteKeys(ctx, ds[0], prefix)
		ds[0].Close()
	}
}

func probeVersion(ctx context.Context, driver string, nodes []engine.Node) (string, error) {
	ds, err := engine.Open(ctx, driver, nodes[:1], 1)
	if err != nil {
		return "", err
	}
	defer ds[0].Close()
	v, err := redisadmin.ServerVersion(ctx, ds[0])
	if err != nil {
		return "", fmt.Errorf("read the Redis version from %s: %w", nodes[0].Addr, err)
	}
	return v, nil
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitRetry splits --retry on commas, keeping a policy's own
// "param=value" items with it: "fixed,backoff:start=10ms,cap=1s" is two
// specs.
func splitRetry(s string) []string {
	var out []string
	for _, p := range splitList(s) {
		if strings.Contains(p, "=") && !strings.Contains(p, ":") && len(out) > 0 {
			out[len(out)-1] += "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}

// suggest returns `; did you mean "x"?` for the valid name nearest to s
// (edit distance at most 3, or a name that contains s), or "".
func suggest(s string, valid []string) string {
	// A suggestion must be close: at most 2 edits, and fewer than half the
	// length of what was typed ("foo" is not "fair").
	best, bestD := "", min(3, (len(s)+1)/2)
	for _, v := range valid {
		d := levenshtein.ComputeDistance(strings.ToLower(s), v)
		if d < bestD || (best == "" && len(s) >= 3 && strings.Contains(v, strings.ToLower(s))) {
			best, bestD = v, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// addrURL is one --addr item: host:port, or what a redis:// or rediss://
// URL holds.
type addrURL struct {
	hostport       string
	url, tls       bool   // a URL; rediss://
	user, password string // from the URL's user info
	db             int    // the URL's path: /N
}

// parseAddr accepts host:port or a redis[s]://[[user]:password@]host:port[/db]
// URL (as go-redis's ParseURL and redis-cli -u read them: a user info with
// no colon is a username). Its errors never quote the input, which may
// hold a password.
func parseAddr(a string) (addrURL, error) {
	if !strings.Contains(a, "://") {
		return addrURL{hostport: a}, nil
	}
	const want = "want host:port or redis://[[user]:password@]host:port[/db] (rediss:// for TLS)"
	u, err := url.Parse(a)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" || u.Opaque != "" {
		return addrURL{}, errors.New(want)
	}
	out := addrURL{hostport: u.Host, url: true, tls: u.Scheme == "rediss"}
	if u.User != nil {
		out.user = u.User.Username()
		out.password, _ = u.User.Password()
	}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1_000_000 || p[0] == '+' {
			return addrURL{}, errors.New("the path must be a database number (/0, /1, ...)")
		}
		out.db = n
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return addrURL{}, errors.New("query parameters are not read; use the flags (--tls-ca-file, --username, ...)")
	}
	if !strings.Contains(u.Host, ":") || strings.HasSuffix(u.Host, "]") {
		out.hostport = net.JoinHostPort(u.Hostname(), "6379") // the URL form's default port
	}
	return out, nil
}

// redact hides the user name and password of a redis:// or rediss:// URL
// (also of one that does not parse).
func redact(a string) string {
	if u, err := url.Parse(a); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			name := ""
			if u.User.Username() != "" {
				name = "xxxxx"
			}
			u.User = url.UserPassword(name, "xxxxx")
		} else {
			u.User = url.User("xxxxx")
		}
		return u.String()
	} else if err != nil {
		scheme, rest, ok := strings.Cut(a, "://")
		if at := strings.LastIndexByte(rest, '@'); ok && at >= 0 {
			return scheme + "://xxxxx@" + rest[at+1:]
		}
	}
	return a
}

// tlsConfig builds the TLS configuration of the --tls-* flags: the CA
// file's certificates as the trusted roots (default: the system's), the
// client certificate and key, the server name, and skip-verify. Errors name
// the file that could not be used (usage errors).
func tlsConfig(f *runFlags) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.tlsServerName, InsecureSkipVerify: f.tlsInsecure}
	var errs []error
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--tls-ca-file: %w", err))
		default:
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				errs = append(errs, fmt.Errorf("--tls-ca-file %s holds no PEM certificate", f.tlsCA))
			}
			cfg.RootCAs = pool
		}
	}
	switch {
	case (f.tlsCert == "") != (f.tlsKey == ""):
		errs = append(errs, errors.New("--tls-cert-file and --tls-key-file go together (a client certificate and its key)"))
	case f.tlsCert != "":
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			errs = append(errs, fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err))
		} else {
			cfg.Certificates = []tls.Certificate{cert}
		}
	}
	return cfg, errors.Join(errs...)
}

// tlsHint adds what to do to an error from a TLS handshake: a server
// certificate that did not verify, a client certificate the server wants,
// or a server that does not speak TLS on that port.
func tlsHint(err error, usingTLS bool) error {
	if err == nil || !usingTLS {
		return err
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	msg := err.Error()
	switch {
	case errors.As(err, &host) || strings.Contains(msg, "x509: certificate is valid for"):
		return fmt.Errorf("%w\n(the certificate names other hosts: connect by one of its names, or give the name with --tls-server-name)", err)
	case errors.As(err, &unknown) || strings.Contains(msg, "x509:"):
		return fmt.Errorf("%w\n(give the CA that signed the server's certificate with --tls-ca-file; --tls-insecure-skip-verify skips the check, for test servers only)", err)
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate"):
		return fmt.Errorf("%w\n(the server wants a client certificate its CA signed: --tls-cert-file and --tls-key-file)", err)
	case strings.Contains(msg, "does not look like a TLS handshake"):
		return fmt.Errorf("%w\n(the server does not speak TLS on this port: use redis:// or drop --tls)", err)
	}
	return err
}

// external returns the nodes a scenario of layout kind uses on the
// user's servers: one Cluster client seeded with every address
// (--cluster), one client of the master the Sentinels name
// (--sentinel-master), every address for independent masters, else the
// first address.
func (p *plan) external(kind strategies.Topology) []engine.Node {
	base := engine.Node{Username: p.username, Password: p.password, DB: p.db, TLS: p.tls}
	switch {
	case p.cluster:
		n := base
		n.Addr, n.Seeds, n.Cluster = p.addrs[0], p.addrs[1:], true
		return []engine.Node{n}
	case p.sentinelMaster != "":
		n := base
		n.Addr = fmt.Sprintf("%s via Sentinel %s", p.sentinelMaster, strings.Join(p.addrs, ","))
		n.Sentinels, n.MasterName, n.SentinelPassword = p.addrs, p.sentinelMaster, p.sentinelPassword
		return []engine.Node{n}
	}
	var nodes []engine.Node
	for _, a := range p.addrs {
		n := base
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
	case p.cluster:
		return "external-cluster"
	case p.sentinelMaster != "":
		return "external-sentinel"
	}
	return "external"
}

// redactArgs hides passwords in a command line: redis:// URLs and the
// value of --password.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && (args[i-1] == "--password" || args[i-1] == "--username" || args[i-1] == "--sentinel-password"):
			out[i] = "xxxxx"
		case strings.HasPrefix(a, "--password="), strings.HasPrefix(a, "--username="), strings.HasPrefix(a, "--sentinel-password="):
			k, _, _ := strings.Cut(a, "=")
			out[i] = k + "=xxxxx"
		default:
			parts := strings.Split(a, ",")
			for j, p := range parts {
				k, v, ok := strings.Cut(p, "=")
				if ok && strings.Contains(v, "://") {
					parts[j] = k + "=" + redact(v)
				} else {
					parts[j] = redact(p)
				}
			}
			out[i] = strings.Join(parts, ",")
		}
	}
	return out
}

// maxClients bounds --clients: each client keeps its own histograms
// (about 200 KB).
const maxClients = 20_000

// reserveOut creates dir/<UTC timestamp>.json for a run's results, or
// <UTC timestamp>-2.json, -3, ... when another run took the name in the
// same second (O_EXCL: two processes never get one name), and returns its
// path and contents. The file holds a placeholder result that says the run
// has not finished, until the run writes its own over it (removeUnwritten
// removes it when the run ends without doing so); a run killed with
// SIGKILL leaves the placeholder. Errors: the directory cannot be made or
// written.
func reserveOut(dir string, now time.Time) (string, []byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	stamp := now.Format("20060102T150405Z")
	placeholder, err := json.Marshal(report.Run{Schema: report.Schema, Meta: report.Meta{StartedAt: now.Format(time.RFC3339)},
		Failed: "the run has not finished (it is still running, or was killed)", Scenarios: []report.Scenario{}})
	if err != nil {
		return "", nil, err
	}
	for k := 1; ; k++ {
		name := stamp + ".json"
		if k > 1 {
			name = fmt.Sprintf("%s-%d.json", stamp, k)
		}
		path := filepath.Join(dir, name)
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		_, werr := fh.Write(placeholder)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		return path, placeholder, werr
	}
}

// removeUnwritten removes the file reserveOut made when it still holds
// the placeholder: the run ended before it wrote any result.
func removeUnwritten(path string, placeholder []byte) {
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, placeholder) {
		_ = os.Remove(path)
	}
}

// checkOut checks, leaving nothing behind, that a result file can be
// written at path: a .json name that is not a directory, whose nearest
// existing ancestor directory is writable (missing directories are created
// when the file is written).
func checkOut(path string) error {
	if !strings.HasSuffix(path, ".json") {
		return errors.New("must end in .json")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			// A file created and removed at once: root passes access(2)
			// checks on read-only file systems such as /proc.
			tmp, err := os.CreateTemp(dir, ".lockbench-check-*")
			if err != nil {
				return fmt.Errorf("directory %s is not writable", dir)
			}
			tmp.Close()
			return os.Remove(tmp.Name())
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("no existing directory above %s", path)
		}
		dir = parent
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func commit() string {
	if gitCommit != "" {
		return gitCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// maxRSSMB is the process's peak resident set size in MB (getrusage; Linux
// reports KB).
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
