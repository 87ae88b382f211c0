package strategies

import "context"

func init() {
	Register("redis-guard", Info{
		Desc:      "no lock: GET the stock, work, then a Lua decrement-if-positive (stock = stock - 1 where stock >= 1; hot-key: INCR in place); the articles' last line of defence on its own",
		Workloads: []string{"flash-sale", "hot-key"},
		Guard:     "decr",
	}, func(c Config) (redisGuard, error) { return redisGuard{}, nil })
}

// redisGuard takes no lock. The workload reads, works, and writes through
// the conditional-decrement script (Guard "decr"): Redis runs the check and
// the write as one script, so no order can take stock below 0 however many
// clients are in their "critical section" at once. It stores no token, so
// it never calls Config.Tokens: the liveness oracle has nothing to measure.
type redisGuard struct{}

var (
	_ Locker   = redisGuard{}
	_ Lockless = redisGuard{}
)

// Lockless: there is no lock and no holder.
func (redisGuard) Lockless() {}

// TryAcquire grants at once a lease that guards nothing: workloads with a
// data path for lock-free strategies (flash-sale, hot-key) never call it.
func (redisGuard) TryAcquire(_ context.Context, key string) (Lease, error) {
	return noLease(key), nil
}

// noLease is the lease of a lock-free strategy: releasing it does nothing.
type noLease string

func (l noLease) Key() string                   { return string(l) }
func (l noLease) Token() string                 { return "" }
func (l noLease) Release(context.Context) error { return nil }
