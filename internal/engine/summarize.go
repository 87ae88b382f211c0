package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	out.ServerLoad = summarizeLoad(r.loadRates, sc.LoadSample)
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
	out.DurationS = window.Seconds()
	out.Ops = total.Ops
	if window > 0 {
		out.OpsPerSec = float64(total.Ops) / window.Seconds()
	}
	out.LatencyMS = metrics.Summarize(total.Op)
	if enc, err := total.Op.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		out.LatencyHist = string(enc)
	}
	out.AcquireMS = metrics.Summarize(total.Acquire)
	out.ReleaseMS = metrics.Summarize(total.Release)
	if sc.Rate > 0 {
		s := metrics.Summarize(total.Service)
		out.ServiceMS = &s
	}
	out.HoldMS = metrics.Summarize(total.Hold)
	out.Counters = report.Counters{
		Attempts: total.Attempts, Failures: total.Failures, Timeouts: total.Timeouts,
		NotOwner: total.NotOwner, Rejected: total.Rejected, Reads: total.Reads, Cancelled: all.Cancels, Errors: total.ErrorTotal(), ErrorsByKind: total.Errors, ErrorSamples: total.Samples,
	}
	out.Fairness = report.Fairness{JainIndex: metrics.Jain(r.recs.Ops()), LongestWaitMS: out.AcquireMS.Max}
	if r.afterErr == nil {
		var sampler map[string]int64
		if r.live != nil {
			sampler = r.live.Cost()
		}
		out.RedisCost = redisadmin.CostDelta(r.before, r.after, all.Ops, sampler)
	}
	if r.live != nil {
		l := r.live.Result()
		l.DeadlineOvershoots = all.Overshoots
		out.Liveness = &l
	} else if r.sc.Liveness >= 0 {
		why := "the workload lists no lock keys"
		switch {
		case r.sc.ConstantToken:
			why = "a constant token: every client stores the same value"
		case strategies.InfoOf(r.sc.Strategy).Backend == strategies.ZooKeeper || strategies.InfoOf(r.sc.Strategy).Backend == strategies.Etcd:
			why = "the lock is not in Redis"
		}
		out.Liveness = &report.Liveness{NotMeasured: why, DeadlineOvershoots: all.Overshoots}
	}
	if all.FailedAcquire != nil && all.FailedAcquire.TotalCount() > 0 {
		l := metrics.Summarize(all.FailedAcquire)
		out.AcquireFailedMS = &l
	}
	// Client side: lockbench's own CPU over the run (warm-up included).
	clientCPU := rusageCPU(r.ruAfter) - rusageCPU(r.ruBefore)
	out.ClientCPU = report.ClientCPU{CPUSeconds: clientCPU.Seconds()}
	if all.Ops > 0 {
		out.ClientCPU.CPUMicrosPerOp = float64(clientCPU.Microseconds()) / float64(all.Ops)
	}
	if budget := r.cpuWall.Seconds() * float64(runtime.GOMAXPROCS(0)); budget > 0 {
		out.ClientCPU.BudgetShare = clientCPU.Seconds() / budget
		out.ClientCPU.ClientBound = out.ClientCPU.BudgetShare > 0.9
	}
	if sr, ok := r.locker.(strategies.StatsReporter); ok {
		out.StrategyStats = sr.Stats()
	}
	out.Topology = sc.Topology
	// No ceiling from a mean hold under the histograms' resolution allows
	// (report.CeilingMinHoldMicros; µs, as Hold records), nor without
	// critical-section work (--work 0s): the hold is then lockbench's own
	// steps between acquire and release (under load, the scheduler's), no
	// bound of the lock.
	if hold := total.Hold.Mean(); hold >= report.CeilingMinHoldMicros && r.env.Params.Work.Mean() > 0 && r.env.Locks > 0 && total.Ops > 0 {
		out.CeilingOpsPerSec = float64(min(sc.Clients, r.env.Locks)) / (hold / 1e6)
		out.Efficiency = out.OpsPerSec / out.CeilingOpsPerSec
	}
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
