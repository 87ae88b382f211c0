package baselines_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies/etcdlock"
	"github.com/lockbench/lockbench/strategies/zklock"
	"github.com/lockbench/lockbench/workloads"
)

// The safety oracle, both ways, for the baselines (issue 23, item 4).
//
// What a "broken configuration" can honestly be differs per baseline:
//
//   - sql-rowlock has no lease: InnoDB holds the row lock until COMMIT, so
//     a short TTL (ignored) cannot break it, and lockbench refuses faults
//     (a stop-the-world pause included) on every baseline: they act on
//     Redis servers and on the renewal loops of its Redis strategies. The
//     refusal is asserted. lockbench has no broken row-lock configuration
//     to show; its correct side shows zero.
//   - sql-guard takes no lock; its guard (UPDATE ... WHERE n >= 1) is what
//     keeps the stock exact. lockbench cannot turn that guard off (guard
//     none is refused for it; asserted). What is shown: the guard refuses
//     writes (Rejected > 0) from orders that read a positive stock that
//     was gone by their write, each of which an unguarded write would
//     have sold (the Redis analogue, redis-guard with its guard forced
//     off, oversells: TestUnguardedOversells), and 0 of every violation.
//   - zk and etcd hold the lock on a session (ZooKeeper session timeout /
//     etcd lease, both max(TTL, 2 s)) that the client library keeps alive
//     in its own goroutines, so a short TTL cannot break them (floored at
//     2 s and renewed), and the pause fault is refused for them (as
//     above; even if it ran, it stops a worker and lockbench's renewal
//     loops, not the libraries' heartbeats). Their broken side is the
//     session ending under a working holder, done from outside the way
//     the server does it on expiry (a partitioned or frozen client): zk:
//     the holder's ephemeral znode deleted (what ZooKeeper does when the
//     session expires); etcd: the holder's lease revoked (what the lessor
//     does when keep-alives stop). The next waiter then takes the lock
//     while the first still works: overlap. The zk holder's session is
//     alive for its client, so nothing tells it, and its stale write
//     lands (lost update, oversell); the etcd holder's next keep-alive
//     finds the lease gone, its session's context ends, and it drops its
//     write (rejected), so the data stays exact.
func TestBrokenBothWays(t *testing.T) {
	for _, st := range []string{"sql-rowlock", "zk", "etcd"} {
		t.Run(st+"/correct", func(t *testing.T) {
			need(t, st)
			res := run(t, brokenScenario(t, st, 2*time.Second, time.Millisecond, 30))
			t.Logf("correct (ttl 2s, work 1ms): %+v sold %d holds %d", res.Violations, res.Figures["sold"], res.HoldMS.Count)
			soldOut(t, res, 30)
		})
		t.Run(st+"/pause-refused", func(t *testing.T) {
			need(t, st)
			// lockbench refuses faults on a baseline (they act on Redis
			// servers and on the renewal loops of its Redis strategies):
			// no pause side can be shown for it.
			sc := brokenScenario(t, st, time.Second, 20*time.Millisecond, 10)
			sp, err := faults.Parse("pause:for=3s,at=300ms")
			if err != nil {
				t.Fatal(err)
			}
			sc.Faults = []faults.Spec{sp}
			sc.Env.Backends = backends
			_, err = engine.Run(context.Background(), sc, nodes, "lockbench:test:"+strings.NewReplacer("/", ":").Replace(t.Name())+":")
			t.Logf("pause fault: %v", err)
			if err == nil || !strings.Contains(err.Error(), "acts on Redis servers and Redis locks") {
				t.Fatalf("%s with a pause fault: %v, want lockbench's refusal", st, err)
			}
		})
	}
	for _, st := range []string{"zk", "etcd"} {
		t.Run(st+"/session-ends", func(t *testing.T) {
			need(t, st)
			expire := expireZK
			if st == "etcd" {
				expire = expireEtcd
			}
			// 4 clients queue for one item; each holds it for 200 ms (etcd:
			// 3 s, more than twice the client's keep-alive period of about
			// TTL/3 plus its 0.5 s send tick, so that the holder learns of
			// the revoked lease before it writes, every time: at 1.5 s a
			// make test beside two busy loops once saw the write land
			// first). The first
			// holder's session is ended right after it acquires, once a
			// waiter is queued.
			work, stock := 200*time.Millisecond, int64(10)
			if st == "etcd" {
				work, stock = 3*time.Second, 3
			}
			sc := brokenScenario(t, st, 2*time.Second, work, stock)
			prefix := "lockbench:test:" + strings.NewReplacer("/", ":").Replace(t.Name()) + ":"
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var what string
			var err error
			wg.Add(1)
			go func() {
				defer wg.Done()
				what, err = expire(ctx, prefix)
			}()
			res := run(t, sc)
			cancel()
			wg.Wait()
			if err != nil {
				t.Fatalf("ending the holder's session: %v", err)
			}
			v := res.Violations
			t.Logf("%s: overlap %d lost_updates %d oversell %d lost_leases %d worked_after_loss %d rejected %d not_owner %d sold %d",
				what, v.Overlap, v.LostUpdates, v.Oversell, v.LostLeases, v.WorkedAfterLoss, res.Counters.Rejected, res.Counters.NotOwner, res.Figures["sold"])
			if v.Overlap == 0 {
				t.Fatalf("overlap 0 after %s: want > 0 (the next waiter took the lock while the holder worked); %+v", what, v)
			}
			if st == "zk" && (v.LostUpdates == 0 || v.Oversell == 0) {
				// The holder's session is alive for its client: nothing
				// tells it the node is gone, and its stale write lands.
				t.Fatalf("zk: lost updates %d oversell %d; want both > 0 (the holder, not told, wrote its stale stock-1)", v.LostUpdates, v.Oversell)
			}
			if st == "etcd" && (v.LostUpdates != 0 || v.Oversell != 0 || v.WorkedAfterLoss != 0 || res.Counters.Rejected == 0) {
				// The next keep-alive finds the lease revoked: the
				// session's context ends, the holder checks it before
				// writing and drops its write.
				t.Fatalf("etcd: lost updates %d oversell %d worked after loss %d rejected %d; want 0, 0, 0, > 0 (the holder learnt of the loss before writing)",
					v.LostUpdates, v.Oversell, v.WorkedAfterLoss, res.Counters.Rejected)
			}
		})
	}
	t.Run("sql-guard", func(t *testing.T) {
		need(t, "sql-guard")
		sc := brokenScenario(t, "sql-guard", time.Second, 5*time.Millisecond, 30)
		sc.Clients = 8
		res := run(t, sc)
		t.Logf("guarded: %+v sold %d rejected %d", res.Violations, res.Figures["sold"], res.Counters.Rejected)
		soldOut(t, res, 30)
		if res.Counters.Rejected == 0 {
			t.Fatal("rejected 0: want > 0 (orders that read a stock gone by their write, refused by the WHERE n >= 1)")
		}
		// The guard cannot be turned off: lockbench refuses guard none
		// for sql-guard (it writes its own way).
		sc.Guard = workloads.GuardNone
		sc.Env.Backends = backends
		_, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+strings.NewReplacer("/", ":").Replace(t.Name())+":unguarded:")
		t.Logf("guard none: %v", err)
		if err == nil || !strings.Contains(err.Error(), "writes its own way") {
			t.Fatalf("sql-guard with guard none: %v, want lockbench's refusal", err)
		}
	})
}

// brokenScenario: flash-sale on one item, 4 clients.
func brokenScenario(t *testing.T, strategy string, ttl, work time.Duration, stock int64) engine.Scenario {
	t.Helper()
	return engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "rueidis", Workload: "flash-sale", Retry: policy(t, "fixed:interval=2ms"),
		Clients: 4, Duration: 10 * time.Second, TTL: ttl, AcquireTimeout: 8 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(work)}, Options: registry.Values{"stock": stock, "skus": 1}, Seed: 23,
	}}
}

func soldOut(t *testing.T, res report.Scenario, stock int64) {
	t.Helper()
	if res.Violations != (report.Violations{}) {
		t.Fatalf("violations %+v, want none", res.Violations)
	}
	if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
		t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
	}
	if res.Counters.Errors != 0 {
		t.Fatalf("errors %v", res.Counters.ErrorSamples)
	}
}

// expireZK waits for the first holder of a lock under prefix and deletes
// its ephemeral node through a connection of its own, as ZooKeeper does
// when the holder's session expires.
func expireZK(ctx context.Context, prefix string) (string, error) {
	conn, events, err := zk.Connect(backends.ZooKeeper, 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLog{}))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	// lockbench's znodes have a digest ACL: the test, acting for the
	// server's owner, needs the credential.
	if err := conn.AddAuth("digest", []byte(backends.ZooKeeperAuth)); err != nil {
		return "", err
	}
	dirPrefix := strings.ReplaceAll(prefix, "/", "_")
	for {
		select {
		case <-ctx.Done():
			return "", errors.New("no holder seen")
		case <-time.After(2 * time.Millisecond):
		}
		dirs, _, err := conn.Children(zklock.Root)
		if err != nil {
			return "", err
		}
		for _, d := range dirs {
			if !strings.HasPrefix(d, dirPrefix) {
				continue
			}
			nodes, _, err := conn.Children(zklock.Root + "/" + d)
			if err != nil || len(nodes) < 2 { // wait for a waiter too
				continue
			}
			// Protected names carry a GUID before "lock-"; the sequence
			// number is the last 10 digits.
			sort.Slice(nodes, func(i, j int) bool { return nodes[i][len(nodes[i])-10:] < nodes[j][len(nodes[j])-10:] })
			path := zklock.Root + "/" + d + "/" + nodes[0]
			if err := conn.Delete(path, -1); err != nil {
				return "", err
			}
			return "holder's znode deleted", nil
		}
	}
}

// expireEtcd waits for the first holder of a lock under prefix and revokes
// its session's lease through a client of its own, as the lessor does
// when the holder's keep-alives stop.
func expireEtcd(ctx context.Context, prefix string) (string, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: backends.Etcd, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		Username: backends.EtcdUser, Password: backends.EtcdPassword}) // etcd has authentication on
	if err != nil {
		return "", err
	}
	defer cli.Close()
	for {
		select {
		case <-ctx.Done():
			return "", errors.New("no holder seen")
		case <-time.After(2 * time.Millisecond):
		}
		r, err := cli.Get(ctx, etcdlock.Prefix+prefix, clientv3.WithPrefix(),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
		if err != nil {
			return "", err
		}
		if len(r.Kvs) < 2 { // wait for a waiter too
			continue
		}
		if _, err := cli.Revoke(ctx, clientv3.LeaseID(r.Kvs[0].Lease)); err != nil {
			return "", err
		}
		return "holder's lease revoked", nil
	}
}

type quietLog struct{}

func (quietLog) Printf(string, ...any) {}
