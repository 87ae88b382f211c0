package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

var srv *topology.Server

func TestMain(m *testing.M) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload tests need redis-server:", err)
		os.Exit(1)
	}
	srv = topo.Servers[0]
	code := m.Run()
	topo.Stop()
	os.Exit(code)
}

// A holder that resumes after its lease passed to another client: with
// the fence guard its write is rejected and nothing is lost; with no guard
// the same interleaving loses an update.
func TestStaleHolderFenced(t *testing.T) {
	for _, drv := range drivers.Names() {
		for _, guard := range []string{GuardFence, GuardNone} {
			t.Run(drv+"/"+guard, func(t *testing.T) {
				ctx := context.Background()
				d, err := drivers.Open(drv, drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				l, err := strategies.New("fencing", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 50 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				prefix := "lockbench:wltest:" + t.Name() + ":"
				f := &flashSale{stock: 10, skus: 1}
				slow := &Env{Data: d, Locker: l, Prefix: prefix, Params: Params{Guard: guard}}
				if err := f.Setup(ctx, slow); err != nil {
					t.Fatal(err)
				}
				hold := newHoldAt()
				fast := *slow
				slow.Faults = hold
				a := &Worker{ID: 0, Env: slow, Rng: rand.New(rand.NewPCG(1, 1)), Obs: metrics.NewRecorder()}
				b := &Worker{ID: 1, Env: &fast, Rng: rand.New(rand.NewPCG(1, 2)), Obs: metrics.NewRecorder()}
				s := &f.slots[0]

				la, err := l.TryAcquire(ctx, s.lock)
				if err != nil {
					t.Fatal(err)
				}
				errA := make(chan error, 1)
				go func() { errA <- f.critical(ctx, a, s, la) }() // reads, then waits in its work
				<-hold.reached
				lb := takeOver(t, l, s.lock) // A's 50 ms lease is over
				if lb.(strategies.Fenced).Fence() <= la.(strategies.Fenced).Fence() {
					t.Fatal("fencing token did not grow")
				}
				if err := f.critical(ctx, b, s, lb); err != nil {
					t.Fatalf("B's order: %v", err)
				}
				close(hold.resume) // A writes now, on the stock it read before B's order
				ea := <-errA
				res, err := f.Verify(ctx, slow)
				if err != nil {
					t.Fatal(err)
				}
				if guard == GuardFence {
					if !errors.Is(ea, ErrRejected) || rec(a).Rejected != 1 {
						t.Fatalf("stale write: err %v, rejected %d; want ErrRejected, 1", ea, rec(a).Rejected)
					}
					if res.Figures["sold"] != 1 || res.Violations["lost_updates"] != 0 || res.Violations["oversell"] != 0 {
						t.Fatalf("result %+v, want 1 sold and no violation", res)
					}
				} else {
					if ea != nil {
						t.Fatalf("unguarded write failed: %v", ea)
					}
					if res.Figures["sold"] != 2 || res.Violations["lost_updates"] != 1 {
						t.Fatalf("result %+v, want 2 sold, 1 lost update", res)
					}
				}
			})
		}
	}
}

// The cas and decr guards turn a lost update into a rejected write.
func TestGuardsRejectConflicts(t *testing.T) {
	ctx := context.Background()
	d, err := drivers.Open("rueidis", drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, guard := range []string{GuardCAS, GuardDecr} {
		t.Run(guard, func(t *testing.T) {
			l, _ := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second})
			f := &flashSale{stock: 1, skus: 1}
			env := &Env{Data: d, Locker: l, Prefix: "lockbench:wltest:" + guard + ":", Params: Params{Guard: guard}}
			if err := f.Setup(ctx, env); err != nil {
				t.Fatal(err)
			}
			s := &f.slots[0]
			// Both read stock 1 (as two holders of an expired lease would);
			// the first write wins, the second is refused.
			slow := *env
			slow.Params.Work = Fixed(200 * time.Millisecond)
			a := &Worker{ID: 0, Env: &slow, Rng: rand.New(rand.NewPCG(1, 1)), Obs: metrics.NewRecorder()}
			b := &Worker{ID: 1, Env: env, Rng: rand.New(rand.NewPCG(1, 2)), Obs: metrics.NewRecorder()}
			errA := make(chan error, 1)
			go func() { errA <- f.critical(ctx, a, s, nil) }()
			time.Sleep(50 * time.Millisecond)
			if err := f.critical(ctx, b, s, nil); err != nil {
				t.Fatal(err)
			}
			if err := <-errA; !errors.Is(err, ErrRejected) {
				t.Fatalf("second write: %v, want ErrRejected", err)
			}
			res, _ := f.Verify(ctx, env)
			if res.Figures["sold"] != 1 || res.Violations["oversell"] != 0 || res.Violations["lost_updates"] != 0 {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// A watchdog holder whose token vanished learns it from the lease's
// context and does not write.
func TestLostLeaseDoesNotWrite(t *testing.T) {
	ctx := context.Background()
	for _, drv := range drivers.Names() {
		t.Run(drv, func(t *testing.T) {
			d, err := drivers.Open(drv, drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			l, _ := strategies.New("watchdog", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 60 * time.Millisecond})
			f := &flashSale{stock: 5, skus: 1}
			env := &Env{Data: d, Locker: l, Prefix: "lockbench:wltest:lost:" + drv + ":", Params: Params{Work: Fixed(300 * time.Millisecond)}}
			if err := f.Setup(ctx, env); err != nil {
				t.Fatal(err)
			}
			s := &f.slots[0]
			le, err := l.TryAcquire(ctx, s.lock)
			if err != nil {
				t.Fatal(err)
			}
			w := &Worker{ID: 0, Env: env, Rng: rand.New(rand.NewPCG(1, 1)), Obs: metrics.NewRecorder()}
			go func() { time.Sleep(50 * time.Millisecond); d.Do(ctx, "DEL", s.lock) }()
			if err := f.critical(ctx, w, s, le); !errors.Is(err, ErrRejected) {
				t.Fatalf("write after a known loss: %v, want ErrRejected", err)
			}
			le.Release(ctx)
			res, _ := f.Verify(ctx, env)
			if res.Figures["sold"] != 0 || res.Figures["final_stock"] != 5 {
				t.Fatalf("result %+v: the lost holder wrote", res)
			}
			if st := l.(strategies.StatsReporter).Stats(); st["lost_leases"] != 1 {
				t.Fatalf("lost_leases %v, want 1", st["lost_leases"])
			}
		})
	}
}
