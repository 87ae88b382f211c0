package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("fencing", Info{Desc: "atomic lock whose acquire script also INCRs a per-lock counter: a fencing token that only grows; writes are rejected below the highest token seen (Kleppmann 2016)",
		Guard: "fence"},
		func(c Config) (Locker, error) {
			return &fencing{atomicLocker: atomicLocker{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, keyTTL: max(c.KeyTTL, c.TTL)}, nil
		})
}

// FencedLockScript takes KEYS[1] for token ARGV[1] with lease ARGV[2] ms
// and returns the next value of the counter KEYS[2] (the fencing token),
// whose TTL it sets to ARGV[3] ms (Config.KeyTTL, refreshed at every
// grant: a counter outlives the run's data keys, and no counter outlives
// a killed run by more than that), or 0 when the lock is held.
var FencedLockScript = drivers.NewScript(`if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	local n = redis.call('incr', KEYS[2])
	redis.call('pexpire', KEYS[2], ARGV[3])
	return n
end
return 0`)

// fencing is atomic plus a monotonically increasing fencing token per lock,
// kept in <key>:fence (same hash tag as the lock key) with the TTL keyTTL.
type fencing struct {
	atomicLocker
	keyTTL time.Duration
}

var (
	_ Locker = (*fencing)(nil)
	_ Fenced = (*fencedLease)(nil)
)

func (f *fencing) TryAcquire(ctx context.Context, key string) (Lease, error) {
	tok := NewToken()
	sent(f.tokens, ctx, key, tok) // the lock key's value; <key>:fence holds no token
	res, err := f.d.Eval(ctx, FencedLockScript, []string{key, key + ":fence"}, tok, ms(f.ttl), ms(f.keyTTL))
	if err != nil {
		return nil, err
	}
	if res.Int == 0 {
		return nil, ErrNotAcquired
	}
	return &fencedLease{lease: lease{key: key, token: tok, owner: &f.atomicLocker}, fence: res.Int}, nil
}

type fencedLease struct {
	lease
	fence int64
}

func (l *fencedLease) Fence() int64 { return l.fence }
