package cli

// lockbench run.

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/report"
)

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
			var multi *multiFile
			if f.file != "" {
				var err error
				if multi, err = applyRunFile(cmd.Flags(), f.file, freshRunFlags); err != nil {
					return err
				}
			}
			f.changed = changedFlags(cmd.Flags())
			if multi != nil {
				p, err := multiPlan(f, cmd.Flags(), multi)
				if err != nil {
					return err
				}
				return runPlan(cmd.Context(), f, p, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return runMatrix(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	registerRunFlags(cmd.Flags(), f, false)
	registerNameCompletions(cmd)
	registerSharedCompletions(cmd)
	return cmd, f
}

// freshRunFlags is a new set of the run flags and the runFlags it
// parses into.
func freshRunFlags() (*pflag.FlagSet, *runFlags) {
	cmd, f := newRunCmdFlags()
	return cmd.Flags(), f
}

// scratchRunFlags is a fresh set of the run flags, for checking values
// that are then thrown away.
func scratchRunFlags() *pflag.FlagSet {
	cmd, _ := newRunCmdFlags()
	return cmd.Flags()
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
		f.clients = 50
		fl.Var(clientsValue{f}, "clients", "concurrent clients (closed-loop workers); or a client ramp inside the run, "+clientRampForms+" (the clients over time, k6 ramping-vus; closed loop only; the timeline shows each interval's clients)")
		fl.StringVar(&f.segment, "segment", "", "run execution segment i of N (1-based, e.g. 2/4; env LOCKBENCH_SEGMENT): this process's share of every scenario's clients and rate, with the others started alike (--run-id, --addr; docs/distributed.md)")
		fl.IntVar(&f.segmentCount, "segment-count", 0, "run segment JOB_COMPLETION_INDEX+1 of N (Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX, 0-based)")
		fl.StringVar(&f.runID, "run-id", "", "the run's id, the key namespace lockbench:<run-id>: (required with --segment: the same in every segment; default random)")
		fl.DurationVar(&f.barrierTimeout, "barrier-timeout", time.Minute, "with segments: how long each barrier waits for every segment to arrive")
		fl.IntVar(&f.procs, "procs", 0, "run the scenarios as N execution segments in N child processes of this binary on this machine, and merge their results (0 = one process)")
	}
	registerShared(fl, f)
	connFlags(fl, f)
	fl.StringVarP(&f.file, "file", "f", "", "read flags from a YAML scenario file (field names = flag names; flags given on the command line win; scenarios: a list of scenarios, run at once with concurrent: true)")
	fl.StringVar(&f.out, "out", "", "result file (default results/<UTC timestamp>.json); an existing file is refused unless --force")
	fl.StringVar(&f.history, "history", "", "write this process's critical-section history (gzip'd JSON lines, e.g. results/a.history.jsonl.gz) for lockbench merge's cross-process check (docs/distributed.md); the result's scenarios name it in history_file")
	fl.BoolVar(&f.force, "force", false, "overwrite an existing --out file (and its .hgrm and .hlog files) and --history file")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed for key choice and retry jitter")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress on stderr (live bars when stdout and stderr are terminals, else one line per scenario)")
	fl.IntVar(&f.nodes, "nodes", 5, "redlock: independent masters to start (with --addr: the addresses given)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address while running (e.g. :9091): "+strings.Join(export.Names, ", ")+"; labels strategy, driver, workload, retry, clients, scenario (docs/observability.md)")
	fl.DurationVar(&f.metricsLinger, "metrics-linger", 0, "with --metrics-addr: keep serving the metrics this long after the run, so that the final values are scraped (Ctrl-C ends it early); 0 = stop at exit")
	fl.StringVar(&f.format, "format", "table", "output on stdout: table, json, csv, benchstat or markdown (the JSON file is written either way)")
	fl.StringVar(&f.columns, "columns", "", columnsFlagDoc)
	fl.IntVar(&f.repeat, "repeat", 1, "run each scenario this many times on fresh keys (with --procs: this many rounds of processes); the row is derived from every run's raw data pooled, each run is kept whole as a sample, and the repeats' median, min, max and an interval of the median of ops/s and p99 from order statistics are reported (distribution-free, as benchstat's: 95% with 6 runs or more; with fewer, [min, max] with its real confidence)")
	fl.StringVar(&f.rateSpec, "rate", "0", "open loop: start operations at this rate (ops/s) whatever their latency, 0 = closed loop; or a shape: ramp:from=R1,to=R2,over=D, sine:mean=R,amp=A,period=P (0 <= A <= R), stages:[start=R0,]D1=R1,D2=R2,... (k6 stages; stages: in a scenario file); a shape shorter than the run holds its last rate")
	fl.StringArrayVar(&f.faults, "fault", nil, "inject a fault, NAME[:param=value,...] (repeatable): "+strings.Join(faults.Names(), ", ")+"; parameters: 'lockbench list'")
	fl.StringVar(&f.topology, "topology", "", "server layout for strategies without their own: standalone, masters:N, replica, sentinel, cluster (default standalone; replica when a fault needs one)")
	fl.StringVar(&f.resourceAddr, "resource-addr", "", "with --addr and --resource separate: the Redis server that holds the workload's data, host:port or redis://[user:password@]host:port[/db] (the --addr login and TLS settings, unless the URL gives a login); a standalone server whose database is empty (or --allow-nonempty)")
	fl.BoolVar(&f.allowNonempty, "allow-nonempty", false, "with --addr: run even when the database already holds keys (lockbench still touches only its own)")
	fl.StringArrayVar(&f.failOn, "fail-on", nil, "thresholds a CI can gate on, [SCOPE:]METRIC OP VALUE[,...] (repeatable): exit 3 when one fails, e.g. safety, 'p99_ms<50,ops_per_sec>1000', 'atomic/*:overlap==0' (metrics above)")
	fl.StringVar(&f.backend, "backend", "local", "where the servers lockbench starts run: local (redis-server processes) or docker (containers through a Docker engine, via testcontainers-go; "+dockertopo.Supported+" layouts)")
	fl.StringVar(&f.testSlowdown, "test-slowdown", "", "tests of regression gates only: STRATEGY=D adds D to every critical section of STRATEGY's scenarios; STRATEGY=P% makes each client wait P/(100-P) of every operation's time after it (ops/s down P% without contention); unrecorded (docs/development.md)")
	_ = fl.MarkHidden("test-slowdown")
	f.plugin, f.pluginSet = pluginFlags(fl)
}
