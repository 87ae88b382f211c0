package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("fair", Info{Desc: "FIFO fair lock (Redisson RFairLock model): waiters queue in a list with a per-waiter timeout (5 s); only the head of the queue may take a free lock"},
		func(c Config) (Locker, error) {
			return &fair{d: c.Nodes[0], ttl: c.TTL, waiterTimeout: 5 * time.Second, tokens: c.Tokens}, nil
		})
}

// fairLockScript: KEYS[1] lock, KEYS[2] queue (list of waiter ids),
// KEYS[3] waiter deadlines (zset, ms). ARGV[1] waiter id (the lock value
// once held), ARGV[2] lease ms, ARGV[3] waiter timeout ms. It drops waiters
// at the head whose deadline passed; takes the lock when it is free and the
// caller is at the head (or the queue is empty); otherwise queues the
// caller (once) and refreshes its deadline. Returns 1 when taken.
var fairLockScript = drivers.NewScript(`local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
while true do
	local first = redis.call('lindex', KEYS[2], 0)
	if not first then break end
	local dl = redis.call('zscore', KEYS[3], first)
	if dl and tonumber(dl) >= now then break end
	redis.call('lpop', KEYS[2])
	redis.call('zrem', KEYS[3], first)
end
if redis.call('exists', KEYS[1]) == 0 then
	local first = redis.call('lindex', KEYS[2], 0)
	if (not first) or first == ARGV[1] then
		if first then
			redis.call('lpop', KEYS[2])
			redis.call('zrem', KEYS[3], first)
		end
		redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
		return 1
	end
end
if not redis.call('zscore', KEYS[3], ARGV[1]) then
	redis.call('rpush', KEYS[2], ARGV[1])
end
redis.call('zadd', KEYS[3], now + tonumber(ARGV[3]), ARGV[1])
return 0`)

// fairAbandonScript removes waiter ARGV[1] from the queue and deadlines.
var fairAbandonScript = drivers.NewScript(`redis.call('lrem', KEYS[2], 0, ARGV[1])
return redis.call('zrem', KEYS[3], ARGV[1])`)

// fair grants a free lock only to the waiter at the head of its queue. The
// waiter id is the worker's owner id, stable across its retries; a waiter
// that stops polling drops out after waiterTimeout, and one whose acquire
// gives up leaves the queue at once (Abandon).
type fair struct {
	d             drivers.Driver
	ttl           time.Duration
	waiterTimeout time.Duration
	// tokens is told of the owner before each lock script: the lock key's
	// value once granted (the queue and the deadlines zset, other keys,
	// hold waiter ids, no lock).
	tokens TokenTracker
}

var (
	_ Locker    = (*fair)(nil)
	_ Abandoner = (*fair)(nil)
	_ WakesAll  = (*fair)(nil)
)

// WakesAll is implemented by lockers whose next owner is chosen in Redis
// (fair's queue head): a release must wake every waiter, not one.
type WakesAll interface{ wakesAll() }

func (f *fair) wakesAll() {}

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

func (f *fair) release(ctx context.Context, key, token string) error {
	r, err := f.d.Eval(ctx, UnlockScript, []string{key}, token)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}
