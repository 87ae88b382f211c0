package testlocks

import (
	"context"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// Two defective semaphores, each the `semaphore` strategy's sorted set
// (member = token, score = the permit's expiry, server time ms) with one
// defect, both of strategies.PermitsParam permits (the parameter
// permits, default 4) and reporting their tokens before each ZADD:
//
//   - SemCheckThenAdd counts the live permits (ZREMRANGEBYSCORE, then
//     ZCARD) in one script and adds its own (ZADD, PEXPIRE) in a second
//     call: a non-atomic check-then-add, so that clients that all counted
//     N - 1 all add theirs and one key has more than N holders (the
//     safety oracle's capacity violations).
//   - SemWholeKey checks and adds in one script, but never drops an
//     expired permit and extends the whole key at every acquire (PEXPIRE
//     of the TTL): a dead holder's permit stays in the set, counted and
//     stored beside the live holders' as long as others keep arriving
//     (the liveness oracle's orphan shares), and the semaphore has one
//     permit fewer for good.
const (
	SemCheckThenAdd = "test-sem-check-then-add"
	SemWholeKey     = "test-sem-whole-key"
)

func init() {
	strategies.Register(SemCheckThenAdd, strategies.Info{Desc: "test only: a semaphore whose ZCARD check and ZADD are two calls (non-atomic check-then-add)", Unsafe: true,
		Params: []registry.Param{strategies.PermitsParam}},
		func(c strategies.Config) (*testSem, error) {
			return &testSem{d: c.Nodes[0], ttl: c.TTL, permits: c.Params.Int("permits"), tokens: c.Tokens, split: true}, nil
		})
	strategies.Register(SemWholeKey, strategies.Info{Desc: "test only: a semaphore that never drops an expired permit and extends the whole key at each acquire", Unsafe: true,
		Params: []registry.Param{strategies.PermitsParam}},
		func(c strategies.Config) (*testSem, error) {
			return &testSem{d: c.Nodes[0], ttl: c.TTL, permits: c.Params.Int("permits"), tokens: c.Tokens}, nil
		})
}

var (
	// ARGV[1] = permits: 1 when a permit looks free.
	semCount = drivers.NewScript(`local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[1]) then
	return 1
end
return 0`)
	// ARGV[1] = lease ms, ARGV[2] = token.
	semAdd = drivers.NewScript(`local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zadd', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('pexpire', KEYS[1], ARGV[1])
return 1`)
	// ARGV[1] = permits, ARGV[2] = lease ms, ARGV[3] = token.
	semWholeKeyTake = drivers.NewScript(`if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[1]) then
	return 0
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('pexpire', KEYS[1], ARGV[2])
return 1`)
)

// testSem is both defective semaphores (split: SemCheckThenAdd).
type testSem struct {
	d       drivers.Driver
	ttl     time.Duration
	permits int
	tokens  strategies.TokenTracker
	split   bool
	// between, when set (a test), runs between SemCheckThenAdd's count
	// and its add.
	between func()
}

// Permits makes it a strategies.Semaphore.
func (s *testSem) Permits() int { return s.permits }

func (s *testSem) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	tok := strategies.NewToken()
	lease := strconv.FormatInt(s.ttl.Milliseconds(), 10)
	n := strconv.Itoa(s.permits)
	if s.split {
		r, err := s.d.Eval(ctx, semCount, []string{key}, n)
		if err != nil {
			return nil, err
		}
		if r.Int != 1 {
			return nil, strategies.ErrNotAcquired
		}
		if f := s.between; f != nil {
			s.between = nil
			f()
		}
		if s.tokens != nil {
			s.tokens.Sent(ctx, key, tok)
		}
		if _, err := s.d.Eval(ctx, semAdd, []string{key}, lease, tok); err != nil {
			return nil, err
		}
		return &testSemLease{s: s, key: key, tok: tok}, nil
	}
	if s.tokens != nil {
		s.tokens.Sent(ctx, key, tok)
	}
	r, err := s.d.Eval(ctx, semWholeKeyTake, []string{key}, n, lease, tok)
	if err != nil {
		return nil, err
	}
	if r.Int != 1 {
		return nil, strategies.ErrNotAcquired
	}
	return &testSemLease{s: s, key: key, tok: tok}, nil
}

type testSemLease struct {
	s        *testSem
	key, tok string
}

func (l *testSemLease) Key() string   { return l.key }
func (l *testSemLease) Token() string { return l.tok }

// Release removes the permit (ErrNotOwner when it is gone).
func (l *testSemLease) Release(ctx context.Context) error {
	r, err := l.s.d.Do(ctx, "ZREM", l.key, l.tok)
	if err != nil {
		return err
	}
	if n, _ := r.AsInt(); n != 1 {
		return strategies.ErrNotOwner
	}
	return nil
}
