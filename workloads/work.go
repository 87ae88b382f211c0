package workloads

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// Work spends the critical-section time (sleeping), cut short only when
// Env.Hard ends. Inside a critical section (Hold), it then extends the
// lease when the strategy's leases can (strategies.Extender, see Extend):
// after the pause point and the work, before the holder's loss check and
// write, so that a pause can make the extend stale.
func (w *Worker) Work() {
	if f := w.Env.Faults; f != nil {
		f.Paused(w.ID, w.Gate)
	}
	w.work()
	if w.cur != nil {
		_ = w.Extend(w.cur) // a failed extend leaves the lease to its loss check
	}
}

// Extend extends l, which must be the lease of the critical section the
// worker is in (Hold), when it is a strategies.Extender; nil when it is not.
// An extend that succeeds after another client has taken the lock since
// this worker acquired it (the oracle's holder registry saw another
// client register since the worker's own registration,
// Oracle.TakenSince), or while the registry names another client as the
// lock's holder (Oracle.HeldByAnother), is counted as a false extend
// (Obs.FalseExtend): the strategy extended, or claims it did, a lease that
// had ended, on a lock that is someone else's or was free. The first check
// does not depend on when the extend lands in a hand-over: the registry
// names a holder only from its acquire's return to its release, and an
// extend between two holders' registrations would escape the second. Its
// Redis calls run on the worker's I/O context (see IO). With Env.Margins
// set, a successful extend's margin is recorded (metrics.Margins.Extended,
// in the worker's shard): for a lease that counts its own validity
// (strategies.Validity, Redlock's), its ValidUntil minus this extend's
// send time, the remaining validity the client counts with; else,
// conservatively, the TTL minus the time from the acquire's start (its
// first attempt's, not its return) or the last successful extend's start
// to this extend's start.
func (w *Worker) Extend(l strategies.Lease) error {
	e, ok := l.(strategies.Extender)
	if !ok {
		return nil
	}
	ctx := w.io
	if ctx == nil {
		ctx = context.Background()
	}
	m := w.Env.Margins
	var (
		sent, left time.Duration
		valid      bool
	)
	if m != nil {
		m.Renews() // a locker that does not declare strategies.ExtendsLeases: measured from here on
		now := time.Now()
		sent = metrics.Mono(now)
		if v, ok := l.(strategies.Validity); ok {
			left, valid = v.ValidUntil().Sub(now), true
		}
	}
	err := e.Extend(ctx)
	if err == nil && m != nil {
		if !valid {
			left = m.TTL() - (sent - w.leaseFrom)
		}
		m.Extended(w.ID, sent, left)
		w.leaseFrom = sent
	}
	if err == nil && w.cur != nil && w.curLock >= 0 {
		if o := w.Env.Oracle; o.TakenSince(w.curLock, w.curGen) || o.HeldByAnother(w.curLock, w.ID) {
			w.Obs.FalseExtend()
		}
	}
	return err
}

// work sleeps for a sample of the work distribution, cut short only when
// Env.Hard ends.
func (w *Worker) work() {
	d := w.Env.Params.Work.Sample(w.Rng)
	if f := w.Env.Faults; f != nil && w.cur != nil {
		if at, ok := f.Kills(w.ID); ok { // proc-kill: die at its share of the work, lock held
			time.Sleep(time.Duration(at * float64(d)))
			f.Die()
		}
	}
	if w.cancel != nil { // the cancel fault strikes at its share of the work
		if at := time.Duration(w.cancelAt * float64(d)); at <= 0 {
			w.cancel()
		} else {
			t := time.AfterFunc(at, w.cancel)
			defer t.Stop()
		}
	}
	if d <= 0 {
		return
	}
	if w.Env.Hard == nil {
		time.Sleep(d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.Env.Hard.Done():
	}
}

// BeforeWrite is the point between a holder's loss check and its write,
// where a pause fault with point=write strikes (a GC pause between check
// and act: the check passed, the lease expires, the write still lands).
func (w *Worker) BeforeWrite() {
	if f := w.Env.Faults; f != nil {
		f.PausedBeforeWrite(w.ID, w.Gate)
	}
}
