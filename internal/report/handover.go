package report

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

// HistHandoverGap is Raw.Hists' kind of the hand-over gaps (µs): per
// grant that followed a freeing of its lock while a client waited for it,
// the time from that freeing to the grant (metrics.Handover).
const HistHandoverGap = "handover_gap"

// HandoverRaw is the hand-over measurement's raw data (metrics.Handover),
// beside Raw.Hists' handover_gap: sums, counts and a maximum, which
// combine exactly. Absent when it was not measured: a workload without
// exclusive locks, a scenario that also took read sides (readers held
// the locks too), a run of several processes' segments (each sees only
// its own clients' grants), a file written before it existed.
type HandoverRaw struct {
	// IdleS is the gaps' sum, s: the time locks stood free while wanted.
	IdleS float64 `json:"idle_s"`
	// Locks is how many locks the workload takes (the idle share's
	// denominator is the window times Locks).
	Locks int `json:"locks"`
	// Grants are the exclusive grants counted in the window.
	Grants int64 `json:"grants"`
	// FIFO: the strategy declares FIFO order (strategies.FIFO); only then
	// are FIFOViolations and MaxWaitTurns measured.
	FIFO bool `json:"fifo,omitempty"`
	// FIFOViolations are the grants made while a client that started
	// waiting for the same lock earlier (by more than
	// metrics.FIFOSlack) still waited.
	FIFOViolations int64 `json:"fifo_violations,omitempty"`
	// MaxWaitTurns is the most grants of a lock to other clients that one
	// waiter waited through.
	MaxWaitTurns int64 `json:"max_wait_turns,omitempty"`
}

// HandoverRawOf is the raw data of a Handover's figures: its histogram
// goes to Raw.Hists (SetHist, HistHandoverGap), the rest to the result.
func HandoverRawOf(f metrics.HandoverFigures, locks int) *HandoverRaw {
	h := &HandoverRaw{IdleS: f.Idle.Seconds(), Locks: locks, Grants: f.Grants, FIFO: f.FIFO}
	if f.FIFO {
		h.FIFOViolations, h.MaxWaitTurns = f.Violations, f.MaxTurns
	}
	return h
}

// Handover are the hand-over figures of a scenario, derived from
// Raw.Handover and the handover_gap histogram (Derive): how long its
// locks stood free while a client waited for them, and for a lock that
// declares FIFO order, how well it kept it. Absent when not measured.
type Handover struct {
	// GapMS summarizes the hand-over gaps, ms: per grant that followed a
	// freeing (a release's end, or a lease's end for a holder that never
	// released) while at least one client waited, the time from the
	// freeing to the grant. Absent when no grant followed a wanted
	// freeing (no contention: nothing measured).
	GapMS *metrics.Latency `json:"gap_ms,omitempty"`
	// IdleShare is the gaps' sum over the window times the locks: the
	// share of the run the locks stood free while wanted (0..1).
	IdleShare float64 `json:"idle_share"`
	// IdleMS is the gaps' sum, ms.
	IdleMS float64 `json:"idle_ms"`
	// Grants are the exclusive grants the figures cover.
	Grants int64 `json:"grants"`
	// FIFO: the strategy declares FIFO order; FIFOViolations and
	// MaxWaitTurns are measured only then (absent otherwise).
	FIFO bool `json:"fifo"`
	// FIFOViolations are grants out of arrival order: a client granted the
	// lock while another that started waiting for it earlier (by more
	// than 1 ms) still waited.
	FIFOViolations *int64 `json:"fifo_violations,omitempty"`
	// MaxWaitTurns is the longest wait in turns: the most grants of its
	// lock to other clients that one waiter waited through.
	MaxWaitTurns *int64 `json:"max_wait_turns,omitempty"`
}

// deriveHandover derives the Handover figures from raw data (nil when
// not measured).
func deriveHandover(r *HandoverRaw, windowS float64, gaps *hdrhistogram.Histogram) *Handover {
	if r == nil {
		return nil
	}
	h := &Handover{IdleMS: r.IdleS * 1000, Grants: r.Grants, FIFO: r.FIFO}
	if gaps != nil && gaps.TotalCount() > 0 {
		l := metrics.Summarize(gaps)
		h.GapMS = &l
	}
	if windowS > 0 && r.Locks > 0 {
		h.IdleShare = r.IdleS / (windowS * float64(r.Locks))
	}
	if r.FIFO {
		v, t := r.FIFOViolations, r.MaxWaitTurns
		h.FIFOViolations, h.MaxWaitTurns = &v, &t
	}
	return h
}

// addHandover combines two inputs' hand-over data: nil (not measured)
// unless both measured it. Sums add up, the longest wait is the larger;
// Concurrent inputs (independent runs merged, each on its own locks) add
// their locks, Sequential ones (repeats, on the same locks) keep them.
func addHandover(a, b *HandoverRaw, mode Mode) *HandoverRaw {
	if a == nil || b == nil {
		return nil
	}
	c := *a
	c.IdleS += b.IdleS
	c.Grants += b.Grants
	c.FIFO = a.FIFO && b.FIFO
	c.FIFOViolations += b.FIFOViolations
	c.MaxWaitTurns = max(a.MaxWaitTurns, b.MaxWaitTurns)
	if !c.FIFO {
		c.FIFOViolations, c.MaxWaitTurns = 0, 0
	}
	switch mode {
	case Concurrent:
		c.Locks += b.Locks
	case Sequential:
		c.Locks = max(a.Locks, b.Locks)
	}
	return &c
}
