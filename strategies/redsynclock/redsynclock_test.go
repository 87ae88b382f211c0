package redsynclock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/redsynclock"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// topos are the servers of the shared tests: one for redsync, three
// independent masters for redsync-redlock.
var topos = map[strategies.Topology]*topology.Topology{}

func TestMain(m *testing.M) {
	ctx := context.Background()
	one, err := topology.Start(ctx, 1)
	if err == nil {
		topos[strategies.Standalone] = one
		topos[strategies.Masters], err = topology.Start(ctx, 3)
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "redsynclock tests need redis-server:", err)
	} else {
		code = m.Run()
	}
	for _, t := range topos {
		if t != nil {
			t.Stop()
		}
	}
	os.Exit(code)
}

var names = []string{"redsync", "redsync-redlock"}

func nodes(strategy string) []engine.Node {
	var out []engine.Node
	for _, s := range topos[strategies.TopologyOf(strategy)].Servers {
		out = append(out, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	return out
}

func open(t *testing.T, driver, strategy string) []drivers.Driver {
	t.Helper()
	ds, err := engine.Open(context.Background(), driver, nodes(strategy), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range ds {
			d.Close()
		}
	})
	return ds
}

func newLocker(t *testing.T, strategy string, ds []drivers.Driver, ttl time.Duration, p registry.Values) strategies.Locker {
	t.Helper()
	l, err := strategies.New(strategy, strategies.Config{Nodes: ds, TTL: ttl, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func run(t *testing.T, sc engine.Scenario) report.Scenario {
	t.Helper()
	res, err := engine.Run(context.Background(), sc, nodes(sc.Strategy), "lockbench:redsynctest:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func stats(l strategies.Locker) map[string]float64 {
	return l.(strategies.StatsReporter).Stats()
}

// The descriptions name the pinned version (strategies/libs checks it
// against go.mod).
func TestVersionPinned(t *testing.T) {
	for _, n := range names {
		info := strategies.InfoOf(n)
		if !strings.Contains(info.Desc, redsynclock.Module+" "+redsynclock.Version) || !info.OwnsRetry || len(info.Drivers) != 0 {
			t.Errorf("%s: %+v; want the version in Desc, OwnsRetry, every driver", n, info)
		}
	}
	if strategies.TopologyOf("redsync") != strategies.Standalone || strategies.TopologyOf("redsync-redlock") != strategies.Masters ||
		strategies.InfoOf("redsync-redlock").MinNodes != 3 {
		t.Fatal("redsync must run on one server, redsync-redlock on at least 3 masters")
	}
}

// A healthy lease (2 s, 1 ms of work): 10 clients sell exactly the stock
// with no violation, through redsync's own retrying (retry "library"),
// and the liveness oracle measures the tokens.
func TestFlashSaleHealthy(t *testing.T) {
	for _, s := range names {
		for _, d := range drivers.Names() {
			t.Run(s+"/"+d, func(t *testing.T) {
				const stock = 40
				res := run(t, engine.Scenario{Spec: engine.Spec{
					Strategy: s, Driver: d, Workload: "flash-sale", Retry: retry.Library(),
					Clients: 10, Duration: 60 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 30 * time.Second,
					Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(stock), "skus": 1},
					Liveness: 20 * time.Millisecond, Seed: 1,
				}})
				if res.Violations != (report.Violations{}) {
					t.Fatalf("violations %+v, want none", res.Violations)
				}
				if res.Figures["sold"] != stock || res.Figures["final_stock"] != 0 || res.StopReason != "done" {
					t.Fatalf("sold %d final %d stop %s; want %d sold out", res.Figures["sold"], res.Figures["final_stock"], res.StopReason, stock)
				}
				if res.Retry != retry.LibraryName || res.Counters.Errors != 0 || res.Counters.NotOwner != 0 {
					t.Fatalf("retry %q, counters %+v; want library, no errors, no foreign release", res.Retry, res.Counters)
				}
				if res.Liveness == nil || !res.Liveness.Measured {
					t.Fatalf("liveness %+v: the oracle did not measure redsync's tokens", res.Liveness)
				}
			})
		}
	}
}

// A lease shorter than the work (50 ms lease, 200 ms of work, 4 clients)
// is not renewed by redsync: another client's tries take the expired lock
// while its holder still works, and the oracle sees the overlap and the
// lost updates.
func TestShortLeaseOverlaps(t *testing.T) {
	for _, s := range names {
		for _, d := range drivers.Names() {
			t.Run(s+"/"+d, func(t *testing.T) {
				res := run(t, engine.Scenario{Spec: engine.Spec{
					Strategy: s, Driver: d, Workload: "flash-sale", Retry: retry.Library(),
					Clients: 4, Duration: 10 * time.Second, TTL: 50 * time.Millisecond, AcquireTimeout: 10 * time.Second,
					Params: workloads.Params{Work: workloads.Fixed(200 * time.Millisecond)}, Options: registry.Values{"stock": int64(8), "skus": 1}, Seed: 2,
				}})
				v := res.Violations
				t.Logf("overlap %d lost updates %d oversell %d not-owner releases %d", v.Overlap, v.LostUpdates, v.Oversell, res.Counters.NotOwner)
				if v.Overlap == 0 || v.LostUpdates == 0 {
					t.Fatalf("violations %+v; want overlap and lost updates > 0 (a 50 ms lease under 200 ms of work)", v)
				}
			})
		}
	}
}

// Redlock over 3 masters: with one stopped the lock is taken with the
// majority (2 of 3); with two stopped redsync gives up after its tries
// (ErrNotAcquired: a node answered, fail closed) and undoes what it set.
// The per-node counts are exact: one round for the first acquire, one per
// try for the second.
func TestRedlockMajority(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			topo, err := topology.Start(ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Stop()
			var ds []drivers.Driver
			for _, s := range topo.Servers {
				dr, err := drivers.Open(d, drivers.Options{Endpoint: drivers.Endpoint{Addr: s.Addr, Password: s.Password},
					ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer dr.Close()
				ds = append(ds, dr)
			}
			l := newLocker(t, "redsync-redlock", ds, 2*time.Second, registry.Values{"tries": 2, "retry-delay": 10 * time.Millisecond})
			key := "lockbench:redsynctest:{majority}:lock"
			topo.Servers[2].Stop()
			le, err := l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("with 1 of 3 stopped: %v, want the lock (2 of 3 is a majority)", err)
			}
			for i, n := range ds[:2] {
				if r, _ := n.Do(ctx, "GET", key); r.Str != le.Token() {
					t.Fatalf("node %d holds %q, want the lease's token %q", i, r.Str, le.Token())
				}
			}
			if err := le.Release(ctx); err != nil {
				t.Fatalf("release with 2 of 3 up: %v", err)
			}
			topo.Servers[1].Stop()
			if _, err := l.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("with 2 of 3 stopped: %v, want ErrNotAcquired (fail closed)", err)
			}
			if r, _ := ds[0].Do(ctx, "EXISTS", key); r.Int != 0 {
				t.Fatal("node 0 kept the key after the failed acquire")
			}
			st := stats(l)
			want := map[string]float64{"quorum": 2, "gave_up": 1,
				"node0_acquired": 3, "node0_refused": 0, "node0_errors": 0,
				"node1_acquired": 1, "node1_errors": 2,
				"node2_acquired": 0, "node2_errors": 3}
			for k, v := range want {
				if st[k] != v {
					t.Errorf("stats[%s] = %v, want %v (stats %v)", k, st[k], v, st)
				}
			}
		})
	}
}

// The parameters reach redsync: with tries=3 a held lock costs exactly 3
// refused SET NX per node and ErrNotAcquired; under an acquire timeout the
// engine's deadline ends redsync's loop (ErrAcquireTimeout) well before its
// 32 default tries, which take at least 31 x 50 ms.
func TestTriesAndDeadline(t *testing.T) {
	ctx := context.Background()
	for _, s := range names {
		for _, d := range drivers.Names() {
			t.Run(s+"/"+d, func(t *testing.T) {
				ds := open(t, d, s)
				key := "lockbench:redsynctest:{" + t.Name() + "}:lock"
				holder := newLocker(t, s, ds, 10*time.Second, nil)
				a, err := holder.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Release(ctx)
				three := newLocker(t, s, ds, 10*time.Second, registry.Values{"tries": 3, "retry-delay": 5 * time.Millisecond})
				if _, err := three.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("tries=3 on a held lock: %v, want ErrNotAcquired", err)
				}
				st := stats(three)
				for i := range ds {
					if r := st[fmt.Sprintf("node%d_refused", i)]; r != 3 {
						t.Fatalf("tries=3: node %d refused %v SET NX, want 3 (stats %v)", i, r, st)
					}
				}
				def := newLocker(t, s, ds, 10*time.Second, nil)
				_, _, err = strategies.Acquire(ctx, def, key, retry.Library().New(nil), 300*time.Millisecond)
				if !errors.Is(err, strategies.ErrAcquireTimeout) {
					t.Fatalf("under a 300ms acquire timeout: %v, want ErrAcquireTimeout", err)
				}
				if n := stats(def)["node0_refused"]; n < 1 || n >= 32 {
					t.Fatalf("under a 300ms acquire timeout redsync made %v tries, want from 1 to 31 (the deadline ends its loop)", n)
				}
			})
		}
	}
}

// extend=on: the lease is an Extender whose Extend restores the TTL on
// every node (reported to Renewing) while it holds, and fails with
// ErrExtendFailed once another client holds the lock; extend=off leases
// are not Extenders.
func TestExtend(t *testing.T) {
	ctx := context.Background()
	for _, s := range names {
		for _, d := range drivers.Names() {
			t.Run(s+"/"+d, func(t *testing.T) {
				ds := open(t, d, s)
				key := "lockbench:redsynctest:{" + t.Name() + "}:lock"
				off, err := newLocker(t, s, ds, time.Second, nil).TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := off.(strategies.Extender); ok {
					t.Fatal("extend=off: the lease is an Extender")
				}
				if err := off.Release(ctx); err != nil {
					t.Fatal(err)
				}
				rec := &renewals{}
				l, err := strategies.New(s, strategies.Config{Nodes: ds, TTL: 2 * time.Second, Tokens: rec, Params: registry.Values{"extend": "on"}})
				if err != nil {
					t.Fatal(err)
				}
				a, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if !strategies.Extends(l) {
					t.Fatal("extend=on: the locker does not declare ExtendsLeases")
				}
				// ValidUntil: redsync's validity, at most TTL after the
				// acquire's start, less its drift.
				v, ok := a.(strategies.Validity)
				if !ok {
					t.Fatal("extend=on: the lease is not a strategies.Validity")
				}
				if left := time.Until(v.ValidUntil()); left <= 0 || left >= 2*time.Second {
					t.Fatalf("ValidUntil is %v from now, want within the 2 s TTL", left)
				}
				for _, n := range ds {
					n.Do(ctx, "PEXPIRE", key, "500")
				}
				sent := time.Now()
				if err := a.(strategies.Extender).Extend(ctx); err != nil {
					t.Fatalf("extend of a held lease: %v", err)
				}
				if u := v.ValidUntil(); !u.After(sent) || u.After(sent.Add(2*time.Second)) {
					t.Fatalf("after the extend ValidUntil is %v after its send, want within (0, 2 s]", u.Sub(sent))
				}
				for i, n := range ds {
					if p, _ := n.Do(ctx, "PTTL", key); p.Int <= 500 {
						t.Fatalf("node %d: PTTL %d ms after the extend, want above 500 (back to the 2 s TTL)", i, p.Int)
					}
				}
				if rec.n != len(ds) {
					t.Fatalf("%d renewals reported, want one per node (%d)", rec.n, len(ds))
				}
				for _, n := range ds { // A's lease "expires"; B takes the lock
					n.Do(ctx, "DEL", key)
				}
				b, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.(strategies.Extender).Extend(ctx); !errors.Is(err, strategies.ErrExtendFailed) {
					t.Fatalf("extend of a lease another client holds: %v, want ErrExtendFailed", err)
				}
				if st := stats(l); st["extends"] != 1 || st["extend_failures"] != 1 {
					t.Fatalf("stats %v, want 1 extend and 1 failure", st)
				}
				if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
					t.Fatalf("A's release: %v, want ErrNotOwner", err)
				}
				if err := b.Release(ctx); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// renewals counts Renewing calls (a strategies.TokenTracker).
type renewals struct{ n int }

func (*renewals) Sent(context.Context, string, string) {}
func (r *renewals) Renewing(string, string)            { r.n++ }

// Config.ConstantToken is honoured, and shows its flaw: every lease stores
// the same value, so a lease whose key expired deletes the next holder's
// lock (redsync's compare-and-delete cannot tell them apart).
func TestConstantToken(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := open(t, d, "redsync")
			key := "lockbench:redsynctest:{" + t.Name() + "}:lock"
			l, err := strategies.New("redsync", strategies.Config{Nodes: ds, TTL: 5 * time.Second, ConstantToken: true})
			if err != nil {
				t.Fatal(err)
			}
			a, err := l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if a.Token() != strategies.ConstantValue {
				t.Fatalf("token %q, want the constant %q", a.Token(), strategies.ConstantValue)
			}
			ds[0].Do(ctx, "DEL", key) // A's lease "expires"
			if _, err := l.TryAcquire(ctx, key); err != nil {
				t.Fatal(err)
			}
			if err := a.Release(ctx); err != nil {
				t.Fatalf("A's release with a constant token: %v, want success (it deletes B's lock)", err)
			}
			if r, _ := ds[0].Do(ctx, "EXISTS", key); r.Int != 0 {
				t.Fatal("B's lock survived A's release; with a constant token it cannot")
			}
		})
	}
}
