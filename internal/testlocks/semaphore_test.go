package testlocks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology/topotest"
	"github.com/lockbench/lockbench/strategies"
)

// The check-then-add race, step by step on a real redis-server, with the
// safety oracle told of each grant as lockbench's worker tells it: a
// semaphore of 2 permits, one held; client B counts 1 live permit and,
// before it adds its own, client C counts 1 too and adds; then B adds: 3
// holders of 2 permits, exactly 1 capacity violation, max_holders 3.
// `semaphore`, whose count and add are one script, refuses C's third
// permit in the same steps: 0 violations, max_holders 2.
func TestCheckThenAddRace(t *testing.T) {
	d, _ := topotest.Server(t)
	ctx := strategies.WithClient(context.Background(), strategies.Client{ID: 0, Owner: "o"})
	for _, tc := range []struct {
		strategy string
		want     int64
		most     int64
	}{{SemCheckThenAdd, 1, 3}, {"semaphore", 0, 2}} {
		t.Run(tc.strategy, func(t *testing.T) {
			l, err := strategies.New(tc.strategy, strategies.Config{Nodes: []drivers.Driver{d}, TTL: 10 * time.Second, Params: registry.Values{"permits": 2}})
			if err != nil {
				t.Fatal(err)
			}
			key := "race:{" + tc.strategy + "}"
			o := metrics.NewOracle(1)
			o.SetPermits(strategies.PermitsOf(l))
			grant := func(who string) {
				t.Helper()
				if _, err := l.TryAcquire(ctx, key); err == nil {
					o.Enter(0)
				} else if !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("%s: %v", who, err)
				}
			}
			grant("A")
			if ts, ok := l.(*testSem); ok {
				ts.between = func() { grant("C") } // C runs between B's count and add
				grant("B")
			} else {
				grant("B") // one script: nothing runs between its count and add
				grant("C")
			}
			n, err := d.Do(ctx, "ZCARD", key)
			if err != nil {
				t.Fatal(err)
			}
			if o.Capacity() != tc.want || o.MaxHolders() != tc.most || n.Int != tc.most {
				t.Fatalf("capacity violations %d, max holders %d, permits stored %d; want %d, %d, %d", o.Capacity(), o.MaxHolders(), n.Int, tc.want, tc.most, tc.most)
			}
		})
	}
}
