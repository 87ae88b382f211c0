package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/strategies"
)

func newCleanCmd() *cobra.Command {
	f := &runFlags{}
	var runID, driver string
	var all, yes, stale bool
	var dirs []string
	cmd := &cobra.Command{
		Use:   "clean (--addr ADDR (--run-id ID | --all-lockbench-runs --yes) | --stale)",
		Short: "Delete the keys a run left on your Redis servers (lockbench:<run-id>:*)",
		Long: `clean deletes, on the --addr servers, exactly the keys under
lockbench:<run-id>: (SCAN MATCH, then DEL; on every master of a Cluster) and
says how many it deleted. A run leaves its keys when it is killed (SIGKILL),
its server stalls or its clean-up fails, or with --keep-keys; it prints this
command then, and its result file (the placeholder too) carries the run id in
meta.run_id. Those keys expire by themselves anyway (the safety TTL, see
docs/external-redis.md). --all-lockbench-runs --yes deletes every key under
lockbench: instead, of every run, also of runs still going.

--stale instead reads the run records that runs on --addr servers write
before their first write (in $LOCKBENCH_STATE_DIR, else
$XDG_STATE_HOME/lockbench, else ~/.local/state/lockbench; --dir adds a
results directory), and for each run whose process is gone (SIGKILL)
deletes its keys on the servers it recorded, then the record; in the --dir
directories and beside those runs' result files it removes the staging
directories and files that killed lockbench processes left.

The connection flags are run's: --password (or $LOCKBENCH_PASSWORD),
--username, redis:// and rediss:// URLs, --tls-*, --cluster, --sentinel-master.`,
		Example: `  lockbench clean --addr 127.0.0.1:6379 --password secret --run-id 3f9c0a12
  lockbench clean --addr rediss://10.0.0.5:6380 --tls-ca-file ca.pem --cluster --all-lockbench-runs --yes
  lockbench clean --stale --password-file pw.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stale || len(dirs) > 0 {
				return cleanStale(cmd.Context(), f, driver, runID, all, stale, dirs, cmd.OutOrStdout())
			}
			return clean(cmd.Context(), f, driver, runID, all, yes, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	connFlags(fl, f)
	fl.StringVar(&runID, "run-id", "", "the run whose keys to delete (meta.run_id of its result file; the run prints it when it leaves keys)")
	fl.BoolVar(&all, "all-lockbench-runs", false, "delete the keys of every run (every key under lockbench:); needs --yes")
	fl.BoolVar(&yes, "yes", false, "confirm --all-lockbench-runs")
	fl.StringVar(&driver, "driver", "goredis", "Redis driver to connect with (goredis or rueidis)")
	fl.BoolVar(&stale, "stale", false, "delete the keys of the recorded runs whose process is gone (killed), on the servers they recorded")
	fl.StringArrayVar(&dirs, "dir", nil, "with --stale: also read the run records in this results directory (repeatable)")
	return cmd
}

func clean(ctx context.Context, f *runFlags, driver, runID string, all, yes bool, stdout io.Writer) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	prefix := "lockbench:" + runID + ":"
	if f.addr == "" {
		bad("--addr is required (or --stale): clean deletes keys on your servers (the servers lockbench starts go with their run)")
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
	if !contains(cleanDrivers, driver) {
		bad("--driver %q is not goredis or rueidis", driver)
	}
	addrs, conn, connErrs := parseConn(f)
	errs = append(errs, connErrs...)
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	_, err := deleteUnder(ctx, &plan{addrs: addrs, conn: conn}, driver, prefix, stdout)
	return err
}

// deleteUnder deletes the keys under prefix on every master of p's
// servers, saying how many per server on stdout, and returns how many in
// all. Errors: a server that cannot be reached or fails, named.
func deleteUnder(ctx context.Context, p *plan, driver, prefix string, stdout io.Writer) (int, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	total := 0
	nodes := p.external(strategies.Masters)
	for _, n := range nodes {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		ds, err := engine.Open(cctx, driver, []engine.Node{n}, 1)
		if err != nil {
			cancel()
			return total, fmt.Errorf("%s: %w", n.Addr, tlsHint(err, n))
		}
		k, err := redisadmin.DeleteKeys(cctx, ds[0], prefix)
		ds[0].Close()
		cancel()
		total += k
		if err != nil {
			return total, fmt.Errorf("%s: deleted %d keys under %s, then: %w", n.Addr, k, prefix, err)
		}
		fmt.Fprintf(stdout, "deleted %d keys under %s on %s\n", k, prefix, n.Addr)
	}
	if len(nodes) > 1 {
		fmt.Fprintf(stdout, "deleted %d keys in all\n", total)
	}
	return total, nil
}

// cleanStale is clean --stale: it reads the run records (runRecord) in
// the state directory and the --dir directories, and for every run whose
// process is gone on this host (its pid not running, or running a later
// process) and no other process of the run is alive, deletes the keys
// under lockbench:<run-id>: on the servers it recorded, with f's login,
// then removes the record, saying what it removed, or that nothing was
// stale. A record whose servers cannot be cleaned is kept, and the run
// fails (exit 1) naming them. It then removes what killed writers of
// result sets left (sweepStale) in the --dir directories and beside the
// result files of the runs it removed.
func cleanStale(ctx context.Context, f *runFlags, driver, runID string, all, stale bool, dirs []string, stdout io.Writer) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case !stale:
		bad("--dir goes with --stale")
	case f.addr != "":
		bad("--stale takes the servers from the run records: give no --addr")
	case runID != "" || all:
		bad("--stale excludes --run-id and --all-lockbench-runs")
	}
	if driver != "goredis" && driver != "rueidis" {
		bad("--driver %q is not goredis or rueidis", driver)
	}
	_, _, connErrs := parseConn(f) // the login flags
	errs = append(errs, connErrs...)
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	state, err := runsDir()
	if err != nil {
		return fmt.Errorf("the state directory: %w", err)
	}
	recs := readRecords(append([]string{state}, dirs...))
	host, _ := os.Hostname()
	liveRun := map[string]bool{}
	for _, rec := range recs {
		if rec.alive(host) {
			liveRun[rec.RunID] = true
		}
	}
	removed, live := 0, 0
	var failed []error
	var outDirs []string
	for _, rec := range recs {
		switch {
		case rec.Host != host:
			fmt.Fprintf(stdout, "run %s was recorded on host %s: skipped (run lockbench clean --stale there, or clean --run-id %s)\n", rec.RunID, rec.Host, rec.RunID)
			continue
		case rec.alive(host):
			live++
			continue
		case liveRun[rec.RunID]:
			fmt.Fprintf(stdout, "run %s: process %d is gone, but another process of the run is still running: skipped\n", rec.RunID, rec.PID)
			continue
		}
		fmt.Fprintf(stdout, "stale run %s (pid %d, started %s, result file %s):\n", rec.RunID, rec.PID, rec.StartedAt, rec.Out)
		var recErrs []error
		for _, s := range rec.Servers {
			addrs, conn, cerrs := parseConn(s.connFlagsOf(f))
			if len(cerrs) > 0 {
				recErrs = append(recErrs, cerrs...)
				continue
			}
			if _, err := deleteUnder(ctx, &plan{addrs: addrs, conn: conn}, driver, rec.KeyPrefix, stdout); err != nil {
				recErrs = append(recErrs, err)
			}
		}
		if len(recErrs) > 0 {
			err := fmt.Errorf("run %s: %w (its record %s is kept)", rec.RunID, errors.Join(recErrs...), rec.path)
			fmt.Fprintf(stdout, "%v\n", err)
			failed = append(failed, err)
			continue
		}
		rec.remove()
		removed++
		if d := filepath.Dir(rec.Out); rec.Out != "" && !slices.Contains(outDirs, d) {
			outDirs = append(outDirs, d)
		}
		fmt.Fprintf(stdout, "removed run %s's record %s\n", rec.RunID, rec.path)
	}
	// The staging directories and reservations of killed writers, in the
	// --dir directories and beside the results of the runs removed.
	swept := 0
	for _, d := range append(dirs, outDirs...) {
		for _, name := range sweepStale(d) {
			fmt.Fprintf(stdout, "removed %s, left by a lockbench process that is gone\n", filepath.Join(d, name))
			swept++
		}
	}
	switch {
	case removed == 0 && len(failed) == 0 && swept == 0:
		fmt.Fprintf(stdout, "nothing stale: %d recorded run processes, %d of them still running (records in %s)\n", len(recs), live, state)
	case removed > 0:
		fmt.Fprintf(stdout, "removed %d stale runs\n", removed)
	}
	return errors.Join(failed...)
}
