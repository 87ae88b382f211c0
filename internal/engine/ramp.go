package engine

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/report"
)

// A client ramp (Spec.ClientShape, --clients ramp:from=N1,to=N2,over=D or
// stages:[start=N0,]D1=N1,...) varies a closed loop's client count over
// one run, as k6's ramping-vus executor does: the shape (the grammar of
// --rate's shapes, internal/arrival, read as a client count instead of a
// rate) gives the count at each moment, on the scenario's clock (warm-up
// included, as --rate's shapes). The engine starts Spec.Clients workers,
// the most the shape reaches (MaxClientsOf), and worker i runs operations
// only while ClientsAt(shape, t) > i: a worker beyond the count waits,
// outside every figure, and starts its next operation when the count
// passes it; a worker the count drops below finishes its operation in
// progress and then waits. The count changes are applied by one goroutine
// within a millisecond of the shape's value crossing a whole count
// (rampStep).

// rampStep is the resolution at which a client ramp's count changes are
// found and applied, and at which ClientsMeanOf integrates the count.
const rampStep = time.Millisecond

// ErrRampOpenLoop is Validate's refusal of a client ramp in an open loop.
var ErrRampOpenLoop = errors.New("--clients: a client ramp goes with a closed loop; with --rate (an open loop) the arrivals decide the load: ramp them with --rate's own shapes (ramp:, stages:) and give --clients (or --max-clients) a number")

// ClientsAt is a client ramp's count at t s since the scenario's start:
// the shape's value there rounded to the nearest whole count (halves up),
// never below 0.
func ClientsAt(sh *arrival.Shape, t float64) int {
	return max(0, int(math.Floor(sh.Rate(t)+0.5)))
}

// MaxClientsOf is the most clients a ramp reaches: its highest value,
// rounded as ClientsAt rounds.
func MaxClientsOf(sh *arrival.Shape) int {
	return max(0, int(math.Floor(sh.MaxRate()+0.5)))
}

// ClientsMeanOf is the mean of a ramp's count (ClientsAt, the rounded
// count) over [a, b] s, integrated in steps of rampStep (the count at
// each step's middle); the count at a when b <= a.
func ClientsMeanOf(sh *arrival.Shape, a, b float64) float64 {
	if b <= a {
		return float64(ClientsAt(sh, a))
	}
	step := rampStep.Seconds()
	var sum float64 // count x steps: a whole number but for the last step
	for k := 0; ; k++ {
		t := a + float64(k)*step
		if t >= b {
			break
		}
		d := min(step, b-t)
		sum += float64(ClientsAt(sh, t+d/2)) * d / step
	}
	return sum * step / (b - a)
}

// nextCount is the first moment after t (s, in steps of rampStep) at
// which the ramp's count differs from n, scanning at most a second ahead
// (then t + 1 s is returned, to look again from there); ok is false when
// the count never changes again (a finite shape past its end).
func nextCount(sh *arrival.Shape, t float64, n int) (at float64, ok bool) {
	step := rampStep.Seconds()
	end := sh.Length() // 0: no end
	for u := t + step; u <= t+1; u += step {
		if ClientsAt(sh, u) != n {
			return u, true
		}
		if end > 0 && u > end {
			return 0, false
		}
	}
	return t + 1, true
}

// clientRamp applies a ramp to the workers of one scenario: the count
// active now, and a channel closed whenever it changes.
type clientRamp struct {
	shape *arrival.Shape
	start time.Time
	n     atomic.Int64
	ch    atomic.Pointer[chan struct{}]
	mu    sync.Mutex
}

// newClientRamp is the ramp of shape on a scenario started at start,
// with the count at the start already in force.
func newClientRamp(shape *arrival.Shape, start time.Time) *clientRamp {
	c := &clientRamp{shape: shape, start: start}
	ch := make(chan struct{})
	c.ch.Store(&ch)
	c.n.Store(int64(ClientsAt(shape, 0)))
	return c
}

// set makes n the count in force, waking the waiting workers if it
// changed.
func (c *clientRamp) set(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n.Load() == int64(n) {
		return
	}
	c.n.Store(int64(n))
	ch := make(chan struct{})
	old := c.ch.Swap(&ch)
	close(*old)
}

// run applies the count changes as the clock reaches them, until ctx
// ends or the count never changes again.
func (c *clientRamp) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for {
		now := time.Since(c.start).Seconds()
		n := ClientsAt(c.shape, now)
		c.set(n)
		next, ok := nextCount(c.shape, now, n)
		if !ok {
			return
		}
		t.Reset(time.Until(c.start.Add(time.Duration(next * float64(time.Second)))))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// active waits until worker i is among the clients in force (the count
// above i), outside every figure: an interval of the timeline that ends
// meanwhile gets the worker's buffered values at once. It reports whether
// it waited (the caller reads the clock afresh), and ok false when ctx
// ended during the wait (the worker stops).
func (c *clientRamp) active(ctx context.Context, i int, o *observer) (waited, ok bool) {
	var ended <-chan struct{}
	for {
		ch := *c.ch.Load()
		if c.n.Load() > int64(i) {
			return waited, true
		}
		if !waited {
			waited = true
			if o.rec.Due() {
				o.rec.Flush()
			}
			ended = o.rec.IntervalEnded()
		}
		select {
		case <-ch:
		case <-ended:
			o.rec.Flush()
			ended = o.rec.IntervalEnded()
		case <-ctx.Done():
			return waited, false
		}
	}
}

// fillClients sets each timeline entry's Clients (the ramp's count at the
// entry's end, ClientsAt) and ClientsMean (its mean over the entry's
// interval, from the entry before's TS, or from, to its own); all times
// in s since the scenario's start.
func fillClients(tl []report.Second, sh *arrival.Shape, from float64) {
	prev := from
	for i := range tl {
		tl[i].Clients = ClientsAt(sh, tl[i].TS)
		tl[i].ClientsMean = ClientsMeanOf(sh, prev, tl[i].TS)
		prev = tl[i].TS
	}
}

// clientSeconds is the ramp's count integrated over [from, to] s: the
// client-seconds of the measured window (report.Raw.ClientSeconds).
func clientSeconds(sh *arrival.Shape, from, to float64) float64 {
	if to <= from {
		return 0
	}
	return ClientsMeanOf(sh, from, to) * (to - from)
}
