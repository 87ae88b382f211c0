// Package ext runs locks written in other languages: a strategy of this
// package starts an adapter program (one process per scenario, serving
// every client) and speaks lockbench's external-lock protocol with it
// over its stdin and stdout, newline-delimited JSON multiplexed by
// request id (docs/external-locks.md, Version). The adapter calls its
// lock library (Redisson, node-redlock, redis-py's Lock, ...); lockbench's
// workloads, faults, oracles, thresholds and reports work on the result
// as on a Go lock.
//
// Strategies: `ext` (cmd=PATH: any adapter), the adapters shipped in
// adapters/ (each registered by Register from one file per runtime:
// redisson.go, node.go, python.go), and two adapters in Go that measure
// the protocol's own cost (goadapter.go): `ext-null` (grants every
// acquire at once, no Redis) and `ext-atomic` (atomic's SET NX PX lock
// behind the protocol). Import the package for its side effect.
package ext

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// DataDriver is the one Redis driver an external lock's scenarios run on:
// it carries the workload's data (the lock is the adapter's).
const DataDriver = "goredis"

// Kind is how an adapter's acquire waits.
type Kind int

// Kinds.
const (
	// OneAttempt: each TryAcquire is one attempt (wait_ms 0); lockbench's
	// --retry policy retries.
	OneAttempt Kind = iota
	// OwnRetry: the library waits itself, for what is left of the acquire
	// timeout (wait_ms); the locker implements strategies.OwnRetry.
	OwnRetry
)

// Adapter is an adapter registered as a lockbench strategy (Register).
type Adapter struct {
	// Desc is the one line of `lockbench list`: library and version, what
	// the lock does, its source.
	Desc string
	// Lock is the variant sent in hello's "lock".
	Lock string
	// Runtime are the programs the adapter needs on PATH ("java", "node",
	// "python3"): when one is absent, Available returns an error wrapping
	// ErrNoRuntime and the strategy's scenarios fail with it.
	Runtime []string
	// Folder is the adapter's folder under adapters/ ("java", "node",
	// "python"); "" for an adapter that needs none.
	Folder string
	// Command returns the argv that starts the adapter, given its
	// folder's absolute path ("" when Folder is ""): an error wrapping
	// ErrNotBuilt when the build output is missing.
	Command func(dir string) ([]string, error)
	// Kind is how acquire waits. Default OneAttempt.
	Kind Kind
	// Reentrant, Reads and FIFO: the locker implements
	// strategies.Reentrant, strategies.ReadLocker and strategies.FIFO
	// (they must agree with the adapter's hello caps: the scenario fails
	// when they do not).
	Reentrant, Reads, FIFO bool
	// Topology, MinNodes, Workloads, Unsafe and Guard are the
	// strategy's strategies.Info fields.
	Topology  strategies.Topology
	MinNodes  int
	Workloads []string
	Unsafe    bool
	Guard     string
	// Params are the adapter's own parameters; their values reach it in
	// hello's params, as strings.
	Params []registry.Param
	// NonTokenFields are the fields of the adapter's hash lock key that
	// are no holder's token (Redisson's read-write lock: "mode"): the
	// locker declares them (strategies.NonTokenFields), so that the token
	// checks and the liveness reader leave them out. Nil: every field is
	// a token.
	NonTokenFields []string

	// fromParams, when set, gives the command and the variant from the
	// parameters' values (`ext`: cmd, args, lock) instead of Command and
	// Lock.
	fromParams func(v registry.Values) (argv []string, lock string)
	// env is added to the adapter's environment (the Go adapters).
	env []string
}

var (
	mu       sync.Mutex
	adapters = map[string]Adapter{}
)

// Register makes adapter a available as strategy name (from an init
// function). It panics on a duplicate name or a nil Command, as
// strategies.Register does on its own errors.
func Register(name string, a Adapter) {
	if a.Command == nil && a.fromParams == nil {
		panic("ext: Register " + name + " with a nil Command")
	}
	mu.Lock()
	if _, dup := adapters[name]; dup {
		mu.Unlock()
		panic("ext: Register " + name + " twice")
	}
	adapters[name] = a
	mu.Unlock()
	// The lock's client is the adapter's own: lockbench's driver carries
	// only the workload's data, so an external lock runs on one driver.
	info := strategies.Info{Desc: a.Desc, Topology: a.Topology, MinNodes: a.MinNodes,
		Workloads: a.Workloads, Unsafe: a.Unsafe, Guard: a.Guard, Params: a.Params, Drivers: []string{DataDriver},
		Check: func(v registry.Values) error { _, err := commandOf(name, a, v); return err }}
	open := func(c strategies.Config) (*locker, error) { return newLocker(name, a, c) }
	switch {
	case a.Kind == OwnRetry && a.Reads:
		strategies.Register(name, info, func(c strategies.Config) (*readRetryLocker, error) {
			l, err := open(c)
			if err != nil {
				return nil, err
			}
			return &readRetryLocker{retryLocker{l}}, nil
		})
	case a.Kind == OwnRetry && a.FIFO:
		strategies.Register(name, info, func(c strategies.Config) (*fifoRetryLocker, error) {
			l, err := open(c)
			if err != nil {
				return nil, err
			}
			return &fifoRetryLocker{retryLocker{l}}, nil
		})
	case a.Kind == OwnRetry && a.Reentrant:
		strategies.Register(name, info, func(c strategies.Config) (*reentrantRetryLocker, error) {
			l, err := open(c)
			if err != nil {
				return nil, err
			}
			return &reentrantRetryLocker{retryLocker{l}}, nil
		})
	case a.Kind == OwnRetry:
		strategies.Register(name, info, func(c strategies.Config) (*retryLocker, error) {
			l, err := open(c)
			if err != nil {
				return nil, err
			}
			return &retryLocker{l}, nil
		})
	case a.Reentrant || a.Reads || a.FIFO:
		panic("ext: Register " + name + ": Reentrant, Reads and FIFO need Kind OwnRetry")
	default:
		strategies.Register(name, info, open)
	}
}

// adapterOf returns what name was registered with.
func adapterOf(name string) (Adapter, bool) {
	mu.Lock()
	defer mu.Unlock()
	a, ok := adapters[name]
	return a, ok
}

// locker is an external lock: one adapter process, shared by every
// client of the scenario.
type locker struct {
	name string
	a    Adapter
	c    strategies.Config
	p    *proc
	caps Caps
	// granted counts the grants, lateReleased those whose caller had
	// given up before the reply came (released at once), for Stats.
	granted, lateReleased atomic.Int64
}

func newLocker(name string, a Adapter, c strategies.Config) (*locker, error) {
	argv, err := commandOf(name, a, c.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lock := a.Lock
	if a.fromParams != nil {
		_, lock = a.fromParams(c.Params)
	}
	h := Hello{Lock: lock, TTLms: c.TTL.Milliseconds(), Clients: max(c.Clients, 1), Prefix: c.Prefix,
		Params: c.Params.Strings()}
	for i, d := range c.Nodes {
		ep, ok := drivers.EndpointOf(d)
		if !ok {
			return nil, fmt.Errorf("%s: node %d's driver (%s) does not tell its server (drivers.Endpointer)", name, i, d.Name())
		}
		h.Servers = append(h.Servers, Server{Addr: ep.Addr, Username: ep.Username, Password: ep.Password, DB: ep.DB,
			TLS: ep.TLS != nil, Sentinels: ep.Sentinels, MasterName: ep.MasterName, Cluster: ep.Cluster})
	}
	p, err := start(context.Background(), name, argv, a.env, h)
	if err != nil {
		return nil, err
	}
	l := &locker{name: name, a: a, c: c, p: p, caps: p.hello.Caps}
	if err := l.checkCaps(); err != nil {
		p.Close()
		return nil, err
	}
	return l, nil
}

// checkCaps refuses an adapter whose hello disagrees with its
// registration.
func (l *locker) checkCaps() error {
	switch {
	case (l.a.Reentrant || l.a.FIFO) && !l.caps.Reentrant:
		return fmt.Errorf("%s: registered as reentrant, but its adapter's hello says caps.reentrant false", l.name)
	case l.a.FIFO && !l.caps.FIFO:
		return fmt.Errorf("%s: registered as FIFO, but its adapter's hello says caps.fifo false", l.name)
	case l.a.Reads && !l.caps.Read:
		return fmt.Errorf("%s: registered with a read side, but its adapter's hello says caps.read false", l.name)
	case l.caps.Permits < 0:
		return fmt.Errorf("%s: its adapter's hello says caps.permits %d", l.name, l.caps.Permits)
	}
	return nil
}

// Close stops the adapter.
func (l *locker) Close() error { return l.p.Close() }

// Library is the adapter's lock library and its version, as its hello
// said (strategies.Library).
func (l *locker) Library() (name, version string) { return l.p.hello.Library, l.p.hello.Version }

// Runtime is the runtime the adapter said it runs on (hello's runtime).
func (l *locker) Runtime() string { return l.p.hello.Runtime }

// NonTokenFields are the hash fields the adapter was registered with as
// no token (Adapter.NonTokenFields; strategies.NonTokenFields).
func (l *locker) NonTokenFields() []string { return l.a.NonTokenFields }

// Permits is the adapter's caps.permits (strategies.Semaphore); 1 for an
// exclusive lock.
func (l *locker) Permits() int { return max(l.caps.Permits, 1) }

// ExtendsLeases reports whether the adapter extends (caps.extend).
func (l *locker) ExtendsLeases() bool { return l.caps.Extend }

// Stats are the adapter's own counts: grants, and grants that came after
// their caller had given up (released at once).
func (l *locker) Stats() map[string]float64 {
	return map[string]float64{"grants": float64(l.granted.Load()), "late_grants_released": float64(l.lateReleased.Load())}
}

// TryAcquire makes one attempt, or the library's own wait for what is
// left of ctx's deadline (Kind OwnRetry).
func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	return l.acquire(ctx, []string{key}, "write")
}

// TryAcquireMulti takes every key of keys, all or none, when the adapter
// can (caps.multi_key).
func (l *locker) TryAcquireMulti(ctx context.Context, keys []string) (strategies.Lease, error) {
	if !l.caps.MultiKey {
		return nil, fmt.Errorf("%s: its adapter cannot take several keys at once (caps.multi_key false)", l.name)
	}
	return l.acquire(ctx, keys, "write")
}

func (l *locker) acquire(ctx context.Context, keys []string, mode string) (strategies.Lease, error) {
	client := strategies.ClientFrom(ctx).ID
	token := strategies.NewToken()
	var wait int64
	if l.a.Kind == OwnRetry {
		if dl, ok := ctx.Deadline(); ok {
			wait = waitMs(time.Until(dl))
		}
	}
	if l.caps.CallerToken {
		for _, k := range keys {
			l.c.Sent(ctx, k, token)
		}
	}
	r := request{Op: "acquire", Client: &client, Mode: mode, Token: token, TTLms: l.c.TTL.Milliseconds(), WaitMs: &wait}
	if len(keys) == 1 {
		r.Key = keys[0]
	} else {
		r.Key, r.Keys = keys[0], keys
	}
	rep, err := l.p.call(ctx, r, l.releaseLate)
	if err != nil {
		return nil, err
	}
	if !rep.OK {
		return nil, l.errorOf("acquire", rep)
	}
	if rep.Token == "" {
		rep.Token = token
	}
	if !l.caps.CallerToken {
		for _, k := range keys {
			l.c.Sent(ctx, k, rep.Token)
		}
	}
	l.granted.Add(1)
	return l.leaseOf(keys, rep), nil
}

// releaseLate releases a lease granted to a caller that had already given
// up (its context ended first): nobody else would.
func (l *locker) releaseLate(rep reply) {
	if !rep.OK || rep.Lease == 0 {
		return
	}
	l.lateReleased.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = l.p.call(ctx, request{Op: "release", Lease: rep.Lease}, nil)
}

// errorOf maps an adapter's error reply to the lock seam's errors.
func (l *locker) errorOf(op string, rep reply) error {
	switch rep.Error {
	case "not_acquired":
		return strategies.ErrNotAcquired
	case "not_owner":
		return strategies.ErrNotOwner
	}
	kind := rep.Error
	if kind == "" {
		kind = "other"
	}
	return &Error{Op: op, Kind: kind, Msg: cut(rep.Msg)}
}

// Error is an adapter's error reply other than not_acquired and
// not_owner: Kind is its "error" (timeout, redis, unsupported, other),
// Msg its "msg".
type Error struct{ Op, Kind, Msg string }

func (e *Error) Error() string {
	if e.Msg == "" {
		return "adapter " + e.Op + ": " + e.Kind
	}
	return "adapter " + e.Op + ": " + e.Kind + ": " + e.Msg
}

// ErrorKind is the kind lockbench counts the error under (drivers.ErrorKind
// reads it): for a Redis error, the kind of its message as a Redis
// client's ("readonly", "noauth", "connection", ...); otherwise
// "ext-<kind>".
func (e *Error) ErrorKind() string {
	if e.Kind == "redis" {
		return drivers.ErrorKind(errors.New(e.Msg))
	}
	return "ext-" + e.Kind
}

// Timeout reports an adapter's timeout as one.
func (e *Error) Timeout() bool { return e.Kind == "timeout" }

type retryLocker struct{ *locker }

// OwnRetry: the library's own wait (strategies.OwnRetry).
func (*retryLocker) OwnRetry() {}

type reentrantRetryLocker struct{ retryLocker }

// Reentrant: a client may take a lock it holds again
// (strategies.Reentrant).
func (*reentrantRetryLocker) Reentrant() {}

type fifoRetryLocker struct{ retryLocker }

// FIFO: waiters are granted in arrival order (strategies.FIFO). A FIFO
// adapter is reentrant too (Redisson's fair lock): checkCaps checks both.
func (*fifoRetryLocker) FIFO() {}

// Reentrant: Redisson's fair lock re-enters (strategies.Reentrant).
func (*fifoRetryLocker) Reentrant() {}

type readRetryLocker struct{ retryLocker }

// Reentrant: the write side re-enters (strategies.Reentrant).
func (*readRetryLocker) Reentrant() {}

// TryAcquireRead takes the read side (strategies.ReadLocker).
func (l *readRetryLocker) TryAcquireRead(ctx context.Context, key string) (strategies.Lease, error) {
	return l.acquire(ctx, []string{key}, "read")
}

var (
	_ strategies.OwnRetry   = (*retryLocker)(nil)
	_ strategies.Reentrant  = (*reentrantRetryLocker)(nil)
	_ strategies.ReadLocker = (*readRetryLocker)(nil)
	_ strategies.FIFO       = (*fifoRetryLocker)(nil)
	_ strategies.Semaphore  = (*locker)(nil)
)

// lease is one held lock: the adapter's handle.
type lease struct {
	l      *locker
	id     int64
	keys   []string
	token  string
	fence  int64
	ctx    context.Context
	cancel context.CancelFunc
	ended  atomic.Bool
}

func (l *locker) leaseOf(keys []string, rep reply) strategies.Lease {
	ls := &lease{l: l, id: rep.Lease, keys: keys, token: rep.Token, fence: rep.Fence}
	var lost, renewing func()
	if l.caps.Lost {
		ls.ctx, ls.cancel = context.WithCancel(context.Background())
		lost = ls.cancel
	}
	if l.caps.Renews {
		renewing = func() {
			for _, k := range ls.keys {
				l.c.Renewing(k, ls.token)
			}
		}
	}
	if lost != nil || renewing != nil {
		l.p.onLost(ls.id, lost, renewing)
	}
	switch i := bits(l.caps.Extend, l.caps.Lost, l.caps.Fenced); i {
	case 0:
		return ls
	case 1:
		return leaseE{ls}
	case 2:
		return leaseW{ls}
	case 3:
		return leaseEW{ls}
	case 4:
		return leaseF{ls}
	case 5:
		return leaseEF{ls}
	case 6:
		return leaseWF{ls}
	default:
		return leaseEWF{ls}
	}
}

func bits(bs ...bool) int {
	n := 0
	for i, b := range bs {
		if b {
			n |= 1 << i
		}
	}
	return n
}

func (s *lease) Key() string    { return s.keys[0] }
func (s *lease) Keys() []string { return s.keys }
func (s *lease) Token() string  { return s.token }
func (s *lease) end()           { s.ended.Store(true); s.l.p.onLost(s.id, nil, nil); s.stop() }
func (s *lease) stop() {
	if s.cancel != nil {
		s.cancel()
	}
}

// Release sends release and forgets the lease: ErrNotOwner when the
// adapter answers not_owner.
func (s *lease) Release(ctx context.Context) error {
	defer s.end()
	rep, err := s.l.p.call(ctx, request{Op: "release", Lease: s.id}, nil)
	if err != nil {
		return err
	}
	if !rep.OK {
		return s.l.errorOf("release", rep)
	}
	return nil
}

// Abandon tells the adapter to stop renewing the lease and forget it
// without releasing (a crashed holder), and returns at once.
func (s *lease) Abandon() {
	if s.ended.Swap(true) {
		return
	}
	s.l.p.onLost(s.id, nil, nil)
	s.stop()
	_ = s.l.p.send(request{Op: "abandon", Lease: s.id})
}

func (s *lease) extend(ctx context.Context) error {
	for _, k := range s.keys {
		s.l.c.Renewing(k, s.token)
	}
	rep, err := s.l.p.call(ctx, request{Op: "extend", Lease: s.id, TTLms: s.l.c.TTL.Milliseconds()}, nil)
	if err != nil {
		return err
	}
	if !rep.OK {
		return s.l.errorOf("extend", rep)
	}
	return nil
}

// The lease types, one per combination of the adapter's caps: extend
// (strategies.Extender), lost (strategies.Watched), fenced
// (strategies.Fenced), so that lockbench finds exactly the capabilities
// the adapter has.
type (
	leaseE   struct{ *lease }
	leaseW   struct{ *lease }
	leaseEW  struct{ *lease }
	leaseF   struct{ *lease }
	leaseEF  struct{ *lease }
	leaseWF  struct{ *lease }
	leaseEWF struct{ *lease }
)

func (s leaseE) Extend(ctx context.Context) error   { return s.extend(ctx) }
func (s leaseEW) Extend(ctx context.Context) error  { return s.extend(ctx) }
func (s leaseEF) Extend(ctx context.Context) error  { return s.extend(ctx) }
func (s leaseEWF) Extend(ctx context.Context) error { return s.extend(ctx) }
func (s leaseW) Context() context.Context           { return s.ctx }
func (s leaseEW) Context() context.Context          { return s.ctx }
func (s leaseWF) Context() context.Context          { return s.ctx }
func (s leaseEWF) Context() context.Context         { return s.ctx }
func (s leaseF) Fence() int64                       { return s.fence }
func (s leaseEF) Fence() int64                      { return s.fence }
func (s leaseWF) Fence() int64                      { return s.fence }
func (s leaseEWF) Fence() int64                     { return s.fence }

var (
	_ strategies.Extender   = leaseEWF{}
	_ strategies.Watched    = leaseEWF{}
	_ strategies.Fenced     = leaseEWF{}
	_ strategies.MultiLease = (*lease)(nil)
)

// waitMs is d in whole milliseconds for wait_ms, at most MaxInt32.
func waitMs(d time.Duration) int64 { return min(max(d.Milliseconds(), 0), math.MaxInt32) }
