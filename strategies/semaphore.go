package strategies

import (
	"context"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("semaphore", Info{Desc: "counting semaphore of N expiring permits (--permits) in one sorted set, member = holder's token, score = its permit's expiry (Redisson RPermitExpirableSemaphore, npm redis-semaphore)",
		Params: []registry.Param{PermitsParam}},
		func(c Config) (*semaphore, error) {
			n := c.Params.Int("permits")
			return &semaphore{d: c.Nodes[0], ttl: c.TTL, permits: n, permitsArg: strconv.Itoa(n), tokens: c.Tokens}, nil
		})
}

// PermitsParam is the semaphore strategy's permits parameter: how many
// holders may hold one semaphore key at once (1..10000, default 4; 1 is
// an exclusive lock).
var PermitsParam = registry.Param{Name: "permits",
	Doc:     "semaphore: holders one key admits at once (1..10000; 1 = an exclusive lock)",
	Default: 4, Check: registry.Between(1, 10000)}

// The semaphore's key is a sorted set: one member per permit held, the
// member its holder's token (NewToken), the score the permit's expiry in
// the server's time (ms, TIME, read inside each script, so that client
// clocks do not matter). Every script first drops the permits whose
// expiry has passed (ZREMRANGEBYSCORE -inf now), so that a holder that
// stopped renewing (a crash) loses its permit one lease after its last
// acquire or extend, whoever calls next; the key itself is set to expire
// with its longest permit (PEXPIRE), never further, so that an idle
// semaphore's key goes away with its last permit and other holders'
// arrivals do not keep a dead permit (the liveness oracle's orphan
// shares). The references:
//
//   - Redisson's RPermitExpirableSemaphore
//     (org.redisson.RedissonPermitExpirableSemaphore): permits with ids
//     and a lease each, kept in a sorted set "{name}:timeout" scored by
//     their expiry, whose acquire drops the expired ones first
//     (zrangebyscore/zrem of those whose time has passed); release and
//     updateLeaseTime by permit id. Redisson counts the free permits in a
//     second key; here the count is ZCARD of the live permits.
//   - redis-semaphore's Semaphore (npm redis-semaphore,
//     src/semaphore/acquire.lua): a sorted set scored by acquire time,
//     expired by ZREMRANGEBYSCORE key -inf now-ttl, ZCARD < limit then
//     ZADD, PEXPIRE the key; its refresh re-ZADDs the member. Scoring by
//     expiry instead of acquire time lets one extend move one permit.
//
// semAcquireScript: ARGV[1] = permits, ARGV[2] = lease ms, ARGV[3] =
// token. It returns nil when the permit was added, else the PTTL of the
// key (the soonest any permit can be free is no later than that).
var semAcquireScript = drivers.NewScript(semPrelude + `if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[1]) then
	return redis.call('pttl', KEYS[1])
end
local d = now + tonumber(ARGV[2])
redis.call('zadd', KEYS[1], d, ARGV[3])
semExpire(d)
return nil`)

// semPrelude reads the server's clock (now, ms), drops the expired
// permits, and defines semExpire(d): PEXPIRE the key to its longest
// permit (at least d).
const semPrelude = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
local function semExpire(d)
	local last = redis.call('zrange', KEYS[1], -1, -1, 'withscores')
	if last[2] then
		d = math.max(d, tonumber(last[2]))
	end
	redis.call('pexpire', KEYS[1], d - now)
end
`

var (
	// semReleaseScript removes the permit ARGV[1]: 1 when it was there
	// (and live), 0 when not (expired, or never held).
	semReleaseScript = drivers.NewScript(semPrelude + `return redis.call('zrem', KEYS[1], ARGV[1])`)
	// semExtendScript moves the live permit ARGV[1]'s expiry to now +
	// ARGV[2] ms (ZADD XX: never adds a permit that is gone) and the
	// key's expiry with it: 1 when extended, 0 when the permit is gone.
	semExtendScript = drivers.NewScript(semPrelude + `if not redis.call('zscore', KEYS[1], ARGV[1]) then
	return 0
end
local d = now + tonumber(ARGV[2])
redis.call('zadd', KEYS[1], 'XX', d, ARGV[1])
semExpire(d)
return 1`)
)

// semaphore lets up to permits holders hold one key at once, each with a
// permit of its own (its lease's token) that expires one TTL after its
// acquire or last extend. TryAcquire returns ErrNotAcquired when every
// permit is taken; Release returns ErrNotOwner when the lease's permit is
// no longer in the set (it expired); leases are Extenders (Extend moves
// the permit's expiry to the TTL from now, ErrNotOwner when it is gone).
type semaphore struct {
	d       drivers.Driver
	ttl     time.Duration
	permits int
	// permitsArg is permits as the acquire script's argument.
	permitsArg string
	tokens     TokenTracker // told of each permit's token before its ZADD
}

var (
	_ Locker        = (*semaphore)(nil)
	_ Semaphore     = (*semaphore)(nil)
	_ ExtendsLeases = (*semaphore)(nil)
)

// Permits is the permits parameter (Semaphore).
func (s *semaphore) Permits() int { return s.permits }

// ExtendsLeases: every lease is an Extender.
func (*semaphore) ExtendsLeases() bool { return true }

func (s *semaphore) TryAcquire(ctx context.Context, key string) (Lease, error) {
	tok := NewToken()
	sent(s.tokens, ctx, key, tok)
	r, err := s.d.Eval(ctx, semAcquireScript, []string{key}, s.permitsArg, ms(s.ttl), tok)
	if err != nil {
		return nil, err
	}
	if !r.IsNil() {
		return nil, ErrNotAcquired
	}
	return &semLease{key: key, token: tok, s: s}, nil
}

// semLease is one permit.
type semLease struct {
	key, token string
	s          *semaphore
}

var _ Extender = (*semLease)(nil)

func (l *semLease) Key() string   { return l.key }
func (l *semLease) Token() string { return l.token }

func (l *semLease) Release(ctx context.Context) error {
	r, err := l.s.d.Eval(ctx, semReleaseScript, []string{l.key}, l.token)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}

// Extend moves the permit's expiry to the TTL from now (server time).
func (l *semLease) Extend(ctx context.Context) error {
	renewing(l.s.tokens, l.key, l.token)
	r, err := l.s.d.Eval(ctx, semExtendScript, []string{l.key}, l.token, ms(l.s.ttl))
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}
