// Package redislock registers `redislock`: a thin adapter over
// github.com/bsm/redislock (Version), a single-instance Redis lock built
// on go-redis, so it runs on the goredis driver only (strategies.Info
// Drivers; lockbench skips its rueidis scenarios with a message).
//
// An acquire is Client.Obtain with the run's TTL and lockbench's token in
// Options.Token: the library's script (SET key token NX PX ttl, or a
// re-SET when the key already holds the same token), retried by the
// library's own RetryStrategy (strategies.OwnRetry: no lockbench retry
// policy runs around it). Release is Lock.Release (compare-and-delete),
// and with extend=on the lease is extended with Lock.Refresh. Import the
// package for its side effect (strategies/libs does).
package redislock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// Version is the redislock release this strategy runs, as pinned in
// go.mod (a test checks that the two agree).
const Version = "v0.9.4"

// Module is redislock's module path.
const Module = "github.com/bsm/redislock"

// Params are redislock's options: its retry strategies (Options.
// RetryStrategy; the library's default is NoRetry, one attempt) and
// whether the worker refreshes the lease. redislock has no default
// interval or bounds for its backoffs; retry-interval's default is the
// library's own example (LinearBackoff(100ms)), retry-min's the minimum
// its ExponentialBackoff doc recommends (16ms), and retry-max 0 leaves
// the exponential backoff uncapped, as the library does with max 0.
var Params = []registry.Param{
	{Name: "retry-strategy", Doc: "redislock Options.RetryStrategy: none (NoRetry, one attempt), linear (LinearBackoff(retry-interval)) or exponential (ExponentialBackoff(retry-min, retry-max): 2^n ms within the bounds)",
		Default: "none", Check: registry.OneOf("none", "linear", "exponential")},
	{Name: "retry-interval", Doc: "wait between attempts of retry-strategy=linear",
		Default: 100 * time.Millisecond, Check: registry.Positive},
	{Name: "retry-min", Doc: "shortest wait of retry-strategy=exponential",
		Default: 16 * time.Millisecond, Check: registry.Positive},
	{Name: "retry-max", Doc: "longest wait of retry-strategy=exponential; 0 = uncapped (the library's 2^n ms up to 2^26 ms)",
		Default: time.Duration(0), Check: registry.DurationAtLeast(0)},
	{Name: "retry-limit", Doc: "redislock LimitRetry, with retry-strategy=linear or exponential (none makes one attempt): at most this many retries after the first attempt; 0 = no limit (the strategy's own waits, the acquire timeout, or the library's bound of one TTL when there is no acquire timeout)",
		Default: 0, Check: registry.Between(0, 1_000_000)},
	{Name: "extend", Doc: "off (redislock without Refresh: the lease is the TTL) or on (the lease is a strategies.Extender: the worker calls Lock.Refresh to the TTL after its work)",
		Default: "off", Check: registry.OneOf("off", "on")},
}

func init() {
	strategies.Register("redislock", strategies.Info{
		Desc: Module + " " + Version + " (go-redis only): Client.Obtain (SET NX PX by Lua, its retry strategy: --retry-strategy none|linear|exponential), " +
			"Lock.Release (compare-and-delete), Lock.Refresh with --extend on",
		Drivers: []string{"goredis"}, ConstantToken: true, Params: Params,
	}, open)
}

type locker struct {
	c        *redislock.Client
	cfg      strategies.Config
	ttl      time.Duration
	retry    string
	interval time.Duration
	min, max time.Duration
	limit    int
	ext      bool

	gaveUp                  atomic.Int64
	extends, extendFailures atomic.Int64
}

var (
	_ strategies.Locker        = (*locker)(nil)
	_ strategies.OwnRetry      = (*locker)(nil)
	_ strategies.StatsReporter = (*locker)(nil)
	_ strategies.Extender      = (*extending)(nil)
	_ strategies.ExtendsLeases = (*locker)(nil)
)

// ExtendsLeases: with extend=on the leases are Extenders.
func (l *locker) ExtendsLeases() bool { return l.ext }

// open builds a redislock Client on c.Nodes[0]'s go-redis client. It fails
// on another driver: redislock needs go-redis.
func open(c strategies.Config) (*locker, error) {
	cli, ok := drivers.NativeOf(c.Nodes[0]).(goredis.UniversalClient)
	if !ok {
		return nil, fmt.Errorf("redislock runs on the goredis driver only (it is built on a go-redis client); driver %T has no go-redis client", c.Nodes[0])
	}
	return &locker{
		c: redislock.New(cli), cfg: c, ttl: c.TTL,
		retry: c.Params.String("retry-strategy"), interval: c.Params.Duration("retry-interval"),
		min: c.Params.Duration("retry-min"), max: c.Params.Duration("retry-max"),
		limit: c.Params.Int("retry-limit"), ext: c.Params.String("extend") == "on",
	}, nil
}

// OwnRetry: TryAcquire runs redislock's retry loop.
func (*locker) OwnRetry() {}

// strategy returns a new RetryStrategy for one Obtain (the exponential
// backoff and LimitRetry count their retries).
func (l *locker) strategy() redislock.RetryStrategy {
	var s redislock.RetryStrategy
	switch l.retry {
	case "linear":
		s = redislock.LinearBackoff(l.interval)
	case "exponential":
		s = redislock.ExponentialBackoff(l.min, l.max)
	default:
		return redislock.NoRetry()
	}
	if l.limit > 0 {
		s = redislock.LimitRetry(s, l.limit)
	}
	return s
}

// TryAcquire runs Client.Obtain on key with the run's TTL and a token of
// lockbench's (strategies.NewToken, or strategies.ConstantValue with
// Config.ConstantToken), reported to Config.Tokens first: every attempt
// of the library's loop sends that one token. It returns ErrNotAcquired
// when redislock gave up (ErrNotObtained, or its own bound of one TTL
// when ctx has no deadline), ctx's error when ctx ended the wait, and
// the Redis error otherwise.
func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	tok := strategies.NewToken()
	if l.cfg.ConstantToken {
		tok = strategies.ConstantValue
	}
	l.cfg.Sent(ctx, key, tok)
	start := time.Now()
	lk, err := l.c.Obtain(ctx, key, l.ttl, &redislock.Options{RetryStrategy: l.strategy(), Token: tok})
	if err == nil {
		if l.ext {
			return &extending{lease{lk: lk, l: l}}, nil
		}
		return &lease{lk: lk, l: l}, nil
	}
	if errors.Is(err, redislock.ErrNotObtained) {
		l.gaveUp.Add(1)
		return nil, fmt.Errorf("%w: %w", strategies.ErrNotAcquired, err)
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if _, bounded := ctx.Deadline(); !bounded && (errors.Is(err, context.DeadlineExceeded) || timedOut(err) && time.Since(start) >= l.ttl) {
		// Obtain bounds a ctx without a deadline by the TTL itself; when
		// that bound passes during a command, go-redis reports the
		// connection's deadline (an i/o timeout), not the context's.
		l.gaveUp.Add(1)
		return nil, fmt.Errorf("%w: redislock waited one TTL (%v): %w", strategies.ErrNotAcquired, l.ttl, err)
	}
	return nil, err
}

// Stats reports the acquires redislock gave up (gave_up) and with
// extend=on the refreshes that succeeded (extends) and failed
// (extend_failures).
func (l *locker) Stats() map[string]float64 {
	out := map[string]float64{"gave_up": float64(l.gaveUp.Load())}
	if l.ext {
		out["extends"] = float64(l.extends.Load())
		out["extend_failures"] = float64(l.extendFailures.Load())
	}
	return out
}

// lease is a held redislock Lock.
type lease struct {
	lk *redislock.Lock
	l  *locker
}

func (le *lease) Key() string   { return le.lk.Key() }
func (le *lease) Token() string { return le.lk.Token() }

// Release runs Lock.Release (compare-and-delete); ErrNotOwner when the
// library reports ErrLockNotHeld (the key is gone or holds another token).
func (le *lease) Release(ctx context.Context) error {
	err := le.lk.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("%w: %w", strategies.ErrNotOwner, err)
	}
	return err
}

// extending is a lease of extend=on: its holder can extend it.
type extending struct{ lease }

// Extend runs Lock.Refresh to the TTL (an owner-checked PEXPIRE), reported
// to Config.Renewing first. strategies.ErrExtendFailed (an ErrNotOwner)
// when the library reports ErrNotObtained (the key no longer holds the
// token), else the Redis error.
func (e *extending) Extend(ctx context.Context) error {
	l := e.l
	l.cfg.Renewing(e.lk.Key(), e.lk.Token())
	err := e.lk.Refresh(ctx, l.ttl, nil)
	if err == nil {
		l.extends.Add(1)
		return nil
	}
	l.extendFailures.Add(1)
	if errors.Is(err, redislock.ErrNotObtained) {
		return fmt.Errorf("%w: %w", strategies.ErrExtendFailed, err)
	}
	return err
}

// timedOut reports whether err is a network timeout (net.Error.Timeout).
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Library is the module and the version linked in (strategies.Library).
func (*locker) Library() (name, version string) {
	return Module, strategies.ModuleVersion(Module, Version)
}
