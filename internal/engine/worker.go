package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
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
}

// fail records one failure and reports whether the run should give up.
func (s *errStreak) fail() bool {
	n := s.n.Add(1)
	if n == 1 {
		s.since.Store(time.Now().UnixNano())
	}
	return n >= MaxConsecutiveErrors ||
		(n >= 10 && time.Duration(time.Now().UnixNano()-s.since.Load()) >= MaxErrorStreak)
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
	outSkipped                    // did nothing (sold out) or its write was rejected
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
	case errors.Is(err, workloads.ErrSkip), errors.Is(err, workloads.ErrRejected):
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
	w   workloads.Worker
	pcg rand.PCG
	rng rand.Rand
	_   [64]byte
}

// loop is one worker: it starts operations back to back until ctx ends
// (closed loop) or one per arrival taken from jobs (open loop), recording
// into a scratch recorder during the warm-up and into real afterwards,
// and counting each measured operation's outcome in live for the
// timeline. With jobs, each operation waits for its intended start time
// from the scheduler; Op latency is then measured from that intended time
// (coordinated omission corrected) and Service from the actual start.
func loop(ctx context.Context, wl workloads.Workload, w *workloads.Worker, real *metrics.Recorder, warmEnd time.Time, done func(), streak *errStreak, abort func(error), inj *faults.Injector, jobs <-chan time.Time, live *liveSlot) {
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
			select {
			case at := <-jobs:
				intended = metrics.Mono(at)
			case <-ctx.Done():
				return
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
		if w.Rec != real && intended >= warm {
			w.Rec = real
		}
		w.Begin(t0)
		err := wl.Op(ctx, w)
		rec := w.Rec
		out := classify(ctx, err)
		if rec == real {
			live.count(out)
		}
		switch out {
		case outOK:
			rec.Ops++
			now := metrics.Now()
			rec.Observe(metrics.Op, now-intended)
			if jobs != nil {
				rec.Observe(metrics.Service, now-t0)
			}
			next = now
			w.Env.Obs.Op()
		case outCrashed:
			return // this client is dead: it never runs again
		case outSkipped:
		case outDone:
			done()
			return
		case outTimeout:
			rec.Timeouts++
		case outNotAcquired:
			rec.Failures++
		case outStopping:
			return // the run is stopping; not an error of the lock
		default: // outError
			kind := drivers.ErrorKind(err)
			rec.Errors[kind]++
			if _, ok := rec.Samples[kind]; !ok {
				rec.Samples[kind] = err.Error()
			}
			if errors.Is(err, context.Canceled) {
				return
			}
			if streak.fail() {
				abort(err)
				return
			}
			// Back off on errors (a server gone, a timeout): 1 ms doubling
			// to 500 ms, so a failing node is not hammered in a tight loop.
			pause = min(max(2*pause, time.Millisecond), 500*time.Millisecond)
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if rec.Due() {
			// The recorder's batch goes into its histograms here, between
			// two operations: the next one's start is read after it, so no
			// measured time includes it.
			rec.Flush()
			next = 0
		}
		pause = 0
		if err == nil {
			streak.ok()
		}
	}
}
