package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// runMatrix is lockbench run: the plan (validate), then the run's
// lifecycle around the scenario loop: the metrics endpoint, the result
// files, the signals, the progress, the servers, the results written and
// printed, and the exit (runExit). With --procs the plan runs in child
// processes (runProcs).
func runMatrix(parent context.Context, f *runFlags, stdout, stderr io.Writer) error {
	p, err := validate(f)
	if err != nil {
		return err
	}
	return runPlan(parent, f, p, stdout, stderr)
}

// runPlan is runMatrix on the plan p: a matrix's, or a scenario file's
// scenarios: list (multiPlan).
func runPlan(parent context.Context, f *runFlags, p *plan, stdout, stderr io.Writer) (err error) {
	sp, err := parseSegment(f, p)
	if err != nil {
		return err
	}
	if sp != nil && len(p.labels) > 0 {
		return usageError{fmt.Errorf("%s: a file with scenarios: runs in one process: $LOCKBENCH_SEGMENT does not go with it", f.file)}
	}
	if checkOnly(parent) {
		return nil // CheckArgs: the line is valid; nothing is started
	}
	if f.procs > 0 {
		return runProcs(parent, f, p, stdout, stderr)
	}
	warnPassword(stderr, commandLinePassword(f.cli, f))
	warnPollingQueue(stderr, p.scenarios)
	r := &matrixRun{f: f, scenarioLoop: scenarioLoop{p: p, sp: sp, stdout: stdout, stderr: stderr, columns: f.columns}}
	// A signal handled after the loop (while the results are written, the
	// servers stopped) still makes the exit 130, 143 or 129, once the
	// write is complete: this runs last.
	defer func() {
		if err == nil && r.signalled.Load() {
			err = errInterrupted
		}
	}()
	// The metrics endpoint first: an address in use is bad input (exit
	// 2), found before anything is written or started.
	if r.prom, err = serveMetrics(f.metricsAddr); err != nil {
		return err
	}
	if r.prom != nil {
		defer r.prom.Close()
	}
	// After the rest of the clean-up (deferred later, run earlier).
	defer r.lingerMetrics(parent)
	if err := r.reserve(); err != nil {
		return err
	}
	defer r.files.release()
	// Before the first write to the user's servers: the run's record,
	// which outlives a SIGKILL (lockbench clean --stale).
	rec := newRunRecord(p, f, r.runID)
	if err := rec.save(stderr); err != nil {
		return err
	}
	// Runs last: how many keys the run left on the user's servers, and the
	// command that removes them; the record goes when none are left.
	defer func() {
		if !r.touched || reportLeftKeys(p, f, r.runID, stderr) {
			rec.remove()
		}
	}()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.newRun()
	// Live bars on stderr when both stdout and stderr are terminals (never
	// on stdout, never into a pipe or a file); else plain lines, or none
	// with -q. Warnings go through it: above the bars while they are drawn.
	r.prog = newProgress(stdout, stderr, f.quiet, len(p.scenarios))
	defer r.prog.close()
	defer r.watchSignals(cancel)()
	if p.docker {
		if err := dockertopo.Check(ctx); err != nil {
			return fmt.Errorf("--backend docker: %w", err)
		}
	}
	r.topos = &topologies{plan: p, started: map[strategies.Topology]*topology.Topology{}}
	defer r.topos.stop()
	if r.prom != nil {
		fmt.Fprintf(r.prog, "lockbench: Prometheus metrics on http://%s/metrics\n", r.prom.Addr())
	}
	if sp != nil {
		// Execution segments: claim this segment of the run (a plan or a
		// segment that does not fit is refused: exit 2).
		leave, err := sp.join(ctx, p, r.runID)
		if err != nil {
			return err
		}
		defer leave()
	}
	r.ran.Store(true)
	loop := r.loop
	if p.concurrent {
		loop = r.together
	}
	if err := loop(ctx); err != nil {
		return err
	}
	return r.finish(ctx)
}

// matrixRun is one lockbench run in this process (runMatrix): the
// scenario loop's state, with what the lifecycle adds to it.
type matrixRun struct {
	scenarioLoop
	f         *runFlags
	runID     string
	ran       atomic.Bool // the run got to its scenarios
	signalled atomic.Bool // a signal stopped it
}

// lingerMetrics keeps the metrics endpoint up --metrics-linger longer,
// once the run got to its scenarios and was not stopped by a signal.
func (r *matrixRun) lingerMetrics(parent context.Context) {
	if r.prom != nil && r.f.metricsLinger > 0 && r.ran.Load() && !r.signalled.Load() {
		linger(parent, r.prom, r.f.metricsLinger, r.f.quiet, r.stderr)
	}
}

// serveMetrics starts the Prometheus endpoint of --metrics-addr (nil
// when none is asked for); an address in use is a usage error.
func serveMetrics(addr string) (*export.Prom, error) {
	if addr == "" {
		return nil, nil
	}
	prom := export.New()
	if err := prom.Serve(addr); err != nil {
		return nil, usageError{fmt.Errorf("--metrics-addr %s: %w (give a free port, or :0 for any)", addr, err)}
	}
	return prom, nil
}

// reserve picks the run id, opens the --history file and reserves the
// result file (removing what killed runs left in its directory).
func (r *matrixRun) reserve() error {
	f, p := r.f, r.p
	r.runID = randomID()
	if f.runID != "" {
		r.runID = f.runID
	}
	if r.sp != nil {
		p.segRunID = r.runID
	}
	var err error
	if r.hist, err = historyWriter(f.history, p.out, r.runID, f.force, r.sp); err != nil {
		return err
	}
	// Stale temporary and reservation files of killed runs, in the output
	// directory only.
	for _, name := range sweepStale(filepath.Dir(p.out)) {
		fmt.Fprintf(r.stderr, "lockbench: removed %s, left by a lockbench run that is gone\n", filepath.Join(filepath.Dir(p.out), name))
	}
	if r.files, err = reserveFiles(p, r.runID, f.force); err != nil {
		return err
	}
	p.out = r.files.path
	return nil
}

// newRun starts the run's record: its meta data, and its first published
// copy.
func (r *matrixRun) newRun() {
	started := time.Now().UTC()
	r.run = &report.Run{Schema: report.Schema, Meta: report.Meta{
		StartedAt: started.Format(time.RFC3339), GitCommit: commit(), GoVersion: runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GODEBUG: os.Getenv("GODEBUG"), Args: redactArgs(os.Args[1:]), RunID: r.runID,
		ParamDefaults: paramDefaults(), Sweep: r.p.sweep,
	}}
	provenance(&r.run.Meta)
	r.sp.segmentMeta(&r.run.Meta)
	r.publish()
}

// watchSignals handles the run's signals until the returned function is
// called. First signal (SIGINT, SIGTERM, SIGHUP): stop starting
// operations (cancel), finish, write results, exit 130, 143 or 129.
// Second: write what the finished scenarios measured, marked
// interrupted, kill the servers lockbench started and exit at once.
func (r *matrixRun) watchSignals(cancel context.CancelFunc) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		interruptCode.Store(int32(signalExit(sig)))
		r.signalled.Store(true)
		fmt.Fprintf(r.prog, "\nlockbench: %s; finishing the current operations and writing results (Ctrl-C again to quit now)\n", signalName(sig))
		cancel()
		if _, ok := <-sigs; ok {
			r.quit()
		}
	}()
	return func() { signal.Stop(sigs) }
}

// quit is the second signal's: the finished scenarios written, the
// servers killed, the user's keys deleted, and the process's exit.
func (r *matrixRun) quit() {
	quitting.Store(true) // whatever the run returns now, the exit is the first signal's
	partial := r.measured.Load()
	partial.Interrupted = true // the scenario then running is not in it
	if err := r.files.write(partial); err == nil {
		fmt.Fprintf(r.stderr, "lockbench: the finished scenarios' results written to %s\n", r.files.path)
	}
	r.files.release()
	topology.KillAll()
	dockertopo.KillAll()
	if len(r.p.addrs) > 0 { // never leave keys on the user's servers
		cleanExternal(r.p, "lockbench:"+r.runID+":")
	}
	fmt.Fprintln(r.stderr, "lockbench: stopped")
	os.Exit(int(interruptCode.Load()))
}

// finish completes the run after its loop: the result files written, the
// results and thresholds printed, and the run's exit (runExit).
func (r *matrixRun) finish(ctx context.Context) error {
	run := r.run
	if ctx.Err() != nil {
		run.Interrupted = true
	}
	if len(r.aborted) > 0 {
		run.Failed = strings.Join(r.aborted, "; ")
	}
	run.Meta.Topology, run.Meta.Servers = r.topos.describe()
	run.Meta.MaxRSSMB = maxRSSMB()
	run.Thresholds = thresholds.Evaluate(r.p.thresholds, run.Scenarios)
	r.prog.close() // the last bar drawn before the table
	if testHookBeforeWrite != nil {
		testHookBeforeWrite()
	}
	if err := writeResults(r.files, run, r.f, r.p, r.stdout, r.stderr); err != nil {
		return err
	}
	if r.f.format == "table" {
		fmt.Fprintf(r.stdout, "results written to %s\n", r.p.out)
	} else {
		fmt.Fprintf(r.stderr, "results written to %s\n", r.p.out)
	}
	return runExit(run.Interrupted, r.aborted, run.Thresholds)
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
