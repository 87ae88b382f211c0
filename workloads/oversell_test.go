package workloads

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// grantAll is a test Locker that grants every acquire at once, whoever
// holds the lock: no mutual exclusion at all, so that a scripted sale's
// oversell and lost updates are known in advance. Safe for concurrent use.
type grantAll struct{ n atomic.Int64 }

type grantLease struct{ key, tok string }

func (g *grantAll) TryAcquire(_ context.Context, key string) (strategies.Lease, error) {
	return &grantLease{key: key, tok: strconv.FormatInt(g.n.Add(1), 10)}, nil
}
func (l *grantLease) Key() string                   { return l.key }
func (l *grantLease) Token() string                 { return l.tok }
func (l *grantLease) Release(context.Context) error { return nil }

// barrier is a FaultHooks whose pause point (Worker.Work, after the order
// read the stock, before its write) holds every order of a round until
// the test releases them all: each order of the round reads the stock
// before any of them writes, whatever the machine's speed.
type barrier struct {
	arrived chan struct{}
	release chan struct{}
}

func newBarrier(n int) *barrier {
	return &barrier{arrived: make(chan struct{}, n), release: make(chan struct{})}
}

func (b *barrier) Paused(int, *strategies.Gate) {
	b.arrived <- struct{}{}
	<-b.release
}
func (*barrier) PausedBeforeWrite(int, *strategies.Gate) {}
func (*barrier) Crash(int, string) bool                  { return false }
func (*barrier) Acquired()                               {}
func (*barrier) Cancels(int) (float64, bool)             { return 0, false }
func (*barrier) Kills(int) (float64, bool)               { return 0, false }
func (*barrier) Die()                                    {}

// saleRound is one step of a scripted sale: n orders on slot (segment)
// slot, each by a new client, run together behind a barrier (every one
// reads the stock before any writes); with soldOut, one order alone that
// must find the stock gone (Op's ErrDone or ErrSkip) and write nothing.
type saleRound struct {
	slot, n int
	soldOut bool
}

// workerFor returns the first client ID from *next whose first order
// (Op's order id 1) starts at segment slot of segs (pick: the order id's
// hash), and moves *next past it.
func workerFor(next *int, slot, segs int) int {
	for {
		id := *next
		*next++
		if segs == 1 || int(mix(uint64(id)<<32|1)%uint64(segs)) == slot {
			return id
		}
	}
}

// A scripted flash sale under a lock that always grants, on a real
// redis-server: rounds of orders that all read the stock before any of
// them writes, run strictly one round after another, so that sold, the
// final stock, the oversell, the lost updates, the rejected writes and the
// oracle's overlaps are each known exactly in advance (worked out by hand
// in each case). Any off-by-one in Verify's sums (flashsale.go's tally)
// changes one of them.
func TestScriptedSaleExactCounts(t *testing.T) {
	cases := []struct {
		name   string
		stock  int64
		segs   int
		guard  string
		rounds []saleRound
		// want: sold, final_stock, oversell, lost_updates, rejected
		// writes, oracle overlaps.
		sold, final, oversell, lost, rejected, overlaps int64
	}{
		// One order at a time: the lock's absence does no harm; the stock
		// sells out exactly (sold = stock: oversell 0, not 1).
		{name: "sequential", stock: 3, segs: 1, guard: GuardNone,
			rounds: []saleRound{{n: 1}, {n: 1}, {n: 1}, {n: 1, soldOut: true}},
			sold:   3, final: 0, oversell: 0, lost: 0, rejected: 0, overlaps: 0},
		// 4 orders read 3 and write 2, then 2 orders read 2 and write 1:
		// 6 sold of 3 (oversell 3), 6 - (3 - 1) = 4 decrements overwritten
		// (3 + 1), 3 + 1 entries into an occupied section.
		{name: "all-read-then-write", stock: 3, segs: 1, guard: GuardNone,
			rounds: []saleRound{{n: 4}, {n: 2}},
			sold:   6, final: 1, oversell: 3, lost: 4, rejected: 0, overlaps: 4},
		// Two segments of 3: segment 0 as above (6 sold, stock 1), segment
		// 1 one order alone (1 sold, stock 2). Oversell is per segment,
		// 3 + 0, not 7 - 6 = 1 over the whole stock; lost 4 + 0.
		{name: "two-segments", stock: 6, segs: 2, guard: GuardNone,
			rounds: []saleRound{{slot: 0, n: 4}, {slot: 0, n: 2}, {slot: 1, n: 1}},
			sold:   7, final: 3, oversell: 3, lost: 4, rejected: 0, overlaps: 4},
		// The decr guard on the same race: 4 orders read 3, three
		// conditional decrements land, the fourth is refused; then the
		// stock is gone. No oversell, no lost update.
		{name: "decr-guard", stock: 3, segs: 1, guard: GuardDecr,
			rounds: []saleRound{{n: 4}, {n: 1, soldOut: true}},
			sold:   3, final: 0, oversell: 0, lost: 0, rejected: 1, overlaps: 3},
	}
	ctx := context.Background()
	for _, drv := range drivers.Names() {
		d, err := drivers.Open(drv, drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		for _, c := range cases {
			t.Run(drv+"/"+c.name, func(t *testing.T) {
				f := &flashSale{stock: c.stock, skus: 1}
				env := &Env{Data: d, Locker: &grantAll{}, Prefix: "lockbench:oversell:" + drv + ":" + c.name + ":",
					Params: Params{Guard: c.guard, Segments: c.segs}}
				if err := f.Setup(ctx, env); err != nil {
					t.Fatal(err)
				}
				var rejected int64
				next := 0
				for ri, r := range c.rounds {
					renv := *env // shares the oracle and the locker
					var b *barrier
					if !r.soldOut {
						b = newBarrier(r.n)
						renv.Faults = b
					}
					errs := make(chan error, r.n)
					for range r.n {
						id := workerFor(&next, r.slot, c.segs)
						w := &Worker{ID: id, Env: &renv, Rng: rand.New(rand.NewPCG(1, uint64(id))), Obs: metrics.NewRecorder()}
						go func() { errs <- f.Op(ctx, w) }()
					}
					if b != nil {
						// Every order has read the stock; only then may they write.
						for range r.n {
							select {
							case <-b.arrived:
							case err := <-errs:
								t.Fatalf("round %d: an order ended before the barrier: %v", ri+1, err)
							case <-time.After(time.Minute):
								t.Fatalf("round %d: the orders did not reach the barrier", ri+1)
							}
						}
						close(b.release)
					}
					for range r.n {
						err := <-errs
						switch {
						case r.soldOut:
							if !errors.Is(err, ErrDone) && !errors.Is(err, ErrSkip) {
								t.Fatalf("round %d: an order on no stock: %v, want ErrDone or ErrSkip", ri+1, err)
							}
						case errors.Is(err, ErrRejected):
							rejected++
						case err != nil:
							t.Fatalf("round %d: %v", ri+1, err)
						}
					}
				}
				res, err := f.Verify(ctx, env)
				if err != nil {
					t.Fatal(err)
				}
				got := []int64{res.Figures["sold"], res.Figures["final_stock"], res.Violations["oversell"],
					res.Violations["lost_updates"], rejected, env.Oracle.Overlaps()}
				want := []int64{c.sold, c.final, c.oversell, c.lost, c.rejected, c.overlaps}
				names := []string{"sold", "final_stock", "oversell", "lost_updates", "rejected writes", "overlaps"}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("%s = %d, want %d", names[i], got[i], want[i])
					}
				}
				// Every acknowledged order was recorded; nothing else moved.
				if res.Figures["acked_orders"] != c.sold || res.Figures["unrecorded_orders"] != 0 ||
					res.Figures["missing_keys"] != 0 || res.Violations["lost_acked_writes"] != 0 {
					t.Errorf("figures %v violations %v: want acked = sold = %d and nothing unrecorded, missing or lost acked",
						res.Figures, res.Violations, c.sold)
				}
			})
		}
	}
}
