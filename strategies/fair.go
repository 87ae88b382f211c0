package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("fair", Info{Desc: "FIFO fair lock (Redisson RFairLock model): waiters queue in a list with a per-waiter timeout (5 s); only the head of the queue may take a free lock; the release wakes the head alone, on its own channel"},
		func(c Config) (*fair, error) {
			wake := map[Wake]string{WakePublish: "publish", WakeKey: "key", WakeNone: "none"}[c.Wake]
			return &fair{d: c.Nodes[0], ttl: c.TTL, waiterTimeout: fairWaiterTimeout, tokens: c.Tokens, wake: wake}, nil
		})
}

// fairWaiterTimeout is how long a fair waiter's entry lives after its
// last attempt (Redisson's threadWaitTime default, 5 s).
const fairWaiterTimeout = 5 * time.Second

// fairLockScript: KEYS[1] lock, KEYS[2] queue (list of waiter ids),
// KEYS[3] waiter deadlines (zset, ms of Redis TIME). ARGV[1] waiter id
// (the lock value once held), ARGV[2] lease ms, ARGV[3] waiter timeout
// ms. Returns 1 when taken. Every caller queued (or whose deadline is
// refreshed) also sets both KEYS[2] and KEYS[3] to expire 2 x the waiter
// timeout later (two PEXPIREs): every entry they hold is dead by then
// (its deadline is at most one waiter timeout after the last refresh of
// any), so a queue left by a killed run goes away with its waiters
// instead of staying forever. Ordered so that the common attempts are
// cheap:
//
//   - the lock is held: the caller's deadline is set (ZADD, whose reply
//     tells a new waiter) and a new caller queued (RPUSH): EVALSHA,
//     EXISTS, TIME, ZADD (and RPUSH once), PEXPIRE twice.
//   - the lock is free and the caller heads the queue (a woken waiter),
//     or the queue is empty: it takes the lock (no ZSCORE and no TIME: it
//     is alive).
//   - the lock is free and another waiter heads the queue: a new caller is
//     queued as above without looking at the head (the releaser's next
//     attempt, right after its release woke the live head); a caller
//     already queued drops the waiters at the head whose deadline passed
//     and takes the lock once it is the head.
//
// A new caller that finds the lock free behind a dead head therefore
// waits for its next attempt (at most EntryTimeout/3 later, WaitQueue) to
// drop it. TIME is read only when a deadline is set or compared.
var fairLockScript = drivers.NewScript(`local now
local function clock()
	if not now then
		local t = redis.call('time')
		now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	end
	return now
end
local function take()
	redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
	return 1
end
local function queue()
	local added = redis.call('zadd', KEYS[3], clock() + tonumber(ARGV[3]), ARGV[1]) == 1
	if added then
		redis.call('rpush', KEYS[2], ARGV[1])
	end
	redis.call('pexpire', KEYS[2], 2 * tonumber(ARGV[3]))
	redis.call('pexpire', KEYS[3], 2 * tonumber(ARGV[3]))
	return added
end
if redis.call('exists', KEYS[1]) == 1 then
	queue()
	return 0
end
local first = redis.call('lindex', KEYS[2], 0)
if not first then return take() end
if first ~= ARGV[1] then
	if queue() then return 0 end
	while true do
		local dl = redis.call('zscore', KEYS[3], first)
		if dl and tonumber(dl) >= clock() then return 0 end
		redis.call('lpop', KEYS[2])
		redis.call('zrem', KEYS[3], first)
		first = redis.call('lindex', KEYS[2], 0)
		if not first then
			redis.call('zrem', KEYS[3], ARGV[1])
			return take()
		end
		if first == ARGV[1] then break end
	end
end
redis.call('lpop', KEYS[2])
redis.call('zrem', KEYS[3], first)
return take()`)

// fairAbandonScript removes waiter ARGV[1] from the queue and deadlines.
var fairAbandonScript = drivers.NewScript(`redis.call('lrem', KEYS[2], 0, ARGV[1])
return redis.call('zrem', KEYS[3], ARGV[1])`)

// fair grants a free lock only to the waiter at the head of its queue. The
// waiter id is the worker's owner id, stable across its retries; a waiter
// that stops polling drops out after waiterTimeout, and one whose acquire
// gives up leaves the queue at once (Abandon). Its release wakes the head
// of the queue alone, on the head's own channel (WaitQueue,
// WakesOnRelease), instead of every waiter of the key.
type fair struct {
	d             drivers.Driver
	ttl           time.Duration
	waiterTimeout time.Duration
	// tokens is told of the owner before each lock script: the lock key's
	// value once granted (the queue and the deadlines zset, other keys,
	// hold waiter ids, no lock).
	tokens TokenTracker
	// wake is how the release wakes the queue head (Config.Wake):
	// "publish" (PUBLISH on its WakeChannel), "key" (SET and DEL the key of
	// that name, whose invalidation the csc policy's tracking hears) or
	// "none".
	wake string
}

var (
	_ Locker         = (*fair)(nil)
	_ Abandoner      = (*fair)(nil)
	_ WaitQueue      = (*fair)(nil)
	_ WakesOnRelease = (*fair)(nil)
)

// WakeChannel is the channel fair's release publishes on when the waiter
// of ctx is at the head of key's queue: KEY:wake:OWNER (with
// Config.Wake = WakeKey, the key it writes instead).
func (f *fair) WakeChannel(ctx context.Context, key string) string {
	return key + ":wake:" + ClientFrom(ctx).Owner
}

// EntryTimeout is the waiter timeout (5 s).
func (f *fair) EntryTimeout() time.Duration { return f.waiterTimeout }

// WakesOnRelease: the release script publishes to the queue head.
func (f *fair) WakesOnRelease() {}

// FIFO declares that fair grants in arrival order (its queue).
func (f *fair) FIFO() {}

// Abandoner is implemented by lockers that keep per-waiter state; Acquire
// calls Abandon when it gives up, so the waiter does not block others.
type Abandoner interface {
	Abandon(ctx context.Context, key string)
}

func fairKeys(key string) []string { return []string{key, key + ":queue", key + ":waiters"} }

func (f *fair) TryAcquire(ctx context.Context, key string) (Lease, error) {
	owner := ClientFrom(ctx).Owner
	sent(f.tokens, ctx, key, owner)
	res, err := f.d.Eval(ctx, fairLockScript, fairKeys(key), owner, ms(f.ttl), ms(f.waiterTimeout))
	if err != nil {
		return nil, err
	}
	if res.Int != 1 {
		return nil, ErrNotAcquired
	}
	return &lease{key: key, token: owner, owner: f}, nil
}

func (f *fair) Abandon(ctx context.Context, key string) {
	_, _ = f.d.Eval(ctx, fairAbandonScript, fairKeys(key), ClientFrom(ctx).Owner)
}

// fairUnlockScript is the compare-and-delete of KEYS[1] with token
// ARGV[1]; when it deleted, it drops the expired waiters at the head of
// the queue and PUBLISHes on the live head's own channel, KEYS[1]:wake:ID,
// the waiter whose turn it is (Redisson's RedissonFairLock publishes to
// the head's channel the same way): one message per release, none for an
// empty queue (whose release reads no TIME). ARGV[2] "key" wakes the head
// by SETting and DELeting the key KEYS[1]:wake:ID instead (Config.Wake =
// WakeKey: the csc policy hears one invalidation of it, and no key stays);
// "none" wakes nobody (a polling policy: nobody listens) and returns after
// the DEL. Returns 1 when it deleted.
// With a live head: EVALSHA, GET, DEL, LINDEX, TIME, ZSCORE, PUBLISH (or
// SET).
var fairUnlockScript = drivers.NewScript(`if redis.call('get', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('del', KEYS[1])
if ARGV[2] == 'none' then return 1 end
local now
while true do
	local first = redis.call('lindex', KEYS[2], 0)
	if not first then break end
	if not now then
		local t = redis.call('time')
		now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	end
	local dl = redis.call('zscore', KEYS[3], first)
	if dl and tonumber(dl) >= now then
		if ARGV[2] == 'key' then
			redis.call('set', KEYS[1] .. ':wake:' .. first, '1')
			redis.call('del', KEYS[1] .. ':wake:' .. first)
		else
			redis.call('publish', KEYS[1] .. ':wake:' .. first, '')
		end
		break
	end
	redis.call('lpop', KEYS[2])
	redis.call('zrem', KEYS[3], first)
end
return 1`)

func (f *fair) release(ctx context.Context, key, token string) error {
	r, err := f.d.Eval(ctx, fairUnlockScript, fairKeys(key), token, f.wake)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}
