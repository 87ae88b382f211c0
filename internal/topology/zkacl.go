package topology

// The root ACL of the ZooKeeper StartZooKeeper starts: a fresh server's
// root znode "/" is world:anyone:cdrwa, so any local user could create
// znodes under it, delete them or change its ACL (issue 38: a stranger's
// `setAcl / world:anyone:r` made the zk strategy's run fail). Before
// StartZooKeeper returns, lockbench sets "/"'s ACL to its digest identity
// only.

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

// ZooKeeperRootACL is the ACL StartZooKeeper sets on the root znode "/":
// every permission (create, delete, read, write, admin) for the digest
// identity auth (user:password) and none for anyone else, so a client
// without the credential can neither list nor read "/", create a znode
// under it, delete one, nor change its ACL (each fails with NoAuth).
func ZooKeeperRootACL(auth string) []zk.ACL {
	user, pw, _ := strings.Cut(auth, ":")
	return zk.DigestACL(zk.PermAll, user, pw)
}

// lockZooKeeperRoot connects to the server at addr (waiting at most
// limit for a session), adds the digest credential auth and sets "/"'s
// ACL to ZooKeeperRootACL(auth). It then checks that "/" holds no znode
// but ZooKeeper's own /zookeeper and has exactly that ACL: a znode
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
	if _, err := conn.SetACL("/", want, -1); err != nil {
		return fmt.Errorf("topology: ZooKeeper on %s: set the ACL of /: %w", addr, err)
	}
	got, _, err := conn.GetACL("/")
	if err != nil || !slices.Equal(got, want) {
		return fmt.Errorf("topology: ZooKeeper on %s: / has ACL %v (%v) after setting lockbench's digest ACL", addr, got, err)
	}
	kids, _, err := conn.Children("/")
	if err != nil {
		return fmt.Errorf("topology: ZooKeeper on %s: list /: %w", addr, err)
	}
	if len(kids) != 1 || kids[0] != "zookeeper" {
		return fmt.Errorf("topology: ZooKeeper on %s: / holds %v before lockbench used it (someone else created znodes)", addr, kids)
	}
	return nil
}
