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
