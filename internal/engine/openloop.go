package engine

import (
	"context"
	"math/rand/v2"
	"time"
)

// Pacer gives the intended start time of each operation of an open-loop
// run: constant (the i-th at start + i/rate) or Poisson (exponential gaps
// of mean 1/rate), as wrk2 and k6's constant-arrival-rate do. Not safe for
// concurrent use.
type Pacer struct {
	start   time.Time
	rate    float64 // ops/s
	poisson bool
	rng     *rand.Rand
	n       int64
	next    time.Time
}

// NewPacer returns a Pacer from start at rate ops/s; poisson needs rng.
func NewPacer(start time.Time, rate float64, poisson bool, rng *rand.Rand) *Pacer {
	return &Pacer{start: start, rate: rate, poisson: poisson, rng: rng, next: start}
}

// Next returns the next intended start time.
func (p *Pacer) Next() time.Time {
	if !p.poisson {
		t := p.start.Add(time.Duration(float64(p.n) * float64(time.Second) / p.rate))
		p.n++
		return t
	}
	t := p.next
	p.next = p.next.Add(time.Duration(p.rng.ExpFloat64() / p.rate * float64(time.Second)))
	p.n++
	return t
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
// waiting when ctx ends is neither) and dropped.
func schedule(ctx context.Context, p *Pacer, jobs chan<- time.Time, dropAfter time.Duration) (offered, dropped int64) {
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
			offered++
			dropped++
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
			offered++
			dropped++
		case <-ctx.Done():
			return
		}
	}
}
