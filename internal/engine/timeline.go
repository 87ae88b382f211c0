package engine

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/report"
)

// foldTail is the shortest last interval the timeline keeps as an entry of
// its own; a shorter one (the in-flight operations finishing after the
// duration's end) is folded into the entry before it.
const foldTail = 250 * time.Millisecond

// liveSlot is one worker's live counts, written only by that worker and
// read by the sampler. Padded to a cache line so that workers never share
// one.
type liveSlot struct {
	ops, errors, acqFail atomic.Int64
	_                    [40]byte
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

// sampler reads the live slots (and the oracle's overlap count) once a
// second of the measured window and keeps the differences as the
// scenario's timeline.
type sampler struct {
	slots    []liveSlot
	overlaps func() int64
	// dropped, when set, is the open loop's live count of dropped
	// arrivals (schedule's live).
	dropped *atomic.Int64
	// offset is the warm-up: the measured window starts offset after the
	// scenario, and TS counts from the scenario's start.
	offset time.Duration
	// onSecond, when set, gets each whole second as it is read.
	onSecond func(report.Second)

	scenarioStart time.Time
	start         time.Time // the measured window's start
	started       bool
	last          report.Second // running totals at the last read
	k             int           // whole seconds emitted
	out           []report.Second
}

func (s *sampler) totals() report.Second {
	var t report.Second
	for i := range s.slots {
		t.Ops += s.slots[i].ops.Load()
		t.Errors += s.slots[i].errors.Load()
		t.AcquireFailures += s.slots[i].acqFail.Load()
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
		Dropped: t.Dropped - s.last.Dropped}
	s.last = t
	return d
}

// begin marks the start of the measured window: overlaps and drops
// counted in the warm-up are not the window's.
func (s *sampler) begin(now time.Time) {
	s.start, s.started = now, true
	t := s.totals()
	s.last = report.Second{Violations: t.Violations, Dropped: t.Dropped}
}

// emit appends an entry for every whole second passed by now (a sampler
// that fell more than a second behind gives the counts read to the first
// of them) and returns the entries added.
func (s *sampler) emit(now time.Time) []report.Second {
	kNow := int(now.Sub(s.start) / time.Second)
	if kNow <= s.k {
		return nil
	}
	d := s.diff()
	from := len(s.out)
	for s.k < kNow {
		s.k++
		d.TS = (s.offset + time.Duration(s.k)*time.Second).Seconds()
		s.out = append(s.out, d)
		d = report.Second{}
	}
	return s.out[from:]
}

// run samples from the start of the measured window (scenarioStart +
// offset) once a second until stop is closed. done is closed on return.
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
		t.Reset(time.Until(s.start.Add(time.Duration(s.k+1) * time.Second)))
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, sec := range s.emit(time.Now()) {
			if s.onSecond != nil {
				s.onSecond(sec)
			}
		}
	}
}

// finish reads the counts left at end (after every worker stopped) and
// returns the timeline: one entry per whole second of the window, then the
// rest of the window as a last entry, or folded into the entry before when
// shorter than foldTail. Nothing when the window never started.
func (s *sampler) finish(end time.Time) []report.Second {
	if !s.started { // the window began just as the run stopped
		if w := s.scenarioStart.Add(s.offset); end.After(w) {
			s.begin(w)
		} else {
			return nil
		}
	}
	s.emit(end)
	rest := s.diff()
	tail := end.Sub(s.start) - time.Duration(s.k)*time.Second
	endTS := math.Max((s.offset + end.Sub(s.start)).Seconds(), s.offset.Seconds())
	if len(s.out) > 0 && tail < foldTail {
		l := &s.out[len(s.out)-1]
		l.Ops += rest.Ops
		l.Errors += rest.Errors
		l.AcquireFailures += rest.AcquireFailures
		l.Violations += rest.Violations
		l.Dropped += rest.Dropped
		l.TS = endTS
		return s.out
	}
	rest.TS = endTS
	return append(s.out, rest)
}

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
