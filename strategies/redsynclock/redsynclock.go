// Package redsynclock registers `redsync` and `redsync-redlock`: thin
// adapters over github.com/go-redsync/redsync/v4 (Version), the Redlock
// library most Go services ship, on both of lockbench's Redis drivers:
// redsync's own goredis/v9 pool over the go-redis client, and its own
// rueidis pool over the rueidis client (through rueidiscompat's adapter).
//
// `redsync` is redsync.New with one pool (one server: a plain SET NX PX
// lock, as redsync is mostly used); `redsync-redlock` is redsync.New with
// one pool per independent master (--nodes, at least 3), redsync's Redlock.
// Both take the lock with Mutex.LockContext, redsync's own loop of tries
// (strategies.OwnRetry: no lockbench retry policy runs around it), release
// with UnlockContext and, with extend=on, extend with ExtendContext. The
// lease is the run's TTL (redsync.WithExpiry). Import the package for its
// side effect (strategies/libs does).
package redsynclock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	rsrueidis "github.com/go-redsync/redsync/v4/redis/rueidis"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidiscompat"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// Version is the redsync release these strategies run, as pinned in
// go.mod (a test checks that the two agree).
const Version = "v4.18.1"

// Module is redsync's module path.
const Module = "github.com/go-redsync/redsync/v4"

// Params are the redsync options both strategies declare, each with
// redsync's own default. The lease (redsync.WithExpiry, whose library
// default is 8 s) is the run's --ttl, not a parameter.
var Params = []registry.Param{
	{Name: "tries", Doc: "redsync WithTries: acquire rounds (each a SET NX PX on every node) before Lock gives up with ErrFailed",
		Default: 32, Check: registry.Between(1, 1_000_000)},
	{Name: "retry-delay", Doc: "redsync WithRetryDelay: wait between two rounds; 0 = redsync's default, a random delay from 50ms to 250ms drawn before each retry",
		Default: time.Duration(0), Check: registry.DurationBetween(0, time.Hour)},
	{Name: "drift-factor", Doc: "redsync WithDriftFactor: share of the TTL taken off the validity time for clock drift (validity = TTL - elapsed - drift-factor x TTL)",
		Default: 0.01, Check: registry.Between(0.0, 0.99)},
	{Name: "timeout-factor", Doc: "redsync WithTimeoutFactor: share of the TTL that bounds one round's commands on all nodes",
		Default: 0.05, Check: registry.Between(0.0001, 1.0)},
	{Name: "extend", Doc: "off (redsync without Extend: the lease is the TTL) or on (the lease is a strategies.Extender: the worker calls Mutex.ExtendContext after its work)",
		Default: "off", Check: registry.OneOf("off", "on")},
}

func init() {
	strategies.Register("redsync", strategies.Info{
		Desc: Module + " " + Version + " on one server: Mutex.LockContext (SET NX PX, up to --tries rounds, random 50-250ms apart), " +
			"UnlockContext (compare-and-delete), ExtendContext with --extend on; goredis/v9 or rueidis pool",
		ConstantToken: true, Params: Params,
	}, open)
	strategies.Register("redsync-redlock", strategies.Info{
		Desc: Module + " " + Version + " Redlock over N independent masters (--nodes, default 5): one pool per master, quorum N/2+1, " +
			"validity = TTL - elapsed - drift; its own tries, release and extend as redsync",
		Topology: strategies.Masters, MinNodes: 3, ConstantToken: true, Params: Params,
	}, open)
}

// PoolOf returns redsync's own pool for d's native client: redsync's
// goredis/v9 pool for a go-redis redis.UniversalClient, its rueidis pool
// (over rueidiscompat.NewAdapter) for a rueidis.Client. It fails for a
// driver without one of those clients.
func PoolOf(d drivers.Driver) (rsredis.Pool, error) {
	switch c := drivers.NativeOf(d).(type) {
	case goredis.UniversalClient:
		return rsgoredis.NewPool(c), nil
	case rueidis.Client:
		return rsrueidis.NewPool(rueidiscompat.NewAdapter(c)), nil
	case nil:
		return nil, fmt.Errorf("redsync: driver %T gives no native client (drivers.Native)", d)
	default:
		return nil, fmt.Errorf("redsync: driver %T's client %T is neither go-redis nor rueidis", d, c)
	}
}

// locker makes one redsync Mutex per acquire (a Mutex holds one lock's
// value and validity).
type locker struct {
	rs   *redsync.Redsync
	opts []redsync.Option
	cfg  strategies.Config
	n    int // nodes
	ext  bool

	nodes                   []nodeStats
	gaveUp                  atomic.Int64
	extends, extendFailures atomic.Int64
}

type nodeStats struct {
	acquired, refused, errs atomic.Int64
}

var (
	_ strategies.Locker        = (*locker)(nil)
	_ strategies.OwnRetry      = (*locker)(nil)
	_ strategies.StatsReporter = (*locker)(nil)
	_ strategies.Extender      = (*extending)(nil)
	_ strategies.ExtendsLeases = (*locker)(nil)
	_ strategies.Validity      = (*extending)(nil)
)

// ExtendsLeases: with extend=on the leases are Extenders.
func (l *locker) ExtendsLeases() bool { return l.ext }

// open builds the locker on c.Nodes (one pool each; redsync's quorum is
// len(c.Nodes)/2+1). Every Mutex gets WithExpiry(c.TTL), the declared
// parameters and a value generator giving lockbench's token
// (strategies.NewToken, or strategies.ConstantValue with
// c.ConstantToken) instead of redsync's random base64 value.
func open(c strategies.Config) (*locker, error) {
	l := &locker{cfg: c, n: len(c.Nodes), ext: c.Params.String("extend") == "on", nodes: make([]nodeStats, len(c.Nodes))}
	pools := make([]rsredis.Pool, len(c.Nodes))
	for i, d := range c.Nodes {
		p, err := PoolOf(d)
		if err != nil {
			return nil, err
		}
		pools[i] = &pool{Pool: p, l: l, node: i}
	}
	l.rs = redsync.New(pools...)
	gen := func() (string, error) { return strategies.NewToken(), nil }
	if c.ConstantToken {
		gen = func() (string, error) { return strategies.ConstantValue, nil }
	}
	l.opts = []redsync.Option{
		redsync.WithExpiry(c.TTL),
		redsync.WithTries(c.Params.Int("tries")),
		redsync.WithDriftFactor(c.Params.Float("drift-factor")),
		redsync.WithTimeoutFactor(c.Params.Float("timeout-factor")),
		redsync.WithGenValueFunc(gen),
	}
	if d := c.Params.Duration("retry-delay"); d > 0 {
		l.opts = append(l.opts, redsync.WithRetryDelay(d))
	}
	return l, nil
}

// OwnRetry: TryAcquire runs redsync's loop of tries.
func (*locker) OwnRetry() {}

// TryAcquire runs Mutex.LockContext on key: up to tries rounds, each a
// SET key token NX PX ttl on every node in parallel (bounded by
// timeout-factor x TTL), held when a quorum said OK with validity left;
// a failed round is undone on every node and followed by redsync's
// delay. It returns ctx's error when ctx ended the loop (redsync itself
// then reports ErrFailed), ErrNotAcquired when redsync gave up with the
// lock taken (ErrFailed, ErrTaken, or a last round where some node
// refused), and the Redis error when every node failed in the last round.
func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	m := l.rs.NewMutex(key, l.opts...)
	err := m.LockContext(ctx)
	if err == nil {
		if l.ext {
			return &extending{lease{m: m, l: l}}, nil
		}
		return &lease{m: m, l: l}, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if errors.Is(err, redsync.ErrFailed) || !l.allFailed(err) {
		l.gaveUp.Add(1)
		return nil, fmt.Errorf("%w: %w", strategies.ErrNotAcquired, err)
	}
	return nil, err
}

// allFailed reports whether err, redsync's error of one round over every
// node, holds a RedisError for each node (no node answered).
func (l *locker) allFailed(err error) bool {
	var n int
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var re *redsync.RedisError
		if errors.As(e, &re) {
			n++
		}
	}
	walk(err)
	return n >= l.n
}

// Stats reports per-node results of the SET NX commands redsync sent
// (node<i>_acquired, _refused, _errors: every round sends one to every
// node), the acquires redsync gave up (gave_up), the quorum, and with
// extend=on the extends that succeeded (extends) and failed
// (extend_failures).
func (l *locker) Stats() map[string]float64 {
	out := map[string]float64{
		"quorum":  float64(l.n/2 + 1),
		"gave_up": float64(l.gaveUp.Load()),
	}
	if l.ext {
		out["extends"] = float64(l.extends.Load())
		out["extend_failures"] = float64(l.extendFailures.Load())
	}
	for i := range l.nodes {
		p := "node" + strconv.Itoa(i) + "_"
		out[p+"acquired"] = float64(l.nodes[i].acquired.Load())
		out[p+"refused"] = float64(l.nodes[i].refused.Load())
		out[p+"errors"] = float64(l.nodes[i].errs.Load())
	}
	return out
}

// lease is a held redsync Mutex.
type lease struct {
	m *redsync.Mutex
	l *locker
}

func (le *lease) Key() string { return le.m.Name() }

// Token is the Mutex's value: lockbench's token.
func (le *lease) Token() string { return le.m.Value() }

// Release runs Mutex.UnlockContext (redsync's compare-and-delete on every
// node). ErrNotOwner when fewer than a quorum deleted it and some node
// answered (the key was gone, ErrLockAlreadyExpired, or held another
// value); the Redis error when no node answered.
func (le *lease) Release(ctx context.Context) error {
	ok, err := le.m.UnlockContext(ctx)
	if ok {
		return nil
	}
	if err == nil {
		return strategies.ErrNotOwner
	}
	if le.l.allFailed(err) {
		return err
	}
	return fmt.Errorf("%w: %w", strategies.ErrNotOwner, err)
}

// extending is a lease of extend=on: its holder can extend it.
type extending struct{ lease }

// ValidUntil is redsync's Mutex.Until: the end of the validity redsync
// counts, the acquire's (or last extend's) start plus the expiry minus
// the drift (strategies.Validity).
func (e *extending) ValidUntil() time.Time { return e.m.Until() }

// Extend runs Mutex.ExtendContext: redsync's owner-checked PEXPIRE to the
// TTL on every node, held when a quorum extended it with validity left.
// Each node's extend is reported to Config.Renewing first. On failure it
// returns strategies.ErrExtendFailed (an ErrNotOwner) wrapping redsync's
// error.
func (e *extending) Extend(ctx context.Context) error {
	l := e.l
	for range l.n {
		l.cfg.Renewing(e.m.Name(), e.m.Value())
	}
	ok, err := e.m.ExtendContext(ctx)
	if ok {
		l.extends.Add(1)
		return nil
	}
	l.extendFailures.Add(1)
	if err == nil {
		return strategies.ErrExtendFailed
	}
	return fmt.Errorf("%w: %w", strategies.ErrExtendFailed, err)
}

// pool is redsync's pool for one node, its connections telling the
// locker's Config.Tokens of each token before the SET NX that may store
// it and counting each SET NX's result.
type pool struct {
	rsredis.Pool
	l    *locker
	node int
}

func (p *pool) Get(ctx context.Context) (rsredis.Conn, error) {
	c, err := p.Pool.Get(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, ctx: ctx, p: p}, nil
}

// conn is a redsync connection whose SetNX is reported (pool).
type conn struct {
	rsredis.Conn
	ctx context.Context // the round's context: it carries the Client
	p   *pool
}

func (c *conn) SetNX(name, value string, expiry time.Duration) (bool, error) {
	c.p.l.cfg.Sent(c.ctx, name, value)
	ok, err := c.Conn.SetNX(name, value, expiry)
	st := &c.p.l.nodes[c.p.node]
	switch {
	case err != nil:
		st.errs.Add(1)
	case ok:
		st.acquired.Add(1)
	default:
		st.refused.Add(1)
	}
	return ok, err
}

// Library is the module and the version linked in (strategies.Library).
func (*locker) Library() (name, version string) {
	return Module, strategies.ModuleVersion(Module, Version)
}
