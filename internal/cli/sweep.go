package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newSweepCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "sweep --clients LIST [run flags]",
		Short: "Run one matrix at a list of client counts: one result file, a table by clients",
		Long: `sweep is run with --clients a list of counts: every cell of the matrix
(--strategy x --driver x --workload x --retry) runs once at each count, the
counts innermost, so one result file holds, per cell, its scenarios from the
fewest clients to the most (meta.sweep lists the counts). It prints a table
of ops/s, the lock-bound ceiling, efficiency, Jain's index, the acquire wait's
p99, the operation's p99 and Redis commands per operation against clients,
and a line per cell with its peak and what is left of it at the largest
count. 'lockbench report' on the file draws the same figures on a log
clients axis (sweep.png, sweep.svg).

--clients takes N[,N...] and ranges: A..B steps x10 from A, A..BxF steps
x F (F >= 2), A..B+S steps + S (S >= 1); B is always the last count of its
range (1..500 is 1,10,100,500). The whole list must ascend strictly, from 1
to 100000, with 2 to 100 counts; anything else is exit 2. Every other flag is
run's (lockbench run --help), including -f scenario files (clients: may be a
YAML list there); --max-clients is refused (the counts are the clients).

Exit codes: ` + exitCodesDoc,
		Example: `  # where does one hot key collapse? spin retries, 1 ms critical sections
  lockbench sweep --strategy atomic --retry spin --workload lock-cycle --keys 1 \
    --work 1ms --ttl 1s --clients 1,10,100,1000 --duration 5s --driver rueidis
  lockbench report results/<file>.json      # sweep.png: the figures against clients

  # two retry policies, decades from 1 to 10000 clients
  lockbench sweep --strategy atomic --retry spin,backoff --clients 1..10000 --driver rueidis`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.cli = changedFlags(cmd.Flags())
			if f.file != "" {
				if err := applyFile(cmd.Flags(), scratchSweepFlags(), f.file); err != nil {
					return err
				}
			}
			f.changed = changedFlags(cmd.Flags())
			return runMatrix(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	registerRunFlags(cmd.Flags(), f, true)
	registerNameCompletions(cmd)
	registerSharedCompletions(cmd)
	return cmd
}

// scratchSweepFlags is a fresh set of sweep's flags, for checking values
// that are then thrown away.
func scratchSweepFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	registerRunFlags(fs, &runFlags{}, true)
	return fs
}
