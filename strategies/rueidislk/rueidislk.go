// Package rueidislk is the `rueidislock` strategy: a thin adapter over
// github.com/redis/rueidis/rueidislock (the rueidis module's lock, at the
// version pinned in go.mod). Import it for its side effect
// (strategies/libs does).
//
// How the library locks (rueidislock/lock.go). A lock named N is
// KeyMajority*2-1 Redis keys, "<KeyPrefix>:<i>:<N>" for i = 0..2*KeyMajority-2,
// on one Redis server (or cluster); the holder must set a majority of them
// (KeyMajority) with SET NX PXAT now+KeyValidity, each attempt bounded by
// TryNextAfter, all to the same random value. Its connection tracks the
// keys (CLIENT TRACKING ON OPTOUT, RESP3 client-side caching): a waiter
// that lost sleeps until an invalidation of one of the keys (a release,
// an expiry, any write) or a local release wakes it, instead of polling.
// A holder extends each key (PEXPIREAT, compare-and-set on its value)
// every ExtendInterval, and checks it at once (the same script, to the
// current deadline) when an invalidation of the key arrives; when it can
// no longer keep a majority (a key deleted or taken behind its back, an
// extend that failed or came too late) the lock's context is cancelled.
// Releasing deletes the keys that still hold its value.
//
// The adapter. The lease is the library's lock-as-context: Context() is
// the context WithContext returned, Release the cancel function (it waits
// until the library has deleted its keys). TryAcquire is the library's
// WithContext: it waits until the lock is taken or ctx ends, so the
// locker implements strategies.OwnRetry and lockbench's retry policies
// do not apply; it never returns strategies.ErrNotAcquired.
//
// Where the keys live. KeyPrefix is per library Locker while the lock key
// is per call, so the adapter splits each lock key into a namespace and a
// name: the namespace is the key before its last hash tag ("{"), with a
// trailing ":" dropped, or without a hash tag the key before its last
// ":"; the name is the rest. Every lockbench workload's lock key is its
// run's prefix followed by a hash-tagged name, so the lock
// "lockbench:<run>:{sku:0:0}:lock" is stored under
// "lockbench:<run>:0:{sku:0:0}:lock", ":1:" and ":2:" (RedisKeys): under
// the run's prefix (its clean-up deletes them) and in the lock key's
// Cluster slot. The adapter keeps one library Locker, with its own
// rueidis client, per namespace (one per run in practice), made on the
// first acquire of that namespace.
//
// Its own client. The rueidis driver's client has client-side caching off
// (drivers/rueidis), so it cannot deliver invalidations; the library also
// closes its client on Close. So each library Locker builds its own
// rueidis client from the node driver's rueidis.ClientOption (same
// address, credentials, TLS, dialer and timeouts; through a fault proxy
// when the run has one) with caching on. A failover that repoints the
// run's drivers (drivers.Switch) does not move these clients.
//
// The liveness oracle does not measure it: the keys hold the library's
// random value, which the adapter can neither choose nor report. Its
// options, their defaults and its failure modes are in docs/strategies.md
// (rueidislock).
package rueidislk

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// Name is the strategy's registered name.
const Name = "rueidislock"

// Library defaults (rueidislock.NewLocker) that the parameters keep.
const (
	// DefaultKeyMajority is the library's KeyMajority: 2 of 3 keys.
	DefaultKeyMajority = 2
	// Module and Version are the library's module and the version go.mod
	// pins (the description names it).
	Module  = "github.com/redis/rueidis"
	Version = "v1.0.79"
	// DefaultTryNextAfter is the library's TryNextAfter.
	DefaultTryNextAfter = 20 * time.Millisecond
)

func init() {
	strategies.Register(Name, strategies.Info{
		Desc: "rueidis's rueidislock: a majority of 2N-1 keys on one server, waiters woken by client-side-caching invalidations, renewed every extend-interval, the lock is a context cancelled on loss (github.com/redis/rueidis/rueidislock " + Version + ")",
		// The library is built on a rueidis client.
		Drivers: []string{"rueidis"},
		Params: []registry.Param{
			{Name: "key-majority", Doc: "keys of the 2N-1 per lock that must be set to hold it (rueidislock KeyMajority)",
				Default: DefaultKeyMajority, Check: registry.Between(1, 64)},
			{Name: "extend-interval", Doc: "time between extends of a held lock's keys to a new --ttl (rueidislock ExtendInterval); 0: half of --ttl, the library's default",
				Default: time.Duration(0), Check: registry.DurationAtLeast(0)},
			{Name: "try-next-after", Doc: "bound on the attempt at one key before the next is tried (rueidislock TryNextAfter)",
				Default: DefaultTryNextAfter, Check: registry.DurationAtLeast(time.Millisecond)},
			{Name: "no-loop-tracking", Doc: "track with NOLOOP: no invalidation for the client's own writes (rueidislock NoLoopTracking; Redis >= 7.0.5)",
				Default: false},
			{Name: "fallback-setpx", Doc: "acquire with SET PX instead of SET PXAT (rueidislock FallbackSETPX; Redis < 6.2)",
				Default: false},
		},
	}, open)
}

// clientOptioner is the rueidis driver's capability to give the
// rueidis.ClientOption its client was built with (drivers/rueidis).
type clientOptioner interface {
	ClientOption() rueidis.ClientOption
}

// locker is the adapter: one library Locker per key namespace.
type locker struct {
	opt rueidislock.LockerOption // KeyPrefix set per namespace

	mu     sync.Mutex
	libs   map[string]rueidislock.Locker // by KeyPrefix
	closed bool
}

var (
	_ strategies.Locker   = (*locker)(nil)
	_ strategies.OwnRetry = (*locker)(nil)
	_ strategies.Stored   = (*locker)(nil)
	_ strategies.Watched  = (*lease)(nil)
)

// open builds the adapter from c: KeyValidity is c.TTL, the other options
// come from c.Params. It needs the rueidis driver on c.Nodes[0] (a
// drivers.Switch is looked through to its current driver); any other
// driver is refused with an error naming it. No connection is made here.
func open(c strategies.Config) (*locker, error) {
	d := c.Nodes[0]
	if sw, ok := d.(interface{ Current() drivers.Driver }); ok {
		d = sw.Current()
	}
	co, ok := d.(clientOptioner)
	if !ok {
		return nil, fmt.Errorf("%s runs on the rueidis driver only, not on %s", Name, d.Name())
	}
	copt := co.ClientOption()
	// The library's wake-ups and loss detection are invalidations:
	// client-side caching on (the driver has it off).
	copt.DisableCache = false
	return &locker{
		opt: rueidislock.LockerOption{
			ClientOption:   copt,
			KeyValidity:    c.TTL,
			ExtendInterval: c.Params.Duration("extend-interval"),
			TryNextAfter:   c.Params.Duration("try-next-after"),
			KeyMajority:    int32(c.Params.Int("key-majority")),
			NoLoopTracking: c.Params.Bool("no-loop-tracking"),
			FallbackSETPX:  c.Params.Bool("fallback-setpx"),
		},
		libs: map[string]rueidislock.Locker{},
	}, nil
}

// OwnRetry marks TryAcquire as the library's own wait (strategies.OwnRetry).
func (*locker) OwnRetry() {}

// StoredKeys are the library's keys of lock key: RedisKeys(key,
// key-majority) (strategies.Stored).
func (l *locker) StoredKeys(key string) []string { return RedisKeys(key, int(l.opt.KeyMajority)) }

// Split returns the library KeyPrefix and lock name the adapter uses for
// the lock key (see the package comment): the key before its last "{"
// (a trailing ":" dropped) and the rest; without a hash tag, the key
// before its last ":" and the rest; without either, the key and "".
func Split(key string) (prefix, name string) {
	if i := strings.LastIndexByte(key, '{'); i > 0 {
		if p := strings.TrimSuffix(key[:i], ":"); p != "" {
			return p, key[i:]
		}
	}
	if i := strings.LastIndexByte(key, ':'); i > 0 {
		return key[:i], key[i+1:]
	}
	return key, ""
}

// RedisKeys returns the Redis keys the library stores the lock key in
// with KeyMajority keyMajority: "<prefix>:<i>:<name>" (Split) for i = 0 ..
// 2*keyMajority-2.
func RedisKeys(key string, keyMajority int) []string {
	prefix, name := Split(key)
	out := make([]string, 2*keyMajority-1)
	for i := range out {
		out[i] = prefix + ":" + strconv.Itoa(i) + ":" + name
	}
	return out
}

// lib returns the library Locker of prefix, building it (and its client,
// which connects) on first use. Errors: the client's connection error, or
// rueidislock.ErrLockerClosed after Close.
func (l *locker) lib(prefix string) (rueidislock.Locker, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, rueidislock.ErrLockerClosed
	}
	if rl := l.libs[prefix]; rl != nil {
		return rl, nil
	}
	opt := l.opt
	opt.KeyPrefix = prefix
	rl, err := rueidislock.NewLocker(opt)
	if err != nil {
		return nil, &drivers.NodeError{Node: strings.Join(opt.ClientOption.InitAddress, ","), Err: err}
	}
	l.libs[prefix] = rl
	return rl, nil
}

// TryAcquire waits for the lock named key with the library's WithContext
// until it is taken or ctx ends; it returns ctx.Err() when ctx ended first
// (a lock taken as ctx ended is given back), a connection error of the
// first acquire of key's namespace, or rueidislock.ErrLockerClosed
// (wrapped) after Close. The library retries on Redis errors itself (at
// its next wake-up), so they end the wait only through ctx.
//
// The library derives the lock's context from the one it is given (the
// lock ends with it, and its keys' validity is cut to its deadline), so
// WithContext gets ctx's values without ctx's cancellation and deadline;
// ctx ends only the wait.
func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix, name := Split(key)
	rl, err := l.lib(prefix)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	wctx, endWait := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, endWait)
	lctx, release, err := rl.WithContext(wctx, name)
	if !stop() { // ctx ended: the wait was, or is being, cut short
		if err == nil {
			release()
		}
		endWait()
		return nil, ctx.Err()
	}
	if err != nil {
		endWait()
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return &lease{key: key, token: strategies.NewToken(), ctx: lctx, validity: l.opt.KeyValidity,
		release: func() { release(); endWait() }}, nil
}

// Close closes every library Locker (and its client): a lease still held
// is lost. Acquires after Close fail with rueidislock.ErrLockerClosed.
func (l *locker) Close() error {
	l.mu.Lock()
	libs := l.libs
	l.libs, l.closed = nil, true
	l.mu.Unlock()
	for _, rl := range libs {
		rl.Close()
	}
	return nil
}

// lease is a held rueidislock lock.
type lease struct {
	key, token string
	ctx        context.Context
	release    func()

	validity time.Duration // KeyValidity (Abandon)

	once sync.Once // release runs once (Release, Abandon)
}

// Key is the lock key given to TryAcquire; the library stores it under
// RedisKeys(key, key-majority).
func (le *lease) Key() string { return le.key }

// Token is unique per acquisition (strategies.NewToken). It is not what
// the library stores: that is a random value of its own that the adapter
// cannot choose, so the liveness oracle, told of no token, reports this
// strategy as not measured.
func (le *lease) Token() string { return le.token }

// Context is the library's lock context: cancelled when the library finds
// it can no longer keep a majority of the keys (one deleted or taken
// behind its back, an extend that failed or ran past the validity), and
// on Release.
func (le *lease) Context() context.Context { return le.ctx }

// Release cancels the lock's context and waits until the library has
// deleted the keys that still hold its value (a compare-and-delete per
// key), or until ctx ends (ctx.Err(); the deletes go on). It returns
// strategies.ErrNotOwner when the library had already cancelled the
// context, the lock lost before the release; a loss it has not yet
// noticed returns nil (its delete leaves the new holder's keys alone in
// either case).
func (le *lease) Release(ctx context.Context) error {
	lost := le.ctx.Err() != nil
	if ctx.Done() == nil {
		le.once.Do(le.release)
	} else {
		done := make(chan struct{})
		go func() {
			le.once.Do(le.release)
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if lost {
		return strategies.ErrNotOwner
	}
	return nil
}

var _ strategies.LossAtRenewal = (*lease)(nil)

// LossAtRenewal declares that the lease may learn of a loss only at its
// next extend (when a waiter of the same process consumed the
// invalidation of its keys), and that Release returns nil until then
// (strategies.LossAtRenewal).
func (le *lease) LossAtRenewal() {}

var _ strategies.Abandonable = (*lease)(nil)

// Abandon is a crash of the holder (strategies.Abandonable). The
// library's extend goroutines cannot be stopped without deleting the keys,
// so they are left running for one validity (--ttl, the longest a crashed
// holder's keys outlive its last extend) and then the lease is released
// as Release does: for that time the lock is held by no live holder, as
// after a crash; then its keys go and waiters are woken by the
// invalidation, as after their expiry.
func (le *lease) Abandon() {
	time.AfterFunc(le.validity, func() { le.once.Do(le.release) })
}

// Library is the module rueidislock ships in and the version linked in
// (strategies.Library).
func (*locker) Library() (name, version string) {
	return Module + "/rueidislock", strategies.ModuleVersion(Module, Version)
}
