package workloads

import (
	"time"

	"github.com/lockbench/lockbench/internal/liveness"
)

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
	// FalseAcquire: a granted acquire after which the lock key did not
	// hold the lease's token (Env.VerifyAcquire's read).
	FalseAcquire()
	// WriteRejected: a guard (optimistic check, fencing token, conditional
	// decrement) refused a write.
	WriteRejected()
	// Read: an operation only read (flash-sale's read-ratio, the read
	// role of --mix).
	Read()
	// Overlapped: this client's entry into a critical section found a
	// conflicting holder inside (an exclusive holder finding anyone, a
	// reader finding an exclusive holder): one of the oracle's overlaps,
	// counted on the client that entered (its role's figures).
	Overlapped()
}

// Oracle is the in-process safety oracle as the worker's lock helpers
// report to it (Worker.Hold, Worker.Extend): per lock i (0..Env.Locks-1),
// who holds it and how many are inside its critical section. A workload
// does not call it: Setup gives the scenario one with Env.SetLocks, and
// Hold reports every section. The engine's is internal/metrics' Oracle.
// Its methods are called on the hot path from every worker at once: an
// implementation must be safe for concurrent use and must not block or
// allocate.
type Oracle interface {
	// Acquired registers client as lock i's holder and returns the
	// generation of that registration.
	Acquired(i, client int) (gen uint32)
	// Releasing is called before client's release of lock i: it
	// unregisters client, and another reports that the registry names
	// another client instead (one that took the lock after client's lease
	// ended: a release that still deletes the key frees its lock).
	Releasing(i, client int) (another bool)
	// HeldByAnother reports whether the registry names a holder of lock i
	// other than client.
	HeldByAnother(i, client int) bool
	// TakenSince reports whether another client registered as lock i's
	// holder after the registration of generation gen.
	TakenSince(i int, gen uint32) bool
	// Enter and Leave bracket an exclusive critical section of lock i;
	// Enter reports whether it overlapped another holder.
	Enter(i int) bool
	Leave(i int)
	// EnterRead and LeaveRead bracket a shared (read-side) section;
	// EnterRead reports whether it found an exclusive holder inside.
	EnterRead(i int) bool
	LeaveRead(i int)
	// Overlaps is the number of overlaps so far; safe to call while the
	// workers run.
	Overlaps() int64
}

// Liveness is the liveness oracle's token registry as the worker's lock
// helpers report to it: every acquire's outcome and every holder's exit
// (Worker.Lock, Unlock, Hold). A workload does not call it. The engine's
// is internal/liveness' Tracker; nil (Env.Live): none. Called from every
// worker at once, on the hot path.
type Liveness interface {
	// Acquired: client was granted the lock key, which holds token.
	Acquired(client int, key, token string)
	// Refused: client's acquire was answered "not acquired" and nothing of
	// it is still in flight.
	Refused(client int)
	// Failed: client's acquire ended otherwise (an error, a timeout of a
	// locker that waits): an attempt may still be in flight.
	Failed(client int)
	// Exit: client left lock key, held with token, as how says; start is
	// when its release began, or the crash (metrics.Now's clock). ExitAt
	// also gives now, the end of the release call.
	Exit(client int, key, token string, how LeaseEnd, start time.Duration)
	ExitAt(client int, key, token string, how LeaseEnd, start, now time.Duration)
}

// LeaseEnd is how a holder left its lock, as Liveness is told: released,
// found another's token at release (not owner), or abandoned (a failed
// release, a crash).
type LeaseEnd = liveness.How

// History records the critical sections of one worker for the
// cross-process oracle (internal/history): Hold adds each section it runs.
// The engine's is internal/history's Buf, one per worker; nil
// (Worker.Hist): none kept. Only its worker calls it.
type History interface {
	// Add records a section of lock key held with token (and fence, the
	// lease's fencing token, 0 without one) from enter to leave
	// (metrics.Now's clock); shared marks a read side.
	Add(key, token string, fence int64, enter, leave time.Duration, shared bool)
}
