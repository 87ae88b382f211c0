package baselines_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies/zklock"
	"github.com/lockbench/lockbench/workloads"
)

// zkSession opens a session to the test's ZooKeeper, with the digest
// credential auth when not empty.
func zkSession(t *testing.T, auth string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(backends.ZooKeeper, 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLog{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(30 * time.Second)
	for connected := false; !connected; {
		select {
		case ev := <-events:
			connected = ev.State == zk.StateHasSession
		case <-deadline:
			t.Fatal("no ZooKeeper session within 30 s")
		}
	}
	if auth != "" {
		if err := conn.AddAuth("digest", []byte(auth)); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// A stranger on the ZooKeeper lockbench started (issue 38, item 1): a
// session without lockbench's digest credential tries, while a zk run
// goes on, to change "/"'s ACL (the review's `setAcl / world:anyone:r`,
// which made the run fail), to create a znode under "/" and to delete
// lockbench's /lockbench, to open /lockbench's ACL, to create a quota
// node under /zookeeper/quota and to open /zookeeper's ACL; each fails
// with NoAuth, "/" keeps
// topology.ZooKeeperRootACL, and the run completes with 0 violations.
// The other way: with "/" opened back to world:anyone:cdrwa (what
// ZooKeeper starts with), the same stranger's create under "/" succeeds.
func TestZooKeeperStrangerRefused(t *testing.T) {
	need(t, "zk")
	mine := zkSession(t, backends.ZooKeeperAuth)
	stranger := zkSession(t, "")
	want := topology.ZooKeeperRootACL(backends.ZooKeeperAuth)
	if got, _, err := mine.GetACL("/"); err != nil || !slices.Equal(got, want) {
		t.Fatalf("ACL of / %v (%v), want %v", got, err, want)
	}

	type result struct {
		res report.Scenario
		err error
	}
	done := make(chan result, 1)
	go func() {
		sc := engine.Scenario{Spec: engine.Spec{
			Strategy: "zk", Driver: "rueidis", Workload: "hot-key",
			Retry: policy(t, "fixed:interval=2ms"), Clients: 8,
			Duration: 1500 * time.Millisecond, TTL: time.Second, AcquireTimeout: 30 * time.Second,
			Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 4}, Seed: 1,
		}}
		sc.Env.Backends = backends
		res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:zkstranger:")
		done <- result{res, err}
	}()

	// Wait until the run holds locks under /lockbench.
	deadline := time.Now().Add(20 * time.Second)
	for {
		kids, _, err := mine.Children(zklock.Root)
		if err == nil && len(kids) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no lock node under %s within 20 s (%v)", zklock.Root, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	noAuth := func(what string, err error) {
		t.Helper()
		t.Logf("stranger, %s: %v", what, err)
		if !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("stranger, %s: %v, want %v", what, err, zk.ErrNoAuth)
		}
	}
	_, err := stranger.SetACL("/", zk.WorldACL(zk.PermRead), -1)
	noAuth("setAcl / world:anyone:r", err)
	_, err = stranger.Create("/intruder", nil, 0, zk.WorldACL(zk.PermAll))
	noAuth("create /intruder", err)
	noAuth("delete "+zklock.Root, stranger.Delete(zklock.Root, -1))
	_, err = stranger.SetACL(zklock.Root, zk.WorldACL(zk.PermAll), -1)
	noAuth("setAcl "+zklock.Root+" world:anyone:cdrwa", err)
	_, err = stranger.Create("/zookeeper/quota/lockbench", nil, 0, zk.WorldACL(zk.PermAll))
	noAuth("create /zookeeper/quota/lockbench", err)
	_, err = stranger.SetACL("/zookeeper", zk.WorldACL(zk.PermAll), -1)
	noAuth("setAcl /zookeeper world:anyone:cdrwa", err)

	r := <-done
	if r.err != nil {
		t.Fatalf("run: %v", r.err)
	}
	t.Logf("run: ops %d, holds %d, violations %+v", r.res.Ops, r.res.HoldMS.Count, r.res.Violations)
	if r.res.Ops == 0 || r.res.Violations != (report.Violations{}) || r.res.Counters.Errors != 0 {
		t.Fatalf("run: ops %d, violations %+v, errors %v; want ops > 0 and none", r.res.Ops, r.res.Violations, r.res.Counters.ErrorSamples)
	}
	if got, _, err := mine.GetACL("/"); err != nil || !slices.Equal(got, want) {
		t.Fatalf("after the stranger: ACL of / %v (%v), want %v", got, err, want)
	}
	if kids, _, err := mine.Children("/"); err != nil || slices.Contains(kids, "intruder") || !slices.Contains(kids, "lockbench") {
		t.Fatalf("after the stranger: / holds %v (%v), want lockbench and no intruder", kids, err)
	}

	// The other way: "/" as ZooKeeper starts it lets the stranger in.
	if _, err := mine.SetACL("/", zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := mine.SetACL("/", want, -1); err != nil {
			t.Errorf("restore the ACL of /: %v", err)
		}
	}()
	if _, err := stranger.Create("/intruder", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("stranger, create /intruder under world:anyone:cdrwa: %v, want success (the probe sees an open root)", err)
	}
	t.Logf("with / open (world:anyone:cdrwa): the stranger created /intruder")
	if err := stranger.Delete("/intruder", -1); err != nil {
		t.Fatal(err)
	}
}
