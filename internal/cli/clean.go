package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/strategies"
)

func newCleanCmd() *cobra.Command {
	f := &runFlags{}
	var runID, driver string
	var all, yes bool
	cmd := &cobra.Command{
		Use:   "clean --addr ADDR (--run-id ID | --all-lockbench-runs --yes)",
		Short: "Delete the keys a run left on your Redis servers (lockbench:<run-id>:*)",
		Long: `clean deletes, on the --addr servers, exactly the keys under
lockbench:<run-id>: (SCAN MATCH, then DEL; on every master of a Cluster) and
says how many it deleted. A run leaves its keys when it is killed (SIGKILL),
its server stalls or its clean-up fails, or with --keep-keys; it prints this
command then, and its result file (the placeholder too) carries the run id in
meta.run_id. Those keys expire by themselves anyway (the safety TTL, see
docs/external-redis.md). --all-lockbench-runs --yes deletes every key under
lockbench: instead, of every run, also of runs still going.

The connection flags are run's: --password (or $LOCKBENCH_PASSWORD),
--username, redis:// and rediss:// URLs, --tls-*, --cluster, --sentinel-master.`,
		Example: `  lockbench clean --addr 127.0.0.1:6379 --password secret --run-id 3f9c0a12
  lockbench clean --addr rediss://10.0.0.5:6380 --tls-ca-file ca.pem --cluster --all-lockbench-runs --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clean(cmd.Context(), f, driver, runID, all, yes, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	connFlags(fl, f)
	fl.StringVar(&runID, "run-id", "", "the run whose keys to delete (meta.run_id of its result file; the run prints it when it leaves keys)")
	fl.BoolVar(&all, "all-lockbench-runs", false, "delete the keys of every run (every key under lockbench:); needs --yes")
	fl.BoolVar(&yes, "yes", false, "confirm --all-lockbench-runs")
	fl.StringVar(&driver, "driver", "goredis", "Redis driver to connect with (goredis or rueidis)")
	return cmd
}

func clean(ctx context.Context, f *runFlags, driver, runID string, all, yes bool, stdout io.Writer) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	prefix := "lockbench:" + runID + ":"
	if f.addr == "" {
		bad("--addr is required: clean deletes keys on your servers (the servers lockbench starts go with their run)")
	}
	switch {
	case all && runID != "":
		bad("--run-id and --all-lockbench-runs exclude each other")
	case all && !yes:
		bad("--all-lockbench-runs deletes every key under lockbench: (of every run, also of runs still going); add --yes to confirm")
	case all:
		prefix = "lockbench:"
	case runID == "":
		bad("give --run-id ID (meta.run_id of the run's result file) or --all-lockbench-runs --yes")
	case !runIDPattern.MatchString(runID):
		bad("--run-id %q is not a run id (letters, digits, - and _, like 3f9c0a12)", runID)
	}
	if yes && !all {
		bad("--yes goes with --all-lockbench-runs")
	}
	if driver != "goredis" && driver != "rueidis" {
		bad("--driver %q is not goredis or rueidis", driver)
	}
	addrs, conn, connErrs := parseConn(f)
	errs = append(errs, connErrs...)
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	p := &plan{addrs: addrs, conn: conn}
	total := 0
	nodes := p.external(strategies.Masters)
	for _, n := range nodes {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		ds, err := engine.Open(cctx, driver, []engine.Node{n}, 1)
		if err != nil {
			cancel()
			return fmt.Errorf("%s: %w", n.Addr, tlsHint(err, n))
		}
		k, err := redisadmin.DeleteKeys(cctx, ds[0], prefix)
		ds[0].Close()
		cancel()
		total += k
		if err != nil {
			return fmt.Errorf("%s: deleted %d keys under %s, then: %w", n.Addr, k, prefix, err)
		}
		fmt.Fprintf(stdout, "deleted %d keys under %s on %s\n", k, prefix, n.Addr)
	}
	if len(nodes) > 1 {
		fmt.Fprintf(stdout, "deleted %d keys in all\n", total)
	}
	return nil
}
