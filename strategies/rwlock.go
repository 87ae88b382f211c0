package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("rwlock", Info{Desc: "read-write lock in one hash (Redisson RReadWriteLock model): many readers or one writer; reads take the read side (--read-ratio)"},
		func(c Config) (Locker, error) { return &rwlock{d: c.Nodes[0], ttl: c.TTL}, nil })
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

// The rwlock hash: field "mode" = "read" or "write", plus one field per
// holder (the reader's owner id, or "<owner>:w" for the writer) counting its
// holds. ARGV[1] = lease ms, ARGV[2] = holder field.
var (
	rwReadScript = drivers.NewScript(`local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
	redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if mode == 'read' then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
		redis.call('pexpire', KEYS[1], ARGV[1])
	end
	return nil
end
return redis.call('pttl', KEYS[1])`)
	rwWriteScript = drivers.NewScript(`local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
	redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])`)
	// rwUnlockScript drops one hold of holder ARGV[1]; nil when it holds
	// none; deletes the lock when no holder is left.
	rwUnlockScript = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
	redis.call('hdel', KEYS[1], ARGV[1])
end
if redis.call('hlen', KEYS[1]) <= 1 then
	redis.call('del', KEYS[1])
	return 1
end
return 0`)
)

// rwlock lets any number of readers, or one writer, hold key. Holder
// fields are the worker's owner id, so a worker's holds are reentrant on
// each side.
type rwlock struct {
	d   drivers.Driver
	ttl time.Duration
}

var (
	_ Locker     = (*rwlock)(nil)
	_ ReadLocker = (*rwlock)(nil)
)

func (r *rwlock) TryAcquire(ctx context.Context, key string) (Lease, error) {
	return r.take(ctx, rwWriteScript, key, ClientFrom(ctx).Owner+":w")
}

func (r *rwlock) TryAcquireRead(ctx context.Context, key string) (Lease, error) {
	return r.take(ctx, rwReadScript, key, ClientFrom(ctx).Owner)
}

func (r *rwlock) take(ctx context.Context, s *drivers.Script, key, holder string) (Lease, error) {
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
