package topology

// The root ACL of the ZooKeeper StartZooKeeper starts: a fresh server's
// root znode "/" is world:anyone:cdrwa, so any local user could create
// znodes under it, delete them or change its ACL (issue 38: a stranger's
// `setAcl / world:anyone:r` made the zk strategy's run fail), and so are
// ZooKeeper's own /zookeeper and /zookeeper/quota (where anyone could
// create quota nodes). Before StartZooKeeper returns, lockbench sets the
// ACL of all three to its digest identity only (/zookeeper/config is
// already world-readable only, and only a super user may change it).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkQuiet drops the ZooKeeper client's log lines.
type zkQuiet struct{}

func (zkQuiet) Printf(string, ...any) {}

// ZooKeeperRootACL is the ACL StartZooKeeper sets on the root znode "/"
// (and on /zookeeper and /zookeeper/quota, zkLocked): every permission
// (create, delete, read, write, admin) for the digest identity auth
// (user:password) and none for anyone else, so a client without the
// credential can neither list nor read "/", create a znode under it,
// delete one, nor change its ACL (each fails with NoAuth).
func ZooKeeperRootACL(auth string) []zk.ACL {
	user, pw, _ := strings.Cut(auth, ":")
	return zk.DigestACL(zk.PermAll, user, pw)
}

// zkLocked are the znodes whose ACL StartZooKeeper sets, with the
// children each may hold on a fresh server (sorted).
var zkLocked = []struct {
	path string
	kids []string
}{{"/", []string{"zookeeper"}}, {"/zookeeper", []string{"config", "quota"}}, {"/zookeeper/quota", nil}}

// lockZooKeeperRoot connects to the server at addr (waiting at most
// limit for a session), adds the digest credential auth and sets the ACL
// of each of zkLocked to ZooKeeperRootACL(auth). It then checks that
// each has exactly that ACL and no child but a fresh server's: a znode
// created, or an ACL changed, by someone else between the server's start
// and this call is refused (an error), never adopted.
func lockZooKeeperRoot(ctx context.Context, addr, auth string, limit time.Duration) error {
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(zkQuiet{}))
	if err != nil {
		return fmt.Errorf("topology: ZooKeeper root ACL: %w", err)
	}
	defer conn.Close()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for connected := false; !connected; {
		select {
		case ev := <-events:
			connected = ev.State == zk.StateHasSession
		case <-deadline.C:
			return fmt.Errorf("topology: ZooKeeper on %s: no session within %v", addr, limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := conn.AddAuth("digest", []byte(auth)); err != nil {
		return fmt.Errorf("topology: ZooKeeper on %s: add digest credential: %w", addr, err)
	}
	want := ZooKeeperRootACL(auth)
	for _, z := range zkLocked {
		if _, err := conn.SetACL(z.path, want, -1); err != nil {
			return fmt.Errorf("topology: ZooKeeper on %s: set the ACL of %s: %w", addr, z.path, err)
		}
		got, _, err := conn.GetACL(z.path)
		if err != nil || !slices.Equal(got, want) {
			return fmt.Errorf("topology: ZooKeeper on %s: %s has ACL %v (%v) after setting lockbench's digest ACL", addr, z.path, got, err)
		}
		kids, _, err := conn.Children(z.path)
		if err != nil {
			return fmt.Errorf("topology: ZooKeeper on %s: list %s: %w", addr, z.path, err)
		}
		slices.Sort(kids)
		if !slices.Equal(kids, z.kids) {
			return fmt.Errorf("topology: ZooKeeper on %s: %s holds %v before lockbench used it, want %v (someone else created znodes)", addr, z.path, kids, z.kids)
		}
	}
	return nil
}
