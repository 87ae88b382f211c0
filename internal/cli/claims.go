package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/claims"
	"github.com/lockbench/lockbench/internal/report"
)

type claimsFlags struct {
	only   string
	quick  bool
	driver string
	outDir string
	quiet  bool
}

func newClaimsCmd() *cobra.Command {
	f := &claimsFlags{}
	cmd := &cobra.Command{
		Use:   "claims",
		Short: "Reproduce the articles' claims about Redis locks and give each a verdict",
		Long: `claims runs one experiment per row of the claims table (docs/claims.md: safety claims S1-S12,
performance claims P1-P8 from the seed articles) on real redis-server
processes, scaled to this machine, and computes a verdict from the measured
figures: reproduced, not reproduced, inconclusive, or hardware-bound (the
article's absolute figure is its machines'; what can be checked here, such
as a failure rate or a cost ratio, is judged and the absolute figure shown
beside it).
Rows whose strategies are not built in print "needs baseline" and are not
counted.

Safety rows are judged on the violation counts of one run. Each performance
row's runs are made 6 times (3 with --quick) and the row is judged on an
interval of the median of the figure its rule uses (a ratio is taken per
repeat): reproduced when the whole interval meets the rule, not reproduced
when none of it does, inconclusive otherwise. With 6 runs the interval is
an order-statistic interval of at least 95 % (96.9 % for 6, as benchstat's);
with 3 it is [min, max], a 75 % interval, and the table says so.

It prints a table and writes results/claims-<UTC>.json and .md, plus the
result file of every run behind them in results/claims-<UTC>/.

Time to a verdict, every row, on a 2-core machine with nothing else running
and MariaDB, ZooKeeper and etcd installed (` + claims.ExpectedNote + `):
--quick about ` + claims.ExpectedQuick + ` (at most 150 s), full about ` + claims.ExpectedFull + `
(at most 600 s). Without the baselines P5 and P6 are skipped and it is
shorter; on a loaded machine the servers start slower (quick runs took
147-165 s beside two busy loops). While it runs, stderr shows the time
elapsed, which claim of how many and which run of how many (-q: none).`,
		Example: `  # every claim at reduced size, performance rows 3 times each
  lockbench claims --quick

  # two rows, full size
  lockbench claims --only S2,P1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("only") && strings.Trim(f.only, " ,") == "" {
				return usageError{errors.New("--only is empty (give claim ids such as S2,P1, or leave the flag out for all)")}
			}
			return runClaims(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.only, "only", "", "claim ids to run, comma-separated (e.g. S2,P1); default all")
	fl.BoolVar(&f.quick, "quick", false, "run every experiment at reduced size (shorter runs)")
	fl.StringVar(&f.driver, "driver", "rueidis", "Redis driver for every run")
	fl.StringVar(&f.outDir, "out-dir", "results", "directory for the claims report and the runs' result files")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on stderr")
	return cmd
}

func runClaims(parent context.Context, f *claimsFlags, stdout, stderr io.Writer) error {
	cs, err := checkClaims(f)
	if err != nil {
		return err
	}
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	// The first Ctrl-C stops after the current run (which also sees it and
	// writes its partial results); a second one exits through the run's
	// own handler, killing the servers.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; ok {
			cancel()
		}
	}()

	started := time.Now().UTC()
	stamp := started.Format("20060102T150405Z")
	runDir := filepath.Join(f.outDir, "claims-"+stamp)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	mode := "full"
	if f.quick {
		mode = "quick"
	}
	rep := &claims.Report{Schema: 2, Meta: claims.Meta{
		StartedAt: started.Format(time.RFC3339), Mode: mode, Driver: f.driver, GitCommit: commit(),
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), CPUModel: cpuModel(), ResultFiles: map[string]string{},
	}}
	opts := claims.Options{Quick: f.quick, Extra: []string{"--driver", f.driver, "--seed", "1"}}
	if !f.quiet {
		opts.Progress = func(msg string) {
			fmt.Fprintf(stderr, "[%5.1fs elapsed] %s\n", time.Since(started).Seconds(), msg)
		}
	}
	rep.Rows = claims.Execute(ctx, cs, opts, claimsRunner(rep, runDir))
	rep.Interrupted = ctx.Err() != nil
	rep.Meta.DurationS = time.Since(started).Seconds()
	return writeClaims(stdout, rep, filepath.Join(f.outDir, "claims-"+stamp), runDir, mode)
}

// checkClaims checks claims' flags: the claims selected by --only.
func checkClaims(f *claimsFlags) ([]claims.Claim, error) {
	var only []string
	if f.only != "" {
		only = splitList(f.only)
		if len(only) == 0 {
			return nil, usageError{errors.New("--only is empty")}
		}
	}
	cs, err := claims.Select(only)
	if err != nil {
		return nil, usageError{err}
	}
	if !contains(drivers.Names(), f.driver) {
		return nil, usageError{fmt.Errorf("unknown driver %q%s (valid: %s)", f.driver, suggest(f.driver, drivers.Names()), strings.Join(drivers.Names(), ", "))}
	}
	if err := checkDir(f.outDir); err != nil {
		return nil, usageError{fmt.Errorf("--out-dir %s: %v", f.outDir, err)}
	}
	return cs, nil
}

// claimsRunner runs one run of a claim's experiment in this process
// (lockbench run, or sweep), its result file in runDir, named in rep.
func claimsRunner(rep *claims.Report, runDir string) func(ctx context.Context, r claims.Run, args []string) (*report.Run, error) {
	return func(ctx context.Context, r claims.Run, args []string) (*report.Run, error) {
		name := r.Name
		if r.Repeat > 0 {
			name = fmt.Sprintf("%s-r%d", r.Name, r.Repeat)
		}
		out := filepath.Join(runDir, name+".json")
		var errBuf bytes.Buffer
		cmd := newRunCmd()
		if r.Sweep {
			cmd = newSweepCmd() // every client count on one set of servers
		}
		cmd.SetArgs(append(args, "--quiet", "--format", "json", "--out", out))
		cmd.SetOut(io.Discard)
		cmd.SetErr(&errBuf)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.ExecuteContext(ctx)
		res, rerr := report.ReadFile(out)
		if err != nil {
			if msg := strings.TrimSpace(errBuf.String()); msg != "" {
				err = fmt.Errorf("%w (%s)", err, lastLine(msg))
			}
			return res, err
		}
		if rerr != nil {
			return nil, rerr
		}
		rep.Meta.ResultFiles[name] = out
		if rep.Meta.RedisVersion == "" {
			rep.Meta.RedisVersion = res.Meta.RedisVersion
		}
		return res, nil
	}
}

// writeClaims prints the claims' table and counts and writes the report
// (base.json, base.md): the run's error when interrupted or an
// experiment failed.
func writeClaims(stdout io.Writer, rep *claims.Report, base, runDir, mode string) error {
	if err := claims.WriteTable(stdout, rep.Rows); err != nil {
		return err
	}
	if err := claims.WriteJSON(base+".json", rep); err != nil {
		return err
	}
	if err := report.WriteAtomic(base+".md", func(w io.Writer) error { return claims.WriteMarkdown(w, rep) }); err != nil {
		return err
	}
	counts := rep.Counts()
	fmt.Fprintf(stdout, "%d reproduced, %d not reproduced, %d inconclusive, %d hardware-bound, %d need a baseline, %d failed (%s mode, %.0f s)\n",
		counts[claims.Reproduced], counts[claims.NotReproduced], counts[claims.Inconclusive], counts[claims.HardwareBound],
		counts[claims.NeedsBaseline], counts[claims.Failed], mode, rep.Meta.DurationS)
	fmt.Fprintf(stdout, "report written to %s.json and %s.md (runs in %s/)\n", base, base, runDir)
	if rep.Interrupted {
		return errInterrupted
	}
	if counts[claims.Failed] > 0 {
		return fmt.Errorf("%d claim experiment(s) failed; see the measured column", counts[claims.Failed])
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "lockbench: ")
}

// cpuModel is the first "model name" of /proc/cpuinfo ("" if unknown).
func cpuModel() string {
	fh, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
