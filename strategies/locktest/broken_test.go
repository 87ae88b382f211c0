package locktest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// Deliberately defective locks, registered in this test binary only, for
// TestSuiteFailsBrokenLock: each fails one check of the suite. Their
// names start with brokenPrefix, and the tests that run every registered
// strategy (every, BenchmarkCycle) leave them out.
const brokenPrefix = "locktest-"

// testOnly reports whether strategy is one of this file's defective
// locks.
func testOnly(strategy string) bool { return strings.HasPrefix(strategy, brokenPrefix) }

func init() {
	// locktest-false-acquire: atomic, except that every 5th attempt of
	// the locker reports success without sending anything (a client that
	// believed a stale or mismatched reply): its lease's token is in no
	// key, and its release does nothing. Fails OwnedAfterAcquire.
	strategies.Register(brokenPrefix+"false-acquire", strategies.Info{Desc: "test only: atomic, whose every 5th attempt is granted without setting the key"},
		func(c strategies.Config) (strategies.Locker, error) {
			inner, err := strategies.New("atomic", c)
			if err != nil {
				return nil, err
			}
			return &falseLocker{inner: inner}, nil
		})
	// locktest-release-loop: atomic, except that a release finding the
	// lock not its own (ErrNotOwner) tries again every 10 ms until its
	// context ends, as a release that waits for its lock to come back
	// would. Fails ReleaseAfterExpiry.
	strategies.Register(brokenPrefix+"release-loop", strategies.Info{Desc: "test only: atomic, whose release retries until the lock is its own again"},
		func(c strategies.Config) (strategies.Locker, error) {
			inner, err := strategies.New("atomic", c)
			if err != nil {
				return nil, err
			}
			return loopLocker{inner}, nil
		})
	// locktest-lifo: a lock with a queue in Redis that declares FIFO but
	// grants a free lock to the waiter that queued last (its queue is a
	// stack). Fails FIFOOrder.
	strategies.Register(brokenPrefix+"lifo", strategies.Info{Desc: "test only: a queued lock that declares FIFO and grants LIFO"},
		func(c strategies.Config) (*lifoLocker, error) { return &lifoLocker{d: c.Nodes[0], ttl: c.TTL}, nil })
}

type falseLocker struct {
	inner    strategies.Locker
	attempts atomic.Int64
}

func (f *falseLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	if n := f.attempts.Add(1); n%5 == 0 {
		return fakeLease{key: key, token: "never-stored-" + strconv.FormatInt(n, 10)}, nil
	}
	return f.inner.TryAcquire(ctx, key)
}

type fakeLease struct{ key, token string }

func (l fakeLease) Key() string                   { return l.key }
func (l fakeLease) Token() string                 { return l.token }
func (l fakeLease) Release(context.Context) error { return nil }

type loopLocker struct{ inner strategies.Locker }

func (l loopLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	le, err := l.inner.TryAcquire(ctx, key)
	if err != nil {
		return nil, err
	}
	return loopLease{le}, nil
}

type loopLease struct{ strategies.Lease }

func (l loopLease) Release(ctx context.Context) error {
	for {
		err := l.Lease.Release(ctx)
		if !errors.Is(err, strategies.ErrNotOwner) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lifoLocker keeps, beside lock key K, a stack K:stack of waiting owners
// (strategies.Client.Owner): an attempt at a held lock pushes its owner
// on top (once); a free lock goes to the owner on top only (a free lock
// with an empty stack, to anyone). Its release is atomic's
// compare-and-delete.
type lifoLocker struct {
	d   drivers.Driver
	ttl time.Duration
}

// FIFO declares arrival order, which lifoLocker does not keep.
func (*lifoLocker) FIFO() {}

// lifoScript: KEYS[1] lock, KEYS[2] stack; ARGV[1] owner, ARGV[2] lease
// ms. Returns 1 when taken.
var lifoScript = drivers.NewScript(`local function push()
	if not redis.call('lpos', KEYS[2], ARGV[1]) then redis.call('lpush', KEYS[2], ARGV[1]) end
	return 0
end
if redis.call('exists', KEYS[1]) == 1 then return push() end
local top = redis.call('lindex', KEYS[2], 0)
if top and top ~= ARGV[1] then return push() end
if top then redis.call('lpop', KEYS[2]) end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

var lifoUnlock = drivers.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`)

func (l *lifoLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	owner := strategies.ClientFrom(ctx).Owner
	r, err := l.d.Eval(ctx, lifoScript, []string{key, key + ":stack"}, owner, strconv.FormatInt(l.ttl.Milliseconds(), 10))
	if err != nil {
		return nil, err
	}
	if r.Int != 1 {
		return nil, strategies.ErrNotAcquired
	}
	return &lifoLease{d: l.d, key: key, token: owner}, nil
}

type lifoLease struct {
	d          drivers.Driver
	key, token string
}

func (l *lifoLease) Key() string   { return l.key }
func (l *lifoLease) Token() string { return l.token }
func (l *lifoLease) Release(ctx context.Context) error {
	r, err := l.d.Eval(ctx, lifoUnlock, []string{l.key}, l.token)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return strategies.ErrNotOwner
	}
	return nil
}

func init() {
	// locktest-late-loss: a lease renewed every TTL/2 whose Context is
	// cancelled only when a renewal finds the token gone, and whose
	// Release decides from that: nil (after a compare-and-delete whose
	// reply it ignores) until the loss is learned, ErrNotOwner after.
	// Undeclared, it fails OwnerOnlyRelease (A's release of a lost lease
	// returns nil); locktest-late-loss-declared, the same lease declaring
	// strategies.LossAtRenewal, passes it.
	for _, declared := range []bool{false, true} {
		name := brokenPrefix + "late-loss"
		if declared {
			name += "-declared"
		}
		strategies.Register(name, strategies.Info{Desc: "test only: a watched lease that learns of a loss only at its next renewal"},
			func(c strategies.Config) (strategies.Locker, error) {
				return &lateLocker{d: c.Nodes[0], ttl: c.TTL, declared: declared}, nil
			})
	}
	// locktest-redisson-rw: a read-write lock in one hash with Redisson's
	// "mode" field ("read" or "write") beside one field per holder (its
	// token: the reader's Owner, the writer's Owner + ":w"), each token
	// passed to Config.Sent. Undeclared, it fails TokensReported (the
	// lock key holds "mode", never passed to Sent);
	// locktest-redisson-rw-declared, the same lock declaring "mode"
	// through strategies.NonTokenFields, passes it.
	for _, declared := range []bool{false, true} {
		name := brokenPrefix + "redisson-rw"
		if declared {
			name += "-declared"
		}
		strategies.Register(name, strategies.Info{Desc: "test only: a Redisson-style read-write lock with a mode field"},
			func(c strategies.Config) (strategies.Locker, error) {
				rw := &redissonRW{c: c}
				if declared {
					return redissonRWDeclared{rw}, nil
				}
				return rw, nil
			})
	}
}

type lateLocker struct {
	d        drivers.Driver
	ttl      time.Duration
	declared bool
}

var (
	lateRenew  = drivers.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`)
	lateUnlock = drivers.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`)
)

func (l *lateLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	token := strategies.NewToken()
	ok, err := l.d.SetNX(ctx, key, token, l.ttl)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, strategies.ErrNotAcquired
	}
	lctx, cancel := context.WithCancel(context.Background())
	le := &lateLease{l: l, key: key, token: token, ctx: lctx, cancel: cancel}
	go le.renew()
	if l.declared {
		return lateLeaseDeclared{le}, nil
	}
	return le, nil
}

type lateLease struct {
	l          *lateLocker
	key, token string
	ctx        context.Context
	cancel     context.CancelFunc
}

// renew renews every TTL/2 until a renewal finds the token gone (the
// loss, learned: Context cancelled) or the lease is released.
func (le *lateLease) renew() {
	t := time.NewTicker(le.l.ttl / 2)
	defer t.Stop()
	for {
		select {
		case <-le.ctx.Done():
			return
		case <-t.C:
		}
		r, err := le.l.d.Eval(context.Background(), lateRenew, []string{le.key}, le.token, strconv.FormatInt(le.l.ttl.Milliseconds(), 10))
		if err == nil && r.Int != 1 {
			le.cancel()
			return
		}
	}
}

func (le *lateLease) Key() string              { return le.key }
func (le *lateLease) Token() string            { return le.token }
func (le *lateLease) Context() context.Context { return le.ctx }
func (le *lateLease) Abandon()                 { le.cancel() }
func (le *lateLease) Release(ctx context.Context) error {
	if le.ctx.Err() != nil {
		return strategies.ErrNotOwner
	}
	le.cancel()
	_, err := le.l.d.Eval(ctx, lateUnlock, []string{le.key}, le.token)
	return err
}

type lateLeaseDeclared struct{ *lateLease }

func (lateLeaseDeclared) LossAtRenewal() {}

// redissonRW is a read-write lock in one hash, as Redisson's
// RReadWriteLock keeps it: "mode" ("read" or "write") and one field per
// holder counting its holds. The last holder's release deletes the key.
type redissonRW struct{ c strategies.Config }

type redissonRWDeclared struct{ *redissonRW }

// NonTokenFields: the mode field is no holder's token.
func (redissonRWDeclared) NonTokenFields() []string { return []string{"mode"} }

var (
	// KEYS[1] lock; ARGV[1] lease ms, ARGV[2] holder field, ARGV[3] the
	// mode asked ("read" or "write"). nil when taken, else the PTTL.
	redissonLock = drivers.NewScript(`local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
	redis.call('hset', KEYS[1], 'mode', ARGV[3], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
if (mode == 'read' and ARGV[3] == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])`)
	// KEYS[1] lock; ARGV[1] holder field. 0 when it held none, else 1.
	redissonUnlock = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then redis.call('hdel', KEYS[1], ARGV[1]) end
if redis.call('hlen', KEYS[1]) <= 1 then redis.call('del', KEYS[1]) end
return 1`)
)

func (l *redissonRW) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	return l.take(ctx, key, strategies.ClientFrom(ctx).Owner+":w", "write")
}

func (l *redissonRW) TryAcquireRead(ctx context.Context, key string) (strategies.Lease, error) {
	return l.take(ctx, key, strategies.ClientFrom(ctx).Owner, "read")
}

func (l *redissonRW) take(ctx context.Context, key, field, mode string) (strategies.Lease, error) {
	l.c.Sent(ctx, key, field)
	r, err := l.c.Nodes[0].Eval(ctx, redissonLock, []string{key}, strconv.FormatInt(l.c.TTL.Milliseconds(), 10), field, mode)
	if err != nil {
		return nil, err
	}
	if r.Kind != drivers.KindNil {
		return nil, strategies.ErrNotAcquired
	}
	return &redissonLease{d: l.c.Nodes[0], key: key, field: field}, nil
}

type redissonLease struct {
	d          drivers.Driver
	key, field string
}

func (l *redissonLease) Key() string   { return l.key }
func (l *redissonLease) Token() string { return l.field }
func (l *redissonLease) Release(ctx context.Context) error {
	r, err := l.d.Eval(ctx, redissonUnlock, []string{l.key}, l.field)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return strategies.ErrNotOwner
	}
	return nil
}
