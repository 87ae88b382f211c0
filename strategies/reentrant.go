package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("reentrant", Info{Desc: "Redisson hash lock: field = owner (client+worker), value = hold count; HINCRBY + PEXPIRE in one script; nested acquires by the same owner succeed"},
		func(c Config) (*reentrant, error) {
			return &reentrant{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, nil
		})
	Register("reentrant-watchdog", Info{Desc: "reentrant with watchdog renewal every TTL/3 (Redisson RLock.lock() without a lease time)"},
		func(c Config) (*reentrant, error) {
			return &reentrant{d: c.Nodes[0], ttl: c.TTL, st: newRenewStats(), tokens: c.Tokens}, nil
		})
}

// ReentrantLockScript is Redisson's tryLockInnerAsync: take or re-enter the
// hash lock KEYS[1] for owner ARGV[2] with lease ARGV[1] ms. It returns nil
// on success and the lock's PTTL (ms) when another owner holds it.
var ReentrantLockScript = drivers.NewScript(`if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])`)

// ReentrantUnlockScript is Redisson's unlockInnerAsync: nil when ARGV[2]
// does not hold the lock; 0 after decrementing a nested hold (the lease is
// extended to ARGV[1] ms); 1 after deleting the lock at count 0.
var ReentrantUnlockScript = drivers.NewScript(`if (redis.call('hexists', KEYS[1], ARGV[2]) == 0) then
	return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if (counter > 0) then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
return 1`)

// ReentrantRenewScript extends the hash lock to ARGV[2] ms while ARGV[1]
// holds it, as Redisson's renewExpirationAsync does: it returns 1 when
// renewed, 0 when ARGV[1] does not hold it (its contract since it was
// exported; reentrant-watchdog uses ReentrantRenewScriptPTTL).
var ReentrantRenewScript = drivers.NewScript(`if (redis.call('hexists', KEYS[1], ARGV[1]) == 1) then
	return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`)

// ReentrantRenewScriptPTTL extends the hash lock as ReentrantRenewScript
// does; where that returns 1 or 0, it returns as RenewScriptPTTL does
// (see Renewed): the key's PTTL before the extension, ms, when renewed
// (the renewal margin as the server sees it); -2 when ARGV[1] does not
// hold it.
var ReentrantRenewScriptPTTL = drivers.NewScript(`if (redis.call('hexists', KEYS[1], ARGV[1]) == 1) then
	local left = redis.call('pttl', KEYS[1])
	redis.call('pexpire', KEYS[1], ARGV[2])
	return left
end
return -2`)

// reentrant is the Redisson RLock data model. The owner is the worker's
// Client.Owner from the context, so the same worker re-enters and any other
// worker waits. With st set, each lease is renewed by a watchdog.
type reentrant struct {
	d   drivers.Driver
	ttl time.Duration
	st  *renewStats // nil: fixed lease
	// tokens is told of the owner (the hash field) before each acquire
	// script and of each watchdog renewal (Config.Tokens). A nested
	// release's PEXPIRE is not reported as a renewal.
	tokens TokenTracker
}

var (
	_ Locker         = (*reentrant)(nil)
	_ RenewalMargins = (*reentrant)(nil)
	_ Reentrant      = (*reentrant)(nil)
)

// Reentrant: a holder's nested acquires count up in its field.
func (*reentrant) Reentrant() {}

func (r *reentrant) TryAcquire(ctx context.Context, key string) (Lease, error) {
	owner := ClientFrom(ctx).Owner
	start := time.Now()
	sent(r.tokens, ctx, key, owner)
	res, err := r.d.Eval(ctx, ReentrantLockScript, []string{key}, ms(r.ttl), owner)
	if err != nil {
		return nil, err
	}
	if !res.IsNil() {
		return nil, ErrNotAcquired
	}
	l := &lease{key: key, token: owner, owner: r}
	if r.st == nil {
		return l, nil
	}
	ttlMS := ms(r.ttl)
	rn := startRenewal(r.st, r.ttl, start, ClientFrom(ctx).Gate, func(ctx context.Context) (bool, time.Duration, bool, error) {
		renewing(r.tokens, key, owner)
		res, err := r.d.Eval(ctx, ReentrantRenewScriptPTTL, []string{key}, owner, ttlMS)
		if err != nil {
			return false, 0, false, err
		}
		ok, left, known := Renewed(res)
		return ok, left, known, nil
	})
	return &watchedLease{Lease: l, r: rn}, nil
}

func (r *reentrant) release(ctx context.Context, key, owner string) error {
	res, err := r.d.Eval(ctx, ReentrantUnlockScript, []string{key}, ms(r.ttl), owner)
	if err != nil {
		return err
	}
	if res.IsNil() {
		return ErrNotOwner
	}
	return nil
}

// RenewalMargins: reentrant-watchdog renews (each margin the server's,
// ReentrantRenewScriptPTTL's PTTL before its PEXPIRE); reentrant does not.
func (r *reentrant) RenewalMargins(rec MarginFunc) bool {
	if r.st == nil {
		return false
	}
	r.st.setMargin(rec)
	return true
}

// Stats reports the watchdog's counts (reentrant-watchdog only).
func (r *reentrant) Stats() map[string]float64 {
	if r.st == nil {
		return nil
	}
	return r.st.stats()
}
