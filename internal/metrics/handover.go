package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Handover measures, per lock, how the lock passes from one holder to the
// next: the hand-over gap (the time the lock is free while a client waits
// for it) and, for a lock that declares FIFO order, grants out of arrival
// order and the longest wait in turns. It is fed from the times the
// worker already takes for its figures (the acquire's start, its grant,
// the release's end), one short per-lock critical section each, so that
// its state stays bounded (the current waiters of each lock) however long
// the run. The figures are kept in up to 64 shards by lock, so that
// clients of different locks do not queue on one mutex to record.
//
// Per lock, in time order:
//
//   - Wait(i, client, start): client started acquiring lock i at start
//     (the acquire's own start time, retries and waits included);
//   - Granted(i, client, at): its acquire returned the lock at at;
//     GaveUp(i, client): it ended without (a timeout, a give-up, an error);
//   - Released(i, client, at): client's release of lock i ended at at.
//
// A gap runs from the lock's last freeing (the holder's release's end, or,
// when the holder never released before the next grant — a crash, a lost
// lease — its grant plus the TTL, the lease's end) to the next grant, and
// counts only when at least one client was waiting at the freeing (its
// acquire had started and not ended). A grant that comes before the
// freeing (a direct hand-off that grants the next waiter in the release
// script, before the releaser's reply) is a gap of 0.
//
// FIFO: a grant is out of order when another client still waiting for the
// same lock started waiting more than FIFOSlack before the one granted
// (the slack absorbs the time from an acquire's start to its first
// command reaching the server, where a queue orders its waiters). A
// waiter's turns are the grants of its lock to other clients while it
// waited: the longest counts whether the wait ended in a grant, without
// the lock (a timeout), or not at all by the end.
//
// Grants before the window's start (Start) build the state but count in
// no figure. Safe for concurrent use.
type Handover struct {
	ttl   time.Duration
	fifo  bool
	from  atomic.Int64 // the window's start (metrics.Now ns)
	locks []handLock

	// shared is set once a shared (read-side) section of one of the
	// locks ran: the exclusive sides' freeings and grants then do not
	// tell when a lock stood free (a reader may have held it), so the
	// figures are not measured (HandoverFigures.Shared).
	shared atomic.Bool

	// shards hold the figures, lock i's in shards[i%len(shards)]: locks
	// in different shards record without waiting for each other, and
	// Figures merges them.
	shards []handShard
}

// handShards is how many figure shards a Handover has at most (one per
// lock when it has fewer locks).
const handShards = 64

// handShard is one shard of a Handover's figures.
type handShard struct {
	mu         sync.Mutex
	gaps       *hdrhistogram.Histogram // nil until the first gap
	idle       time.Duration           // the gaps' sum
	grants     int64                   // grants in the window
	violations int64
	maxTurns   int64
}

// FIFOSlack is how much earlier a waiter must have started than the one
// granted for the grant to count as out of arrival order.
const FIFOSlack = time.Millisecond

type handLock struct {
	mu      sync.Mutex
	holder  int           // the client holding it, -1: none
	grant   time.Duration // the holder's grant
	freeAt  time.Duration // the last freeing, -1: unknown (never held yet, or held)
	wanted  bool          // a client was waiting at freeAt
	waiters []handWaiter
}

// HandoverMaxLocks is the most locks a Handover is made for (about 64
// bytes each): a workload with more measures no hand-over figures.
const HandoverMaxLocks = 1 << 20

type handWaiter struct {
	client int
	start  time.Duration
	turns  int64
}

// NewHandover returns a Handover of locks 0..n-1 whose leases last ttl
// (0: unknown; a holder that never releases then ends no gap), counting
// FIFO order when fifo (the strategy declares it, strategies.FIFO).
func NewHandover(n int, ttl time.Duration, fifo bool) *Handover {
	h := &Handover{ttl: ttl, fifo: fifo, locks: make([]handLock, n), shards: make([]handShard, max(1, min(n, handShards)))}
	for i := range h.locks {
		h.locks[i].holder, h.locks[i].freeAt = -1, -1
	}
	return h
}

// Start sets the window's start (metrics.Now): only grants from then on
// count.
func (h *Handover) Start(at time.Duration) {
	if h != nil {
		h.from.Store(int64(at))
	}
}

// FIFO reports whether the lock declared FIFO order.
func (h *Handover) FIFO() bool { return h != nil && h.fifo }

func (h *Handover) lock(i int) *handLock {
	if h == nil || i < 0 || i >= len(h.locks) {
		return nil
	}
	return &h.locks[i]
}

// SharedSection records that a shared (read-side) section ran: the
// figures are then not measured.
func (h *Handover) SharedSection() {
	if h != nil && !h.shared.Load() {
		h.shared.Store(true)
	}
}

// Wait records that client started acquiring lock i at start.
func (h *Handover) Wait(i, client int, start time.Duration) {
	l := h.lock(i)
	if l == nil {
		return
	}
	l.mu.Lock()
	l.waiters = append(l.waiters, handWaiter{client: client, start: start})
	l.mu.Unlock()
}

// take removes client from l's waiters and returns its entry.
func (l *handLock) take(client int) (handWaiter, bool) {
	for j, w := range l.waiters {
		if w.client == client {
			l.waiters = append(l.waiters[:j], l.waiters[j+1:]...)
			return w, true
		}
	}
	return handWaiter{}, false
}

// GaveUp records that client's acquire of lock i ended without the lock.
func (h *Handover) GaveUp(i, client int) {
	l := h.lock(i)
	if l == nil {
		return
	}
	l.mu.Lock()
	w, ok := l.take(client)
	l.mu.Unlock()
	// A waiter dropped from a queue that waits until its own timeout
	// waited through turns too.
	if ok && h.fifo && int64(Now()) >= h.from.Load() {
		s := &h.shards[i%len(h.shards)]
		s.mu.Lock()
		s.maxTurns = max(s.maxTurns, w.turns)
		s.mu.Unlock()
	}
}

// Granted records that client's acquire of lock i returned the lock at at.
func (h *Handover) Granted(i, client int, at time.Duration) {
	l := h.lock(i)
	if l == nil {
		return
	}
	l.mu.Lock()
	me, ok := l.take(client)
	if !ok {
		me = handWaiter{client: client, start: at}
	}
	free, wanted := l.freeAt, l.wanted
	if l.holder >= 0 {
		// The holder has not released: its lease ended (a crash, a lost
		// lease) at its grant plus the TTL, if that is before this grant.
		free = -1
		if exp := l.grant + h.ttl; h.ttl > 0 && exp <= at {
			free, wanted = exp, me.start < exp
			for _, w := range l.waiters {
				wanted = wanted || w.start < exp
			}
		}
	}
	counted := int64(at) >= h.from.Load()
	var gap time.Duration
	gapped := counted && free >= 0 && wanted
	if gapped {
		gap = max(at-free, 0)
	}
	overtook := false
	for j := range l.waiters {
		w := &l.waiters[j]
		if w.start < me.start-FIFOSlack {
			overtook = true
		}
		w.turns++
	}
	l.holder, l.grant, l.freeAt, l.wanted = client, at, -1, false
	l.mu.Unlock()
	if !counted {
		return
	}
	s := &h.shards[i%len(h.shards)]
	s.mu.Lock()
	if gapped {
		if s.gaps == nil {
			s.gaps = NewHistogram()
		}
		Record(s.gaps, gap)
		s.idle += gap
	}
	s.grants++
	if overtook {
		s.violations++
	}
	s.maxTurns = max(s.maxTurns, me.turns)
	s.mu.Unlock()
}

// Released records that client's release of lock i ended at at. A release
// by a client that no longer holds the lock (another was granted since:
// its lease had ended) changes nothing.
func (h *Handover) Released(i, client int, at time.Duration) {
	l := h.lock(i)
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.holder == client {
		l.holder, l.freeAt, l.wanted = -1, at, len(l.waiters) > 0
	}
	l.mu.Unlock()
}

// HandoverFigures are a Handover's figures over the window.
type HandoverFigures struct {
	// Gaps is the hand-over gaps' histogram (µs); Idle their sum.
	Gaps *hdrhistogram.Histogram
	Idle time.Duration
	// Grants are the grants counted; Violations those out of arrival
	// order; MaxTurns the longest wait in turns (FIFO locks only).
	Grants, Violations, MaxTurns int64
	FIFO                         bool
	// Shared: a shared (read-side) section ran, and the figures do not
	// measure what they say (readers held the locks too): not measured.
	Shared bool
}

// Figures returns the figures so far (a copy). MaxTurns includes the
// turns of the clients still waiting (a starved waiter never granted).
func (h *Handover) Figures() HandoverFigures {
	var waiting int64
	for i := range h.locks {
		l := &h.locks[i]
		l.mu.Lock()
		for _, w := range l.waiters {
			waiting = max(waiting, w.turns)
		}
		l.mu.Unlock()
	}
	f := HandoverFigures{Gaps: NewHistogram(), MaxTurns: waiting, FIFO: h.fifo, Shared: h.shared.Load()}
	for i := range h.shards {
		s := &h.shards[i]
		s.mu.Lock()
		if s.gaps != nil {
			f.Gaps.Merge(s.gaps)
		}
		f.Idle += s.idle
		f.Grants += s.grants
		f.Violations += s.violations
		f.MaxTurns = max(f.MaxTurns, s.maxTurns)
		s.mu.Unlock()
	}
	return f
}
