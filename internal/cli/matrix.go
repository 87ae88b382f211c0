package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

func runMatrix(parent context.Context, f *runFlags, stdout, stderr io.Writer) error {
	p, err := validate(f)
	if err != nil {
		return err
	}
	sp, err := parseSegment(f, p)
	if err != nil {
		return err
	}
	if checkOnly(parent) {
		return nil // CheckArgs: the line is valid; nothing is started
	}
	if f.procs > 0 {
		return runProcs(parent, f, p, stdout, stderr)
	}
	warnPassword(stderr, commandLinePassword(f.cli, f))
	// The metrics endpoint first: an address in use is bad input (exit
	// 2), found before anything is written or started.
	var prom *export.Prom
	if f.metricsAddr != "" {
		prom = export.New()
		if err := prom.Serve(f.metricsAddr); err != nil {
			return usageError{fmt.Errorf("--metrics-addr %s: %w (give a free port, or :0 for any)", f.metricsAddr, err)}
		}
		defer prom.Close()
	}
	// After the rest of the clean-up (deferred later, run earlier): the
	// endpoint stays up --metrics-linger longer, once the run got to its
	// scenarios and was not stopped by a signal.
	var ran, signalled atomic.Bool
	if prom != nil && f.metricsLinger > 0 {
		defer func() {
			if ran.Load() && !signalled.Load() {
				linger(parent, prom, f.metricsLinger, f.quiet, stderr)
			}
		}()
	}
	runID := randomID()
	if f.runID != "" {
		runID = f.runID
	}
	if sp != nil {
		p.segRunID = runID
	}
	hist, err := historyWriter(f.history, p.out, runID, f.force, sp)
	if err != nil {
		return err
	}
	// Stale temporary and reservation files of killed runs, in the output
	// directory only.
	for _, name := range sweepStale(filepath.Dir(p.out)) {
		fmt.Fprintf(stderr, "lockbench: removed %s, left by a lockbench run that is gone\n", filepath.Join(filepath.Dir(p.out), name))
	}
	var files *outFiles
	if p.defaultOut {
		// Two runs started in the same second must not write one file.
		out, placeholder, err := reserveOut(filepath.Dir(p.out), time.Now().UTC(), runID)
		if err != nil {
			return fmt.Errorf("result file: %w", err)
		}
		p.out = out
		files = &outFiles{path: out, placeholder: placeholder}
	} else {
		// Two runs naming one --out: the second stops here.
		if files, err = reserveExplicit(p.out, f.force); err != nil {
			return err
		}
	}
	defer files.release()
	// Runs last: how many keys the run left on the user's servers, and the
	// command that removes them.
	touched := false // a scenario has written keys
	defer func() {
		if touched {
			reportLeftKeys(p, f, runID, stderr)
		}
	}()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	started := time.Now().UTC()
	run := &report.Run{Schema: report.Schema, Meta: report.Meta{
		StartedAt: started.Format(time.RFC3339), GitCommit: commit(), GoVersion: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GODEBUG: os.Getenv("GODEBUG"), Args: redactArgs(os.Args[1:]), RunID: runID,
		ParamDefaults: paramDefaults(), Sweep: p.sweep,
	}}
	provenance(&run.Meta)
	var versions redisVersions
	sp.segmentMeta(&run.Meta)
	// measured is a copy of run as of the last scenario finished, for a
	// second Ctrl-C to write while the run goroutine goes on.
	var measured atomic.Pointer[report.Run]
	var topos *topologies
	publish := func() {
		c := *run
		if topos != nil {
			c.Meta.Topology, c.Meta.Servers = topos.describe()
		}
		c.Scenarios = slices.Clone(run.Scenarios)
		c.Skipped = slices.Clone(run.Skipped)
		measured.Store(&c)
	}
	publish()

	// Live bars on stderr when both stdout and stderr are terminals (never
	// on stdout, never into a pipe or a file); else plain lines, or none
	// with -q. Warnings go through it: above the bars while they are drawn.
	prog := newProgress(stdout, stderr, f.quiet, len(p.scenarios))
	defer prog.close()

	// First signal (SIGINT, SIGTERM, SIGHUP): stop starting operations,
	// finish, write results, exit 130, 143 or 129. Second: write what the
	// finished scenarios measured, marked interrupted, kill the servers
	// lockbench started and exit at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		interruptCode.Store(int32(signalExit(sig)))
		signalled.Store(true)
		fmt.Fprintf(prog, "\nlockbench: %s; finishing the current operations and writing results (Ctrl-C again to quit now)\n", signalName(sig))
		cancel()
		if _, ok := <-sigs; ok {
			quitting.Store(true) // whatever the run returns now, the exit is the first signal's
			partial := measured.Load()
			partial.Interrupted = true // the scenario then running is not in it
			if err := files.write(partial); err == nil {
				fmt.Fprintf(stderr, "lockbench: the finished scenarios' results written to %s\n", files.path)
			}
			files.release()
			topology.KillAll()
			dockertopo.KillAll()
			if len(p.addrs) > 0 { // never leave keys on the user's servers
				cleanExternal(p, "lockbench:"+runID+":")
			}
			fmt.Fprintln(stderr, "lockbench: stopped")
			os.Exit(int(interruptCode.Load()))
		}
	}()

	if p.docker {
		if err := dockertopo.Check(ctx); err != nil {
			return fmt.Errorf("--backend docker: %w", err)
		}
	}
	topos = &topologies{plan: p, started: map[strategies.Topology]*topology.Topology{}}
	defer topos.stop()
	if prom != nil {
		fmt.Fprintf(prog, "lockbench: Prometheus metrics on http://%s/metrics\n", prom.Addr())
	}
	if sp != nil {
		// Execution segments: claim this segment of the run (a plan or a
		// segment that does not fit is refused: exit 2).
		leave, err := sp.join(ctx, p, runID)
		if err != nil {
			return err
		}
		defer leave()
	}
	ran.Store(true)
	out := p.out
	var aborted []string // scenarios the failure-streak guard stopped
	for i, sc := range p.scenarios {
		if ctx.Err() != nil {
			break
		}
		prog.start(i, &sc, (sc.Warmup+sc.Duration)*time.Duration(p.repeat))
		var lay layout
		var err error
		switch {
		case !strategies.RunsOn(sc.Strategy, sc.Driver):
			err = errSkip{fmt.Errorf("%s runs on the %s driver only, not on %s", sc.Strategy, strings.Join(strategies.InfoOf(sc.Strategy).Drivers, ", "), sc.Driver)}
		case !sc.Retry.RunsOn(sc.Driver):
			err = errSkip{fmt.Errorf("retry %s runs on the %s driver only, not on %s", sc.Retry.Name, strings.Join(sc.Retry.Drivers(), ", "), sc.Driver)}
		default:
			lay, err = topos.layoutFor(ctx, sc)
		}
		var skip errSkip
		if errors.As(err, &skip) {
			prog.skipped(i)
			fmt.Fprintf(stderr, "lockbench: skipping scenario %d (%s): %v\n", i+1, sc.Strategy, skip.err)
			run.Skipped = append(run.Skipped, fmt.Sprintf("%s/%s/%s: %v", sc.Strategy, sc.Driver, sc.Workload, skip.err))
			publish()
			continue
		}
		nodes, servers, name, release := lay.nodes, lay.servers, lay.name, lay.release
		if err == nil {
			err = versions.probe(ctx, sc.Driver, nodes, &run.Meta)
		}
		if err != nil {
			prog.stopped(i, "failed")
			if errors.Is(err, context.Canceled) {
				break
			}
			return err
		}
		sc.Env.Topology, sc.Env.Servers, sc.Env.ReplLink = name, servers, lay.link
		sc.Env.Backends = lay.backends
		sc.Env.Prom, sc.Env.Number = prom, i+1
		touched = sp == nil || sp.seg.Leader() // the leader deletes the keys of a run of segments
		sc.Env.History = hist
		var res report.Scenario
		if sp != nil {
			sc = sp.segmentScenario(sc, i)
		}
		if sp != nil && sc.Clients == 0 {
			res, err = idleSegment(ctx, sc) // fewer clients than segments
		} else {
			res, err = runRepeated(ctx, sc, nodes, fmt.Sprintf("lockbench:%s:%d:", run.Meta.RunID, i), p.repeat)
		}
		sp.segmentMeta(&run.Meta) // the run nonce, once the first barrier gave it
		release()
		if errors.Is(err, engine.ErrAborted) {
			// The failure-streak guard stopped it: its figures are kept
			// (stop_reason aborted), the run goes on, and exits 1.
			msg := fmt.Sprintf("scenario %d (%s/%s/%s): %v", i+1, sc.Strategy, sc.Driver, sc.Workload, err)
			fmt.Fprintf(prog, "lockbench: %s (--error-streak 0 turns this guard off)\n", msg)
			aborted = append(aborted, msg)
			err = nil
		}
		if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Ctrl-C before the scenario measured anything (while
			// connecting): an interruption, not a failure.
			prog.stopped(i, "interrupted")
			break
		}
		if err != nil {
			prog.stopped(i, "failed")
			prog.close() // the bars drawn before the partial table
			err = fmt.Errorf("scenario %d (%s/%s/%s): %w", i+1, sc.Strategy, sc.Driver, sc.Workload, err)
			run.Failed = err.Error()
			run.Meta.Topology, run.Meta.Servers = topos.describe()
			run.Thresholds = thresholds.Evaluate(p.thresholds, run.Scenarios) // recorded; the exit stays 1
			if len(run.Scenarios) > 0 {
				_ = printResults(stdout, "table", f.columns, termWidth(stdout), run)
			}
			if werr := files.write(run); werr == nil {
				fmt.Fprintf(stdout, "partial results written to %s\n", out)
			}
			return err
		}
		prog.done(i, res)
		if res.VerifyError != "" {
			fmt.Fprintf(prog, "lockbench: warning: scenario %d: no end check after its faults: %s\n", i+1, res.VerifyError)
		}
		if sc.Warmup > 0 && res.Ops == 0 && res.StopReason == "done" {
			fmt.Fprintf(prog, "lockbench: warning: scenario %d finished during the %v warm-up; nothing was measured (raise --stock or lower --warmup)\n", i+1, sc.Warmup)
		}
		if res.StopReason == "interrupted" {
			run.Interrupted = true
		}
		res.HistoryFile = historyRef(hist, out)
		run.Scenarios = append(run.Scenarios, res)
		publish()
	}
	if ctx.Err() != nil {
		run.Interrupted = true
	}
	if len(aborted) > 0 {
		run.Failed = strings.Join(aborted, "; ")
	}
	run.Meta.Topology, run.Meta.Servers = topos.describe()
	run.Meta.MaxRSSMB = maxRSSMB()
	run.Thresholds = thresholds.Evaluate(p.thresholds, run.Scenarios)
	prog.close() // the last bar drawn before the table
	// The files first: a table that cannot be printed (stdout closed,
	// `| head -1`: SIGPIPE) must not lose the results.
	if err := files.write(run); err != nil {
		return namedPath(out, err)
	}
	files.release()
	// lockbench show prints a result file through the same call.
	if err = printResults(stdout, f.format, f.columns, termWidth(stdout), run); err != nil {
		return err
	}
	if len(p.thresholds) > 0 {
		if err := printThresholds(stdout, stderr, f.format, p.thresholds, run.Thresholds); err != nil {
			return err
		}
	}
	if f.format == "table" {
		fmt.Fprintf(stdout, "results written to %s\n", out)
	} else {
		fmt.Fprintf(stderr, "results written to %s\n", out)
	}
	if run.Interrupted {
		return errInterrupted
	}
	if len(aborted) > 0 {
		return errors.New(strings.Join(aborted, "; "))
	}
	if n := thresholds.Failed(run.Thresholds); n > 0 {
		return fmt.Errorf("%w: %d of %d (threshold x scenario)", errThresholds, n, len(run.Thresholds))
	}
	return nil
}

// linger keeps the metrics endpoint up for d after the run, so that a
// scraper gets the final values, saying so on stderr (unless quiet). A
// signal (SIGINT, SIGTERM, SIGHUP: Ctrl-C) or parent's end stops it
// early; the run's exit status stays its own.
func linger(parent context.Context, prom *export.Prom, d time.Duration, quiet bool, stderr io.Writer) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if !quiet {
		fmt.Fprintf(stderr, "lockbench: run done; keeping the Prometheus metrics on http://%s/metrics for %v (--metrics-linger) so that the final values are scraped; Ctrl-C ends it\n", prom.Addr(), d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// printThresholds shows the thresholds' results: with --format table, a
// table of every threshold x scenario and the summary line on stdout,
// after the results table; with the machine-readable formats stdout keeps
// only the format (json carries run.thresholds), and stderr gets the
// failed rows and the summary line. Thresholds whose scope held no
// measured scenario (skipped, or not reached) are named on stderr.
func printThresholds(stdout, stderr io.Writer, format string, ts []thresholds.Threshold, rs []report.ThresholdResult) error {
	for _, t := range thresholds.Untested(ts, rs) {
		fmt.Fprintf(stderr, "lockbench: threshold %s: no scenario in its scope was measured; not tested\n", t)
	}
	if format == "table" {
		return thresholds.Table(stdout, rs)
	}
	for _, r := range rs {
		if !r.Pass {
			if r.NotMeasured {
				fmt.Fprintf(stderr, "lockbench: threshold %s failed on %s: not measured (%s)\n", r.Expr, thresholds.ScenarioLabel(rs, r), report.NotMeasuredNote(r.Metric))
			} else {
				fmt.Fprintf(stderr, "lockbench: threshold %s failed on %s: measured %g\n", r.Expr, thresholds.ScenarioLabel(rs, r), r.Measured)
			}
		}
	}
	fmt.Fprintln(stderr, thresholds.Summary(rs))
	return nil
}

// runRepeated runs sc n times, each on fresh keys (prefix + "r<k>:"), and
// returns the runs pooled (report.Combine, Sequential): the row's figures
// derived from every run's raw data together, every run's Sample kept and
// their spread in Repeats. One run is returned as it is, with its one
// Sample. A run that fails, or an interruption, ends the repeats; the runs
// before it are pooled with it.
func runRepeated(ctx context.Context, sc engine.Scenario, nodes []engine.Node, prefix string, n int) (report.Scenario, error) {
	if n <= 1 {
		res, err := engine.Run(ctx, sc, nodes, prefix)
		res.Samples = []report.Sample{report.SampleOf(res)}
		return res, err
	}
	var runs []report.Scenario
	pool := func() (report.Scenario, error) {
		if len(runs) == 1 {
			return runs[0], nil
		}
		return report.Combine(report.Sequential, runs)
	}
	for k := 0; k < n; k++ {
		res, err := engine.Run(ctx, sc, nodes, prefix+"r"+strconv.Itoa(k)+":")
		switch {
		case err != nil && len(runs) > 0 && res.Raw == nil && errors.Is(err, context.Canceled):
			// Ctrl-C before this repeat measured anything: the repeats
			// done are the result.
			out, perr := pool()
			out.StopReason = "interrupted"
			return out, perr
		case err != nil && res.Raw != nil && errors.Is(err, engine.ErrAborted):
			// Stopped by the failure-streak guard: what it measured is kept
			// with the repeats before it, and the error goes on.
			res.Samples = []report.Sample{report.SampleOf(res)}
			runs = append(runs, res)
			out, perr := pool()
			return out, errors.Join(err, perr)
		case err != nil:
			return res, err
		}
		res.Samples = []report.Sample{report.SampleOf(res)}
		runs = append(runs, res)
		if res.StopReason == "interrupted" {
			break
		}
	}
	return pool()
}
