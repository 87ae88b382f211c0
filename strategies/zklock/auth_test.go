package zklock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// connect opens one session to addr, with auth (digest user:password)
// when not empty.
func connect(t *testing.T, addr, auth string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 2*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for connected := false; !connected; {
		select {
		case ev := <-events:
			connected = ev.State == zk.StateHasSession
		case <-deadline:
			conn.Close()
			t.Fatalf("no ZooKeeper session at %s within 10 s", addr)
		}
	}
	if auth != "" {
		if err := conn.AddAuth("digest", []byte(auth)); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// On the ZooKeeper lockbench starts, the zk strategy's znodes (its root
// /lockbench, a lock's node, the holder's sequential node) carry a
// digest ACL for lockbench's random credential: a session without it, or
// with a wrong password, can neither list, read, create under nor delete
// them, while the strategy locks and releases. Without the credential
// the root cannot be squatted ("/" is lockbench's only); a root that
// exists with an open ACL before the strategy starts is refused. The client port binds
// 127.0.0.1. It fails, not skips, when ZooKeeper is installed but does
// not start.
func TestZooKeeperRefusesUnauthenticated(t *testing.T) {
	if !topology.HaveZooKeeper() {
		t.Skip("ZooKeeper is not installed: apt-get install zookeeper (make test does it as root)")
	}
	s, err := topology.StartZooKeeper(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if len(s.Password) != 32 {
		t.Fatalf("password %q, want 32 random hex characters", s.Password)
	}
	cfg := strategies.Config{TTL: 2 * time.Second,
		Backends: strategies.Backends{ZooKeeper: []string{s.Addr}, ZooKeeperAuth: s.ZooKeeperAuth()}}

	// Nobody without the credential can squat the root: "/" has
	// topology.ZooKeeperRootACL (issue 38).
	other := connect(t, s.Addr, "")
	defer other.Close()
	if _, err := other.Create(Root, nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("create %s without the credential: %v, want %v", Root, err, zk.ErrNoAuth)
	}
	// A root created first with an open ACL (on a server whose "/" was
	// open, made here with the credential): refused.
	owner := connect(t, s.Addr, s.ZooKeeperAuth())
	defer owner.Close()
	if _, err := owner.Create(Root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if l, err := open(cfg); err == nil {
		l.Close()
		t.Fatalf("open with %s squatted under an open ACL: no error", Root)
	}
	if err := owner.Delete(Root, -1); err != nil {
		t.Fatal(err)
	}

	l, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ls, err := l.TryAcquire(context.Background(), "lockbench:auth:item")
	if err != nil {
		t.Fatal(err)
	}
	dir := lockPath("lockbench:auth:item")
	node := ls.(*lease).path

	wrong := connect(t, s.Addr, topology.ZooKeeperUser+":wrong")
	defer wrong.Close()
	for name, c := range map[string]*zk.Conn{"no credential": other, "a wrong password": wrong} {
		noAuth := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("%s, %s: %v, want %v", name, what, err, zk.ErrNoAuth)
			}
		}
		_, _, err := c.Children(Root)
		noAuth("list "+Root, err)
		_, _, err = c.Get(Root)
		noAuth("read "+Root, err)
		_, err = c.Create(Root+"/intruder", nil, 0, zk.WorldACL(zk.PermAll))
		noAuth("create under "+Root, err)
		_, _, err = c.Children(dir)
		noAuth("list "+dir, err)
		_, err = c.Create(dir+"/lock-0000000000", nil, 0, zk.WorldACL(zk.PermAll))
		noAuth("create under "+dir, err)
		_, _, err = c.Get(node)
		noAuth("read the holder's node", err)
		noAuth("delete the holder's node", c.Delete(node, -1))
		noAuth("delete "+dir, c.Delete(dir, -1))
		_, err = c.SetACL(Root, zk.WorldACL(zk.PermAll), -1)
		noAuth("open "+Root+"'s ACL", err)
	}

	// The credential gets in; the lock is intact and released.
	mine := connect(t, s.Addr, s.ZooKeeperAuth())
	defer mine.Close()
	if kids, _, err := mine.Children(dir); err != nil || len(kids) != 1 {
		t.Errorf("with the credential: children of %s %v, %v; want the holder's node", dir, kids, err)
	}
	if err := ls.Release(context.Background()); err != nil {
		t.Errorf("release: %v", err)
	}
}
