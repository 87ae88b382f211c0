package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// run is one scenario as Run takes it through its phases: prepare
// (prepare.go), measure (measure.go), summarize (summarize.go) and verify
// (verify.go). Each phase fills the fields under its name; out is the
// result the phases build.
type run struct {
	sc     Scenario
	nodes  []Node // the latency proxies' addresses once prepare set them up
	prefix string
	ctx    context.Context // the caller's: cancelling it stops the run early
	// bg is ctx without its cancellation: setup, verification and
	// clean-up must finish even after Ctrl-C.
	bg  context.Context
	out report.Scenario
	// undo is the clean-up, run by close last first, as deferred calls
	// would be.
	undo []func()

	// resource is the separate resource's driver (Spec.Resource
	// separate; Env.Data then), nil: none.
	resource drivers.Driver

	// prepare
	proxies       *faults.Proxies
	ds            []drivers.Driver
	switches      []*drivers.Switch // ds wrapped for failovers (with faults)
	locker        strategies.Locker
	wl            workloads.Workload
	env           *workloads.Env
	prom          *export.Obs       // the scenario's Prometheus series (nil: none)
	hub           *strategies.Hub   // the pubsub or csc retry policy's notifier
	recs, scratch *metrics.Set      // the clients' recorders: measured, warm-up (nil without one)
	tracker       *liveness.Tracker // the liveness oracle's token registry (nil: off)
	live          *liveness.Sampler // its reader of the lock keys (nil: none)
	liveApart     bool              // no reader: the lock is kept apart from its lock key (keptApart)
	background    *bgRun            // the background traffic (nil: none)
	// roles are the client roles in force (Spec.Mix.Roles(); nil without
	// a mix), and role each local client's index in roles: recs and
	// scratch group the clients by it.
	roles []string
	role  []int

	// measure
	runCtx              context.Context // its cause says why the run stopped
	inj                 *faults.Injector
	streak              errStreak    // consecutive failed operations, all clients
	lastErr             atomic.Value // the error that aborted the run
	start, warmEnd, end time.Time
	ruBefore, ruAfter   syscall.Rusage
	cpuWall             time.Duration // wall time between the two rusage reads
	before, after       map[string]int64
	afterErr            error
	loadRates           []float64
	timeline            []report.Second
	ivOp, ivAcq         [][]byte // the timeline's interval histograms, encoded
	offered, dropped    int64
	// hungReleases are the clients whose release call had not returned
	// when the grace period ended (measure stopped waiting for them).
	hungReleases int64
	// verifyCost counts the ownership checks' reads (nil: none run).
	verifyCost   *workloads.VerifyCost
	undecided    int64 // open loop: arrivals due, neither handed over nor dropped at the stop
	faultWindows []faults.Window

	// the baseline server's process CPU over the cost window
	// (Env.BackendServer); procErr: not measured
	procBefore, procAfter topology.ProcCPU
	procErr               error

	// history (nil: none kept): the workers' sections and the server
	// clock's offset before the run
	hist        *history.Recorder
	clockBefore history.Offset
}

// historyClock starts the scenario's history when one is kept: it makes
// the workers' recorder and returns the server clock's offset (not
// Measured when TIME failed; the history then says so).
func (r *run) historyClock() history.Offset {
	if r.sc.Env.History == nil {
		return history.Offset{}
	}
	r.hist = history.NewRecorder(r.sc.Clients)
	ctx, cancel := context.WithTimeout(r.bg, 5*time.Second)
	defer cancel()
	off, _ := history.MeasureOffset(ctx, r.ds[0], 0)
	return off
}

// writeHistory measures the server clock's offset again and adds the
// scenario's sections to the history file (history.Writer.Add), under the
// result's scenario key. Errors: the file's.
func (r *run) writeHistory() error {
	if r.hist == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.bg, 5*time.Second)
	after, _ := history.MeasureOffset(ctx, r.ds[0], 0)
	cancel()
	s := r.hist.Finish(r.out.Key(), r.out.Name(), r.sc.Env.Number, history.Combine(r.clockBefore, after))
	if err := r.sc.Env.History.Add(s); err != nil {
		return fmt.Errorf("history %s: %w", r.sc.Env.History.Path(), err)
	}
	return nil
}

// deferred adds f to the clean-up.
func (r *run) deferred(f func()) { r.undo = append(r.undo, f) }

// close runs the clean-up, last added first; as with defer, a clean-up
// that panics does not skip the others.
func (r *run) close() {
	for _, f := range r.undo {
		defer f()
	}
}

// lockSpace is where the scenario's locks live (report.Raw.LockSpace):
// the prefix of every key it writes.
func (r *run) lockSpace() string { return r.prefix }
