package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// errStreak counts failed operations in a row and when the run of
// failures began.
type errStreak struct {
	n     atomic.Int64
	since atomic.Int64 // unix ns of the first failure in the streak
	// limit is how long a streak may last (0: MaxErrorStreak; < 0: the
	// guard is off and fail never gives up).
	limit time.Duration
}

// fail records one failure and reports whether the run should give up.
func (s *errStreak) fail() bool {
	n := s.n.Add(1)
	if n == 1 {
		s.since.Store(time.Now().UnixNano())
	}
	if s.limit < 0 {
		return false
	}
	limit := s.limit
	if limit == 0 {
		limit = MaxErrorStreak
	}
	return n >= MaxConsecutiveErrors ||
		(n >= 10 && time.Duration(time.Now().UnixNano()-s.since.Load()) >= limit)
}

// ok ends a streak (one load, no write, in the common case).
func (s *errStreak) ok() {
	if s.n.Load() != 0 {
		s.n.Store(0)
	}
}

// outcome is how the worker loop (and the timeline) count an operation.
type outcome int

const (
	outOK          outcome = iota // completed
	outCrashed                    // the client died at a crash point
	outSkipped                    // did nothing (sold out), its write was rejected, or its caller cancelled it
	outDone                       // nothing left to do
	outTimeout                    // the acquire timed out
	outNotAcquired                // the lock was busy and the retry policy gave up
	outStopping                   // cancelled because the run is stopping
	outError                      // any other error (Redis, network)
)

// classify sorts an Op's error into its outcome: the one rule the worker
// loop and the timeline both count by.
func classify(ctx context.Context, err error) outcome {
	switch {
	case err == nil:
		return outOK
	case errors.Is(err, strategies.ErrCrashed):
		return outCrashed
	case errors.Is(err, workloads.ErrSkip), errors.Is(err, workloads.ErrRejected), errors.Is(err, workloads.ErrCancelled):
		return outSkipped
	case errors.Is(err, workloads.ErrDone):
		return outDone
	case errors.Is(err, strategies.ErrAcquireTimeout):
		return outTimeout
	case errors.Is(err, strategies.ErrNotAcquired):
		return outNotAcquired
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return outStopping
	}
	return outError
}

// workerState is one client's Worker and random source in one
// allocation, padded so that two clients' per-operation writes (the
// Worker's timestamps, the generator's state) never share a cache line:
// clients on two cores would otherwise slow each other down.
type workerState struct {
	w     workloads.Worker
	obs   observer
	pcg   rand.PCG
	rng   rand.Rand
	think thinker
	_     [64]byte
}

// thinker is one client's think time (Spec.Think): its distribution, a
// random source of its own (so that a think time changes none of the
// workload's or the retry policy's draws), and a timer kept from one
// wait to the next.
type thinker struct {
	dist  workloads.Dist
	pcg   rand.PCG
	rng   rand.Rand
	timer *time.Timer
}

// thinkStream is the PCG stream of client i's think times (seeded with
// Spec.Seed): apart from the clients' own streams (i) and the open
// loop's pacer (1<<40).
func thinkStream(i int) uint64 { return 1<<41 | uint64(i) }

// init sets t to draw from d with the source (seed, stream).
func (t *thinker) init(d workloads.Dist, seed, stream uint64) {
	t.dist, t.pcg = d, *rand.NewPCG(seed, stream)
	t.rng = *rand.New(&t.pcg)
}

// draw is the next think time (0 without one).
func (t *thinker) draw() time.Duration {
	if t == nil || t.dist.IsZero() {
		return 0
	}
	return t.dist.Sample(&t.rng)
}

// wait waits one think time, between two of the client's operations:
// outside any lock and any measured time (the caller reads the clock
// afresh for the next operation). An interval of the timeline that ends
// meanwhile gets the client's buffered values at once (as between an
// open loop's arrivals), not at the end of its next operation. It reports
// false when ctx ended during the wait: the client stops at once.
func (t *thinker) wait(ctx context.Context, o *observer) bool {
	d := t.draw()
	if d <= 0 {
		return ctx.Err() == nil
	}
	if t.timer == nil {
		t.timer = time.NewTimer(d)
	} else {
		t.timer.Reset(d)
	}
	ended := o.rec.IntervalEnded()
	for {
		select {
		case <-t.timer.C:
			return true
		case <-ended:
			o.rec.Flush()
			ended = o.rec.IntervalEnded()
		case <-ctx.Done():
			t.timer.Stop()
			return false
		}
	}
}

// loop is one worker: it starts operations back to back until ctx ends
// (closed loop; with think set, waiting a think time after each
// operation, thinker.wait) or one per arrival taken from jobs (open
// loop), and reports each operation's outcome to o, the observer the worker w reports
// its own events to (w.Obs): o records into the warm-up's recorder before
// warmEnd and into the real one afterwards, and counts each measured
// operation's outcome for the timeline. With jobs, each operation waits for its intended start time
// from the scheduler; Op latency is then measured from that intended time
// (coordinated omission corrected) and Service from the actual start.
//
// With ramp (a client ramp, closed loop only), the worker waits before
// each operation until it is among the clients in force (clientRamp.active),
// outside every figure.
func loop(ctx context.Context, wl workloads.Workload, w *workloads.Worker, o *observer, warmEnd time.Time, done func(), streak *errStreak, abort func(error), inj *faults.Injector, jobs <-chan time.Time, think *thinker, ramp *clientRamp) {
	var pause time.Duration
	// Timestamps are metrics.Now (one monotonic clock read each).
	warm := metrics.Mono(warmEnd)
	// next is the end of the operation just completed (closed loop): the
	// next one starts then, as nothing but this loop's bookkeeping comes
	// between them, and the clock is not read again for it. 0: read it.
	var next time.Duration
	for ctx.Err() == nil {
		var intended time.Duration
		if jobs != nil {
			// Between arrivals the worker is idle: an interval that ends
			// meanwhile gets its buffered values (every one of an
			// operation that ended before it) at once, not at the end of
			// the next operation.
			ended := o.rec.IntervalEnded()
			if o.rec.Due() {
				o.rec.Flush()
			}
		wait:
			for {
				select {
				case at := <-jobs:
					intended = metrics.Mono(at)
					break wait
				case <-ended:
					o.rec.Flush()
					ended = o.rec.IntervalEnded()
				case <-ctx.Done():
					return
				}
			}
		}
		if ramp != nil {
			waited, ok := ramp.active(ctx, w.ID, o)
			if !ok {
				return
			}
			if waited {
				next = 0 // the clock is read afresh after a wait
			}
		}
		t0 := next
		if t0 == 0 || jobs != nil {
			t0 = metrics.Now()
		}
		next = 0
		if jobs == nil {
			intended = t0
		}
		o.measure(intended, warm)
		o.start()
		w.Begin(t0)
		err := wl.Op(ctx, w)
		out := classify(ctx, err)
		o.outcome(out)
		switch out {
		case outOK:
			now := metrics.Now()
			o.completed(now-intended, now-t0, jobs != nil)
			next = now
			if o.slow > 0 && o.stall(now-t0) {
				next = 0
			}
		case outCrashed:
			return // this client is dead: it never runs again
		case outSkipped:
		case outDone:
			done()
			return
		case outTimeout:
			o.timedOut()
		case outNotAcquired:
			o.gaveUp()
		case outStopping:
			return // the run is stopping; not an error of the lock
		default: // outError
			o.errored(err)
			if errors.Is(err, context.Canceled) {
				return
			}
			if streak.fail() || errors.Is(err, strategies.ErrFatal) {
				abort(err)
				return
			}
			// Back off on errors (a server gone, a timeout): 1 ms doubling
			// to 500 ms, so a failing node is not hammered in a tight loop;
			// a think time is waited on top of it.
			pause = min(max(2*pause, time.Millisecond), 500*time.Millisecond)
			t := time.NewTimer(pause + think.draw())
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if o.flushIfDue() {
			// The recorder's batch went into its histograms here, between
			// two operations: the next one's start is read after it, so no
			// measured time includes it.
			next = 0
		}
		pause = 0
		if err == nil {
			streak.ok()
		}
		if think != nil {
			// The think time: after the operation's figures, before the
			// next one's clock starts.
			if !think.wait(ctx, o) {
				return
			}
			next = 0
		}
	}
}

// stall adds the test slowdown's share of an operation that took d to
// what the client owes (observer.slow) and sleeps it once 1 ms is owed,
// taking off the time actually slept (a sleep overshoots); true when it
// slept.
func (o *observer) stall(d time.Duration) bool {
	o.owed += time.Duration(float64(d) * o.slow)
	if o.owed < time.Millisecond {
		return false
	}
	t := metrics.Now()
	time.Sleep(o.owed)
	o.owed -= metrics.Now() - t
	return true
}
