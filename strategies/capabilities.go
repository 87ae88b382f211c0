package strategies

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"
)

// Optional capabilities, found by type assertion (as database/sql does).

// Watched is implemented by leases that learn when the lock is lost
// (watchdog renewal found the token gone, or could not renew before the
// lease ran out; a Redlock validity time passed). Context is live from the
// acquire and is cancelled at that moment and on release: the holder is
// told of the loss instead of finding out too late (the shape of
// rueidislock).
//
// What lockbench does with it: a workload checks the context right before
// its protected write and skips the write of a lost lease (so overlapping
// holders need not lose an update); a write completed after the loss was
// reported counts as worked_after_loss, and a lease whose context ended
// counts as a lost lease. Package locktest deletes a Watched lease's key
// behind its back and expects the context cancelled within 5 s.
type Watched interface {
	Context() context.Context
}

// LossAtRenewal is implemented by Watched leases that may learn of a
// lost lock only when their next renewal (or extend) finds it gone, not
// when it is lost, and whose Release decides from what the lease knows:
// until the loss is learned, Context stays live and Release returns nil
// (its delete must still leave another holder's lock alone), and
// ErrNotOwner only after it. rueidislock is such a lease when a waiter of
// the same process consumes the invalidation of its keys (it then learns
// at its next extend). A lease whose Release reports the loss from the
// server's reply (a compare-and-delete that deleted nothing) returns
// ErrNotOwner whenever the lock is gone and need not declare it, even if
// its Context learns only at renewal (watchdog).
//
// What lockbench does with it: package locktest's OwnerOnlyRelease, after
// deleting such a lease's keys behind its back, waits up to 5 s (a 5 s
// lease: any renewal schedule inside the lease renews within it) for
// Context to be cancelled before another client takes the lock and the
// lease is released, as it does for a Watched lease of an OwnRetry
// locker. LossAtRenewal is a marker: the method does nothing.
type LossAtRenewal interface {
	LossAtRenewal()
}

// Extender is implemented by leases that their holder can extend (Redlock
// with extend=on or unchecked): Extend re-extends the lease to the TTL and
// returns nil when the strategy says the lock is still this holder's for
// a new validity, else an error (redlock's ErrExtendFailed, which wraps
// ErrNotOwner, for a lock that is gone or another's; a Redis error) and
// the lease is left as it was. A strategy with Config.Tokens set calls
// Config.Renewing before each extend it sends. lockbench's worker extends
// right after the critical-section work, before the write (Worker.Work),
// on the worker's I/O context; an extend that succeeds after another
// client has taken the lock since the holder acquired it (the oracle's
// holder registry saw another client register since, see
// metrics.Oracle.TakenSince) counts as a false extend.
type Extender interface {
	Extend(ctx context.Context) error
}

// ExtendsLeases is implemented by lockers whose leases can be Extenders
// (a strategy parameter such as extend=on decides): ExtendsLeases reports
// whether this locker's leases are. lockbench then measures the renewal
// margins of the worker's extends from the start, so that a run (or one
// process of --procs) whose clients never extended reports renewals 0
// rather than nothing (see docs/workloads-and-faults.md, "Renewal
// margin"). A locker that does not implement it has its margins measured
// from the first extend of an Extender lease on.
type ExtendsLeases interface {
	ExtendsLeases() bool
}

// Extends reports whether l's leases are Extenders (l implements
// ExtendsLeases and says so).
func Extends(l Locker) bool {
	e, ok := l.(ExtendsLeases)
	return ok && e.ExtendsLeases()
}

// Validity is implemented by leases whose client counts their validity
// itself, as Redlock does (redis.io distlock: the validity is the TTL
// minus the time elapsed since the acquire's, or the last extend's,
// start, minus the clock drift). ValidUntil is the moment, on the local
// clock (a time.Time with a monotonic reading, time.Now based), until
// which the holder may count on the lease as the strategy computes it.
// lockbench's worker measures the renewal margin of each extend of such a
// lease as ValidUntil minus the extend's send time; it calls ValidUntil
// from the holder's goroutine only, right before Extend.
type Validity interface {
	ValidUntil() time.Time
}

// Fenced is implemented by leases that carry a fencing token: a number that
// grows with every acquisition of the lock (strictly greater than every
// token handed out before for the same key), so that storage can reject a
// write from a holder whose lease has already passed to someone else
// (Kleppmann, "How to do distributed locking", 2016). The workloads' fence
// guard (--guard auto, the default, with Info.Guard "fence") sends it with
// each protected write and counts the writes the storage refused as
// rejected; it needs Fenced leases.
type Fenced interface {
	Fence() int64
}

// Segmented is implemented by lockers that split a resource into
// independently locked segments (`segmented`).
type Segmented interface {
	Segments() int
}

// StatsReporter is implemented by lockers that count events of their own
// (renewals, per-node results, ...). Stats is called once, after the run;
// its map is the result's strategy_stats, by name (lower-case words joined
// by underscores).
type StatsReporter interface {
	Stats() map[string]float64
}

// Client identifies the worker on whose behalf a call is made. The engine
// puts it in each worker's context once; reentrant locks use Owner as the
// hash field, multilevel picks the worker's application instance from ID.
type Client struct {
	// ID is the worker number, 0..clients-1.
	ID int
	// Owner is unique per worker and run: "<run-id>:<ID>".
	Owner string
	// Gate, when set, pauses the client's renewal loops with the client.
	Gate *Gate
	// Hooks, when set, are the fault injector's crash points.
	Hooks Hooks
}

type clientKey struct{}

// WithClient returns ctx carrying c.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the Client in ctx; without one, an anonymous client
// whose Owner is a fresh random token (so it is never reentrant).
func ClientFrom(ctx context.Context) Client {
	if c, ok := ctx.Value(clientKey{}).(Client); ok {
		return c
	}
	return Client{ID: -1, Owner: NewToken()}
}

func ms(d interface{ Milliseconds() int64 }) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// Gate stops a client's goroutines together: its worker and its renewal
// loops wait at the gate while it is closed (a stop-the-world pause, like
// a long GC). The zero Gate and a nil *Gate are open.
type Gate struct {
	ch atomic.Pointer[chan struct{}]
}

// Wait blocks while the gate is closed.
func (g *Gate) Wait() {
	if g == nil {
		return
	}
	if p := g.ch.Load(); p != nil {
		<-*p
	}
}

// CloseFor closes the gate for d.
func (g *Gate) CloseFor(d time.Duration) {
	ch := make(chan struct{})
	g.ch.Store(&ch)
	time.AfterFunc(d, func() {
		g.ch.Store(nil)
		close(ch)
	})
}

// Hooks lets a fault injector act at points inside strategies.
type Hooks interface {
	// Crash reports whether client (Client.ID) must die at point
	// ("after-setnx": between naive's SETNX and EXPIRE; "after-acquire").
	Crash(client int, point string) bool
}

// CrashPointer is implemented by strategies with a crash point of their
// own inside TryAcquire (naive: "after-setnx"); the others crash at
// "after-acquire".
type CrashPointer interface {
	CrashPoint() string
}

// ErrCrashed is returned when a client died at a crash point: it never
// releases what it holds.
var ErrCrashed = errors.New("strategies: client crashed (fault)")

// Stored is implemented by lockers that keep a lock in Redis keys other
// than the lock key TryAcquire is given (rueidislock: 2N-1 keys of its
// library's naming). StoredKeys returns them for lock key; the
// conformance suite (package locktest) deletes and counts these keys to
// take a lock away behind its holder's back. The ownership check after
// acquire (--verify-acquire), which reads the lock key, does not run on
// such a locker; and when StoredKeys(key) does not include key, its
// liveness figures are not measured (the liveness reader reads only lock
// keys, where it would find no token). A locker without it keeps the
// lock in the key itself.
type Stored interface {
	StoredKeys(key string) []string
}

// NonTokenFields is implemented by lockers whose hash lock key keeps
// fields that are no holder's token beside the holders' fields: Redisson's
// RReadWriteLock keeps "mode" ("read" or "write") beside one field per
// holder. NonTokenFields returns those field names; they are never passed
// to Config.Sent. The liveness oracle reads every other field name of a
// hash lock key as a token (its sampler leaves these out: a field it
// cannot find in its registry counts as a live holder it does not judge,
// which would keep a key whose holders are all dead from ever counting in
// held_past_ttl), and so do package locktest's token checks
// (TokensReported requires every other field to have been passed to
// Config.Sent). A locker without it keeps only tokens in a hash lock key.
type NonTokenFields interface {
	NonTokenFields() []string
}

// NonTokenFieldsOf returns the field names l declares no token
// (NonTokenFields), or nil.
func NonTokenFieldsOf(l Locker) []string {
	if n, ok := l.(NonTokenFields); ok {
		return n.NonTokenFields()
	}
	return nil
}

// StoredKeys returns the Redis keys l keeps lock key in: Stored's, or the
// key itself.
func StoredKeys(l Locker, key string) []string {
	if st, ok := l.(Stored); ok {
		return st.StoredKeys(key)
	}
	return []string{key}
}

// Abandonable is implemented by leases that hold resources besides the
// Redis key (a renewal loop): Abandon drops them without releasing the
// lock, as a crashed client would, and returns at once. lockbench calls it
// when a fault crashes the holder; after it the lock must end with its
// TTL. A lease that renews itself implements it: package locktest
// abandons a lease and expects another client to get the lock after the
// TTL.
type Abandonable interface {
	Abandon()
}

// Recycler is implemented by Lockers that can reuse a lease's memory for a
// later acquire, so that an acquire+release cycle allocates nothing of
// its own (the pattern of rueidis' PutCompleted). Recycle hands back a
// lease whose Release has returned: its holder gives up every reference
// to it and must not call any of its methods again (the next acquire may
// return the same object with another key and token). A lease that is
// never handed back is simply collected. Recycle ignores leases the
// Locker did not make. lockbench's worker recycles each lease right after
// its release.
type Recycler interface {
	Recycle(Lease)
}

func crashAt(ctx context.Context, point string) bool {
	c, ok := ctx.Value(clientKey{}).(Client)
	return ok && c.Hooks != nil && c.Hooks.Crash(c.ID, point)
}

// Queued is implemented by lockers whose TryAcquire waits in the lock
// service's own queue until the lock is granted or ctx ends (the ZooKeeper
// recipe, etcd's concurrency.Mutex): it never returns ErrNotAcquired, and
// Acquire passes the acquire timeout to it as ctx's deadline; when that
// deadline ends the wait, Acquire returns ErrAcquireTimeout. The retry
// policy does not apply to them: Register sets the strategy's Info.Queues
// when its factory's locker type implements Queued (return the concrete
// type), and its scenarios run once, with retry.Queue(). Queued is a
// marker: the method does nothing.
type Queued interface {
	Queued()
}

// FIFO is implemented by lockers that grant each lock in the order its
// waiters arrived (fair's and handoff's queues; a custom lock that queues
// its waiters). lockbench then counts the grants out of arrival order
// (fifo_violations: a waiter granted while one that started waiting
// earlier on the same key still waits) and the longest wait in turns
// (grants of the key to others while one waiter waited): see
// docs/workloads-and-faults.md, "Hand-over gaps and queue order". FIFO is
// a marker: the method does nothing.
type FIFO interface {
	FIFO()
}

// Reentrant is implemented by lockers whose holder may acquire a lock it
// holds again (the same Client Owner), each acquire counted and each
// release dropping one hold, the lock freed by the last (reentrant's
// hash; rwlock's write side). The nested role of --mix (workloads.
// RoleNested) re-enters the lock inside its section and needs it:
// Register sets the strategy's Info.Reentrant when its factory's locker
// type implements it (return the concrete type). Reentrant is a marker:
// the method does nothing.
type Reentrant interface {
	Reentrant()
}

// WakesOnRelease is implemented by lockers whose release script wakes the
// next waiter itself (fair: a PUBLISH to its queue head's own channel;
// handoff: to the waiter it handed the lock to). lockbench then sends no
// release message of its own after a release (workloads' Env.Released):
// it would wake nobody and cost a command. WakesOnRelease is a marker:
// the method does nothing.
type WakesOnRelease interface {
	WakesOnRelease()
}

// WaitQueue is implemented by lockers whose waiters queue in Redis, each
// with an entry that expires unless refreshed by the waiter's next
// attempt, and whose release wakes only the waiter whose turn it is
// (fair). Acquire, with the pubsub retry policy, watches the waiter's own
// channel, WakeChannel(ctx, key), instead of the lock key's, and under
// every policy waits at most EntryTimeout/3 between attempts.
type WaitQueue interface {
	// WakeChannel is the pub/sub channel the release publishes on to wake
	// the waiter of ctx (its Client) for lock key; it starts with key.
	WakeChannel(ctx context.Context, key string) string
	// EntryTimeout is how long a waiter's entry lives after its last
	// attempt.
	EntryTimeout() time.Duration
}

// OwnRetry is implemented by lockers whose TryAcquire runs a lock
// library's own acquire loop (redsync's tries, redislock's retry strategy,
// rueidislock's wait for an invalidation): it may wait in-process, returns
// ErrNotAcquired when the library gives up, and gets the acquire timeout as
// ctx's deadline (as Queued lockers do; a wait cut by that deadline
// returns ctx's error, which Acquire reports as ErrAcquireTimeout). It
// must return when ctx ends. Register sets the strategy's Info.OwnsRetry
// when its factory's locker type implements it (return the concrete type),
// so no lockbench retry policy runs around them: their scenarios use
// retry.Library() (shown as "library"). OwnRetry is a marker: the method
// does nothing.
type OwnRetry interface {
	OwnRetry()
}

// Lockless is implemented by strategies that take no lock at all
// (redis-guard, sql-guard): the workload writes through a guarded update
// instead (a conditional decrement), so there is no holder for the oracle
// to watch and overlap is 0 by definition; oversell and lost updates still
// judge the data.
type Lockless interface {
	Lockless()
}

// IsLockless reports whether l takes no lock (see Lockless).
func IsLockless(l Locker) bool {
	_, ok := l.(Lockless)
	return ok
}

// RowStore is implemented by lockers whose workload data lives in the rows
// of a SQL table instead of Redis (sql-rowlock, sql-guard). Each record is a
// row (k, n, sold): flash-sale keeps an item's stock in n and its orders in
// sold; hot-key keeps a counter in n. Errors are the database's.
type RowStore interface {
	// CreateRows creates the scenario's table, named from prefix, with one
	// row per key: n = values[i], sold = 0.
	CreateRows(ctx context.Context, prefix string, keys []string, values []int64) error
	// ReadRow returns row key's n with a plain (non-locking) read.
	ReadRow(ctx context.Context, key string) (int64, error)
	// Decrement runs the guarded write UPDATE ... SET n = n - 1, sold =
	// sold + 1 WHERE k = key AND n >= 1 and reports whether it changed the
	// row (false: n was 0).
	Decrement(ctx context.Context, key string) (bool, error)
	// Increment runs UPDATE ... SET n = n + 1 WHERE k = key, the update in
	// place that cannot lose an increment.
	Increment(ctx context.Context, key string) error
	// Rows returns n and sold of every row, in the order of CreateRows'
	// keys.
	Rows(ctx context.Context) (n, sold []int64, err error)
	// DropRows drops the table (nothing when CreateRows was not called).
	DropRows(ctx context.Context) error
}

// RowLease is implemented by the leases of a SQL row lock: a transaction
// that read the row with SELECT ... FOR UPDATE and holds it until Release
// commits.
type RowLease interface {
	// Value is the row's n, read under the lock.
	Value() int64
	// WriteRow sets the row's n and adds soldDelta to sold inside the
	// transaction; Release commits it.
	WriteRow(ctx context.Context, n, soldDelta int64) error
}

// MarginFunc is told of one successful renewal of a lease of ttl: its
// remaining TTL at the moment of the renewal, before the renewal extended
// it (0 or less: the lease had already ended as the locker counts it).
// It is safe for concurrent use and returns at once.
type MarginFunc func(ttl, remaining time.Duration)

// RenewalMargins is implemented by lockers that renew their leases
// themselves (a watchdog loop, a lock library's own renewal): lockbench
// calls RenewalMargins once, before the first acquire, with the function
// to call after each successful renewal with the lease's remaining TTL at
// that moment (see docs/workloads-and-faults.md, "Renewal margin"). It
// returns false when this locker's leases are not renewed (a fixed
// lease: the figures are then not measured, absent); a locker that
// returns true and never calls rec reports renewals 0. The remaining TTL
// is best read from the server (a renew script that returns the key's
// PTTL before its PEXPIRE, as lockbench's watchdog does); else as the
// client counts it: the last successful renewal's (or the acquire's)
// send time plus the TTL, minus now. The extends of leases that are
// Extenders are not reported here: lockbench's worker measures each extend
// it makes itself (Validity's ValidUntil minus the extend's send time;
// without Validity, the TTL minus the time since the acquire's start or
// the last successful extend's start), and would count a reported one
// twice.
type RenewalMargins interface {
	RenewalMargins(rec MarginFunc) bool
}
