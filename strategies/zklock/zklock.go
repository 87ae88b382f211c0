// Package zklock is the `zk` baseline: the ZooKeeper lock recipe
// (zookeeper.apache.org, "ZooKeeper Recipes and Solutions", Locks) through
// github.com/go-zookeeper/zk. Each acquirer creates an ephemeral sequential
// znode under the lock's node, and holds the lock when its node has the
// lowest sequence number; otherwise it watches only its predecessor (no
// herd effect) and checks again when that node goes. The lock ends with
// the node: deleted on release, or by the server when the holder's session
// expires. Import the package for its side effect (strategies/baselines
// does).
//
// No token is stored in Redis: the lock is the znode, so zk does not call
// Config.Tokens and lockbench's liveness oracle (which reads Redis lock
// keys) does not measure it.
package zklock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/strategies"
)

// Sessions is how many ZooKeeper sessions (connections) a locker opens;
// worker i uses session i mod Sessions, as workers of one application
// instance share its session.
const Sessions = 4

// Root is the znode under which every lock lives.
const Root = "/lockbench"

func init() {
	strategies.Register("zk", strategies.Info{
		Desc:    "ZooKeeper lock recipe: ephemeral sequential znode per acquirer, each waiter watching its predecessor; the sequence number is a fencing token (github.com/go-zookeeper/zk)",
		Backend: strategies.ZooKeeper,
	}, open)
}

type session struct {
	conn *zk.Conn
	// live is cancelled when the server expires the session: its ephemeral
	// nodes, and so the locks it held, are gone.
	live atomic.Pointer[context.Context]
}

type locker struct {
	sessions []*session
	// acl is every znode's ACL: a digest ACL for Backends.ZooKeeperAuth's
	// identity, or the open world ACL without one.
	acl     []zk.ACL
	mu      sync.Mutex
	parents map[string]bool // lock nodes created by this locker
}

var (
	_ strategies.Locker  = (*locker)(nil)
	_ strategies.Queued  = (*locker)(nil)
	_ strategies.Fenced  = (*lease)(nil)
	_ strategies.Watched = (*lease)(nil)
)

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// open connects Sessions sessions with a session timeout of max(TTL, 2 s)
// (the server bounds it by its tickTime) and waits, at most 10 s, until
// each has a session.
//
// With c.Backends.ZooKeeperAuth (user:password), each session adds it
// (scheme digest; the library adds it again on reconnect) and every znode
// it creates, Root included, gets a digest ACL for that identity only: a
// client without the credential can neither read, list, create under nor
// delete them. A Root that already exists with another ACL is refused.
// connectBound is how long open waits for each session to connect: 30 s
// (a ZooKeeper JVM just started on a loaded 2-core machine took more than
// 10 s to accept its first sessions).
const connectBound = 30 * time.Second

func open(c strategies.Config) (*locker, error) {
	timeout := max(c.TTL, 2*time.Second)
	l := &locker{parents: map[string]bool{}, acl: zk.WorldACL(zk.PermAll)}
	auth := c.Backends.ZooKeeperAuth
	if auth != "" {
		user, pw, ok := strings.Cut(auth, ":")
		if !ok || user == "" {
			return nil, errors.New("zk: Backends.ZooKeeperAuth must be user:password")
		}
		l.acl = zk.DigestACL(zk.PermAll, user, pw)
	}
	for i := 0; i < Sessions; i++ {
		conn, events, err := zk.Connect(c.Backends.ZooKeeper, timeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("zk: %w", err)
		}
		s := &session{conn: conn}
		l.sessions = append(l.sessions, s)
		connected := make(chan struct{})
		go s.watch(events, connected)
		select {
		case <-connected:
		case <-time.After(connectBound):
			l.Close()
			return nil, fmt.Errorf("cannot reach ZooKeeper at %s within %v", strings.Join(c.Backends.ZooKeeper, ","), connectBound)
		}
		if auth != "" {
			if err := conn.AddAuth("digest", []byte(auth)); err != nil {
				l.Close()
				return nil, fmt.Errorf("zk: add digest credential: %w", err)
			}
		}
	}
	if _, err := l.sessions[0].conn.Create(Root, nil, 0, l.acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		l.Close()
		return nil, fmt.Errorf("zk: create %s: %w", Root, err)
	}
	if auth != "" {
		// Someone who created Root first with an open ACL could read and
		// disturb the locks: refuse such a Root.
		got, _, err := l.sessions[0].conn.GetACL(Root)
		if err != nil || !sameACL(got, l.acl) {
			l.Close()
			return nil, fmt.Errorf("zk: %s exists with ACL %v (%v), not lockbench's digest ACL: remove it or use a fresh server", Root, got, err)
		}
	}
	return l, nil
}

func sameACL(a, b []zk.ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// watch follows the session's events: a new session gets a new live
// context; an expired one cancels it.
func (s *session) watch(events <-chan zk.Event, connected chan struct{}) {
	var cancel context.CancelFunc = func() {}
	once := sync.Once{}
	for ev := range events {
		switch ev.State {
		case zk.StateHasSession:
			ctx, c := context.WithCancel(context.Background())
			cancel()
			cancel = c
			s.live.Store(&ctx)
			once.Do(func() { close(connected) })
		case zk.StateExpired:
			cancel()
		}
	}
	cancel()
}

// Queued: TryAcquire waits in the znode queue.
func (*locker) Queued() {}

// Close closes every session (their ephemeral nodes go with them) after
// deleting the lock nodes this locker created, which are empty once every
// lease is released.
func (l *locker) Close() error {
	l.mu.Lock()
	parents := l.parents
	l.parents = map[string]bool{}
	l.mu.Unlock()
	if len(l.sessions) > 0 {
		for p := range parents {
			_ = l.sessions[0].conn.Delete(p, -1)
		}
	}
	for _, s := range l.sessions {
		s.conn.Close()
	}
	return nil
}

// lockPath is the lock's node: Root/<key> with "/" replaced.
func lockPath(key string) string { return Root + "/" + strings.ReplaceAll(key, "/", "_") }

// ensure creates the lock's persistent node once.
func (l *locker) ensure(conn *zk.Conn, dir string) error {
	l.mu.Lock()
	done := l.parents[dir]
	l.mu.Unlock()
	if done {
		return nil
	}
	_, err := conn.Create(dir, nil, 0, l.acl)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("zk: create %s: %w", dir, err)
	}
	l.mu.Lock()
	l.parents[dir] = true
	l.mu.Unlock()
	return nil
}

// seq is the 10-digit sequence number ZooKeeper appends to a node name.
func seq(name string) (int64, bool) {
	if len(name) < 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	return n, err == nil
}

// TryAcquire joins the queue of key and waits until its node is the
// lowest, or ctx ends (its node is then deleted and ctx's error returned).
func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	id := max(strategies.ClientFrom(ctx).ID, 0)
	s := l.sessions[id%len(l.sessions)]
	conn := s.conn
	dir := lockPath(key)
	if err := l.ensure(conn, dir); err != nil {
		return nil, err
	}
	live := s.live.Load()
	tok := strategies.NewToken()
	path, err := conn.CreateProtectedEphemeralSequential(dir+"/lock-", []byte(tok), l.acl)
	if err != nil {
		return nil, fmt.Errorf("zk: create lock node: %w", err)
	}
	mine := path[strings.LastIndexByte(path, '/')+1:]
	my, _ := seq(mine)
	giveUp := func(err error) (strategies.Lease, error) {
		_ = conn.Delete(path, -1)
		return nil, err
	}
	for {
		children, _, err := conn.Children(dir)
		if err != nil {
			return giveUp(fmt.Errorf("zk: children of %s: %w", dir, err))
		}
		pred, predSeq := "", int64(-1)
		for _, c := range children {
			if n, ok := seq(c); ok && n < my && n > predSeq {
				pred, predSeq = c, n
			}
		}
		if pred == "" {
			return &lease{key: key, token: tok, path: path, fence: my, conn: conn, live: *live}, nil
		}
		exists, _, ch, err := conn.ExistsW(dir + "/" + pred)
		if err != nil {
			return giveUp(fmt.Errorf("zk: watch %s: %w", pred, err))
		}
		if !exists {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return giveUp(ctx.Err())
		}
	}
}

type lease struct {
	key, token, path string
	fence            int64
	conn             *zk.Conn
	live             context.Context
}

func (l *lease) Key() string   { return l.key }
func (l *lease) Token() string { return l.token }

// Fence is the node's sequence number: it grows with every acquisition of
// the lock.
func (l *lease) Fence() int64 { return l.fence }

// Context is cancelled when the holder's session expires (the server has
// deleted its node: someone else may hold the lock).
func (l *lease) Context() context.Context { return l.live }

// Release deletes the node; ErrNotOwner when it is already gone (the
// session expired).
func (l *lease) Release(context.Context) error {
	err := l.conn.Delete(l.path, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return strategies.ErrNotOwner
	}
	return err
}
