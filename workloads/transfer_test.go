package workloads

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// grantAllMulti is grantAll with TryAcquireMulti: a multi-key lock that
// grants every acquire, whoever holds the keys.
type grantAllMulti struct{ grantAll }

type grantMultiLease struct {
	grantLease
	keys []string
}

func (l *grantMultiLease) Keys() []string { return l.keys }

func (g *grantAllMulti) TryAcquireMulti(_ context.Context, keys []string) (strategies.Lease, error) {
	return &grantMultiLease{grantLease: grantLease{key: keys[0], tok: "m"}, keys: keys}, nil
}

// Two transfers under a lock that grants everything, both reading before
// either writes (a barrier at the work): 0 pays 10 to 1 while 2 pays 10
// to 0. Whichever write of account 0 lands last, the other's change to it
// is lost: the balances' sum is off by exactly 10 (balance_drift 10: 2990
// or 3010 of 3000), account 0 lost 1 write (lost_updates 1), and the
// oracle, which registers every key of a multi-key section, counts 1
// overlap (lock 0, entered twice; locks 1 and 2 once each). The same
// with one acquire per key (grantAll: sorted and given order) and with a
// MultiLocker (one lease over both keys).
func TestScriptedTransferExactCounts(t *testing.T) {
	ctx := context.Background()
	d, err := drivers.Open("goredis", drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		name   string
		locker strategies.Locker
		order  string
	}{{"per-key-sorted", &grantAll{}, strategies.OrderSorted}, {"per-key-given", &grantAll{}, strategies.OrderGiven},
		{"multi-locker", &grantAllMulti{}, strategies.OrderSorted}} {
		t.Run(c.name, func(t *testing.T) {
			tr := &transfer{accounts: 3, balance: 1000, k: 2, order: c.order}
			env := &Env{Data: d, Locker: c.locker, Prefix: "lockbench:transfer:" + c.name + ":"}
			if err := tr.Setup(ctx, env); err != nil {
				t.Fatal(err)
			}
			b := newBarrier(2)
			env.Faults = b
			errs := make(chan error, 2)
			for id, acc := range [][]int{{0, 1}, {2, 0}} {
				w := &Worker{ID: id, Env: env, Rng: rand.New(rand.NewPCG(1, uint64(id))), Obs: metrics.NewRecorder()}
				keys := []string{tr.locks[acc[0]], tr.locks[acc[1]]}
				go func() {
					errs <- w.HoldMulti(ctx, acc, keys, c.order, func(ctx context.Context, l strategies.Lease) error {
						return tr.move(ctx, w, acc, 10, l)
					})
				}()
			}
			for range 2 {
				select {
				case <-b.arrived:
				case err := <-errs:
					t.Fatalf("a transfer ended before the barrier: %v", err)
				case <-time.After(time.Minute):
					t.Fatal("the transfers did not reach the barrier")
				}
			}
			close(b.release)
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			res, err := tr.Verify(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Figures
			t.Logf("figures %v, violations %v, overlaps %d", f, res.Violations, env.Oracle.Overlaps())
			if f["balance_drift"] != 10 || f["balance_initial"] != 3000 || f["transfers"] != 2 || f["multi_timeouts"] != 0 ||
				res.Violations[LostUpdates] != 1 || env.Oracle.Overlaps() != 1 {
				t.Fatalf("figures %v, violations %v, overlaps %d; want balance_drift 10, initial 3000, transfers 2, multi_timeouts 0, lost_updates 1, overlaps 1",
					f, res.Violations, env.Oracle.Overlaps())
			}
		})
	}
}
