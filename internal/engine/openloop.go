package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/arrival"
)

// Pacer gives the intended start time of each operation of an open-loop
// run, on an arrival shape (arrival.Shape: a constant rate, a ramp, a sine
// or k6-style stages) whose clock starts at start. Constant arrivals: the
// n-th (n = 0, 1, ...) at start + shape.Inv(n), where the shape's
// cumulative rate reaches n (with a constant rate R, n/R: wrk2's and k6's
// constant-arrival-rate; on a ramp or a sine, vegeta's LinearPacer and
// SinePacer, k6's ramping-arrival-rate). Poisson arrivals: a
// non-homogeneous Poisson process of intensity the shape's rate, by
// time-rescaling a unit-rate one: the first at start, then at
// start + shape.Inv(E), E the running sum of unit exponential gaps (with a
// constant rate R, exponential gaps of mean 1/R). A shape whose rate
// stays 0 from some time on has no arrival after it: Next then returns a
// time about 30 years ahead. Not safe for concurrent use.
type Pacer struct {
	start   time.Time
	shape   *arrival.Shape
	poisson bool
	rng     *rand.Rand
	n       int64   // constant: arrivals given
	m       float64 // poisson: the unit-rate process's time
}

// NewPacer returns a Pacer from start at a constant rate ops/s; poisson
// needs rng.
func NewPacer(start time.Time, rate float64, poisson bool, rng *rand.Rand) *Pacer {
	return NewShapePacer(start, arrival.Constant(rate), poisson, rng)
}

// NewShapePacer returns a Pacer of shape from start; poisson needs rng.
func NewShapePacer(start time.Time, shape *arrival.Shape, poisson bool, rng *rand.Rand) *Pacer {
	return &Pacer{start: start, shape: shape, poisson: poisson, rng: rng}
}

// farAhead bounds an arrival time, s after start: 1e9 s (about 31 years)
// stands for never and stays well inside time.Duration.
const farAhead = 1e9

// Next returns the next intended start time.
func (p *Pacer) Next() time.Time {
	var s float64
	if !p.poisson {
		s = p.shape.Inv(float64(p.n))
		p.n++
	} else {
		s = p.shape.Inv(p.m)
		p.m += p.rng.ExpFloat64()
	}
	s = min(s, farAhead) // +Inf included
	return p.start.Add(time.Duration(math.Round(s * float64(time.Second))))
}

// schedule hands each intended start time to a free worker through jobs,
// waiting until that time first. An arrival that finds no free worker
// within dropAfter of its intended time is counted as dropped, never
// silently delayed further: the bound runs from the intended time, not
// from when the scheduler got to the arrival, so under a sustained
// overload the arrivals already overdue are dropped at once and the
// scheduler keeps pace with the intended times. A late arrival keeps its
// intended time, so the latency measured from it includes the wait
// (coordinated omission corrected). It returns when ctx ends.
//
// Arrivals due at or after end (the scenario's last instant) are not
// offered. Its tally: Offered, the arrivals decided (handed to a worker or
// dropped), and Dropped; Undecided, the arrivals due before the stop (the
// moment it saw ctx end, or end if that came first) that were neither:
// one still waiting for a free worker inside its dropAfter bound, and
// those a scheduler running behind (a stalled machine) had not reached.
// Offered + Undecided is then exactly the arrivals due before the stop.
// live, when not nil, is also counted up at every drop as it happens (the
// timeline's sampler reads it).
func schedule(ctx context.Context, p *Pacer, end time.Time, jobs chan<- time.Time, dropAfter time.Duration, live *atomic.Int64) (t Tally) {
	drop := func() {
		t.Offered++
		t.Dropped++
		if live != nil {
			live.Add(1)
		}
	}
	// finish counts the undecided arrivals: at (when it was not decided)
	// and every one after it due before the stop.
	finish := func(at time.Time) Tally {
		t.Stop = time.Now()
		stop := t.Stop
		if end.Before(stop) {
			stop = end
		}
		for ; at.Before(stop); at = p.Next() {
			t.Undecided++
		}
		return t
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		at := p.Next()
		if !at.Before(end) { // due at or after the end: never offered
			<-ctx.Done()
			return finish(at)
		}
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return finish(at)
			case <-timer.C:
			}
		}
		select {
		case jobs <- at:
			t.Offered++
			continue
		case <-ctx.Done():
			return finish(at)
		default:
		}
		wait := time.Until(at.Add(dropAfter))
		if wait <= 0 { // no worker was free for the whole bound
			drop()
			continue
		}
		timer.Reset(wait)
		select {
		case jobs <- at:
			t.Offered++
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
			drop()
		case <-ctx.Done():
			return finish(at)
		}
	}
}

// Tally is what schedule counts: arrivals Offered (decided: handed to a
// worker or dropped), Dropped, and Undecided at Stop, the moment the
// scheduler saw its context end.
type Tally struct {
	Offered, Dropped, Undecided int64
	Stop                        time.Time
}
