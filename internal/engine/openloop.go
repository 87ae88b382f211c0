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
// (coordinated omission corrected). It returns when ctx ends, with the
// number of arrivals offered (handed to a worker or dropped; one still
// waiting when ctx ends is neither) and dropped. live, when not nil, is
// also counted up at every drop as it happens (the timeline's sampler
// reads it).
func schedule(ctx context.Context, p *Pacer, jobs chan<- time.Time, dropAfter time.Duration, live *atomic.Int64) (offered, dropped int64) {
	drop := func() {
		offered++
		dropped++
		if live != nil {
			live.Add(1)
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		at := p.Next()
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		select {
		case jobs <- at:
			offered++
			continue
		case <-ctx.Done():
			return
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
			offered++
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
			drop()
		case <-ctx.Done():
			return
		}
	}
}
