package workloads

import "time"

// Observer is told what a worker's lock helpers (Lock, LockRead, Unlock,
// Hold, Wrote) and its workload's operation see, as they see them: the one
// path by which a worker reports its events. The engine gives each worker
// a fan-out of its own (to the client's metrics recorder, the live
// timeline and the Prometheus exporter); a *metrics.Recorder is an
// Observer too. Its methods are called from the worker's goroutine only,
// on the hot path around every lock: an implementation must not block,
// allocate, lock or look anything up.
type Observer interface {
	// Acquired: a lock was granted after attempts TryAcquire calls, wait
	// after its acquire began (retries and waits included).
	Acquired(attempts int, wait time.Duration)
	// AcquireFailed: an acquire ended without the lock (gave up, timed
	// out, an error) after attempts TryAcquire calls and wait; stopping
	// says the run's stop ended it, which is no failure of the lock.
	AcquireFailed(attempts int, wait time.Duration, stopping bool)
	// Overshot: an acquire took more than twice its deadline (the acquire
	// timeout), granted or not.
	Overshot()
	// Cancelled: the caller's context was cancelled inside the critical
	// section (the cancel fault).
	Cancelled()
	// Held: a critical section held its lock for d, from the acquire's
	// return to leaving the section (before the release).
	Held(d time.Duration)
	// Released: a release call took d; notOwner says it found another
	// token in the lock (strategies.ErrNotOwner).
	Released(d time.Duration, notOwner bool)
	// LeaseLost: a lease was found lost at release (another token in the
	// lock, or the strategy had reported the loss).
	LeaseLost()
	// ForeignRelease: a release removed a lock the holder registry says
	// another client held.
	ForeignRelease()
	// WroteAfterLoss: a write completed under a lease already reported
	// lost.
	WroteAfterLoss()
	// FalseExtend: an extend (strategies.Extender) reported success after
	// another client had taken the lock since the holder acquired it
	// (see Worker.Extend).
	FalseExtend()
	// WriteRejected: a guard (optimistic check, fencing token, conditional
	// decrement) refused a write.
	WriteRejected()
	// Read: an operation only read (flash-sale's read-ratio).
	Read()
}
