package cli

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
)

type runFlags struct {
	strategies, drivers, workloads, retries string
	clients                                 int
	duration, warmup                        time.Duration
	ttl                                     string
	acquireTimeout                          time.Duration
	work                                    string
	addr, password                          string
	out                                     string
	force                                   bool // --force: overwrite an existing --out
	seed                                    uint64
	quiet                                   bool
	nodes                                   int
	guard                                   string
	allowNonempty, keepKeys                 bool
	faults                                  []string
	topology                                string
	rateSpec                                string // --rate: a constant or an arrival shape (parseRate)
	repeat                                  int
	format                                  string
	columns                                 string // --columns: the table's columns (printResults)
	metricsAddr                             string
	metricsLinger                           time.Duration
	arrivals                                string
	maxClients                              int
	dropAfter                               time.Duration
	token                                   string
	release                                 string
	livenessInterval, errorStreak           time.Duration
	loadSample                              time.Duration
	interval                                time.Duration // --interval: the timeline's entries
	history                                 string        // --history: this process's critical-section history
	// Redis driver settings: --pool-size, --dial-timeout, --read-timeout,
	// --write-timeout (0 = the default).
	poolSize                               int
	dialTimeout, readTimeout, writeTimeout time.Duration
	backend                                string
	failOn                                 []string // --fail-on thresholds
	// External servers (--addr): ACL user, TLS, Cluster, Sentinel.
	username               string
	tls, tlsInsecure       bool
	tlsCA, tlsCert, tlsKey string
	tlsServerName          string
	cluster                bool
	sentinelMaster         string
	sentinelPassword       string
	// --password-file, --sentinel-password-file: the password on the
	// file's first line, out of ps.
	passwordFile, sentinelPasswordFile string
	file                               string // -f scenario file
	testSlowdown                       string // STRATEGY=D: see engine.Scenario.Slowdown
	// plugin holds the values of the strategies' and workloads' own
	// parameters (one generated flag each), defaults included; pluginSet
	// names those the command line or the scenario file set.
	plugin    registry.Values
	pluginSet map[string]bool
	// changed names the flags the command line or the scenario file set,
	// cli those of the command line alone (nil when validate is called
	// on flags parsed by hand: then only values other than the defaults
	// count as given).
	changed, cli map[string]bool
	// sweep: lockbench sweep, whose --clients (clientList) is a list of
	// counts (parseClientList), each a scenario of every matrix cell.
	sweep      bool
	clientList string
	// Execution segments (segments.go): --segment i/N (or
	// LOCKBENCH_SEGMENT), --segment-count N with JOB_COMPLETION_INDEX,
	// --run-id, --barrier-timeout; --procs N runs N segments as child
	// processes.
	segment        string
	segmentCount   int
	runID          string
	barrierTimeout time.Duration
	procs          int
}

// registerRunFlags declares run's flags on fl, parsing into f; sweep
// (lockbench sweep) declares --clients as a list of counts (f.clientList)
// instead of one count.
func registerRunFlags(fl *pflag.FlagSet, f *runFlags, sweep bool) {
	fl.StringVar(&f.strategies, "strategy", "naive,atomic", "lock strategies, comma-separated, each NAME[:param=value,...]: a parameter given there is that strategy's alone and overrides its --param flag, the matrix-wide default (e.g. redlock:extend=unchecked,redsync:extend=on; see 'lockbench list')")
	fl.StringVar(&f.drivers, "driver", "goredis,rueidis", "Redis drivers, comma-separated")
	fl.StringVar(&f.workloads, "workload", "flash-sale", "workloads, comma-separated, each NAME[:param=value,...] as --strategy (e.g. flash-sale:stock=100,hot-key)")
	fl.StringVar(&f.retries, "retry", "fixed", "retry policies, comma-separated, each NAME[:param=value,...] (e.g. fixed:interval=20ms,backoff)")
	if sweep {
		fl.StringVar(&f.clientList, "clients", "1,10,100,1000", "client counts to sweep, ascending: N,N,... and ranges A..B (x10 steps), A..BxF (x F), A..B+S (+ S), B always included (e.g. 1..10000 = 1,10,100,1000,10000)")
		_ = fl.SetAnnotation("clients", listAnnotation, []string{"true"})
		f.sweep = true
	} else {
		fl.IntVar(&f.clients, "clients", 50, "concurrent clients (closed-loop workers)")
		fl.StringVar(&f.segment, "segment", "", "run execution segment i of N (1-based, e.g. 2/4; env LOCKBENCH_SEGMENT): this process's share of every scenario's clients and rate, with the others started alike (--run-id, --addr; docs/distributed.md)")
		fl.IntVar(&f.segmentCount, "segment-count", 0, "run segment JOB_COMPLETION_INDEX+1 of N (Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX, 0-based)")
		fl.StringVar(&f.runID, "run-id", "", "the run's id, the key namespace lockbench:<run-id>: (required with --segment: the same in every segment; default random)")
		fl.DurationVar(&f.barrierTimeout, "barrier-timeout", time.Minute, "with segments: how long each barrier waits for every segment to arrive")
		fl.IntVar(&f.procs, "procs", 0, "run the scenarios as N execution segments in N child processes of this binary on this machine, and merge their results (0 = one process)")
	}
	fl.DurationVar(&f.duration, "duration", 30*time.Second, "measured time per scenario, after the warm-up (a scenario ends earlier when stock is sold out)")
	fl.DurationVar(&f.warmup, "warmup", 0, "warm-up time per scenario, excluded from ops/s and latency")
	fl.StringVar(&f.ttl, "ttl", "auto", "lock lease time (TTL); auto = 3 x --work, at least 100ms")
	fl.StringVar(&f.work, "work", "1ms", "critical-section time: a duration (80ms), uniform:10ms-40ms, or lognormal:median=5ms,p99=80ms")
	fl.DurationVar(&f.acquireTimeout, "acquire-timeout", 10*time.Second, "bound on one acquire, retries included (0 = none)")
	fl.IntVar(&f.poolSize, "pool-size", 0, "Redis driver: connections per node (go-redis PoolSize; rueidis BlockingPoolSize, for Pipeline and blocking calls only); 0 = --clients + 4")
	fl.DurationVar(&f.dialTimeout, "dial-timeout", 0, "Redis driver: bound on connecting; 0 = 5s")
	fl.DurationVar(&f.readTimeout, "read-timeout", 0, "Redis driver: bound on waiting for a reply (go-redis ReadTimeout and PoolTimeout; rueidis: a deadline on each call's context when not 5s, see docs/commands.md); 0 = 5s")
	fl.DurationVar(&f.writeTimeout, "write-timeout", 0, "Redis driver: bound on writing a command (go-redis WriteTimeout; rueidis ConnWriteTimeout, with --read-timeout if larger); 0 = 5s")
	connFlags(fl, f)
	fl.StringVarP(&f.file, "file", "f", "", "read flags from a YAML scenario file (field names = flag names; flags given on the command line win)")
	fl.StringVar(&f.out, "out", "", "result file (default results/<UTC timestamp>.json); an existing file is refused unless --force")
	fl.StringVar(&f.history, "history", "", "write this process's critical-section history (gzip'd JSON lines, e.g. results/a.history.jsonl.gz) for lockbench merge's cross-process check (docs/distributed.md); the result's scenarios name it in history_file")
	fl.BoolVar(&f.force, "force", false, "overwrite an existing --out file (and its .hgrm and .hlog files) and --history file")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed for key choice and retry jitter")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr (live bars when stdout and stderr are terminals, else one line per scenario)")
	fl.IntVar(&f.nodes, "nodes", 5, "redlock: independent masters to start (with --addr: the addresses given)")
	fl.StringVar(&f.guard, "guard", "auto", "write guard beyond the lock: auto (the strategy's where the workload runs it: fencing->fence, multilevel->cas; else none), none, cas (flash-sale, hot-key, long-task, nested), decr (flash-sale only)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address while running (e.g. :9091): "+strings.Join(export.Names, ", ")+"; labels strategy, driver, workload, retry, clients, scenario (docs/observability.md)")
	fl.DurationVar(&f.metricsLinger, "metrics-linger", 0, "with --metrics-addr: keep serving the metrics this long after the run, so that the final values are scraped (Ctrl-C ends it early); 0 = stop at exit")
	fl.StringVar(&f.format, "format", "table", "output on stdout: table, json, csv, benchstat or markdown (the JSON file is written either way)")
	fl.StringVar(&f.columns, "columns", "", columnsFlagDoc)
	fl.IntVar(&f.repeat, "repeat", 1, "run each scenario this many times on fresh keys (with --procs: this many rounds of processes); the row is derived from every run's raw data pooled, each run is kept whole as a sample, and the repeats' median, min, max and a 95% interval of ops/s and p99 are reported")
	fl.StringVar(&f.rateSpec, "rate", "0", "open loop: start operations at this rate (ops/s) whatever their latency, 0 = closed loop; or a shape: ramp:from=R1,to=R2,over=D, sine:mean=R,amp=A,period=P (0 <= A <= R), stages:[start=R0,]D1=R1,D2=R2,... (k6 stages; stages: in a scenario file); a shape shorter than the run holds its last rate")
	fl.StringVar(&f.arrivals, "arrivals", "constant", "open loop: arrival process, constant or poisson")
	fl.IntVar(&f.maxClients, "max-clients", 0, "open loop: clients available to serve arrivals (default --clients)")
	fl.DurationVar(&f.dropAfter, "drop-after", 100*time.Millisecond, "open loop: an arrival that finds no free client within this is dropped")
	fl.StringArrayVar(&f.faults, "fault", nil, "inject a fault, NAME[:param=value,...] (repeatable): "+strings.Join(faults.Names(), ", ")+"; parameters: 'lockbench list'")
	fl.StringVar(&f.topology, "topology", "", "server layout for strategies without their own: standalone, masters:N, replica, sentinel, cluster (default standalone; replica when a fault needs one)")
	fl.BoolVar(&f.allowNonempty, "allow-nonempty", false, "with --addr: run even when the database already holds keys (lockbench still touches only its own)")
	fl.BoolVar(&f.keepKeys, "keep-keys", false, "leave the run's keys in Redis for inspection instead of deleting them")
	fl.StringVar(&f.release, "release", "detached", "context a holder releases on: detached (the caller's cancellation cannot skip the release; correct) or caller (the caller's own context: a request cancelled inside its critical section leaves its lock until the TTL)")
	fl.DurationVar(&f.livenessInterval, "liveness-interval", 5*time.Millisecond, "liveness oracle: read the lock keys' tokens this often to find orphaned locks and time to free (0 = off)")
	fl.DurationVar(&f.errorStreak, "error-streak", 5*time.Second, "stop a scenario, keeping what it measured (stop_reason aborted), after this long of nothing but failed operations (0 = never: outage experiments)")
	fl.StringVar(&f.token, "token", "random", "lock value: random (128 random bits per lease) or constant (\"1\" for every client: the owner check then protects nothing; naive, atomic, watchdog, redlock)")
	fl.DurationVar(&f.loadSample, "load-sample", 0, "sample the servers' command rate at this interval (e.g. 10ms) and report its mean, peak and variation (server_load); 0 = off")
	fl.DurationVar(&f.interval, "interval", time.Second, "length of each timeline entry (ops, errors, violations, and p50/p99/max of the operation and the acquire; one interval histogram each in the .hlog files), at least 100ms")
	fl.StringArrayVar(&f.failOn, "fail-on", nil, "thresholds a CI can gate on, [SCOPE:]METRIC OP VALUE[,...] (repeatable): exit 3 when one fails, e.g. safety, 'p99_ms<50,ops_per_sec>1000', 'atomic/*:overlap==0' (metrics above)")
	fl.StringVar(&f.backend, "backend", "local", "where the servers lockbench starts run: local (redis-server processes) or docker (containers through a Docker engine, via testcontainers-go; "+dockertopo.Supported+" layouts)")
	fl.StringVar(&f.testSlowdown, "test-slowdown", "", "tests of regression gates only: STRATEGY=D adds D to every critical section of STRATEGY's scenarios; STRATEGY=P% makes each client wait P/(100-P) of every operation's time after it (ops/s down P% without contention); unrecorded (docs/development.md)")
	_ = fl.MarkHidden("test-slowdown")
	f.plugin, f.pluginSet = pluginFlags(fl)
}

// maxClients bounds --clients (and --max-clients): a client costs a few
// KB (its goroutine, its counters and a buffer of values for histograms
// it shares with other clients: metrics.Set).
const maxClients = 100_000

// connFlags declares the flags that say how to reach the user's servers,
// shared by run and clean: --addr, the login, TLS, Cluster, Sentinel
// (parseConn reads them).
func connFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.addr, "addr", "", "use these Redis servers instead of starting redis-server: host:port[,...] or redis://[user:password@]host:port[/db] (rediss:// for TLS)")
	fl.StringVar(&f.password, "password", "", "password for --addr servers (visible in ps: prefer --password-file or $LOCKBENCH_PASSWORD)")
	fl.StringVar(&f.passwordFile, "password-file", "", "read the password for --addr servers from the first line of this file")
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
	fl.StringVar(&f.sentinelPasswordFile, "sentinel-password-file", "", "with --sentinel-master: read the Sentinels' own password from the first line of this file")
}

// listAnnotation marks a flag that takes a comma list although its type is
// a plain string (sweep's --clients): a scenario file may give it as a
// YAML list.
const listAnnotation = "lockbench-list"

// isListFlag reports whether fl takes a comma list (listFlags, or marked
// with listAnnotation).
func isListFlag(fl *pflag.Flag) bool {
	return listFlags[fl.Name] || len(fl.Annotations[listAnnotation]) > 0
}

// listFlags take comma-separated lists on the command line; in a scenario
// file they may also be YAML lists. Repeatable flags (--fault) take a YAML
// list as one value per item.
var listFlags = map[string]bool{"strategy": true, "driver": true, "workload": true, "retry": true, "addr": true}
