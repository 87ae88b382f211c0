package strategies

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("handoff", Info{Desc: "FIFO queue in Redis (a list of \"deadline|token\" entries, Redisson RedissonFairLock's per-entry timeout); a plain SET NX first, RPUSH to queue; the release script hands the lock straight to the next live waiter (SET XX GET to its token, fresh lease) and PUBLISHes on that waiter's own channel (direct hand-off, as MCS locks and Java's AbstractQueuedSynchronizer); renewed as watchdog",
		Params: []registry.Param{
			{Name: "queue-timeout", Doc: "a queued waiter's entry is dropped this long after its last refresh (deadline in ms of the Redis clock, estimated by the client); waiters refresh it at their checks", Default: 5 * time.Second,
				Check: registry.DurationAtLeast(10 * time.Millisecond)},
			{Name: "recheck", Doc: "the queue head's longest wait for its grant message before it runs the check script (refreshing its entry, finding a grant whose message was lost, handing on a lock whose lease ended unreleased); a waiter n places back waits n times as long, at most 3/4 of queue-timeout; at most queue-timeout/2; 0 = min(TTL/2, queue-timeout/3)",
				Default: time.Duration(0), Check: registry.DurationAtLeast(0)},
			{Name: "renew", Doc: "on: a lease is renewed every TTL/3 while held, as watchdog's; off: it ends after the TTL (Redisson's lock(leaseTime))", Default: "on",
				Check: registry.OneOf("on", "off")},
		}},
		newHandoff)
}

// handoff is a FIFO lock whose release hands ownership directly to the
// next waiter.
//
// The queue lives in Redis next to the lock key K: K:queue, a list of
// entries "<deadline>|<token>" in arrival order. A waiter's token is the
// random token of its acquire (NewToken) and the value the lock will hold
// for it; the deadline, in ms of the Redis server's clock, is when a
// waiter that stopped refreshing its entry is dropped (the per-entry
// timeout of Redisson's RedissonFairLock, whose redisson_lock_timeout zset
// here travels inside the entry). The commands, per path:
//
//   - acquire, first try: SET K token NX PX ttl, no script (the
//     uncontended path costs one command).
//   - queue: when the SET NX fails, RPUSH K:queue "<deadline>|<token>"
//     (deadline = the locker's estimate of Redis now + queue-timeout) and
//     PEXPIRE K:queue to 2 x queue-timeout, in one script
//     (handoffQueueScript). Every script that adds, refreshes or pushes
//     back an entry sets that TTL again: every entry of a queue nobody
//     refreshed for that long is dead, so a killed run's queue expires
//     with its waiters.
//     When RPUSH returns 1 the queue was empty: the holder may have
//     released between the SET NX and the RPUSH, leaving the lock free and
//     nobody to hand it to, so the waiter sends its SET NX again (when it
//     takes the lock, LREM takes its entry out of the queue). Otherwise,
//     or when that SET NX fails too, it waits for its grant message or its
//     recheck timer.
//   - check (handoffCheckScript; rechecks, a grant message too old to
//     trust): K holds the caller's token: held
//     (the lease is extended to the TTL). K free: dead entries at the
//     head are dropped; when the caller heads the queue, or the queue is
//     empty, it takes the lock; when another live waiter heads it, the
//     lock is handed to that waiter (SET, PUBLISH) and the caller stays
//     queued. A caller that stays queued has its entry refreshed in place
//     (LPOS, LSET), or re-added at the tail when it was dropped.
//   - release (handoffReleaseScript, ARGV: token, lease ms, channel
//     prefix, the releaser's estimate of Redis now): LPOP entries,
//     dropping those whose deadline passed, until a live one (waiter w);
//     then SET K w XX GET PX ttl: the old value is the caller's token: the
//     grant is PUBLISHed on w's own channel (the hot path: EVALSHA, LPOP,
//     SET, PUBLISH); the key was gone (the caller's lease had expired):
//     SET K w PX ttl and PUBLISH, the lock handed on, ErrNotOwner; another
//     token held it (the caller's lease was lost and someone else took
//     the lock): that value is restored with SET PX ttl and w's entry
//     pushed back at the head, ErrNotOwner. The restore gives the other
//     holder a full TTL from then: longer than its own lease, never
//     shorter, which is safe (its holder counts its lease from its own
//     acquire) and costs at most one extra TTL if that holder is dead. An
//     empty queue: compare-and-delete.
//   - abandon (a waiter whose ctx ended): LREM K:queue 1 <its current
//     entry>; when that removes nothing (its entry was popped: the lock
//     may be handed to it), handoffAbandonScript releases and hands on a
//     lock holding its token, as a release does.
//
// Per contended operation: a failed SET NX, the queue script (EVALSHA,
// RPUSH, PEXPIRE), and the release's four (one more SET NX for a waiter
// that found the queue empty). The grant message's payload is the
// releaser's estimate of Redis now (ms): the waiter holds the lock when it arrives (the direct
// hand-off of MCS queue locks and of Java's AbstractQueuedSynchronizer,
// where the releaser unparks its successor; Redisson's fair lock instead
// publishes to the head and lets it race for the key). A message more than
// TTL/3 old by the waiter's estimate may announce a lease already gone:
// the waiter then confirms it by the check script (which extends a lease
// still its own) instead of taking it on trust.
//
// A waiter watches its channel (one PSUBSCRIBE per locker, on Nodes[0],
// of <Config.Prefix>handoff:*) before its SET NX, so a grant cannot be
// missed. Between scripts it waits recheck x n, at most 3/4 of
// queue-timeout, where n is its place in the queue (1 at the head) as of
// its RPUSH or last check: the queue as a whole runs about one check per
// recheck interval whatever its length, and a waiter refreshes its entry
// before its deadline. Any waiter's check hands on a lock whose lease
// ended unreleased. With renew=on leases renew as watchdog's (renewal.go)
// and are Watched.
//
// Clocks: the scripts read no TIME; deadlines and grant times are the
// clients' estimates of the Redis server's clock: local monotonic time
// plus an offset measured by a TIME round trip when the locker is built
// and again every handoffClockRefresh (offset = Redis time - the midpoint
// of the local send and receive; uncertainty half the round trip). A
// deadline only decides when a dead entry is dropped: an error of the
// estimate shifts that moment by the error, never safety. A grant's age
// bounds the lease's start (less the waiter's uncertainty and 1 ms of
// rounding); a releaser whose estimate runs ahead of the waiter's by e
// makes that bound e late, so the TTL/3 trust window assumes clocks
// estimated within a small fraction of the TTL (one locker, as in a
// lockbench run, shares one estimate).
//
// Failure modes: barging: a newcomer's SET NX takes a lock that is
// momentarily free while waiters are queued (after a lease ended
// unreleased, before a check hands it on; or between a release that found
// the queue empty and a waiter's RPUSH); FIFO among queued waiters holds. A
// waiter that dies after being handed the lock holds it for one lease; a
// dead waiter still inside its queue-timeout is handed the lock when its
// turn comes and also costs one lease; a waiter whose abandon fails (the
// server unreachable) leaves its entry to its queue-timeout, and a lock
// handed to it to its lease. A grant message delayed past the lease (or
// lost) is a lost lease: the holder's renewal finds the token gone and
// cancels the lease's context. Entries leave the queue by a pop or an
// LREM (dead ones at the head by the next release or check that meets
// them); the queue key expires queueTTL after the last script that added,
// refreshed or pushed back an entry.
type handoff struct {
	d                          drivers.Driver
	ttl, queueTimeout, recheck time.Duration
	renew                      bool
	tokens                     TokenTracker
	chanPrefix                 string
	grants                     *grants
	clock                      *redisClock
	stop                       context.CancelFunc
	st                         *renewStats
	// woken: grants taken on their message; confirmed: grants found by a
	// check script; rechecks: check scripts run by queued waiters.
	woken, confirmed, rechecks atomic.Int64
	// busy is a hint per key slot (hintSlot): this locker last saw the key
	// contended (an acquire found it held, or a release handed it on), so
	// an acquire queues at once instead of trying SET NX first; a release
	// that found nobody queued, or a queued acquire that took a free lock,
	// clears it. A wrong hint costs a command, never safety.
	busy [256]atomic.Bool
}

var (
	_ Locker         = (*handoff)(nil)
	_ Queued         = (*handoff)(nil)
	_ WakesOnRelease = (*handoff)(nil)
	_ StatsReporter  = (*handoff)(nil)
)

// newHandoff builds the locker, measures its Redis clock offset and
// subscribes to its grant channels. Errors: Config.Prefix empty, recheck
// above queue-timeout/2, the TIME round trip's, a driver without pub/sub,
// the subscription's.
func newHandoff(c Config) (*handoff, error) {
	if c.Prefix == "" {
		return nil, errors.New("handoff: Config.Prefix (the scenario's key prefix) is empty: its grant channels are named under it")
	}
	qt, rc := c.Params.Duration("queue-timeout"), c.Params.Duration("recheck")
	if rc == 0 {
		rc = max(min(c.TTL/2, qt/3), time.Millisecond)
	} else if rc > qt/2 {
		return nil, fmt.Errorf("handoff: recheck %v is more than half of queue-timeout %v: a waiter must refresh its entry before it expires", rc, qt)
	}
	h := &handoff{d: c.Nodes[0], ttl: c.TTL, queueTimeout: qt, recheck: rc, renew: c.Params.String("renew") == "on",
		tokens: c.Tokens, chanPrefix: c.Prefix + "handoff:", st: newRenewStats()}
	ctx, cancel := context.WithCancel(context.Background())
	clock, err := newRedisClock(ctx, h.d)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("handoff: %w", err)
	}
	g, err := subscribeGrants(ctx, h.d, h.chanPrefix)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("handoff: %w", err)
	}
	h.grants, h.clock, h.stop = g, clock, cancel
	return h, nil
}

// Queued marks handoff's TryAcquire as waiting in its queue.
func (h *handoff) Queued() {}

// WakesOnRelease: the release script publishes the grant itself.
func (h *handoff) WakesOnRelease() {}

// FIFO declares that handoff grants in arrival order (its queue).
func (h *handoff) FIFO() {}

// Close ends the grant subscription and any clock measurement under way.
func (h *handoff) Close() error {
	h.stop()
	<-h.grants.done
	h.clock.wait()
	return nil
}

// Stats: the renewal counts (renewals, lost_leases, renewal gaps) and
// woken (grants taken on their message), confirmed (locks found held, or
// taken free, by a check script), rechecks (check scripts run by queued
// waiters) and subscriptions_lost (grant subscriptions that ended with a
// lost connection and were made again).
func (h *handoff) Stats() map[string]float64 {
	m := h.st.stats()
	m["woken"] = float64(h.woken.Load())
	m["confirmed"] = float64(h.confirmed.Load())
	m["rechecks"] = float64(h.rechecks.Load())
	m["subscriptions_lost"] = float64(h.grants.lost.Load())
	return m
}

// RenewalMargins: with renew=on every lease is renewed as watchdog's
// (each margin the server's, RenewScriptPTTL's PTTL before its PEXPIRE);
// with renew=off none is.
func (h *handoff) RenewalMargins(rec MarginFunc) bool {
	if !h.renew {
		return false
	}
	h.st.setMargin(rec)
	return true
}

func handoffKeys(key string) []string { return []string{key, key + ":queue"} }

// queueTTL is the TTL of a lock's queue: 2 x queue-timeout. A waiter
// refreshes its entry at least every 3/4 queue-timeout and an entry is
// dead one queue-timeout after its last refresh, so a queue nobody
// touched for queueTTL holds only dead entries.
func (h *handoff) queueTTL() time.Duration { return 2 * h.queueTimeout }

// handoffEntry is a queue entry: "<deadline ms, Redis clock>|<token>".
func handoffEntry(deadline int64, token string) string {
	return strconv.FormatInt(deadline, 10) + "|" + token
}

// handoffHandOn: KEYS[1] lock, KEYS[2] queue; ARGV[1] token, ARGV[2] lease
// ms, ARGV[3] channel prefix, ARGV[4] the caller's estimate of Redis now
// (ms), ARGV[7] the queue's TTL (ms; queueTTL) when an entry is pushed
// back. handOn() pops entries, dropping dead ones, until a live waiter,
// (and the caller's own entry, left by a failed LREM) and gives it the
// lock in place of the caller: 1 when the caller held it,
// 0 when the lock was free (handed on anyway) or another's (restored,
// the entry pushed back); with no live waiter it is the compare-and-delete
// (2 when it deleted the caller's lock, 0 when the lock was not the
// caller's).
const handoffHandOn = `local function split(e)
	local bar = string.find(e, '|', 1, true)
	return tonumber(string.sub(e, 1, bar - 1)), string.sub(e, bar + 1)
end
local function handOn()
	local now = tonumber(ARGV[4])
	while true do
		local e = redis.call('lpop', KEYS[2])
		if not e then
			if redis.call('get', KEYS[1]) == ARGV[1] then
				redis.call('del', KEYS[1])
				return 2
			end
			return 0
		end
		local dl, w = split(e)
		if dl >= now and w ~= ARGV[1] then
			local old = redis.call('set', KEYS[1], w, 'XX', 'GET', 'PX', ARGV[2])
			if old == ARGV[1] then
				redis.call('publish', ARGV[3] .. w, ARGV[4])
				return 1
			end
			if not old then
				redis.call('set', KEYS[1], w, 'PX', ARGV[2])
				redis.call('publish', ARGV[3] .. w, ARGV[4])
				return 0
			end
			redis.call('set', KEYS[1], old, 'PX', ARGV[2])
			redis.call('lpush', KEYS[2], e)
			redis.call('pexpire', KEYS[2], ARGV[7])
			return 0
		end
	end
end
`

// handoffReleaseScript returns 1 when the caller held the lock (it is
// handed on, or deleted when nobody waits), 0 otherwise (ErrNotOwner).
var handoffReleaseScript = drivers.NewScript(handoffHandOn + `return handOn()`)

// handoffAbandonScript (ARGV[5], ARGV[6]: the waiter's entries, current
// and previous, "" for none) runs for a waiter whose entry was not in the
// queue, or whose last command's outcome is unknown: it removes its
// entries first (so that the lock is not handed back to it), then a lock
// holding its token is released and handed on (returns 1); else 0.
var handoffAbandonScript = drivers.NewScript(handoffHandOn + `if ARGV[5] ~= '' then redis.call('lrem', KEYS[2], 1, ARGV[5]) end
if ARGV[6] ~= ARGV[5] and ARGV[6] ~= '' then redis.call('lrem', KEYS[2], 1, ARGV[6]) end
if redis.call('get', KEYS[1]) == ARGV[1] then
	return handOn()
end
return 0`)

// handoffCheckScript (ARGV[5]: the waiter's current entry, ARGV[6]: its
// refreshed entry, ARGV[7]: the queue's TTL, ms, set again when the
// caller stays queued) returns 1 when the caller holds the lock, else -n with
// n its place in the queue (1: the head).
var handoffCheckScript = drivers.NewScript(`local function split(e)
	local bar = string.find(e, '|', 1, true)
	return tonumber(string.sub(e, 1, bar - 1)), string.sub(e, bar + 1)
end
local cur = redis.call('get', KEYS[1])
if cur == ARGV[1] then
	redis.call('pexpire', KEYS[1], ARGV[2])
	return 1
end
if not cur then
	local now = tonumber(ARGV[4])
	while true do
		local e = redis.call('lindex', KEYS[2], 0)
		if not e then
			redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
			return 1
		end
		local dl, w = split(e)
		if w == ARGV[1] then
			redis.call('lpop', KEYS[2])
			redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
			return 1
		end
		redis.call('lpop', KEYS[2])
		if dl >= now then
			redis.call('set', KEYS[1], w, 'PX', ARGV[2])
			redis.call('publish', ARGV[3] .. w, ARGV[4])
			break
		end
	end
end
local pos = redis.call('lpos', KEYS[2], ARGV[5])
if pos then
	redis.call('lset', KEYS[2], pos, ARGV[6])
else
	pos = redis.call('rpush', KEYS[2], ARGV[6]) - 1
end
redis.call('pexpire', KEYS[2], ARGV[7])
return -(pos + 1)`)

// handoffQueueScript appends entry ARGV[1] to the queue KEYS[1] and sets
// the queue's TTL to ARGV[2] ms in the same call; it returns RPUSH's
// reply (the queue's length).
var handoffQueueScript = drivers.NewScript(`local n = redis.call('rpush', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[2])
return n`)

// handoffAbandonTimeout bounds the abandon of a waiter that gives up.
const handoffAbandonTimeout = time.Second

// TryAcquire takes key's lock, or queues for it until the lock is this
// caller's (a lease, nil) or ctx ends (nil, ctx's error); it never returns
// ErrNotAcquired. A Redis error ends the wait (nil, the error). Either
// way a waiter that gives up abandons first, on a context without ctx's
// cancellation bounded by 1 s: it leaves the queue, or releases and hands
// on a lock already handed to it. (This clean-up is TryAcquire's own, not
// an Abandoner's: only this call knows its token and entry.)
func (h *handoff) TryAcquire(ctx context.Context, key string) (Lease, error) {
	token := NewToken()
	keys := handoffKeys(key)
	wake, stop := h.grants.watch(h.chanPrefix + token)
	defer stop()
	sentAt := time.Now() // the SET runs after this
	hint := &h.busy[hintSlot(key)]
	if !hint.Load() {
		sent(h.tokens, ctx, key, token)
		ok, err := h.d.SetNX(ctx, key, token, h.ttl)
		if err != nil {
			h.abandon(ctx, keys, token, "", "")
			return nil, cutShort(ctx, err)
		}
		if ok {
			return h.lease(ctx, key, token, sentAt), nil
		}
		hint.Store(true)
	}
	// entry is the waiter's entry as the queue holds it; prev the one
	// before a check whose outcome is unknown (an error).
	entry := handoffEntry(h.clock.now()+h.queueTimeout.Milliseconds(), token)
	prev := entry
	sent(h.tokens, ctx, key, token) // a release may store it
	r, err := h.d.Eval(ctx, handoffQueueScript, keys[1:2], entry, ms(h.queueTTL()))
	if err != nil {
		h.abandon(ctx, keys, token, entry, prev)
		return nil, cutShort(ctx, err)
	}
	if r.Int == 1 {
		// The queue was empty: the holder may have released since the
		// SET NX (or, when the hint skipped it, the lock may be free),
		// with nobody to hand the lock to. Try again; when that
		// takes the lock, the entry leaves the queue (if that LREM fails,
		// this holder's release drops its own entry).
		sentAt = time.Now()
		sent(h.tokens, ctx, key, token)
		ok, err := h.d.SetNX(ctx, key, token, h.ttl)
		if err != nil {
			// The SET NX may have taken the lock with its reply lost: the
			// abandon script (not the LREM shortcut) releases it.
			h.abandon(ctx, keys, token, entry, "")
			return nil, cutShort(ctx, err)
		}
		if ok {
			_, _ = h.d.Do(ctx, "LREM", keys[1], "1", entry)
			hint.Store(false)
			return h.lease(ctx, key, token, sentAt), nil
		}
	}
	place, check := r.Int, false
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if check {
			h.rechecks.Add(1)
			now := h.clock.now()
			next := handoffEntry(now+h.queueTimeout.Milliseconds(), token)
			prev = entry
			sentAt = time.Now()
			sent(h.tokens, ctx, key, token)
			res, err := h.d.Eval(ctx, handoffCheckScript, keys, token, ms(h.ttl), h.chanPrefix, strconv.FormatInt(now, 10), entry, next, ms(h.queueTTL()))
			if err != nil {
				h.abandon(ctx, keys, token, next, prev)
				return nil, cutShort(ctx, err)
			}
			if res.Int == 1 {
				h.confirmed.Add(1)
				return h.lease(ctx, key, token, sentAt), nil
			}
			entry, prev, place = next, next, -res.Int
		}
		wait := min(h.recheck*time.Duration(max(place, 1)), h.queueTimeout*3/4)
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			h.abandon(ctx, keys, token, entry, prev)
			return nil, ctx.Err()
		case at := <-wake:
			// The grant's SET ran when the releaser's estimate of Redis
			// time read at (ms); by this waiter's estimate it is age old,
			// give or take the clocks' uncertainty and 1 ms of rounding.
			ms, err := strconv.ParseInt(at, 10, 64)
			age := time.Duration(max(h.clock.now()-ms, 0))*time.Millisecond + h.clock.uncertainty() + time.Millisecond
			if err == nil && age < h.ttl/3 {
				// The renewal, due TTL/3 from now, comes before the
				// lease can end.
				h.woken.Add(1)
				return h.lease(ctx, key, token, time.Now().Add(-age)), nil
			}
			check = true // an old grant: confirm (and extend) it by script
		case <-timer.C:
			check = true
		}
	}
}

// handoffClockRefresh is how often a locker re-measures its estimate of
// the Redis server's clock (one TIME command, in the background).
const handoffClockRefresh = 10 * time.Second

// redisClock estimates the Redis server's clock (ms of TIME) from local
// monotonic time and an offset measured by a TIME round trip: the server
// read its clock between the local send and receive, taken as their
// midpoint, within half the round trip (the uncertainty). now() starts a
// re-measurement, in the background, when the last one is older than
// handoffClockRefresh; a new measurement replaces the old unless its
// uncertainty is more than 1 ms worse and the old is younger than a
// minute.
type redisClock struct {
	d        drivers.Driver
	ctx      context.Context
	mu       sync.Mutex
	base     time.Time // local time (with its monotonic reading) of ...
	baseUS   int64     // ... this Redis time, µs
	unc      time.Duration
	accepted time.Time // when base was measured
	tried    time.Time // when a measurement last started
	wg       sync.WaitGroup
}

// newRedisClock measures the offset once; later measurements stop with
// ctx. Errors: the TIME command's, or its reply's shape.
func newRedisClock(ctx context.Context, d drivers.Driver) (*redisClock, error) {
	c := &redisClock{d: d, ctx: ctx}
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.tried = time.Now()
	if err := c.measure(mctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *redisClock) measure(ctx context.Context) error {
	t0 := time.Now()
	r, err := c.d.Do(ctx, "TIME")
	t1 := time.Now()
	if err != nil {
		return fmt.Errorf("TIME: %w", err)
	}
	if len(r.Array) != 2 {
		return fmt.Errorf("TIME: reply %+v, want [seconds microseconds]", r)
	}
	sec, err1 := r.Array[0].AsInt()
	usec, err2 := r.Array[1].AsInt()
	if err1 != nil || err2 != nil {
		return fmt.Errorf("TIME: reply %+v, want [seconds microseconds]", r)
	}
	unc := t1.Sub(t0) / 2
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.accepted.IsZero() && unc > c.unc+time.Millisecond && t1.Sub(c.accepted) < time.Minute {
		return nil
	}
	c.base, c.baseUS, c.unc, c.accepted = t0.Add(unc), sec*1_000_000+usec, unc, t1
	return nil
}

// now is the estimate of the Redis server's TIME, in ms.
func (c *redisClock) now() int64 {
	c.mu.Lock()
	us := c.baseUS + time.Since(c.base).Microseconds()
	stale := time.Since(c.tried) > handoffClockRefresh && c.ctx.Err() == nil
	if stale {
		c.tried = time.Now()
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if stale {
		go func() {
			defer c.wg.Done()
			ctx, cancel := context.WithTimeout(c.ctx, time.Second)
			defer cancel()
			_ = c.measure(ctx)
		}()
	}
	return us / 1000
}

// uncertainty is half the round trip of the measurement in use.
func (c *redisClock) uncertainty() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unc
}

// wait waits for a measurement under way (after the clock's ctx ended).
func (c *redisClock) wait() {
	c.mu.Lock()
	c.tried = time.Now().Add(time.Hour) // start no more
	c.mu.Unlock()
	c.wg.Wait()
}

// grants dispatches the grant messages of one PSUBSCRIBE to the waiter
// watching each channel (one per token), with the message's payload.
type grants struct {
	mu      sync.Mutex
	waiters map[string]chan string
	done    chan struct{}
	// lost counts subscriptions that ended before ctx did (a connection
	// lost): each is made again; grants published meanwhile are missed
	// and found by the waiters' checks.
	lost atomic.Int64
}

// subscribeGrants PSUBSCRIBEs to prefix* on d until ctx ends, subscribing
// again (after 50 ms, then every 50 ms until it succeeds) whenever the
// subscription ends before ctx. Errors: d has no pub/sub, the first
// subscription failed.
func subscribeGrants(ctx context.Context, d drivers.Driver, prefix string) (*grants, error) {
	sub, ok := d.(drivers.Subscriber)
	if !ok {
		return nil, errors.New("driver " + d.Name() + " has no pub/sub")
	}
	g := &grants{waiters: map[string]chan string{}, done: make(chan struct{})}
	done, err := sub.PSubscribe(ctx, prefix+"*", g.deliver)
	if err != nil {
		return nil, err
	}
	go func() {
		defer close(g.done)
		for {
			select {
			case <-ctx.Done():
				<-done
				return
			case <-done:
			}
			if ctx.Err() != nil {
				return
			}
			g.lost.Add(1)
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				if done, err = sub.PSubscribe(ctx, prefix+"*", g.deliver); err == nil {
					break
				}
			}
		}
	}()
	return g, nil
}

func (g *grants) deliver(channel, payload string) {
	g.mu.Lock()
	ch := g.waiters[channel]
	g.mu.Unlock()
	if ch != nil {
		select {
		case ch <- payload:
		default:
		}
	}
}

// watch registers the waiter of channel; stop unregisters it.
func (g *grants) watch(channel string) (<-chan string, func()) {
	ch := make(chan string, 1)
	g.mu.Lock()
	g.waiters[channel] = ch
	g.mu.Unlock()
	return ch, func() {
		g.mu.Lock()
		delete(g.waiters, channel)
		g.mu.Unlock()
	}
}

// abandon takes a waiter that gives up out of the queue: LREM of its
// entry; when that removes nothing (no entry yet, or it was popped: the
// lock may have been handed to it), the abandon script, which releases a
// lock holding its token and hands it on, and removes entry and prev.
func (h *handoff) abandon(ctx context.Context, keys []string, token, entry, prev string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handoffAbandonTimeout)
	defer cancel()
	if entry != "" && entry == prev {
		if r, err := h.d.Do(actx, "LREM", keys[1], "1", entry); err == nil && r.Int == 1 {
			return
		}
	}
	_, _ = h.d.Eval(actx, handoffAbandonScript, keys, token, ms(h.ttl), h.chanPrefix, strconv.FormatInt(h.clock.now(), 10), entry, prev, ms(h.queueTTL()))
}

// lease returns the lease of token, whose lease time runs from acquired
// at the earliest; with renew=on it is renewed and Watched.
func (h *handoff) lease(ctx context.Context, key, token string, acquired time.Time) Lease {
	l := &lease{key: key, token: token, owner: h}
	if !h.renew {
		return l
	}
	r := startRenewal(h.st, h.ttl, acquired, ClientFrom(ctx).Gate, renewer(h.d, h.tokens, key, token, h.ttl))
	return &watchedLease{Lease: l, r: r}
}

func (h *handoff) release(ctx context.Context, key, token string) error {
	r, err := h.d.Eval(ctx, handoffReleaseScript, handoffKeys(key), token, ms(h.ttl), h.chanPrefix, strconv.FormatInt(h.clock.now(), 10), "", "", ms(h.queueTTL()))
	if err != nil {
		return err
	}
	switch r.Int {
	case 1: // handed on: the key is contended
		return nil
	case 2: // deleted, nobody queued
		h.busy[hintSlot(key)].Store(false)
		return nil
	}
	return ErrNotOwner
}

// hintSlot is key's slot in handoff.busy (FNV-1a of the key, 256 slots:
// keys that share a slot share a hint, which only costs them a command).
func hintSlot(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return int(h & 255)
}
