package engine

import (
	"math"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

// DefaultInterval is the length of a timeline entry when the scenario
// sets none (Scenario.Interval).
const DefaultInterval = time.Second

// MinInterval is the shortest timeline interval a scenario may set.
const MinInterval = 100 * time.Millisecond

// foldTail is the shortest last interval the timeline keeps as an entry of
// its own, as a share of the interval: a shorter one (the in-flight
// operations finishing after the duration's end) is folded into the entry
// before it.
const foldTail = 4 // a quarter of the interval

// maxSettle bounds the sampler's wait, at an interval's end, for the
// clients to flush their buffered values into the interval histograms (a
// tenth of the interval, at most this).
const maxSettle = 100 * time.Millisecond

// liveSlot is one worker's live counts, written only by that worker and
// read by the sampler. Padded to a cache line so that workers never share
// one.
type liveSlot struct {
	ops, errors, acqFail atomic.Int64
	// holdNS and holds are the measured critical sections' time (ns) and
	// count, kept with a client ramp only (observer.holds), for each
	// interval's own ceiling.
	holdNS, holds atomic.Int64
	_             [24]byte
}

// count adds one measured operation's outcome (classify) to the slot: one
// uncontended atomic add on the worker's own cache line, or none.
func (s *liveSlot) count(o outcome) {
	switch o {
	case outOK:
		s.ops.Add(1)
	case outTimeout, outNotAcquired:
		s.acqFail.Add(1)
	case outError:
		s.errors.Add(1)
	}
}

// sampler reads the live slots (and the oracle's overlap count) at the end
// of every interval of the measured window and keeps the differences as
// the scenario's timeline; with recs, it also takes the interval
// histograms of the clients' recorders (metrics.Set.TakeInterval) and
// gives each entry its latency, and keeps the histograms, encoded, for
// the .hlog file.
type sampler struct {
	slots    []liveSlot
	overlaps func() int64
	// dropped, when set, is the open loop's live count of dropped
	// arrivals (schedule's live).
	dropped *atomic.Int64
	// offset is the warm-up: the measured window starts offset after the
	// scenario, and TS counts from the scenario's start.
	offset time.Duration
	// interval is each entry's length (0: DefaultInterval).
	interval time.Duration
	// onSecond, when set, gets each whole interval as it is read.
	onSecond func(report.Second)
	// recs, when set, are the measured window's recorders, with interval
	// histograms (metrics.Set.TrackIntervals).
	recs *metrics.Set

	scenarioStart time.Time
	start         time.Time // the measured window's start
	started       bool
	last          report.Second // running totals at the last read
	k             int           // whole intervals emitted
	out           []report.Second
	// cur are the Op and Acquire histograms of the entry being read, prev
	// those of out's last entry (kept until the next, for a folded tail);
	// op and acq hold the encoded histograms of the entries before it.
	cur, prev [2]*hdrhistogram.Histogram
	op, acq   [][]byte
}

// every is the interval.
func (s *sampler) every() time.Duration {
	if s.interval <= 0 {
		return DefaultInterval
	}
	return s.interval
}

func (s *sampler) totals() report.Second {
	var t report.Second
	for i := range s.slots {
		t.Ops += s.slots[i].ops.Load()
		t.Errors += s.slots[i].errors.Load()
		t.AcquireFailures += s.slots[i].acqFail.Load()
		t.Holds += s.slots[i].holds.Load()
		t.HoldMSSum += float64(s.slots[i].holdNS.Load()) / 1e6
	}
	if s.overlaps != nil {
		t.Violations = s.overlaps()
	}
	if s.dropped != nil {
		t.Dropped = s.dropped.Load()
	}
	return t
}

// diff returns the counts since the last read and makes now the last.
func (s *sampler) diff() report.Second {
	t := s.totals()
	d := report.Second{Ops: t.Ops - s.last.Ops, Errors: t.Errors - s.last.Errors,
		AcquireFailures: t.AcquireFailures - s.last.AcquireFailures, Violations: t.Violations - s.last.Violations,
		Dropped: t.Dropped - s.last.Dropped, Holds: t.Holds - s.last.Holds, HoldMSSum: t.HoldMSSum - s.last.HoldMSSum}
	s.last = t
	return d
}

// begin marks the start of the measured window: overlaps and drops
// counted in the warm-up are not the window's.
func (s *sampler) begin(now time.Time) {
	s.start, s.started = now, true
	t := s.totals()
	s.last = report.Second{Violations: t.Violations, Dropped: t.Dropped, Holds: t.Holds, HoldMSSum: t.HoldMSSum}
	if s.recs != nil {
		for i := range 2 {
			s.cur[i], s.prev[i] = metrics.NewHistogram(), metrics.NewHistogram()
		}
	}
}

// end ends the interval for the clients (metrics.Set.EndInterval: each
// flushes at the end of its operation in progress) unless final (every
// client has stopped and flushed). Called before the counts are read: an
// operation a client counts after it sees the interval end is one whose
// values it holds back.
func (s *sampler) end(final bool) {
	if s.recs == nil || final {
		return
	}
	s.recs.EndInterval()
}

// take adds the values the clients flushed since the last take to cur.
// Unless final, it first settles the interval (metrics.Set.Settle): each
// client has flushed once since end, or the sampler has taken the values
// of its ended operations itself, or a tenth of the interval has passed,
// at most maxSettle.
func (s *sampler) take(final bool) {
	if s.recs == nil {
		return
	}
	if !final {
		s.recs.Settle(time.Now().Add(min(s.every()/10, maxSettle)))
	}
	s.recs.TakeInterval(s.cur[0], s.cur[1], final)
}

// push appends d with cur's latency, and makes cur prev (encoding the
// prev before into op and acq).
func (s *sampler) push(d report.Second) {
	if s.recs != nil {
		if len(s.out) > 0 {
			s.keep()
		}
		setLatency(&d, s.cur)
		s.cur, s.prev = s.prev, s.cur
		s.cur[0].Reset()
		s.cur[1].Reset()
	}
	s.out = append(s.out, d)
}

// keep encodes prev, the histograms of out's last entry, into op and acq.
func (s *sampler) keep() {
	for i, dst := range []*[][]byte{&s.op, &s.acq} {
		enc, err := s.prev[i].Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil { // cannot happen: an in-memory histogram
			enc = nil
		}
		*dst = append(*dst, enc)
	}
}

// setLatency sets e's latency fields from the Op and Acquire histograms h
// (µs), zero for an empty one.
func setLatency(e *report.Second, h [2]*hdrhistogram.Histogram) {
	op, acq := metrics.Summarize(h[0]), metrics.Summarize(h[1])
	e.OpP50MS, e.OpP99MS, e.OpMaxMS = op.P50, op.P99, op.Max
	e.AcquireP50MS, e.AcquireP99MS, e.AcquireMaxMS = acq.P50, acq.P99, acq.Max
}

// emit appends an entry for every whole interval passed by now (a sampler
// that fell more than an interval behind gives the counts and latency read
// to the first of them) and returns the entries added; final as for take.
func (s *sampler) emit(now time.Time, final bool) []report.Second {
	every := s.every()
	kNow := int(now.Sub(s.start) / every)
	if kNow <= s.k {
		return nil
	}
	s.end(final)
	d := s.diff()
	s.take(final)
	from := len(s.out)
	for s.k < kNow {
		s.k++
		d.TS = (s.offset + time.Duration(s.k)*every).Seconds()
		s.push(d)
		d = report.Second{}
	}
	return s.out[from:]
}

// run samples from the start of the measured window (scenarioStart +
// offset) once an interval until stop is closed. done is closed on return.
func (s *sampler) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTimer(time.Until(s.scenarioStart.Add(s.offset)))
	defer t.Stop()
	select {
	case <-stop:
		return
	case <-t.C:
	}
	s.begin(s.scenarioStart.Add(s.offset))
	for {
		t.Reset(time.Until(s.start.Add(time.Duration(s.k+1) * s.every())))
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, sec := range s.emit(time.Now(), false) {
			if s.onSecond != nil {
				s.onSecond(sec)
			}
		}
	}
}

// finish reads the counts left at end (after every worker stopped; it
// flushes their recorders) and returns the timeline: one entry per whole
// interval of the window, then the rest of the window as a last entry, or
// folded into the entry before when shorter than a quarter of the
// interval. Nothing when the window never started.
func (s *sampler) finish(end time.Time) []report.Second {
	if !s.started { // the window began just as the run stopped
		if w := s.scenarioStart.Add(s.offset); end.After(w) {
			s.begin(w)
		} else {
			return nil
		}
	}
	if s.recs != nil {
		s.recs.Flush()
	}
	s.emit(end, true)
	rest := s.diff()
	s.take(true)
	tail := end.Sub(s.start) - time.Duration(s.k)*s.every()
	endTS := math.Max((s.offset + end.Sub(s.start)).Seconds(), s.offset.Seconds())
	if len(s.out) > 0 && tail < s.every()/foldTail {
		l := &s.out[len(s.out)-1]
		l.Ops += rest.Ops
		l.Errors += rest.Errors
		l.AcquireFailures += rest.AcquireFailures
		l.Violations += rest.Violations
		l.Dropped += rest.Dropped
		l.Holds += rest.Holds
		l.HoldMSSum += rest.HoldMSSum
		l.TS = endTS
		if s.recs != nil {
			s.prev[0].Merge(s.cur[0])
			s.prev[1].Merge(s.cur[1])
			setLatency(l, s.prev)
			s.keep()
		}
		return s.out
	}
	rest.TS = endTS
	s.push(rest)
	if s.recs != nil {
		s.keep()
	}
	return s.out
}

// intervals returns the encoded interval histograms of the timeline
// finish returned, one per entry (nil without recs).
func (s *sampler) intervals() (op, acq [][]byte) { return s.op, s.acq }

// fillOffered sets each entry's Offered: the arrivals the shape has due in
// its interval (from the entry before's TS, or from, to its own TS), cut
// at stop, when the scheduler stopped (arrivals due after it were never
// offered); all times in s since the scenario's start. With constant
// arrivals that is the arrivals the scheduler had due there; with Poisson
// arrivals the shape's expected count, the draws differing from it by
// about its square root.
func fillOffered(tl []report.Second, shape *arrival.Shape, from, stop float64) {
	prev := from
	for i := range tl {
		a, b := min(prev, stop), min(tl[i].TS, stop)
		tl[i].Offered = shape.Due(b) - shape.Due(a)
		prev = tl[i].TS
	}
}
