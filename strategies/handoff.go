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
	Register("handoff", Info{Desc: "FIFO queue in Redis (list + zset of entry deadlines, Redisson RedissonFairLock's); the release script hands the lock straight to the next live waiter (SET to its token, fresh lease) and PUBLISHes on that waiter's own channel (direct hand-off, as MCS locks and Java's AbstractQueuedSynchronizer); renewed as watchdog",
		Params: []registry.Param{
			{Name: "queue-timeout", Doc: "a queued waiter's entry is dropped this long after its last refresh (Redis TIME); waiters refresh it every recheck", Default: 5 * time.Second,
				Check: registry.DurationAtLeast(10 * time.Millisecond)},
			{Name: "recheck", Doc: "longest a queued waiter waits for its grant message before it runs the acquire script again (refreshing its entry, finding a grant whose message was lost, handing on a lock whose lease ended unreleased); at most queue-timeout/2; 0 = min(TTL/2, queue-timeout/3)",
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
// waiter tokens in arrival order, and K:deadlines, a zset giving each
// entry its deadline in ms of Redis TIME (the two keys of Redisson's
// RedissonFairLock: redisson_lock_queue and redisson_lock_timeout). A
// waiter's token is the random token of its acquire (NewToken) and the
// value the lock will hold for it. Every script first drops expired
// entries from the head of the queue. Then:
//
//   - acquire: when K holds the caller's token, the lock was handed to it
//     (its lease is extended to the TTL) and it is held. When K is free
//     and the queue is empty or the caller is its head, the caller takes
//     it (SET K token PX ttl). When K is free and another live waiter is
//     the head (a holder whose lease ended unreleased), the lock is
//     handed to that head first. Otherwise the caller is queued (once)
//     and its entry's deadline set to now + queue-timeout.
//   - release: compare-and-delete of the caller's token; then, K being
//     free, the head is popped, K is SET to its token with a fresh lease
//     (PX ttl), and the grant's Redis TIME (ms) is PUBLISHed on the
//     head's own channel,
//     <Config.Prefix>handoff:<token>. The waiter holds the lock when the
//     message arrives: no SET and no round trip follow (the direct
//     hand-off of MCS queue locks and of Java's AbstractQueuedSynchronizer,
//     where the releaser unparks its successor; Redisson's fair lock
//     instead publishes to the head and lets it race for the key).
//   - abandon (a waiter whose ctx ended): when K already holds its token,
//     it releases and hands on as a release does, in the same script;
//     otherwise it leaves the queue.
//
// A waiter watches its channel (one PSUBSCRIBE per locker, on Nodes[0],
// of <Config.Prefix>handoff:*) before its first acquire script, so a
// grant cannot be missed, and waits for the message or recheck, whichever
// comes first; each recheck runs the acquire script again. The lease runs
// at the latest from the local time the waiter's last script was sent
// plus the Redis time between that script and the grant (both read from
// Redis TIME: the script returns its own). A message that arrives more
// than TTL/3 after that may announce a lease already gone: the waiter
// then confirms it by script (which extends a lease still its own)
// instead of taking it on trust. With renew=on leases renew as watchdog's (renewal.go) and are
// Watched.
//
// Failure modes: a waiter that dies after being handed the lock holds it
// for one lease; a dead waiter still inside its queue-timeout is handed
// the lock when its turn comes and also costs one lease; a waiter whose
// abandon script fails (the server unreachable) leaves its entry to its
// queue-timeout, and a lock handed to it to its lease. A grant message
// delayed past the lease (or lost) is a lost lease: the holder's renewal
// finds the token gone and cancels the lease's context. Every deadline is
// Redis TIME, read inside the scripts: client clocks do not matter.
type handoff struct {
	d                          drivers.Driver
	ttl, queueTimeout, recheck time.Duration
	renew                      bool
	tokens                     TokenTracker
	chanPrefix                 string
	grants                     *grants
	stop                       context.CancelFunc
	st                         *renewStats
	// woken: grants taken on their message; confirmed: grants found by an
	// acquire script after the first (a recheck, or a message too old to
	// trust); rechecks: acquire scripts after a waiter's first.
	woken, confirmed, rechecks atomic.Int64
}

var (
	_ Locker         = (*handoff)(nil)
	_ Queued         = (*handoff)(nil)
	_ WakesOnRelease = (*handoff)(nil)
	_ StatsReporter  = (*handoff)(nil)
)

// newHandoff builds the locker and subscribes to its grant channels.
// Errors: Config.Prefix empty, recheck above queue-timeout/2, a driver
// without pub/sub, the subscription's.
func newHandoff(c Config) (Locker, error) {
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
	g, err := subscribeGrants(ctx, h.d, h.chanPrefix)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("handoff: %w", err)
	}
	h.grants, h.stop = g, cancel
	return h, nil
}

// Queued marks handoff's TryAcquire as waiting in its queue.
func (h *handoff) Queued() {}

// WakesOnRelease: the release script publishes the grant itself.
func (h *handoff) WakesOnRelease() {}

// Close ends the grant subscription.
func (h *handoff) Close() error {
	h.stop()
	<-h.grants.done
	return nil
}

// Stats: the renewal counts (renewals, lost_leases, renewal gaps) and
// woken (grants taken on their message), confirmed (grants found by a
// later acquire script) and rechecks (acquire scripts re-run by queued
// waiters).
func (h *handoff) Stats() map[string]float64 {
	m := h.st.stats()
	m["woken"] = float64(h.woken.Load())
	m["confirmed"] = float64(h.confirmed.Load())
	m["rechecks"] = float64(h.rechecks.Load())
	return m
}

func handoffKeys(key string) []string { return []string{key, key + ":queue", key + ":deadlines"} }

// handoffPrelude: KEYS[1] lock, KEYS[2] queue, KEYS[3] deadlines; ARGV[1]
// token, ARGV[2] lease ms, ARGV[3] channel prefix. head() drops expired
// entries at the head and returns the live head (nil: none); handOn()
// gives the free lock to it and publishes on its channel.
const handoffPrelude = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function head()
	while true do
		local first = redis.call('lindex', KEYS[2], 0)
		if not first then return nil end
		local dl = redis.call('zscore', KEYS[3], first)
		if dl and tonumber(dl) >= now then return first end
		redis.call('lpop', KEYS[2])
		redis.call('zrem', KEYS[3], first)
	end
end
local function handOn()
	local h = head()
	if h then
		redis.call('lpop', KEYS[2])
		redis.call('zrem', KEYS[3], h)
		redis.call('set', KEYS[1], h, 'PX', ARGV[2])
		redis.call('publish', ARGV[3] .. h, tostring(now))
	end
	return h
end
`

// handoffAcquireScript (ARGV[4]: queue-timeout ms) returns 1 when the
// caller holds the lock; when it is queued, the Redis TIME in ms at which
// its entry was refreshed (a number far above 1).
var handoffAcquireScript = drivers.NewScript(handoffPrelude + `local cur = redis.call('get', KEYS[1])
if cur == ARGV[1] then
	redis.call('pexpire', KEYS[1], ARGV[2])
	return 1
end
if not cur then
	local h = head()
	if (not h) or h == ARGV[1] then
		if h then
			redis.call('lpop', KEYS[2])
			redis.call('zrem', KEYS[3], h)
		end
		redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
		return 1
	end
	handOn()
end
if not redis.call('zscore', KEYS[3], ARGV[1]) then
	redis.call('rpush', KEYS[2], ARGV[1])
end
redis.call('zadd', KEYS[3], now + tonumber(ARGV[4]), ARGV[1])
redis.call('pexpire', KEYS[2], 2 * tonumber(ARGV[4]))
redis.call('pexpire', KEYS[3], 2 * tonumber(ARGV[4]))
return now`)

// handoffReleaseScript returns 1 when it deleted the caller's lock (and
// handed it on), 0 when the lock was not the caller's; a free lock is
// handed on either way.
var handoffReleaseScript = drivers.NewScript(handoffPrelude + `if redis.call('get', KEYS[1]) ~= ARGV[1] then
	if redis.call('exists', KEYS[1]) == 0 then handOn() end
	return 0
end
redis.call('del', KEYS[1])
handOn()
return 1`)

// handoffAbandonScript: a waiter gives up. A lock already handed to it is
// released and handed on (returns 1); else its entry is removed (0).
var handoffAbandonScript = drivers.NewScript(handoffPrelude + `if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('del', KEYS[1])
	handOn()
	return 1
end
redis.call('lrem', KEYS[2], 0, ARGV[1])
redis.call('zrem', KEYS[3], ARGV[1])
return 0`)

// handoffAbandonTimeout bounds the abandon script of a waiter that gives
// up.
const handoffAbandonTimeout = time.Second

// TryAcquire queues for key until the lock is this caller's (a lease,
// nil) or ctx ends (nil, ctx's error); it never returns ErrNotAcquired. A
// Redis error ends the wait (nil, the error). Either way a waiter that
// gives up runs the abandon script first, on a context without ctx's
// cancellation bounded by 1 s: it leaves the queue, or releases and hands
// on a lock already handed to it. (This clean-up is TryAcquire's own, not
// an Abandoner's: only this call knows its token.)
func (h *handoff) TryAcquire(ctx context.Context, key string) (Lease, error) {
	token := NewToken()
	keys := handoffKeys(key)
	args := []string{token, ms(h.ttl), h.chanPrefix, ms(h.queueTimeout)}
	wake, stop := h.grants.watch(h.chanPrefix + token)
	defer stop()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for n := 0; ; n++ {
		if n > 0 {
			h.rechecks.Add(1)
		}
		sentAt := time.Now() // the script runs after this
		sent(h.tokens, ctx, key, token)
		res, err := h.d.Eval(ctx, handoffAcquireScript, keys, args...)
		if err != nil {
			h.abandon(ctx, keys, args)
			return nil, cutShort(ctx, err)
		}
		if res.Int == 1 {
			if n > 0 {
				h.confirmed.Add(1)
			}
			return h.lease(ctx, key, token, sentAt), nil
		}
		queuedAt := res.Int // Redis TIME, ms
		if timer == nil {
			timer = time.NewTimer(h.recheck)
		} else {
			timer.Reset(h.recheck)
		}
		select {
		case <-ctx.Done():
			h.abandon(ctx, keys, args)
			return nil, ctx.Err()
		case at := <-wake:
			// The grant ran (at - queuedAt) ms of Redis time after the
			// script, which ran after sentAt (1 ms off for TIME's
			// rounding). A grant older than the script is stale (its
			// lease ended before the script queued this token again):
			// it is confirmed by script, as is one too old to trust.
			ms, err := strconv.ParseInt(at, 10, 64)
			granted := sentAt.Add(time.Duration(max(ms-queuedAt-1, 0)) * time.Millisecond)
			if err == nil && ms >= queuedAt && time.Since(granted) < h.ttl/3 {
				// The renewal, due TTL/3 from now, comes before the
				// lease can end.
				h.woken.Add(1)
				return h.lease(ctx, key, token, granted), nil
			}
			// An old grant: confirm (and extend) it by script.
		case <-timer.C:
		}
	}
}

// grants dispatches the grant messages of one PSUBSCRIBE to the waiter
// watching each channel (one per token), with the message's payload.
type grants struct {
	mu      sync.Mutex
	waiters map[string]chan string
	done    <-chan struct{}
}

// subscribeGrants PSUBSCRIBEs to prefix* on d until ctx ends. Errors: d
// has no pub/sub, the subscription failed.
func subscribeGrants(ctx context.Context, d drivers.Driver, prefix string) (*grants, error) {
	sub, ok := d.(drivers.Subscriber)
	if !ok {
		return nil, errors.New("driver " + d.Name() + " has no pub/sub")
	}
	g := &grants{waiters: map[string]chan string{}}
	done, err := sub.PSubscribe(ctx, prefix+"*", g.deliver)
	if err != nil {
		return nil, err
	}
	g.done = done
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

// abandon runs the abandon script for a waiter that gives up.
func (h *handoff) abandon(ctx context.Context, keys, args []string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handoffAbandonTimeout)
	defer cancel()
	_, _ = h.d.Eval(actx, handoffAbandonScript, keys, args[:3]...)
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
	r, err := h.d.Eval(ctx, handoffReleaseScript, handoffKeys(key), token, ms(h.ttl), h.chanPrefix)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}
