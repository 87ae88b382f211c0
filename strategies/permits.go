package strategies

import "context"

// Semaphore is implemented by lockers whose lock is a counting semaphore:
// up to Permits holders may hold one key at once (Redisson's
// RPermitExpirableSemaphore, redis-semaphore's Semaphore, the `semaphore`
// strategy). Each holder's lease is one permit with a token of its own.
// The safety oracle counts a moment with more than Permits holders of a
// key as a capacity violation instead of counting every second holder as
// an overlap. Permits is at least 1; a locker that reports 1 is an
// exclusive lock. Semaphore is found by type assertion on the locker, so
// one that learns its permits at run time (an external adapter) may
// report them then.
type Semaphore interface {
	Permits() int
}

// PermitsOf returns l's permits (Semaphore), or 1 for an exclusive lock.
func PermitsOf(l Locker) int {
	if s, ok := l.(Semaphore); ok && s.Permits() > 1 {
		return s.Permits()
	}
	return 1
}

// MultiLocker is implemented by lockers that take several locks at once,
// all or none (Redisson's RedissonMultiLock, redislock's ObtainMulti):
// TryAcquireMulti makes one attempt at every key of keys and returns one
// lease that holds all of them, or ErrNotAcquired (or any other error)
// with none of them held. Errors and context as TryAcquire's.
type MultiLocker interface {
	TryAcquireMulti(ctx context.Context, keys []string) (Lease, error)
}

// MultiLease is a lease over several lock keys (MultiLocker's): Key is
// the first of Keys, and Token is what each of the keys stores.
type MultiLease interface {
	Lease
	Keys() []string
}
