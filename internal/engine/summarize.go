package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// summarize fills r.out from what measure left: the clients' recorders
// merged (the measured window's figures; the warm-up's only in the safety
// counts, which verify adds), throughput, latency, counters, fairness,
// the servers' cost and load, lockbench's CPU, the lock-bound ceiling,
// the timeline, the open loop's arrivals, the faults, and the stop reason.
// It returns the recorder of the whole run, warm-up included.
func (r *run) summarize() *metrics.Recorder {
	sc, out := &r.sc, &r.out
	out.Timeline = r.timeline
	if len(r.ivOp) == len(r.timeline) && len(r.timeline) > 0 {
		out.Intervals = &report.IntervalHists{Start: r.start, WindowS: sc.Warmup.Seconds(), Op: r.ivOp, Acquire: r.ivAcq}
	}
	if sc.Rate > 0 {
		out.Loop = "open"
		out.OfferedRate = sc.Rate
		out.Dropped = r.dropped
		out.Offered = r.offered
		out.Undecided = r.undecided
	} else {
		out.Loop = "closed"
	}
	if r.inj != nil {
		out.Faults = r.faultWindows
	}

	total := r.recs.Total()
	// Safety counts cover the warm-up too.
	all := total
	if sc.Warmup > 0 {
		all = metrics.NewRecorder()
		all.Merge(total)
		all.Merge(r.scratch.Total())
	}
	measureStart := r.start
	if sc.Warmup > 0 {
		measureStart = r.warmEnd
	}
	window := r.end.Sub(measureStart)
	if window < 0 {
		window = 0
	}
	// The raw data: every figure below it is derived by report.Derive,
	// as for a combination of runs.
	raw := &report.Raw{WindowS: window.Seconds(), Runs: 1, ClientOps: r.recs.Ops(), CostOps: all.Ops}
	raw.SetHist(report.HistOp, total.Op)
	raw.SetHist(report.HistAcquire, total.Acquire)
	raw.SetHist(report.HistRelease, total.Release)
	raw.SetHist(report.HistHold, total.Hold)
	raw.SetHist(report.HistService, total.Service)
	raw.SetHist(report.HistAcquireFailed, all.FailedAcquire)
	// No ceiling without critical-section work (--work 0s): the hold is
	// then lockbench's own steps between acquire and release (under load,
	// the scheduler's), no bound of the lock.
	if r.env.Params.Work.Mean() > 0 && r.env.Locks > 0 {
		raw.Locks = r.env.Locks
	}
	if p := r.env.Permits(); p > 1 { // a semaphore: N holders per lock
		raw.Permits = p
	}
	raw.LockSpace = r.lockSpace()
	if sc.ClientShape != nil && sc.Rate <= 0 {
		from := measureStart.Sub(r.start).Seconds()
		raw.ClientSeconds = clientSeconds(sc.ClientShape, from, from+window.Seconds())
	}
	if sc.Rate <= 0 {
		raw.ThinkMS = float64(sc.Think.Mean()) / float64(time.Millisecond) // 0: none
	}
	raw.Segment = sc.Env.Sync != nil
	if sc.Env.Shared {
		raw.SharedCost = true
		out.MeasuredAt = &report.WallWindow{Start: measureStart.UTC().Format(time.RFC3339Nano), End: r.end.UTC().Format(time.RFC3339Nano)}
	}
	if r.background != nil {
		raw.Background = r.background.raw()
	}
	if r.afterErr == nil {
		var sampler map[string]int64
		if r.live != nil {
			sampler = r.live.Cost()
		}
		if r.background != nil {
			sampler = addOwn(sampler, r.background.issued())
		}
		if v := r.verifyCost.Map(); v != nil { // the ownership checks' reads
			sampler = addOwn(sampler, v)
		}
		c := redisadmin.CostDelta(r.before, r.after, all.Ops, nil) // the sampler's share apart (Own)
		addrs := make([]string, len(r.nodes))
		for i, n := range r.nodes {
			addrs[i] = n.Addr
		}
		if sc.separate() {
			addrs = append(addrs, sc.Env.Resource.Addr)
		}
		slices.Sort(addrs)
		raw.Cost = []report.ServerCost{{Servers: strings.Join(addrs, ","), ByCommand: c.ByCommand, Own: sampler, CPUMS: c.ServerCPUMS}}
	}
	// The baseline server lockbench started (zk: ZooKeeper's JVM, etcd,
	// sql-*: MariaDB), read over the same window: its process's CPU, in an
	// entry of its own without command counts (ByCommand nil: not
	// counted, so it adds nothing to commands/op). Not measured (no
	// entry): a server lockbench did not start, or one whose process
	// could not be read or was not the same at both ends.
	if kind := strategies.InfoOf(sc.Strategy).Backend; kind != strategies.NoBackend && r.procErr == nil {
		if cpu, ok := r.procAfter.Since(r.procBefore); ok {
			raw.Cost = append(raw.Cost, report.ServerCost{Servers: string(kind) + " " + sc.Env.BackendServer.Addr, CPUMS: cpu})
		}
	}
	// Client side: lockbench's own CPU over the run (warm-up included).
	raw.ClientCPUS = (rusageCPU(r.ruAfter) - rusageCPU(r.ruBefore)).Seconds()
	raw.CPUBudgetS = r.cpuWall.Seconds() * float64(runtime.GOMAXPROCS(0))
	raw.Host, _ = os.Hostname()
	if len(r.loadRates) > 0 {
		raw.LoadRates, raw.LoadIntervalMS = r.loadRates, float64(sc.LoadSample)/float64(time.Millisecond)
	}
	out.Counters = report.Counters{
		Attempts: total.Attempts, Failures: total.Failures, Timeouts: total.Timeouts,
		NotOwner: total.NotOwner, Rejected: total.Rejected, Reads: total.Reads, Cancelled: all.Cancels, Errors: total.ErrorTotal(), ErrorsByKind: total.Errors, ErrorSamples: total.Samples,
		HungReleases: r.hungReleases,
	}
	if r.live != nil {
		l := r.live.Result()
		l.DeadlineOvershoots = all.Overshoots
		out.Liveness = &l
		raw.SetHist(report.HistTimeToFree, r.live.TimeToFree())
		raw.SetHist(report.HistOrphanShareAge, r.live.OrphanShareAges())
	} else if r.sc.Liveness >= 0 {
		why := "the workload lists no lock keys"
		switch {
		case r.sc.ConstantToken:
			why = "a constant token: every client stores the same value"
		case strategies.InfoOf(r.sc.Strategy).Backend == strategies.ZooKeeper || strategies.InfoOf(r.sc.Strategy).Backend == strategies.Etcd:
			why = "the lock is not in Redis"
		case r.tracker != nil && r.liveApart:
			why = "the lock is kept in keys other than its lock key (strategies.Stored), which the liveness reader does not read"
		}
		out.Liveness = &report.Liveness{NotMeasured: why, DeadlineOvershoots: all.Overshoots}
	}
	// The hand-over figures: not measured (absent) when read sides ran
	// beside the exclusive ones (readers held the locks too).
	if r.env != nil && r.env.Handover != nil {
		if f := r.env.Handover.Figures(); !f.Shared {
			raw.Handover = report.HandoverRawOf(f, r.env.Locks)
			raw.SetHist(report.HistHandoverGap, f.Gaps)
		}
	}
	// The renewal margins: absent for a strategy that does not renew.
	if r.env != nil {
		if f := r.env.Margins.Figures(); f.Measured {
			raw.RenewalMargin = report.RenewalMarginRawOf(f)
			raw.SetHist(report.HistMarginFirst, f.First)
			raw.SetHist(report.HistMarginSecond, f.Second)
		}
	}
	raw.Roles = r.roleRaw()
	if sr, ok := r.locker.(strategies.StatsReporter); ok {
		out.StrategyStats = sr.Stats()
	}
	out.Topology = sc.Env.Topology
	out.Raw = raw
	_ = report.Derive(out) // the histograms were encoded just now: they decode
	switch cause := context.Cause(r.runCtx); {
	case errors.Is(cause, workloads.ErrDone):
		out.StopReason = "done"
	case errors.Is(cause, errDuration):
		out.StopReason = "duration"
	case errors.Is(cause, errAborted):
		out.StopReason = "aborted"
	default:
		out.StopReason = "interrupted"
	}
	return all
}

// abortError is the error of a run that stopped on failures alone
// (StopReason "aborted"): how many in a row, for how long, and the last.
func (r *run) abortError() error {
	e, _ := r.lastErr.Load().(error)
	return fmt.Errorf("%w: only failed operations for %d in a row (%v); the last: %w", ErrAborted, r.streak.n.Load(), time.Duration(time.Now().UnixNano()-r.streak.since.Load()).Round(time.Millisecond), e)
}

// ErrAborted is wrapped by Run's error for a scenario the failure-streak
// guard stopped (Scenario.ErrorStreak): the result returned with it holds
// what was measured until then (stop reason "aborted").
var ErrAborted = errors.New("stopped")

// addOwn is a copy of a with b's counts added (lockbench's own commands
// by name: its samplers', its background traffic's).
func addOwn(a, b map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(a)+len(b))
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// roleRaw is each client role's raw data (report.RoleRaw): its clients'
// ops and histograms of the measured window, and their violation counts
// over the whole run (warm-up included); nil without roles.
func (r *run) roleRaw() map[string]*report.RoleRaw {
	if r.roles == nil {
		return nil
	}
	out := map[string]*report.RoleRaw{}
	for g, name := range r.roles {
		rr := &report.RoleRaw{}
		for _, x := range r.role {
			if x == g {
				rr.Clients++
			}
		}
		m := r.recs.TotalOf(g)
		// The violations are counters over the whole run: the measured
		// window's (m) and the warm-up's (the scratch set's counters
		// alone: its histograms are not used).
		counts := []*metrics.Recorder{m}
		if r.scratch != nil {
			counts = append(counts, r.scratch.CountsOf(g))
		}
		rr.Ops = m.Ops
		for kind, h := range map[string]*hdrhistogram.Histogram{report.HistOp: m.Op, report.HistAcquire: m.Acquire} {
			if e := report.EncodeHist(h); e != "" {
				if rr.Hists == nil {
					rr.Hists = map[string]string{}
				}
				rr.Hists[kind] = e
			}
		}
		rr.Violations = map[string]int64{}
		for _, c := range counts {
			rr.Violations["overlap"] += c.Overlaps
			rr.Violations["foreign_releases"] += c.ForeignReleases
			rr.Violations["lost_leases"] += c.LostLeases
			rr.Violations["worked_after_loss"] += c.WorkedAfterLoss
			rr.Violations["false_extends"] += c.FalseExtends
			rr.Violations["false_acquires"] += c.FalseAcquires
		}
		out[name] = rr
	}
	return out
}
