// Package liveness is lockbench's liveness oracle: it finds orphaned
// locks (lock keys holding a token that no live holder owns), measures
// how long each holder's exit takes to free its lock, and counts renewals
// sent for tokens already given up.
//
// How it is exact where it can be. Every token a strategy may store is
// registered before its command is sent (Tracker.Sent, through
// strategies.Config.Tokens); the worker marks it held on a confirmed
// acquire (Acquired), dead when the acquire ended without one (Failed: a
// timeout after the server may have applied the SET), and at the holder's
// exit (Exit): freed when its own release deleted it, dead otherwise (a
// crash, a release that failed or was cancelled). A Sampler reads the lock
// keys' stored tokens every Interval (one read per node and per 256 keys,
// MULTI/MGET/EXISTS/EXEC, or a Lua script once a key of another type has
// shown up: a string key's value, a hash key's field names, a sorted
// set's members: a semaphore's permits) and compares
// them with the registry:
//
//   - an orphan is a dead token seen stored by a read that began after the
//     token died: no live holder owns it, nobody will release it, and the
//     lock is unavailable until its lease ends. Each token counts once
//     (orphan_locks); orphan_lock_ms adds, per orphan, the time from its
//     death to the last read that still saw it (so it is short by at most
//     one Interval plus a read).
//   - time_to_free_ms is, per holder exit, the time until the lock could
//     be taken again: for a release that deleted its key, the release call
//     itself; otherwise until the first read that found the token gone
//     (from fewer than a quorum of nodes, for Redlock), which is late by at
//     most one Interval plus a read.
//   - held_past_ttl counts episodes of a key kept alive more than 3 x the
//     TTL holding only dead tokens (a renewal that outlived its holder).
//   - orphan_shares are dead tokens of multi-owner locks (a read lock's
//     readers, a semaphore's holders: several tokens in one key) seen
//     stored beside a live owner's token by a read begun more than one
//     lease after the dead token's own lease could have ended (see
//     ShareGrace): another owner's renewal or arrival kept the key, and
//     with it the dead share, alive. Each token counts once; its age is
//     the time from its death to the last read that saw it.
//   - orphan_renewals are renewals (strategies.Config.Renewing) sent for a
//     token that was already dead or released.
//
// Tokens that were never registered (a strategy that does not report its
// tokens, a constant token shared by every client) are ignored: such runs
// report their liveness figures as not measured rather than as 0.
package liveness

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

type state uint8

const (
	pending state = iota // its command was sent; the acquire has not returned
	held                 // a confirmed acquire; the holder has not exited
	dead                 // given up without deleting it: abandoned, crashed, release failed
)

type tokKey struct{ key, token string }

type entry struct {
	k     tokKey
	st    state
	since time.Duration // metrics.Now when it died
	// exit: it died at a holder's exit (time to free is measured), not in
	// a failed acquire.
	exit bool
	// Sampler's view.
	orphan   bool
	lastSeen time.Duration
	seen     int   // nodes that stored it in the current sample
	seq      int64 // the sample that set seen
	freed    bool  // time to free recorded
	tracked  bool  // in Tracker.dead
	// share: counted in orphan_shares (since its death); shareRef is
	// when its lease last began at the latest: its death for a holder's
	// exit, the end of the first read that saw it for a failed acquire.
	share    bool
	shareRef time.Duration
	// answered: it died in an acquire whose last attempt the server
	// answered "not acquired" (Refused), so no command in flight can
	// store it later.
	answered bool
	gen      uint32 // counts its deaths, to tell a stale deadRef
	client   int32  // the client that sent it
}

// deadRef is a queued reference to a dead entry, valid while the entry
// is still dead in the same generation.
type deadRef struct {
	e   *entry
	gen uint32
}

func (r deadRef) live() bool { return r.e.tracked && r.e.st == dead && r.e.gen == r.gen }

// Tracker is the token registry. Its methods are safe for concurrent use.
// A client's calls take the client's own mutex and, only when the client
// has tokens in the registry's map (see clientState), the registry's
// mutex too: a lock cycle touches no state that another client's does.
type Tracker struct {
	// MultiNode is set when each lock is taken on several nodes
	// (Redlock's masters): a refused acquire may have a write still in
	// flight to a node that did not answer in time, so Refused is Failed.
	// Set it before use.
	MultiNode bool

	ttl time.Duration

	// cl is each client's part of the registry.
	cl []clientState
	// all: every entry is in m, none is a client's own (indexAll).
	all atomic.Bool

	mu sync.Mutex
	// m holds every registered token but the clients' own entries (see
	// clientState): every dead one, where the sampler judges it.
	m    map[tokKey]*entry
	dead map[*entry]struct{} // dead tokens not yet known gone
	// watch: of dead, the holders' exits whose time to free is not yet
	// known; fresh: refused tokens not yet judged by a read (the next one
	// decides); aging: the other dead tokens, about oldest first, each
	// forgotten once gone and older than the retention. So a read's cost
	// grows with the exits in flight and the refusals since the last read,
	// not with every token that died in the retention window.
	watch        map[*entry]struct{}
	fresh, aging []deadRef
	// released are tokens freed by their own release, by the client that
	// released them (-1: a client out of range), kept for two
	// generations of the TTL to tell renewals sent after a release (only
	// once a renewal was seen: strategies that never renew keep nothing).
	released, releasedPrev map[tokKey]int32
	rotated                time.Duration
	ttf                    *hdrhistogram.Histogram // µs
	orphans                int64
	orphanAcquires         int64 // of orphans: tokens of acquires that failed
	orphanNS               time.Duration
	// orphanShares counts the orphan shares; shareAges (µs) holds the age
	// (death to the last read that saw it) of each one no longer dead.
	orphanShares int64
	shareAges    *hdrhistogram.Histogram
	// Confirmed acquires of a client out of range (see clientState).
	registered, unregistered int64

	renews         atomic.Bool
	orphanRenewals atomic.Int64
}

// clientState is one client's part of the registry, under its own mutex
// (taken before the registry's when both are). own is the entry of the
// client's newest token, kept out of the map while it is pending or held:
// a client's common cycle (Sent, Acquired, Exit Released) then touches
// only this, and allocates nothing (the entry is reused). An own entry
// moves to the map when it dies or when the client sends a new token
// while holding it (nested holds). A read that does not find a pending or
// held token in the map counts it live, as it would the entry (only dead
// entries are judged), so nothing the sampler computes changes. A client
// with no entry in the map (inMap 0) never looks there: tokens are the
// client's own (another client's never has the same key and token).
type clientState struct {
	mu  sync.Mutex
	own ownSlot
	cur *entry // the token of the client's acquire in progress
	// inMap counts the client's entries in the map (changed under the
	// registry's mutex).
	inMap                    atomic.Int32
	nfreed                   int32
	registered, unregistered int64 // confirmed acquires of tokens (not) registered
	// freed are the times to free (µs, saturated) of the client's releases
	// not yet in the histogram: added in batches.
	freed [16]uint32
	_     [clientSize - 120]byte
}

// clientSize is a clientState's size: two cache lines, so that no two
// clients' share one.
const clientSize = 128

// Compile-time check: a clientState is clientSize bytes.
const (
	_ = uint(clientSize - unsafe.Sizeof(clientState{}))
	_ = uint(unsafe.Sizeof(clientState{}) - clientSize)
)

// ownSlot is a client's own entry (clientState.own): e, registered while
// live, else kept for the client's next new token (nil once it moved to
// the map).
type ownSlot struct {
	e    *entry
	live bool
}

// NewTracker returns a registry for clients workers (IDs 0..clients-1) on
// locks whose lease is ttl.
func NewTracker(clients int, ttl time.Duration) *Tracker {
	return &Tracker{ttl: ttl, m: map[tokKey]*entry{}, cl: make([]clientState, clients),
		dead: map[*entry]struct{}{}, watch: map[*entry]struct{}{}, released: map[tokKey]int32{}, ttf: metrics.NewHistogram(),
		shareAges: metrics.NewHistogram()}
}

// client returns client's state; nil out of range.
func (t *Tracker) client(client int) *clientState {
	if client < 0 || client >= len(t.cl) {
		return nil
	}
	return &t.cl[client]
}

// lookup returns c's own entry of k, nil if c's is not k (c.mu held).
func (c *clientState) lookup(k tokKey) *entry {
	if s := &c.own; s.live && s.e.k == k {
		return s.e
	}
	return nil
}

// mapped reports whether c may have an entry in the map (c.mu held).
func (t *Tracker) mapped(c *clientState) bool { return c.inMap.Load() != 0 || t.all.Load() }

// put adds e to the map; del removes it (t.mu held).
func (t *Tracker) put(e *entry) {
	t.m[e.k] = e
	t.cl[e.client].inMap.Add(1)
}

func (t *Tracker) del(e *entry) {
	if t.m[e.k] == e {
		delete(t.m, e.k)
		t.cl[e.client].inMap.Add(-1)
	}
}

// newEntry registers k as a new token of client id, c (c.mu and t.mu
// held): as its own entry, after moving the one it had, if any, to the
// map; or in the map after indexAll.
func (t *Tracker) newEntry(c *clientState, id int, k tokKey) *entry {
	if t.all.Load() {
		e := &entry{k: k, client: int32(id)}
		t.put(e)
		return e
	}
	s := &c.own
	if s.live {
		t.put(s.e)
		s.e = nil
	}
	if s.e == nil {
		s.e = &entry{}
	}
	*s.e = entry{k: k, gen: s.e.gen, client: int32(id)}
	s.live = true
	return s.e
}

// indexAll moves every client's own entry to the map and keeps every
// later one there: for a sampler that times the tokens it does not find
// (Sampler.Foreign), which must find all of this process's.
func (t *Tracker) indexAll() {
	t.all.Store(true)
	for i := range t.cl {
		c := &t.cl[i]
		c.mu.Lock()
		t.mu.Lock()
		if s := &c.own; s.live {
			t.put(s.e)
		}
		c.own = ownSlot{}
		t.mu.Unlock()
		c.mu.Unlock()
	}
}

// remove forgets e, c's (c.mu held; t.mu too for one in the map): one in
// the map is deleted; c's own entry is kept for reuse, unless c's acquire
// in progress still names it (cur), which a later call may act on.
func (t *Tracker) remove(c *clientState, e *entry) {
	if s := &c.own; s.live && s.e == e {
		s.live = false
		if c.cur == e {
			s.e = nil
		}
		return
	}
	t.del(e)
}

// toMap moves e, c's, to the map if it is c's own entry (c.mu and t.mu
// held): before it dies, as dead entries are all in the map.
func (t *Tracker) toMap(c *clientState, e *entry) {
	if s := &c.own; s.live && s.e == e {
		t.put(e)
		s.e, s.live = nil, false
	}
}

// addFreed buffers a time to free of c's (c.mu held; t.mu too when
// locked), and adds the buffer to the histogram when it is full.
func (t *Tracker) addFreed(c *clientState, d time.Duration, locked bool) {
	c.freed[c.nfreed] = uint32(min(max(1, d.Microseconds()), math.MaxUint32))
	if c.nfreed++; int(c.nfreed) < len(c.freed) {
		return
	}
	if !locked {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	t.flushFreed(c)
}

// flushFreed adds c's buffered times to free to the histogram (c.mu and
// t.mu held).
func (t *Tracker) flushFreed(c *clientState) {
	for _, us := range c.freed[:c.nfreed] {
		_ = t.ttf.RecordValue(int64(us))
	}
	c.nfreed = 0
}

// gather adds every client's buffered times to free to the histogram and
// returns the confirmed acquires of registered and of unregistered tokens
// (neither mutex held).
func (t *Tracker) gather() (registered, unregistered int64) {
	for i := range t.cl {
		c := &t.cl[i]
		c.mu.Lock()
		t.mu.Lock()
		t.flushFreed(c)
		t.mu.Unlock()
		registered += c.registered
		unregistered += c.unregistered
		c.mu.Unlock()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return registered + t.registered, unregistered + t.unregistered
}

var _ strategies.TokenTracker = (*Tracker)(nil)

// Sent registers token as possibly stored under key by the client in ctx
// (strategies.TokenTracker). A client's new token for its acquire in
// progress means its previous attempt was answered "not acquired" (an
// error would have ended the acquire), so that one is forgotten. Calls
// without a client in ctx are ignored.
func (t *Tracker) Sent(ctx context.Context, key, token string) {
	id, ok := strategies.ClientID(ctx)
	c := t.client(id)
	if !ok || c == nil {
		return
	}
	k := tokKey{key, token}
	c.mu.Lock()
	if !t.sentOwn(c, id, k) {
		t.mu.Lock()
		t.sent(c, id, k)
		t.mu.Unlock()
	}
	c.mu.Unlock()
}

// sentOwn is Sent for a client with no entry in the map, whose token
// becomes, or already is, its own entry (c.mu held). It changes nothing
// and returns false when that cannot be: the client has entries in the
// map, or holds another token (which must move there).
func (t *Tracker) sentOwn(c *clientState, id int, k tokKey) bool {
	if t.mapped(c) {
		return false
	}
	s := &c.own
	if e := c.lookup(k); e != nil { // sent again: another node, a retry with the token
		if e.st != held {
			e.st, e.exit, e.orphan, e.freed = pending, false, false, false // (never tracked)
		}
		c.cur = e
		return true
	}
	if s.live && (c.cur != s.e || s.e.st != pending) {
		return false
	}
	// s holds no token, or its previous attempt's, which is forgotten.
	if s.e == nil {
		s.e = &entry{}
	}
	*s.e = entry{k: k, gen: s.e.gen, client: int32(id)}
	s.live = true
	c.cur = s.e
	return true
}

// sent is Sent in general (c.mu and t.mu held).
func (t *Tracker) sent(c *clientState, id int, k tokKey) {
	e := c.lookup(k)
	if e == nil {
		e = t.m[k]
	}
	if p := c.cur; p != nil && p != e && p.st == pending {
		c.cur = nil // set again below: p's struct may be reused
		t.remove(c, p)
	}
	if e == nil {
		e = t.newEntry(c, id, k) // pending
	} else if e.st != held {
		e.st, e.exit, e.orphan, e.freed = pending, false, false, false
		t.untrack(e)
	}
	c.cur = e
}

// Renewing counts a renewal of a token already dead or released
// (strategies.TokenTracker).
func (t *Tracker) Renewing(key, token string) {
	t.renews.Store(true)
	k := tokKey{key, token}
	t.mu.Lock()
	e := t.m[k]
	bad := e != nil && e.st == dead
	by := int32(-1) // the client that released it
	if e == nil {
		id, r1 := t.released[k]
		if !r1 {
			id, r1 = t.releasedPrev[k]
		}
		bad, by = r1, id
	}
	t.mu.Unlock()
	if bad && by >= 0 {
		// A token its client sent again after releasing it (a reentrant
		// lock's token is its owner, the same at every acquire) is live
		// again when that client's own entry holds it.
		if c := t.client(int(by)); c != nil {
			c.mu.Lock()
			again := c.lookup(k) != nil
			c.mu.Unlock()
			bad = !again
		}
	}
	if bad {
		t.orphanRenewals.Add(1)
	}
}

// Acquired marks token under key held by client: its acquire returned it.
func (t *Tracker) Acquired(client int, key, token string) {
	k := tokKey{key, token}
	c := t.client(client)
	if c == nil {
		t.mu.Lock()
		if e := t.m[k]; e != nil {
			e.st = held
			t.untrack(e)
			t.registered++
		} else {
			t.unregistered++
		}
		t.mu.Unlock()
		return
	}
	c.mu.Lock()
	if e := c.lookup(k); e != nil {
		e.st = held // (never tracked)
		c.registered++
	} else if !t.mapped(c) {
		c.unregistered++
	} else {
		t.mu.Lock()
		if e := t.m[k]; e != nil {
			e.st = held
			t.untrack(e)
			c.registered++
		} else {
			c.unregistered++
		}
		t.mu.Unlock()
	}
	c.cur = nil
	c.mu.Unlock()
}

// Failed marks the token of client's acquire in progress dead: the acquire
// ended without a lock (a timeout, an error, the retry policy gave up),
// and its last command may still have stored the token. It is watched for
// the retention (the TTL + 10 s) in case a command still in flight stores
// it.
func (t *Tracker) Failed(client int) { t.failed(client, false) }

// Refused is Failed for an acquire whose last attempt the server answered
// "not acquired" (the retry policy gave up, or the acquire timeout passed
// between attempts) on a locker that does not wait inside its attempts
// (strategies.Blocks is false) and takes each lock on one node (not
// MultiNode): no command of it is still in flight, so the first read
// begun after it decides. A token that read finds stored is an orphan like
// any other; one it does not find is forgotten. At tens of thousands of
// refusals a second (try-lock on a hot key) this keeps the registry and
// each read small.
func (t *Tracker) Refused(client int) { t.failed(client, !t.MultiNode) }

func (t *Tracker) failed(client int, answered bool) {
	c := t.client(client)
	if c == nil {
		return
	}
	now := metrics.Now()
	c.mu.Lock()
	if e := c.cur; e != nil && e.st == pending {
		t.mu.Lock()
		t.toMap(c, e)
		t.kill(e, now, false, answered)
		t.mu.Unlock()
	}
	c.cur = nil
	c.mu.Unlock()
}

// How a holder exited.
type How uint8

const (
	// Released: its release deleted its key (the lock is free at once).
	Released How = iota
	// NotOwner: its release found another token; the lock had passed on.
	NotOwner
	// Abandoned: it left without deleting its key: a crash, a cancelled or
	// failed release. Its token stays until its lease ends.
	Abandoned
)

// Exit records the end of client's hold of token under key, begun at start
// (metrics.Now: the release's start, or the crash). For Released, the
// time to free is now - start.
func (t *Tracker) Exit(client int, key, token string, how How, start time.Duration) {
	t.ExitAt(client, key, token, how, start, metrics.Now())
}

// ExitAt is Exit with now (metrics.Now) already read: for Released, the
// end of the release call, so that its time to free is the call itself.
func (t *Tracker) ExitAt(client int, key, token string, how How, start, now time.Duration) {
	k := tokKey{key, token}
	c := t.client(client)
	if c == nil {
		t.mu.Lock()
		if e := t.m[k]; e != nil {
			t.exit(nil, e, how, start, now)
		}
		t.mu.Unlock()
		return
	}
	c.mu.Lock()
	if e := c.lookup(k); e != nil && how != Abandoned { // the common case
		if how == Released {
			t.addFreed(c, now-start, false)
			if t.renews.Load() {
				t.mu.Lock()
				t.rotate(now)
				t.released[k] = int32(client)
				t.mu.Unlock()
			}
		}
		t.remove(c, e)
	} else if e != nil || t.mapped(c) {
		t.mu.Lock()
		if e == nil {
			e = t.m[k]
		}
		if e != nil {
			t.exit(c, e, how, start, now)
		}
		t.mu.Unlock()
	}
	c.mu.Unlock()
}

// exit is ExitAt of e, c's (nil: a client out of range), with t.mu (and
// c.mu) held.
func (t *Tracker) exit(c *clientState, e *entry, how How, start, now time.Duration) {
	switch how {
	case Released:
		if c != nil {
			t.addFreed(c, now-start, true)
		} else {
			_ = t.ttf.RecordValue(max(1, (now - start).Microseconds()))
		}
		t.drop(c, e)
		if t.renews.Load() {
			t.rotate(now)
			t.released[e.k] = e.client
		}
	case NotOwner:
		t.drop(c, e)
	default:
		if c != nil {
			t.toMap(c, e)
		}
		t.kill(e, start, true, false)
	}
}

// drop forgets e after its holder's exit (t.mu held).
func (t *Tracker) drop(c *clientState, e *entry) {
	if c != nil {
		t.remove(c, e)
	} else {
		t.del(e)
	}
	t.untrack(e)
}

// kill marks e dead since at (t.mu held): at a holder's exit (exit), or
// in a failed acquire, answered or not (see Refused). An entry already
// dead and counted as an orphan share (exit with Abandoned of a map
// entry) ends that dead life here: its age is recorded first, so that
// orphan_shares and the ages keep one age per share.
func (t *Tracker) kill(e *entry, at time.Duration, exit, answered bool) {
	t.endShare(e)
	e.st, e.since, e.exit, e.freed, e.answered = dead, at, exit, false, answered
	e.shareRef = 0
	if exit {
		e.shareRef = at // its last lease began before its holder's exit
	}
	e.gen++
	if !e.tracked {
		e.tracked = true
		t.dead[e] = struct{}{}
	}
	if exit {
		t.watch[e] = struct{}{}
	}
	if r := (deadRef{e, e.gen}); answered {
		t.fresh = append(t.fresh, r)
	} else {
		t.aging = append(t.aging, r)
	}
}

// untrack ends e's dead life (t.mu held): a new send of its token, a
// confirmed acquire, or gone from the servers (forget). An orphan share's
// age is recorded here, once.
func (t *Tracker) untrack(e *entry) {
	t.endShare(e)
	if e.tracked {
		e.tracked = false
		delete(t.dead, e)
		delete(t.watch, e)
	}
}

// endShare records the age of e's orphan share, if it is one, from its
// death to the last read that saw it, and clears the flag (t.mu held).
func (t *Tracker) endShare(e *entry) {
	if e.share {
		e.share = false
		_ = t.shareAges.RecordValue(max(1, (e.lastSeen - e.since).Microseconds()))
	}
}

// forget drops dead e, known gone from the servers (t.mu held), adding
// its orphan time.
func (t *Tracker) forget(e *entry) {
	if e.orphan {
		t.orphanNS += e.lastSeen - e.since
	}
	t.untrack(e)
	t.del(e)
}

// rotate moves released tokens a generation on every two TTLs (t.mu held).
func (t *Tracker) rotate(now time.Duration) {
	if now-t.rotated < 2*max(t.ttl, time.Second) {
		return
	}
	t.rotated = now
	t.releasedPrev, t.released = t.released, map[tokKey]int32{}
}
