// Package workloads defines what a run does inside and around the lock: the
// Workload interface, its registry, the per-worker state, and the shared
// lock helpers that time every acquire and release. One file per workload.
package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

// Workload is one kind of operation driven through a lock.
type Workload interface {
	// Setup writes the initial data under env.Prefix.
	Setup(ctx context.Context, env *Env) error
	// Op performs one operation for worker w. It returns nil for a completed
	// operation, ErrSkip for one that did nothing (for example a sold-out
	// item), ErrDone when there is nothing left to do, or the error that
	// ended it (strategies.ErrAcquireTimeout, a Redis error, ...).
	Op(ctx context.Context, w *Worker) error
	// Verify reads the final state and returns the workload's figures and
	// violation counts.
	Verify(ctx context.Context, env *Env) (Result, error)
}

// Pooled is implemented by workloads whose end check compares the data
// with what this process's clients were acknowledged (flash-sale's acked
// orders, the counters' increments). When N processes run a scenario as
// execution segments (internal/segment), each adds its Counts into Redis
// at the end barrier, and the leader calls SetCounts with the sums of all
// of them before Verify, so that its end check covers the whole run.
type Pooled interface {
	// Counts are the process's acknowledged counts, by name.
	Counts() map[string]int64
	// SetCounts replaces them with the sums over every process (names
	// missing: left as they are).
	SetCounts(map[string]int64)
}

// LockKeyer is implemented by workloads that can list their lock keys, for
// the stuck-lock check at the end of a run.
type LockKeyer interface {
	LockKeys() []string
}

// Errors of Op that are not lock failures.
var (
	ErrSkip = errors.New("workloads: operation skipped")
	ErrDone = errors.New("workloads: nothing left to do")
	// ErrRejected: a guard on the write (optimistic check, fencing token,
	// conditional decrement) refused it; the operation did not happen.
	ErrRejected = errors.New("workloads: write rejected by its guard")
	// ErrCancelled: the caller cancelled the operation inside its critical
	// section (the cancel fault); what failed after it is wrapped.
	ErrCancelled = errors.New("workloads: cancelled by its caller")
)

// Guards on the workload's write, beyond the lock. Guards says which
// workload runs which.
const (
	GuardNone  = "none"  // plain GET / SET: only the lock protects the data
	GuardCAS   = "cas"   // optimistic check: write only if the value read is unchanged
	GuardDecr  = "decr"  // conditional decrement: count = count - 1 where count >= 1
	GuardFence = "fence" // reject reads and writes whose fencing token is below the highest seen
	// GuardIncr is the increment in place (INCR; sql-guard: UPDATE n =
	// n + 1), which no other writer can undo: the lock-free strategies'
	// write on the counter workloads, where they ask for GuardDecr (see
	// AutoGuard). It is what the result records; --guard does not take it.
	GuardIncr = "incr"
)

// Params are the settings a scenario hands every workload, whichever it
// is. A workload's own options (stock, keys, ...) are the parameters it
// declares when it registers; its factory reads them.
type Params struct {
	// Work is the distribution of critical-section time spent while
	// holding the lock (--work). The zero Dist means none.
	Work Dist
	// Segments splits each item's stock into this many independently
	// locked segments (the `segmented` strategy). Default 1.
	Segments int
	// Guard is the write guard (Guard* constants). Default GuardNone.
	Guard string
	// Release is the context a holder releases on: ReleaseDetached
	// (default, ""), a context the caller's cancellation cannot reach, or
	// ReleaseCaller, the caller's own context (the common bug: a request
	// cancelled inside its critical section cannot release its lock).
	Release string
}

// Release contexts (Params.Release, --release).
const (
	ReleaseDetached = "detached"
	ReleaseCaller   = "caller"
)

// Result is what Verify returns.
type Result struct {
	// Figures are the workload's end-state numbers, by a name of its own
	// (lower-case words joined by underscores; flash-sale: sold,
	// final_stock): the result file's figures.
	Figures map[string]int64
	// Violations are safety counts that must be 0 for a correct lock, by
	// the kinds an end check measures: Oversell, LostUpdates and
	// LostAckedWrites (the result file's violation keys; another key
	// makes the scenario fail with an error naming it, since a count the
	// result file cannot hold would read as safe). A kind the workload
	// cannot judge is left out.
	Violations map[string]int64
}

// The violation kinds a workload's Verify reports (Result.Violations
// keys), as the result file names them.
const (
	// Oversell: units handed out beyond what there was (flash-sale:
	// Σ max(0, sold − stock) per item).
	Oversell = "oversell"
	// LostUpdates: writes under the lock that another holder's write
	// overwrote (a decrement or increment that the final state lacks).
	LostUpdates = "lost_updates"
	// LostAckedWrites: operations the server acknowledged that the final
	// state lacks (a failover or a restart lost them).
	LostAckedWrites = "lost_acked_writes"
)

// Env is shared by every worker of one scenario.
type Env struct {
	// Data is the server holding the workload's data: the lock's first
	// node, or with a separate resource (--resource separate) that server.
	Data drivers.Driver
	// LockNode, when set, is the lock's first node where it is not Data
	// (a separate resource holds the data): the ownership check after
	// acquire reads the lock key there. Nil: Data.
	LockNode drivers.Driver
	// Rejections, when set, is the key on Data of the count of the fence
	// guard's reads and writes that the data server refused (a fencing
	// token below the highest it saw): the fence scripts INCR it on each
	// refusal, so the storage itself counts them (the separate resource's
	// resource_rejected). Its creator gives it the safety TTL. "": not
	// counted by the server.
	Rejections string
	// Locker is the strategy under test.
	Locker strategies.Locker
	// Prefix namespaces every key of the scenario ("lockbench:<run>:<n>:").
	Prefix string
	// Params are the settings every workload takes (the workload's own
	// options are its factory's).
	Params Params
	// Oracle is the safety oracle Hold reports every critical section to:
	// Setup gives the scenario one with SetLocks (nil before). Set by
	// SetLocks, or by tests.
	Oracle Oracle
	// Handover, when set, measures the hand-over gaps and FIFO order of
	// the exclusive sections Hold runs (metrics.Handover): the engine sets
	// it after Setup. Nil: not measured.
	Handover *metrics.Handover
	// AcquireTimeout bounds one acquire, retries included; 0: no bound.
	AcquireTimeout time.Duration
	// Released, when set, is called after every successful release (the
	// pubsub retry policy publishes there).
	Released func(ctx context.Context, key string) error
	// permits is the Locker's permits, read by SetLocks (0: not yet).
	permits int
	// Locks is the number of distinct locks, for the lock-bound ceiling:
	// set by SetLocks.
	Locks int
	// Clients is the number of workers (IDs 0..Clients-1).
	Clients int
	// ClientOffset is the number of the scenario's clients that other
	// execution segments run before this one's (0 without segments):
	// worker ID i is client ClientOffset+i of the whole scenario.
	ClientOffset int
	// KeyTTL is the safety TTL of the data keys Setup creates (SetData):
	// the scenario's warm-up + duration + SafetyMargin, so that keys left
	// on a user's server by a killed or stalled run expire. 0: none.
	KeyTTL time.Duration
	// Faults, when set, is the scenario's fault injector.
	Faults FaultHooks
	// Live, when set, is the liveness oracle's token registry: the worker
	// tells it of every acquire's outcome and every holder's exit.
	Live Liveness
	// Cluster is true when Data is a Redis Cluster client: a multi-key
	// command must keep its keys in one slot.
	Cluster bool
	// QuietIO makes the worker's Redis calls (acquire attempts, critical
	// section writes, releases) run on contexts without cancellation, so
	// that no driver call also waits on a done channel: for Redis-only
	// strategies whose attempts never wait in-process, whose every call the
	// driver's I/O timeout (5 s) bounds below Grace. A stop still ends
	// acquires between attempts, and Work at Hard.
	QuietIO bool
	// Follower is set when this process runs a follower execution segment
	// (internal/segment): the leading segment (1) writes the data, so
	// Setup builds its in-memory state only (SetData writes nothing), and
	// the engine skips the end check and the clean-up.
	Follower bool
	// Hard ends when the engine's grace period after a stop has passed: it
	// interrupts critical-section work, and the Redis calls that the stop
	// itself lets finish unless QuietIO (the I/O timeout ends those first).
	// Nil: never.
	Hard context.Context
	// Releases, when set, is told when each worker's release call (Unlock,
	// Hold) starts and ends, so that the engine can count the releases
	// still running when the grace period ends (hung releases) instead of
	// waiting for them. Nil: none watched.
	Releases *ReleaseWatch
	// VerifyAcquire, when > 0, has the worker read the lock key after
	// every VerifyAcquire-th granted exclusive acquire (Lock) and count a
	// false acquire when it does not hold the lease's token (see
	// verifyAcquire); 0: off. VerifyCost, when set, counts the reads.
	VerifyAcquire int
	VerifyCost    *VerifyCost
	// VerifyTTL is the lease time the check judges within: a read that
	// ends VerifyTTL or more after the acquire began judges nothing (the
	// lease may have expired on its own since: a lost lease, which the
	// oracle counts, not a false acquire). 0: no bound.
	VerifyTTL time.Duration
	// Margins, when set, measures renewal margins (metrics.Margins): the
	// engine hands its Renewed to the locker (strategies.RenewalMargins),
	// and the worker records each successful extend of an Extender lease
	// it makes (see Extend). Nil: not measured.
	Margins *metrics.Margins
}

// FaultHooks are the points where a fault injector acts on clients.
type FaultHooks interface {
	// Paused is called inside a critical section before the work; it
	// blocks when this client is the one to pause.
	Paused(client int, g *strategies.Gate)
	// PausedBeforeWrite is called after the holder's loss check, right
	// before its write; it blocks when this client is the one to pause.
	PausedBeforeWrite(client int, g *strategies.Gate)
	// Crash reports whether client (Worker.ID) dies at point.
	Crash(client int, point string) bool
	// Acquired counts one lock granted (the fault windows' clock).
	Acquired()
	// Cancels reports whether the caller's context of this critical
	// section is to be cancelled (the cancel fault), and if so at which
	// share (0..1) of its work.
	Cancels(client int) (at float64, ok bool)
	// Kills reports whether this client, starting its critical-section
	// work, is to kill its process there (the proc-kill fault), and if so
	// at which share (0..1) of the work; Die then kills the process
	// (SIGKILL: it does not return).
	Kills(client int) (at float64, ok bool)
	Die()
}

// Worker is one client's state. Only its own goroutine uses it.
type Worker struct {
	// Gate pauses the client together with its renewal loops.
	Gate    *strategies.Gate
	ID      int
	Env     *Env
	Rng     *rand.Rand
	Backoff retry.Backoff
	Obs     Observer // told the worker's events (required)
	// Role is the client's role (--mix, Role* constants): RoleRead runs
	// the workload's read-only operation (RoleRunner), RoleNested
	// re-enters the lock inside each exclusive section (Hold). "" is
	// RoleWrite.
	Role string
	// Hist, when set, records every critical section Hold runs (the
	// cross-process oracle's history, internal/history); nil: none kept,
	// at the cost of one nil check per section.
	Hist   History
	orders uint64          // order ids issued by this worker
	io     context.Context // see IO
	// granted is when the last successful acquire returned (metrics.Now):
	// the start of its hold (one clock read serves both figures).
	granted time.Duration
	// grantAt is when the last successful acquire returned, kept when
	// the ownership check moves granted past its read: the hand-over
	// gap's end.
	grantAt time.Duration
	// released is when the last release returned (metrics.Now).
	released time.Duration
	// opStart is the current operation's start (see Begin); begun says no
	// acquire has used it yet.
	opStart time.Duration
	begun   bool
	// cancel, when set, cancels the caller's context of the critical
	// section in progress (the cancel fault) at cancelAt of its work.
	cancel   context.CancelFunc
	cancelAt float64
	// cur is the lease of the critical section Hold is running (nil
	// outside one), curLock its lock's index, -1 on a read side: Work
	// extends it (see Extend). curGen is the generation of the worker's
	// registration as that lock's holder (Oracle.Acquired), which Extend
	// checks with Oracle.TakenSince.
	cur     strategies.Lease
	curLock int
	curGen  uint32
	// blocks is strategies.Blocks(Env.Locker), which observe reads on
	// every failed acquire: computed at the first (blocksSet), as the
	// locker does not change while the worker runs.
	blocks, blocksSet bool
	// verifySkip counts the granted acquires since the last ownership
	// check (Env.VerifyAcquire).
	verifySkip int
	// leaseFrom is when the current lease's time runs from as the worker
	// counts it (metrics.Now), conservatively: its acquire's start (the
	// first attempt's), then each successful extend's start (the extend's
	// margin, Env.Margins, for a lease that is not a strategies.Validity).
	leaseFrom time.Duration
}

// SetLocks tells the scenario that the workload's operations take n
// distinct locks, numbered 0..n-1 (the i of Hold): it sets Locks, for the
// lock-bound ceiling, and gives the scenario an oracle of n locks
// (Oracle). Setup calls it once, before any worker runs; n must be at
// least 1. A Locker that is a semaphore of N > 1 permits
// (strategies.PermitsOf) gets an oracle that counts capacity violations
// (metrics.Oracle.SetPermits), and its sections are recorded in the
// history as shared (several holders are no overlap).
func (e *Env) SetLocks(n int) {
	e.Locks = n
	o := metrics.NewOracle(n)
	e.permits = strategies.PermitsOf(e.Locker)
	o.SetPermits(e.permits)
	e.Oracle = o
}

// Permits is the Locker's permits as SetLocks read them
// (strategies.PermitsOf): 1 for an exclusive lock, or before SetLocks.
func (e *Env) Permits() int { return max(e.permits, 1) }

// Begin tells the worker that an operation starts at t (metrics.Now): the
// operation's first acquire counts from t, so that the clock is read once
// for both (every workload's operation begins with its acquire, after
// nothing but an in-memory key choice).
func (w *Worker) Begin(t time.Duration) { w.opStart, w.begun = t, true }

// acquireStart is the start of an acquire: the operation's start for its
// first one (see Begin), the clock now for any other.
func (w *Worker) acquireStart() time.Duration {
	if w.begun {
		w.begun = false
		return w.opStart
	}
	return metrics.Now()
}

// Lock acquires key with the scenario's strategy and the worker's retry
// policy, reports the acquire (its time and attempts) to Obs, and returns
// the lease.
func (w *Worker) Lock(ctx context.Context, key string) (strategies.Lease, error) {
	start := w.acquireStart()
	l, attempts, err := strategies.AcquireIO(ctx, w.attemptCtx(ctx), w.Env.Locker, key, w.Backoff, w.Env.AcquireTimeout)
	w.observe(ctx, start, attempts, key, l, err)
	if err == nil {
		w.verifyAcquire(ctx, l, start)
	}
	return l, err
}

// observe reports an acquire's outcome: to Obs (its time, attempts, an
// overshoot of twice the acquire timeout), to the fault injector and to
// the liveness registry.
func (w *Worker) observe(ctx context.Context, start time.Duration, attempts int, key string, l strategies.Lease, err error) {
	now := metrics.Now()
	if t := w.Env.AcquireTimeout; t > 0 && now-start > 2*t {
		w.Obs.Overshot()
	}
	if err == nil {
		w.granted, w.grantAt, w.leaseFrom = now, now, start
		w.Obs.Acquired(attempts, now-start)
		if f := w.Env.Faults; f != nil {
			f.Acquired()
		}
		if lv := w.Env.Live; lv != nil {
			lv.Acquired(w.ID, l.Key(), l.Token())
		}
	} else {
		w.Obs.AcquireFailed(attempts, now-start, ctx.Err() != nil)
		if lv := w.Env.Live; lv != nil {
			// Answered "not acquired" by a locker whose attempts do not wait
			// in the server: nothing of this acquire is still in flight.
			if (errors.Is(err, strategies.ErrNotAcquired) || errors.Is(err, strategies.ErrAcquireTimeout)) && !w.lockerBlocks() {
				lv.Refused(w.ID)
			} else {
				lv.Failed(w.ID)
			}
		}
	}
}

// lockerBlocks is strategies.Blocks(w.Env.Locker), computed once per
// worker.
func (w *Worker) lockerBlocks() bool {
	if !w.blocksSet {
		w.blocks, w.blocksSet = strategies.Blocks(w.Env.Locker), true
	}
	return w.blocks
}

// LockRead is Lock on the read side of the scenario's strategy (the
// exclusive lock itself for a strategy without one).
func (w *Worker) LockRead(ctx context.Context, key string) (strategies.Lease, error) {
	start := w.acquireStart()
	l, attempts, err := strategies.AcquireIO(ctx, w.attemptCtx(ctx), strategies.ReadSide(w.Env.Locker), key, w.Backoff, w.Env.AcquireTimeout)
	w.observe(ctx, start, attempts, key, l, err)
	return l, err
}

// Unlock releases the lease on a context the run's cancellation cannot
// skip (ctx itself with Params.Release = ReleaseCaller) and records the
// release time. ErrNotOwner does not fail the
// operation (the lease had expired; the oracle judges the damage): it is
// counted, and owned is false. The lease is then handed back to the
// strategy (strategies.Recycler): l must not be used afterwards.
func (w *Worker) Unlock(ctx context.Context, l strategies.Lease) (owned bool, err error) {
	return w.unlock(ctx, l, metrics.Now())
}

// unlock is Unlock with the release's start time (metrics.Now) already
// read.
func (w *Worker) unlock(ctx context.Context, l strategies.Lease, start time.Duration) (owned bool, err error) {
	rctx := w.IO(ctx)
	if w.Env.Params.Release == ReleaseCaller {
		rctx = ctx
	}
	key, token := l.Key(), l.Token() // l may be recycled below
	rw := w.Env.Releases
	if rw != nil {
		rw.begin(w.ID)
	}
	err = l.Release(rctx)
	if rw != nil && !rw.end(w.ID) {
		// The engine stopped waiting for this release at the end of the
		// grace period and counted it hung: the run's figures are summed
		// already, so the client ends here, recording nothing.
		runtime.Goexit()
	}
	end := metrics.Now() // the release's end, also its time to free
	w.released = end
	notOwner := errors.Is(err, strategies.ErrNotOwner)
	w.Obs.Released(end-start, notOwner)
	if lv := w.Env.Live; lv != nil {
		how := liveness.Released
		switch {
		case notOwner:
			how = liveness.NotOwner
		case err != nil:
			how = liveness.Abandoned
		}
		lv.ExitAt(w.ID, key, token, how, start, end)
	}
	if notOwner {
		return false, nil
	}
	if err == nil && w.Env.Released != nil {
		err = w.Env.Released(rctx, l.Key())
	}
	if r, ok := w.Env.Locker.(strategies.Recycler); ok {
		r.Recycle(l)
	}
	return err == nil, err
}

// Hold runs body as the critical section of lock i (Redis key key) for w:
// it acquires the lock (its read side when read), registers the holder,
// enters the oracle, runs body on a context the run's stop cannot cancel
// (for a client of the nested role, after re-entering the lock, see
// reenter), leaves, and releases. An entry that finds a conflicting
// holder inside is told to Obs (Overlapped) as well as counted by the
// oracle. It records the hold time, foreign releases (a
// release that removed the lock the registry says another client holds)
// and lost leases. It returns body's error, else the release's.
func (w *Worker) Hold(ctx context.Context, i int, key string, read bool, body func(ctx context.Context, l strategies.Lease) error) error {
	var lease strategies.Lease
	var err error
	hand := w.Env.Handover
	if read {
		hand.SharedSection() // readers hold the lock too: not measured
		hand = nil
		lease, err = w.LockRead(ctx, key)
	} else if hand != nil {
		start := w.acquireStart()
		hand.Wait(i, w.ID, start)
		w.opStart, w.begun = start, true
		lease, err = w.Lock(ctx, key)
		if err != nil {
			hand.GaveUp(i, w.ID)
		} else {
			hand.Granted(i, w.ID, w.grantAt)
		}
	} else {
		lease, err = w.Lock(ctx, key)
	}
	if err != nil {
		return err
	}
	if f := w.Env.Faults; f != nil && f.Crash(w.ID, "after-acquire") {
		if lv := w.Env.Live; lv != nil {
			lv.Exit(w.ID, lease.Key(), lease.Token(), liveness.Abandoned, metrics.Now())
		}
		if a, ok := lease.(strategies.Abandonable); ok {
			a.Abandon()
		}
		return strategies.ErrCrashed // the lock is never released
	}
	o := w.Env.Oracle
	ioctx := w.IO(ctx)
	// The cancel fault: the caller's context of this section is cancelled
	// at a random point of its work; the section's calls and, with
	// ReleaseCaller, the release run on it.
	var cancelled context.Context
	if f := w.Env.Faults; f != nil {
		if at, ok := f.Cancels(w.ID); ok {
			var cancel context.CancelFunc
			cancelled, cancel = context.WithCancel(ctx)
			defer cancel()
			w.cancel, w.cancelAt = cancel, at
			ioctx, ctx = cancelled, cancelled
		}
	}
	start := w.granted // the hold starts when the acquire returns
	if read {
		if o.EnterRead(i) {
			w.Obs.Overlapped()
		}
		w.cur, w.curLock = lease, -1
	} else {
		w.curGen = o.Acquired(i, w.ID)
		if o.Enter(i) {
			w.Obs.Overlapped()
		}
		w.cur, w.curLock = lease, i
	}
	if !read && w.Role == RoleNested {
		err = w.reenter(ctx, key)
	}
	if err == nil {
		err = body(ioctx, lease)
	}
	w.cur = nil
	if w.cancel != nil { // a section that did no work is cancelled at its end
		w.cancel()
		w.cancel = nil
	}
	if read {
		o.LeaveRead(i)
	} else {
		o.Leave(i) // before the release: the next holder may enter at once
	}
	left := metrics.Now()
	if h := w.Hist; h != nil {
		// Enter is when the acquire returned, Leave before the release is
		// sent: a safe lock's recorded sections never overlap (see
		// internal/history). Read sides are recorded as shared.
		var fence int64
		if f, ok := lease.(strategies.Fenced); ok {
			fence = f.Fence()
		}
		// A semaphore's sections (Permits > 1) are shared too: several
		// holders at once are its design, not an overlap.
		h.Add(lease.Key(), lease.Token(), fence, start, left, read || w.Env.Permits() > 1)
	}
	held := left - start
	w.Obs.Held(held)
	lost := false
	if wl, ok := lease.(strategies.Watched); ok && wl.Context().Err() != nil {
		lost = true
	}
	another := !read && o.Releasing(i, w.ID)
	owned, rerr := w.unlock(ctx, lease, left)
	if hand != nil && owned {
		// A release that did not free the lock (its lease had ended, or
		// the call failed) frees nothing: the lease's end does (Handover).
		hand.Released(i, w.ID, w.released)
	}
	if !owned && rerr == nil {
		lost = true
	}
	if lost {
		w.Obs.LeaseLost()
	}
	if owned && another {
		w.Obs.ForeignRelease()
	}
	if err == nil {
		err = rerr
	}
	if cancelled != nil {
		w.Obs.Cancelled()
		if err != nil && cancelled.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrCancelled, err)
		}
	}
	return err
}

// reenter is the nested role's re-entry (RoleNested), inside the
// exclusive section of key that w holds: it acquires key again (a
// reentrant lock grants it to its holder at once) and releases that inner
// hold, before the section's work. The outer hold must keep the lock: a
// lock whose inner release frees it lets the next client in while this
// one works (an overlap, counted on the entrant's role). Neither call is
// timed or told to the liveness oracle: the outer hold's are. Errors: the
// inner acquire's (wrapped), the inner release's.
func (w *Worker) reenter(ctx context.Context, key string) error {
	inner, _, err := strategies.AcquireIO(ctx, w.attemptCtx(ctx), w.Env.Locker, key, w.Backoff, w.Env.AcquireTimeout)
	if err != nil {
		return fmt.Errorf("re-entering the lock it holds: %w", err)
	}
	if err := inner.Release(w.IO(ctx)); err != nil {
		return fmt.Errorf("releasing the inner hold: %w", err)
	}
	return nil
}

// Unlocked runs body as the section of a strategy that takes no lock
// (strategies.Lockless): no acquire, no holder for the oracle, no hold
// time; body gets a nil lease and the context the run's stop cannot cancel
// (see IO). It returns body's error.
func (w *Worker) Unlocked(ctx context.Context, body func(ctx context.Context, l strategies.Lease) error) error {
	return body(w.IO(ctx), nil)
}

// Wrote records a completed write under lease l: when l had already been
// reported lost, it counts as work after loss.
func (w *Worker) Wrote(l strategies.Lease) {
	if wl, ok := l.(strategies.Watched); ok && wl.Context().Err() != nil {
		w.Obs.WroteAfterLoss()
	}
}

// Lost reports whether l is known to be lost (its context is cancelled).
func Lost(l strategies.Lease) bool {
	wl, ok := l.(strategies.Watched)
	return ok && wl.Context().Err() != nil
}

// attemptCtx is the context of an acquire attempt's Redis calls: with
// Env.QuietIO, the worker's I/O context (ctx's values without its
// cancellation; the acquire still ends between attempts when ctx does);
// else ctx.
func (w *Worker) attemptCtx(ctx context.Context) context.Context {
	if !w.Env.QuietIO {
		return ctx
	}
	return w.IO(ctx)
}

// IO returns the worker's context for Redis calls that must finish even
// when the run is stopping (a critical section's writes, a release): it
// keeps ctx's values (the Client), drops its cancellation, and ends only
// with Env.Hard, or never with Env.QuietIO. Each call is still bounded by
// the driver's I/O timeout. It is made once per worker: nothing is
// allocated per operation. The Client sits on top, so that a lookup of
// it (the token registry's, on every attempt) is found at once: below
// context.WithoutCancel's layer, each lookup would cost an allocation.
func (w *Worker) IO(ctx context.Context) context.Context {
	if w.io == nil {
		base := context.WithoutCancel(ctx)
		if _, ok := strategies.ClientID(ctx); ok {
			base = strategies.WithClient(base, strategies.ClientFrom(ctx))
		}
		if w.Env.Hard == nil || w.Env.QuietIO {
			w.io = base
		} else {
			c, cancel := context.WithCancel(base)
			context.AfterFunc(w.Env.Hard, cancel)
			w.io = c
		}
	}
	return w.io
}
