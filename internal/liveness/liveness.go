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
// keys' stored tokens every Interval (one Lua script per node and per
// 256 keys: a string key's value, a hash key's field names) and compares
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
//   - orphan_renewals are renewals (strategies.Config.Renewing) sent for a
//     token that was already dead or released.
//
// Tokens that were never registered (a strategy that does not report its
// tokens, a constant token shared by every client) are ignored: such runs
// report their liveness figures as not measured rather than as 0.
package liveness

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

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
	// answered: it died in an acquire whose last attempt the server
	// answered "not acquired" (Refused), so no command in flight can
	// store it later.
	answered bool
	gen      uint32 // counts its deaths, to tell a stale deadRef
}

// deadRef is a queued reference to a dead entry, valid while the entry
// is still dead in the same generation.
type deadRef struct {
	e   *entry
	gen uint32
}

func (r deadRef) live() bool { return r.e.tracked && r.e.st == dead && r.e.gen == r.gen }

// Tracker is the token registry. Its methods are safe for concurrent use;
// each takes one mutex for O(1) work.
type Tracker struct {
	// MultiNode is set when each lock is taken on several nodes
	// (Redlock's masters): a refused acquire may have a write still in
	// flight to a node that did not answer in time, so Refused is Failed.
	// Set it before use.
	MultiNode bool

	ttl time.Duration

	mu   sync.Mutex
	m    map[tokKey]*entry
	cur  []*entry            // per client: the token of its acquire in progress
	dead map[*entry]struct{} // dead tokens not yet known gone
	// watch: of dead, the holders' exits whose time to free is not yet
	// known; fresh: refused tokens not yet judged by a read (the next one
	// decides); aging: the other dead tokens, about oldest first, each
	// forgotten once gone and older than the retention. So a read's cost
	// grows with the exits in flight and the refusals since the last read,
	// not with every token that died in the retention window.
	watch        map[*entry]struct{}
	fresh, aging []deadRef
	// released are tokens freed by their own release, kept for two
	// generations of the TTL to tell renewals sent after a release (only
	// once a renewal was seen: strategies that never renew keep nothing).
	released, releasedPrev map[tokKey]struct{}
	rotated                time.Duration
	ttf                    *hdrhistogram.Histogram // µs
	orphans                int64
	orphanAcquires         int64 // of orphans: tokens of acquires that failed
	orphanNS               time.Duration
	registered             int64 // tokens confirmed held that had been registered
	unregistered           int64 // confirmed acquires of tokens never registered

	renews         atomic.Bool
	orphanRenewals atomic.Int64
}

// NewTracker returns a registry for clients workers (IDs 0..clients-1) on
// locks whose lease is ttl.
func NewTracker(clients int, ttl time.Duration) *Tracker {
	return &Tracker{ttl: ttl, m: map[tokKey]*entry{}, cur: make([]*entry, clients),
		dead: map[*entry]struct{}{}, watch: map[*entry]struct{}{}, released: map[tokKey]struct{}{}, ttf: metrics.NewHistogram()}
}

var _ strategies.TokenTracker = (*Tracker)(nil)

// Sent registers token as possibly stored under key by the client in ctx
// (strategies.TokenTracker). A client's new token for its acquire in
// progress means its previous attempt was answered "not acquired" (an
// error would have ended the acquire), so that one is forgotten. Calls
// without a client in ctx are ignored.
func (t *Tracker) Sent(ctx context.Context, key, token string) {
	id, ok := strategies.ClientID(ctx)
	if !ok || id < 0 || id >= len(t.cur) {
		return
	}
	k := tokKey{key, token}
	t.mu.Lock()
	e := t.m[k]
	if e == nil {
		e = &entry{k: k}
		t.m[k] = e
	}
	if e.st != held {
		e.st, e.exit, e.orphan, e.freed = pending, false, false, false
		t.untrack(e)
	}
	if p := t.cur[id]; p != nil && p != e && p.st == pending {
		delete(t.m, p.k)
	}
	t.cur[id] = e
	t.mu.Unlock()
}

// Renewing counts a renewal of a token already dead or released
// (strategies.TokenTracker).
func (t *Tracker) Renewing(key, token string) {
	t.renews.Store(true)
	k := tokKey{key, token}
	t.mu.Lock()
	e := t.m[k]
	bad := e != nil && e.st == dead
	if e == nil {
		_, r1 := t.released[k]
		_, r2 := t.releasedPrev[k]
		bad = r1 || r2
	}
	t.mu.Unlock()
	if bad {
		t.orphanRenewals.Add(1)
	}
}

// Acquired marks token under key held by client: its acquire returned it.
func (t *Tracker) Acquired(client int, key, token string) {
	k := tokKey{key, token}
	t.mu.Lock()
	if e := t.m[k]; e != nil {
		e.st = held
		t.untrack(e)
		t.registered++
	} else {
		t.unregistered++
	}
	if client >= 0 && client < len(t.cur) {
		t.cur[client] = nil
	}
	t.mu.Unlock()
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
	if client < 0 || client >= len(t.cur) {
		return
	}
	now := metrics.Now()
	t.mu.Lock()
	if e := t.cur[client]; e != nil && e.st == pending {
		t.kill(e, now, false, answered)
	}
	t.cur[client] = nil
	t.mu.Unlock()
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
	k := tokKey{key, token}
	now := metrics.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[k]
	if e == nil {
		return
	}
	switch how {
	case Released:
		_ = t.ttf.RecordValue(max(1, (now - start).Microseconds()))
		delete(t.m, k)
		t.untrack(e)
		if t.renews.Load() {
			t.rotate(now)
			t.released[k] = struct{}{}
		}
	case NotOwner:
		delete(t.m, k)
		t.untrack(e)
	default:
		t.kill(e, start, true, false)
	}
}

// kill marks e dead since at (t.mu held): at a holder's exit (exit), or
// in a failed acquire, answered or not (see Refused).
func (t *Tracker) kill(e *entry, at time.Duration, exit, answered bool) {
	e.st, e.since, e.exit, e.freed, e.answered = dead, at, exit, false, answered
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

func (t *Tracker) untrack(e *entry) {
	if e.tracked {
		e.tracked = false
		delete(t.dead, e)
		delete(t.watch, e)
	}
}

// forget drops dead e, known gone from the servers (t.mu held), adding
// its orphan time.
func (t *Tracker) forget(e *entry) {
	if e.orphan {
		t.orphanNS += e.lastSeen - e.since
	}
	t.untrack(e)
	if t.m[e.k] == e {
		delete(t.m, e.k)
	}
}

// rotate moves released tokens a generation on every two TTLs (t.mu held).
func (t *Tracker) rotate(now time.Duration) {
	if now-t.rotated < 2*max(t.ttl, time.Second) {
		return
	}
	t.rotated = now
	t.releasedPrev, t.released = t.released, map[tokKey]struct{}{}
}
