// Package etcdlock is the `etcd` baseline: go.etcd.io/etcd/client/v3's
// concurrency.Mutex on a session lease. An acquirer puts a key under the
// lock's prefix, attached to its session's lease; the key with the lowest
// create revision holds the lock, and each waiter watches the key created
// just before its own. The lock ends when its key is deleted (release) or
// the lease expires (the holder stopped renewing it). The revision at which
// the lock was granted only grows, so it serves as a fencing token. Import
// the package for its side effect (strategies/baselines does).
//
// No token is stored in Redis: the lock is the etcd key, so etcd does not
// call Config.Tokens and lockbench's liveness oracle (which reads Redis
// lock keys) does not measure it.
package etcdlock

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/strategies"
)

// Prefix is the key prefix under which every lock lives.
const Prefix = "/lockbench/"

func init() {
	strategies.Register("etcd", strategies.Info{
		Desc:    "etcd concurrency.Mutex on a session lease (lowest create revision holds, each waiter watches its predecessor); the revision is a fencing token (go.etcd.io/etcd/client/v3)",
		Backend: strategies.Etcd,
	}, open)
}

// locker gives each worker a session of its own (an etcd lease that the
// client renews): a Mutex's key is the prefix plus the session's lease id,
// so two holders on one session would share ownership. All sessions share
// one client connection.
type locker struct {
	cli      *clientv3.Client
	ttl      int // session lease, s
	mu       sync.Mutex
	sessions map[int]*concurrency.Session
}

var (
	_ strategies.Locker  = (*locker)(nil)
	_ strategies.Queued  = (*locker)(nil)
	_ strategies.Fenced  = (*lease)(nil)
	_ strategies.Watched = (*lease)(nil)
)

// open connects to c.Backends.Etcd (at most 5 s), logged in as
// c.Backends.EtcdUser when set. Sessions are opened on
// a worker's first acquire; their lease lasts max(TTL, 2 s) rounded up to
// whole seconds (etcd's unit and floor) and is renewed while it runs.
func open(c strategies.Config) (*locker, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: c.Backends.Etcd, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		Username: c.Backends.EtcdUser, Password: c.Backends.EtcdPassword,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	l := &locker{cli: cli, sessions: map[int]*concurrency.Session{},
		ttl: int(math.Ceil(max(c.TTL, 2*time.Second).Seconds()))}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err = cli.Get(ctx, Prefix, clientv3.WithCountOnly())
	cancel()
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("cannot reach etcd at %s: %w", strings.Join(c.Backends.Etcd, ","), err)
	}
	return l, nil
}

// session returns worker id's session, opening it on first use (the grant
// is bounded by ctx). A caller with no worker id (id < 0) gets a session
// of its own, closed with its lease.
func (l *locker) session(ctx context.Context, id int) (*concurrency.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.sessions[id]; ok && id >= 0 {
		select {
		case <-s.Done(): // its lease expired: a new session
		default:
			return s, nil
		}
	}
	// The session's context bounds the lease's keep-alive, so it must
	// outlive ctx; the grant itself waits at most 5 s.
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lease, err := l.cli.Grant(gctx, int64(l.ttl))
	if err != nil {
		return nil, fmt.Errorf("etcd: grant a session lease: %w", err)
	}
	s, err := concurrency.NewSession(l.cli, concurrency.WithLease(lease.ID))
	if err != nil {
		return nil, fmt.Errorf("etcd: session: %w", err)
	}
	if id >= 0 {
		l.sessions[id] = s
	}
	return s, nil
}

// Queued: TryAcquire waits in the mutex's queue.
func (*locker) Queued() {}

// Close ends the sessions (revoking their leases, which deletes any key
// still attached) and the client.
func (l *locker) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.sessions {
		_ = s.Close()
	}
	return l.cli.Close()
}

// TryAcquire waits for the lock on Prefix+key until it is granted or ctx
// ends (Mutex.Lock then deletes its key and returns ctx's error).
func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	id := strategies.ClientFrom(ctx).ID
	s, err := l.session(ctx, id)
	if err != nil {
		return nil, err
	}
	m := concurrency.NewMutex(s, Prefix+key)
	if err := m.Lock(ctx); err != nil {
		if id < 0 {
			_ = s.Close()
		}
		return nil, err
	}
	return &lease{key: key, m: m, s: s, cli: l.cli, own: id < 0}, nil
}

type lease struct {
	key string
	m   *concurrency.Mutex
	s   *concurrency.Session
	cli *clientv3.Client
	own bool // the session is this lease's alone: Release closes it
}

func (l *lease) Key() string { return l.key }

// Token is the holder's key in etcd (prefix + lease id).
func (l *lease) Token() string { return l.m.Key() }

// Fence is the etcd revision at which the lock was granted.
func (l *lease) Fence() int64 { return l.m.Header().Revision }

// Context is done when the session's lease is known lost (keep-alive
// failed until it expired).
func (l *lease) Context() context.Context { return l.s.Ctx() }

// Release deletes the holder's key; ErrNotOwner when it was already gone
// (the lease expired).
func (l *lease) Release(ctx context.Context) error {
	if l.own {
		defer l.s.Close()
	}
	r, err := l.cli.Delete(ctx, l.m.Key())
	if err != nil {
		return err
	}
	if r.Deleted == 0 {
		return strategies.ErrNotOwner
	}
	return nil
}
