package cli

// The scenario loop of a run in this process: each scenario of the plan
// placed on its layout, measured (--repeat times), and recorded, skipped
// or failed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
	"github.com/lockbench/lockbench/strategies"
)

// scenarioLoop is the scenario loop's state: the plan, where the results
// go, and the results so far. The run's lifecycle (matrixRun) sets it up.
type scenarioLoop struct {
	p              *plan
	sp             *segPlan // execution segments (nil: none)
	stdout, stderr io.Writer
	columns        string // --columns, for a failed run's partial table

	prom  *export.Prom    // --metrics-addr (nil: none)
	hist  *history.Writer // --history (nil: none)
	files *outFiles
	run   *report.Run
	// measured is a copy of run as of the last scenario finished, for a
	// second Ctrl-C to write while the run goroutine goes on.
	measured atomic.Pointer[report.Run]
	topos    *topologies
	prog     progress
	versions redisVersions
	touched  bool     // a scenario has written keys
	aborted  []string // scenarios the failure-streak guard stopped
}

// publish stores a copy of the run as it is (measured).
func (r *scenarioLoop) publish() {
	c := *r.run
	if r.topos != nil {
		c.Meta.Topology, c.Meta.Servers = r.topos.describe()
	}
	c.Scenarios = slices.Clone(r.run.Scenarios)
	c.Skipped = slices.Clone(r.run.Skipped)
	r.measured.Store(&c)
}

// loop runs the plan's scenarios in order until one fails (its error) or
// the run is interrupted.
func (r *scenarioLoop) loop(ctx context.Context) error {
	for i, sc := range r.p.scenarios {
		if ctx.Err() != nil {
			break
		}
		stop, err := r.scenario(ctx, i, sc)
		if err != nil {
			return err
		}
		if stop {
			break
		}
	}
	return nil
}

// scenario runs scenario i: skipped when it cannot run here, else placed
// on its layout, measured and recorded. stop ends the loop: the run was
// interrupted, or err, a failure, ends the run.
func (r *scenarioLoop) scenario(ctx context.Context, i int, sc engine.Scenario) (stop bool, err error) {
	r.prog.start(i, &sc, (sc.Warmup+sc.Duration)*time.Duration(r.p.repeat))
	lay, err := r.place(ctx, sc)
	var skip errSkip
	if errors.As(err, &skip) {
		r.skip(i, sc, skip)
		return false, nil
	}
	if err == nil {
		err = r.versions.probe(ctx, sc.Driver, lay.nodes, &r.run.Meta)
	}
	if err != nil {
		r.prog.stopped(i, "failed")
		if errors.Is(err, context.Canceled) {
			return true, nil
		}
		return true, err
	}
	r.touched = r.sp == nil || r.sp.seg.Leader() // the leader deletes the keys of a run of segments
	res, sc, err := r.measure(ctx, i, sc, lay)
	return r.settle(ctx, i, sc, res, err)
}

// settle records scenario i's result res, or its error err: stop
// and err as scenario's.
func (r *scenarioLoop) settle(ctx context.Context, i int, sc engine.Scenario, res report.Scenario, err error) (stop bool, _ error) {
	if errors.Is(err, engine.ErrAborted) {
		// The failure-streak guard stopped it: its figures are kept
		// (stop_reason aborted), the run goes on, and exits 1.
		msg := fmt.Sprintf("scenario %d (%s/%s/%s): %v", i+1, sc.Strategy, sc.Driver, sc.Workload, err)
		fmt.Fprintf(r.prog, "lockbench: %s (--error-streak 0 turns this guard off)\n", msg)
		r.aborted = append(r.aborted, msg)
		err = nil
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Ctrl-C before the scenario measured anything (while
		// connecting): an interruption, not a failure.
		r.prog.stopped(i, "interrupted")
		return true, nil
	}
	if err != nil {
		return true, r.fail(i, sc, err)
	}
	r.record(i, sc, res)
	return false, nil
}

// place is scenario sc's layout (started or reused), or errSkip when sc
// cannot run on its driver.
func (r *scenarioLoop) place(ctx context.Context, sc engine.Scenario) (layout, error) {
	switch {
	case !strategies.RunsOn(sc.Strategy, sc.Driver):
		return layout{}, errSkip{fmt.Errorf("%s runs on the %s driver only, not on %s", sc.Strategy, strings.Join(strategies.InfoOf(sc.Strategy).Drivers, ", "), sc.Driver)}
	case !sc.Retry.RunsOn(sc.Driver):
		return layout{}, errSkip{fmt.Errorf("retry %s runs on the %s driver only, not on %s", sc.Retry.Name, strings.Join(sc.Retry.Drivers(), ", "), sc.Driver)}
	}
	return r.topos.layoutFor(ctx, sc)
}

// skip records scenario i as skipped, with the reason.
func (r *scenarioLoop) skip(i int, sc engine.Scenario, skip errSkip) {
	r.prog.skipped(i)
	fmt.Fprintf(r.stderr, "lockbench: skipping scenario %d (%s): %v\n", i+1, sc.Strategy, skip.err)
	r.run.Skipped = append(r.run.Skipped, fmt.Sprintf("%s/%s/%s: %v", sc.Strategy, sc.Driver, sc.Workload, skip.err))
	r.publish()
}

// measure runs scenario i on lay (this segment's share of it, with
// segments), --repeat times, and releases the layout: the result and the
// scenario as run.
func (r *scenarioLoop) measure(ctx context.Context, i int, sc engine.Scenario, lay layout) (report.Scenario, engine.Scenario, error) {
	nodes, servers, name, release := lay.nodes, lay.servers, lay.name, lay.release
	sc.Env.Topology, sc.Env.Servers, sc.Env.ReplLink = name, servers, lay.link
	sc.Env.Backends, sc.Env.BackendServer = lay.backends, lay.backend
	sc.Env.Resource = lay.resource
	sc.Env.Prom, sc.Env.Number = r.prom, i+1
	sc.Env.History = r.hist
	var res report.Scenario
	var err error
	if r.sp != nil {
		sc = r.sp.segmentScenario(sc, i)
	}
	if r.sp != nil && sc.Clients == 0 {
		res, err = idleSegment(ctx, sc) // fewer clients than segments
	} else {
		res, err = runRepeated(ctx, sc, nodes, fmt.Sprintf("lockbench:%s:%d:", r.run.Meta.RunID, i), r.p.repeat)
	}
	r.sp.segmentMeta(&r.run.Meta) // the run nonce, once the first barrier gave it
	release()
	return res, sc, err
}

// fail ends the run on scenario i's error: the partial results printed
// and written, marked failed; the error returned (exit 1).
func (r *scenarioLoop) fail(i int, sc engine.Scenario, err error) error {
	run := r.run
	r.prog.stopped(i, "failed")
	r.prog.close() // the bars drawn before the partial table
	err = fmt.Errorf("scenario %d (%s/%s/%s): %w", i+1, sc.Strategy, sc.Driver, sc.Workload, err)
	run.Failed = err.Error()
	run.Meta.Topology, run.Meta.Servers = r.topos.describe()
	run.Thresholds = thresholds.Evaluate(r.p.thresholds, run.Scenarios) // recorded; the exit stays 1
	if len(run.Scenarios) > 0 {
		_ = printResults(r.stdout, "table", r.columns, termWidth(r.stdout), run)
	}
	if werr := r.files.write(run); werr == nil {
		fmt.Fprintf(r.stdout, "partial results written to %s\n", r.p.out)
	}
	return err
}

// record adds scenario i's result to the run, with its warnings.
func (r *scenarioLoop) record(i int, sc engine.Scenario, res report.Scenario) {
	if i < len(r.p.labels) {
		res.Label = r.p.labels[i]
	}
	r.prog.done(i, res)
	if res.VerifyError != "" {
		fmt.Fprintf(r.prog, "lockbench: warning: scenario %d: no end check after its faults: %s\n", i+1, res.VerifyError)
	}
	if sc.Warmup > 0 && res.Ops == 0 && res.StopReason == "done" {
		fmt.Fprintf(r.prog, "lockbench: warning: scenario %d finished during the %v warm-up; nothing was measured (raise --stock or lower --warmup)\n", i+1, sc.Warmup)
	}
	if res.StopReason == "interrupted" {
		r.run.Interrupted = true
	}
	res.HistoryFile = historyRef(r.hist, r.p.out)
	r.run.Scenarios = append(r.run.Scenarios, res)
	r.publish()
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

// together runs the plan's scenarios all at once (a scenario file with
// concurrent: true): each placed on the one layout they share, then
// measured in its own goroutine under its own key prefix, and recorded
// in the plan's order once all have ended.
func (r *scenarioLoop) together(ctx context.Context) error {
	n := len(r.p.scenarios)
	if pp, ok := r.prog.(plainProgress); ok {
		r.prog = linesProgress{plainProgress: pp}
	}
	lays := make([]*layout, n)
	scs := slices.Clone(r.p.scenarios) // with what progress sets on them
	defer func() {
		for _, lay := range lays {
			if lay != nil {
				lay.release()
			}
		}
	}()
	for i := range scs {
		sc := &scs[i]
		r.prog.start(i, sc, sc.Warmup+sc.Duration)
		lay, err := r.place(ctx, *sc)
		var skip errSkip
		if errors.As(err, &skip) {
			r.skip(i, *sc, skip)
			continue
		}
		if err == nil {
			err = r.versions.probe(ctx, sc.Driver, lay.nodes, &r.run.Meta)
		}
		if err != nil {
			r.prog.stopped(i, "failed")
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		lays[i] = &lay
	}
	type outcome struct {
		res report.Scenario
		sc  engine.Scenario
		err error
	}
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	r.touched = true
	for i, sc := range scs {
		if lays[i] == nil {
			continue
		}
		lay := *lays[i]
		lay.release = func() {} // after every scenario (the deferred release above)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, sc, err := r.measure(ctx, i, sc, lay)
			outs[i] = outcome{res, sc, err}
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if lays[i] == nil {
			continue
		}
		if stop, err := r.settle(ctx, i, o.sc, o.res, o.err); err != nil || stop {
			return err
		}
	}
	return nil
}
