package cli

// lockbench run.

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// scratchRunFlags is a fresh set of the run flags, for checking values
// that are then thrown away.
func scratchRunFlags() *pflag.FlagSet {
	cmd, _ := newRunCmdFlags()
	return cmd.Flags()
}
