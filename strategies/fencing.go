package strategies

import (
	"context"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("fencing", Info{Desc: "atomic lock whose acquire script also INCRs a per-lock counter: a fencing token that only grows; writes are rejected below the highest token seen (Kleppmann 2016)",
		Guard: "fence"},
		func(c Config) (Locker, error) {
			return &fencing{atomicLocker{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}}, nil
		})
}

// FencedLockScript takes KEYS[1] for token ARGV[1] with lease ARGV[2] ms
// and returns the next value of the counter KEYS[2] (the fencing token), or
// 0 when the lock is held.
var FencedLockScript = drivers.NewScript(`if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return redis.call('incr', KEYS[2])
end
return 0`)

// fencing is atomic plus a monotonically increasing fencing token per lock,
// kept in <key>:fence (same hash tag as the lock key).
type fencing struct{ atomicLocker }

var (
	_ Locker = (*fencing)(nil)
	_ Fenced = (*fencedLease)(nil)
)

func (f *fencing) TryAcquire(ctx context.Context, key string) (Lease, error) {
	tok := NewToken()
	sent(f.tokens, ctx, key, tok) // the lock key's value; <key>:fence holds no token
	res, err := f.d.Eval(ctx, FencedLockScript, []string{key, key + ":fence"}, tok, ms(f.ttl))
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
