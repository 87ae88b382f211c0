package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("rwlock", Info{Desc: "read-write lock in one hash (Redisson RReadWriteLock model): many readers or one writer; reads take the read side (--read-ratio)"},
		func(c Config) (*rwlock, error) { return &rwlock{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, nil })
}

// ReadLocker is implemented by lockers with a shared (read) side.
type ReadLocker interface {
	// TryAcquireRead makes one attempt at the read side of key.
	TryAcquireRead(ctx context.Context, key string) (Lease, error)
}

// ReadSide returns a Locker whose TryAcquire takes l's read side, or l
// itself when l has none (then readers exclude each other too).
func ReadSide(l Locker) Locker {
	if r, ok := l.(ReadLocker); ok {
		return readSide{r}
	}
	return l
}

type readSide struct{ r ReadLocker }

func (s readSide) TryAcquire(ctx context.Context, key string) (Lease, error) {
	return s.r.TryAcquireRead(ctx, key)
}

// The rwlock hash holds one field per holder, counting its holds: the
// reader's owner id, or "<owner>:w" for the writer; ARGV[1] = lease ms,
// ARGV[2] = holder field. Redisson's model also keeps a field "mode"
// ("read" or "write"); here the mode follows from the holder fields (a
// writer excludes everyone else, so the lock is in write mode exactly when
// its one field ends in ":w"), so that every field of the lock key is a
// holder's token: the liveness oracle reads the hash's field names as the
// tokens stored (TokenTracker). Owner ids never end in ":w".
var (
	rwReadScript = drivers.NewScript(`if redis.call('exists', KEYS[1]) == 0 then
	redis.call('hset', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
local writing = false
if redis.call('hlen', KEYS[1]) == 1 then
	writing = string.sub(redis.call('hkeys', KEYS[1])[1], -2) == ':w'
end
if not writing then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
		redis.call('pexpire', KEYS[1], ARGV[1])
	end
	return nil
end
return redis.call('pttl', KEYS[1])`)
	// A held lock whose holder fields include ARGV[2] (the writer's
	// "<owner>:w") is in write mode, held by this writer: it re-enters.
	rwWriteScript = drivers.NewScript(`if redis.call('exists', KEYS[1]) == 0 then
	redis.call('hset', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])`)
	// rwUnlockScript drops one hold of holder ARGV[1]; nil when it holds
	// none; 1 when no holder is left (Redis deletes a hash with no field),
	// else 0.
	rwUnlockScript = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
	redis.call('hdel', KEYS[1], ARGV[1])
end
if redis.call('exists', KEYS[1]) == 0 then
	return 1
end
return 0`)
)

// rwlock lets any number of readers, or one writer, hold key. Holder
// fields are the worker's owner id, so a worker's holds are reentrant on
// each side.
type rwlock struct {
	d      drivers.Driver
	ttl    time.Duration
	tokens TokenTracker // told of the holder field before each script
}

var (
	_ Locker     = (*rwlock)(nil)
	_ ReadLocker = (*rwlock)(nil)
	_ Reentrant  = (*rwlock)(nil)
)

// Reentrant: the writer's nested acquires count up in its field.
func (*rwlock) Reentrant() {}

func (r *rwlock) TryAcquire(ctx context.Context, key string) (Lease, error) {
	return r.take(ctx, rwWriteScript, key, ClientFrom(ctx).Owner+":w")
}

func (r *rwlock) TryAcquireRead(ctx context.Context, key string) (Lease, error) {
	return r.take(ctx, rwReadScript, key, ClientFrom(ctx).Owner)
}

func (r *rwlock) take(ctx context.Context, s *drivers.Script, key, holder string) (Lease, error) {
	sent(r.tokens, ctx, key, holder)
	res, err := r.d.Eval(ctx, s, []string{key}, ms(r.ttl), holder)
	if err != nil {
		return nil, err
	}
	if !res.IsNil() {
		return nil, ErrNotAcquired
	}
	return &lease{key: key, token: holder, owner: r}, nil
}

func (r *rwlock) release(ctx context.Context, key, holder string) error {
	res, err := r.d.Eval(ctx, rwUnlockScript, []string{key}, holder)
	if err != nil {
		return err
	}
	if res.IsNil() {
		return ErrNotOwner
	}
	return nil
}
