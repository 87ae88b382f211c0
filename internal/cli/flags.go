package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
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

func newRunCmd() *cobra.Command {
	cmd, _ := newRunCmdFlags()
	return cmd
}

// newRunCmdFlags is newRunCmd with the runFlags its flags parse into (for
// tests: the flag set's defaults).
func newRunCmdFlags() (*cobra.Command, *runFlags) {
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
section, release) in ms; violations count over the whole run.

--fail-on EXPR[,EXPR...] (repeatable; thresholds: in a scenario file) tests
every scenario after the run: EXPR is [SCOPE:]METRIC OP VALUE, OP one of
< <= > >= == !=, SCOPE a glob over strategy/driver/workload/retry (fewer
parts match as a prefix: atomic/* is atomic on any driver, workload and
retry), safety = every violation kind == 0. The result file records each
threshold x scenario (thresholds); the table format prints them after the
results. METRIC is one of:
` + wrap(strings.Join(report.MetricNames(), ", ")+".", 78) + `

Exit codes: ` + exitCodesDoc,
		Example: `  # the default matrix: naive and atomic on both drivers, flash-sale
  lockbench run

  # a lease shorter than the critical section: naive and atomic overlap
  lockbench run --strategy naive,atomic --ttl 5ms --work 20ms --retry fixed:interval=1ms

  # backoff against fixed polling, 200 clients, 10 hot items
  lockbench run --strategy atomic --retry fixed,backoff --clients 200 --skus 10

  # a parameter for one strategy alone: redlock's unchecked extend beside redsync's own
  lockbench run --strategy redlock:extend=unchecked,redsync:extend=on

  # your own server (keys are written under lockbench:<run-id>: and deleted after)
  lockbench run --addr 127.0.0.1:6379 --password secret

  # TLS with an ACL user, against a Cluster
  lockbench run --addr rediss://bench:secret@10.0.0.5:6380 --tls-ca-file ca.pem --cluster

  # the fields of a scenario file, with --duration overriding the file's
  lockbench run -f scenarios/flash-sale-short-ttl.yaml --duration 5s

  # CI gate: exit 3 if any violation, or atomic's p99 is 50 ms or more
  lockbench run --fail-on safety --fail-on 'atomic/*:p99_ms<50'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.cli = changedFlags(cmd.Flags())
			if f.file != "" {
				if err := applyFile(cmd.Flags(), scratchRunFlags(), f.file); err != nil {
					return err
				}
			}
			f.changed = changedFlags(cmd.Flags())
			return runMatrix(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	registerRunFlags(cmd.Flags(), f, false)
	registerNameCompletions(cmd)
	return cmd, f
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

// scratchRunFlags is a fresh set of the run flags, for checking values
// that are then thrown away.
func scratchRunFlags() *pflag.FlagSet {
	cmd, _ := newRunCmdFlags()
	return cmd.Flags()
}

// wrap breaks s at spaces into lines of at most width characters.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// maxClients bounds --clients (and --max-clients): a client costs a few
// KB (its goroutine, its counters and a buffer of values for histograms
// it shares with other clients: metrics.Set).
const maxClients = 100_000
