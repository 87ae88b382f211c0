package metrics

import (
	"sync/atomic"
	"unsafe"
)

// Oracle counts overlapping holders of each lock (or, for a semaphore,
// its capacity violations: see SetPermits). Lock i is entered with
// Enter(i) (exclusive) or EnterRead(i) (shared) when a client starts its
// critical section, and left with Leave / LeaveRead before it releases.
// An exclusive holder that finds anyone inside, or a reader that finds an
// exclusive holder inside, is one overlap. Safe for concurrent use, with no
// mutex: it costs two atomic adds per critical section on the lock's own
// slot, so clients on different locks share nothing but the overlap count,
// which only an overlap writes.
//
// The Oracle also keeps a holder registry: which client took each lock
// last (Acquired) and has not released it yet (Releasing), and a
// generation per lock that each new holder's registration bumps. A release
// that succeeds while the registry names another client deleted that
// client's lock: a foreign release. An extend that succeeds after another
// client registered since the extending holder did (TakenSince), or while
// the registry names another client (HeldByAnother), is a false extend. A
// lock's holder count and registry entry (client and generation packed in
// one int64) sit side by side in one 16-byte slot, so that a critical
// section touches one cache line of the Oracle, not two; with up to 16,384
// locks each slot has a cache line to itself.
type Oracle struct {
	locks []lockSlot
	// stride is the slots per lock: slotsPerLine when the locks are few,
	// so that each lock's slot has a cache line of its own (clients on
	// two cores updating neighbouring locks would otherwise share one and
	// slow each other down), else 1.
	stride   int
	overlaps atomic.Int64
	// permits is the holders a lock admits at once (SetPermits): 1 for an
	// exclusive lock (the overlaps above), more for a semaphore, whose
	// entries count capacity violations and the most holders instead.
	permits    int64
	capacity   atomic.Int64
	maxHolders atomic.Int64
}

// lockSlot is one lock's state in the Oracle.
type lockSlot struct {
	holders atomic.Int64 // exclusive holders << 32 | readers
	// owner is the registry's entry: generation << 32 | client id + 1 of
	// the registered holder (0 = none). The generation counts other
	// clients' registrations (see Acquired); a release clears the client
	// part only.
	owner atomic.Int64
}

const oneWriter = 1 << 32

// clientMask is the client part of lockSlot.owner.
const clientMask = 1<<32 - 1

// ownerGen is the generation part of lockSlot.owner's value v.
func ownerGen(v int64) uint32 { return uint32(uint64(v) >> 32) }

const (
	// slotsPerLine lockSlots fill a 64-byte cache line.
	slotsPerLine = 64 / int(unsafe.Sizeof(lockSlot{}))
	// padUpTo is the most locks whose slots get a cache line each (1 MiB
	// of slots); with more, two clients rarely update neighbouring locks
	// at once, and the memory is better saved.
	padUpTo = 1 << 14
)

// NewOracle returns an Oracle for locks 0..n-1.
func NewOracle(n int) *Oracle {
	stride := 1
	if n <= padUpTo {
		stride = slotsPerLine
	}
	return &Oracle{locks: make([]lockSlot, n*stride), stride: stride, permits: 1}
}

// SetPermits makes o judge its locks as semaphores of n permits each
// (strategies.PermitsOf), before any client enters: with n > 1 every
// holder, exclusive or reader alike (a semaphore has no read side: each
// takes a permit), counts towards the lock's holders; an entry that takes
// a lock's holders from n to n + 1 is one capacity violation (Capacity;
// an episode above n counts once, however many more join it), and the
// most holders one lock had at once is kept (MaxHolders). Enter and
// EnterRead then count no overlap and report none, and the holder
// registry (Acquired, Releasing, HeldByAnother, TakenSince) judges
// nothing: several clients hold a semaphore at once by design. n <= 1:
// an exclusive lock, as NewOracle's.
func (o *Oracle) SetPermits(n int) {
	o.permits = int64(max(n, 1))
}

// Permits is what SetPermits set (1 for an exclusive lock).
func (o *Oracle) Permits() int { return int(o.permits) }

// holders is the count of a lock's holders in a semaphore (both parts of
// lockSlot.holders).
func holders(v int64) int64 { return v>>32 + v&clientMask }

// semEnter is Enter and EnterRead of a semaphore: v is the lock's
// holders after the entry.
func (o *Oracle) semEnter(v int64) {
	n := holders(v)
	if n == o.permits+1 {
		o.capacity.Add(1)
	}
	for {
		m := o.maxHolders.Load()
		if n <= m || o.maxHolders.CompareAndSwap(m, n) {
			return
		}
	}
}

// Capacity is the number of capacity violations of a semaphore (see
// SetPermits): 0 for an exclusive lock. Safe to read while clients run.
func (o *Oracle) Capacity() int64 { return o.capacity.Load() }

// MaxHolders is the most holders one lock of a semaphore had at once (see
// SetPermits); 0 for an exclusive lock, or before anyone entered.
func (o *Oracle) MaxHolders() int64 { return o.maxHolders.Load() }

// slot is lock i's state.
func (o *Oracle) slot(i int) *lockSlot { return &o.locks[i*o.stride] }

// Acquired registers client (0 <= client < 1<<32 - 1) as lock i's holder
// and returns the registration's generation, which Worker.Hold keeps for
// TakenSince. Each registration by a client other than the one the
// registry names bumps lock i's generation (a 32-bit counter that wraps);
// a client the registry already names keeps the generation it has, so
// that only another client's registration moves it.
func (o *Oracle) Acquired(i, client int) (gen uint32) {
	if o.permits > 1 {
		return 0
	}
	me := int64(client) + 1
	owner := &o.slot(i).owner
	for {
		v := owner.Load()
		if v&clientMask == me {
			return ownerGen(v)
		}
		gen = ownerGen(v) + 1
		if owner.CompareAndSwap(v, int64(gen)<<32|me) {
			return gen
		}
	}
}

// Releasing is called just before client sends its release of lock i. It
// unregisters client and reports whether the registry names another client
// instead: one that took the lock after client's lease ended, so that a
// release that still deletes the key removes that client's lock. (No other
// client can register between this call and a correct release, which is
// what still keeps the lock until then.) The generation stays as it is: a
// release is no registration.
func (o *Oracle) Releasing(i, client int) (another bool) {
	if o.permits > 1 {
		return false
	}
	me := int64(client) + 1
	owner := &o.slot(i).owner
	for {
		v := owner.Load()
		if c := v & clientMask; c != me {
			return c != 0
		}
		if owner.CompareAndSwap(v, v&^clientMask) {
			return false
		}
		// Another client registered between the load and the swap: the
		// next round reports it.
	}
}

// HeldByAnother reports whether the registry names a client other than
// client as lock i's holder (one that took the lock after client's lease
// ended), without changing it: an extend that succeeds then extended that
// client's lock (a false extend, see TakenSince for the other case).
func (o *Oracle) HeldByAnother(i, client int) bool {
	if o.permits > 1 {
		return false
	}
	c := o.slot(i).owner.Load() & clientMask
	return c != 0 && c != int64(client)+1
}

// TakenSince reports whether another client has registered as lock i's
// holder since the registration whose generation Acquired returned as gen,
// whether or not it still holds the lock. For a correct lock that means the
// lease of gen's holder ended: an extend of it that succeeds after such a
// registration extended someone else's lock, or a lock that had been free,
// a false extend, even when the registry names nobody at the moment (the
// next holder has released and the one after it has not registered yet).
func (o *Oracle) TakenSince(i int, gen uint32) bool {
	if o.permits > 1 {
		return false
	}
	return ownerGen(o.slot(i).owner.Load()) != gen
}

// Enter records an exclusive holder entering lock i's critical section and
// reports whether it overlapped another holder.
func (o *Oracle) Enter(i int) bool {
	v := o.slot(i).holders.Add(oneWriter)
	if o.permits > 1 {
		o.semEnter(v)
		return false
	}
	if v != oneWriter {
		o.overlaps.Add(1)
		return true
	}
	return false
}

// Leave records the exclusive holder leaving lock i's critical section.
func (o *Oracle) Leave(i int) { o.slot(i).holders.Add(-oneWriter) }

// EnterRead records a reader entering lock i and reports whether an
// exclusive holder was inside.
func (o *Oracle) EnterRead(i int) bool {
	v := o.slot(i).holders.Add(1)
	if o.permits > 1 {
		o.semEnter(v)
		return false
	}
	if v >= oneWriter {
		o.overlaps.Add(1)
		return true
	}
	return false
}

// LeaveRead records the reader leaving lock i.
func (o *Oracle) LeaveRead(i int) { o.slot(i).holders.Add(-1) }

// Overlaps is the number of entries that found a conflicting holder inside.
// Safe to read while clients run.
func (o *Oracle) Overlaps() int64 { return o.overlaps.Load() }
