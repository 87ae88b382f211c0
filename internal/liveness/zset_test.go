package liveness_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/topology/topotest"
	"github.com/lockbench/lockbench/strategies"
)

// A semaphore's permits are a sorted set's members: the sampler reads
// them (ZRANGE, counted in its cost as zrange, not hkeys) beside a
// string lock key. Of two permits, the dead one (its holder crashed) is
// exactly 1 orphan, the live one none; the string key's live token none.
func TestSamplerReadsSortedSet(t *testing.T) {
	t.Parallel()
	d, _ := topotest.Server(t)
	ctx := context.Background()
	tr := liveness.NewTracker(3, time.Second)
	cl := func(id int) context.Context { return strategies.WithClient(ctx, strategies.Client{ID: id}) }
	for id, tok := range []string{"dead", "live"} {
		tr.Sent(cl(id), "z:sem", tok)
		if _, err := d.Do(ctx, "ZADD", "z:sem", "1", tok); err != nil {
			t.Fatal(err)
		}
		tr.Acquired(id, "z:sem", tok)
	}
	tr.Exit(0, "z:sem", "dead", liveness.Abandoned, metrics.Now())
	tr.Sent(cl(2), "z:str", "s")
	if _, err := d.SetNX(ctx, "z:str", "s", time.Minute); err != nil {
		t.Fatal(err)
	}
	tr.Acquired(2, "z:str", "s")
	time.Sleep(time.Millisecond)
	smp := &liveness.Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"z:sem", "z:str"}, Interval: 5 * time.Millisecond}
	smp.Start(ctx)
	time.Sleep(100 * time.Millisecond)
	smp.Stop()
	l := smp.Result()
	if l.OrphanLocks != 1 || l.OrphanShares != 0 || !l.Measured {
		t.Fatalf("%+v; want 1 orphan (the dead permit), no orphan share yet", l)
	}
	c := smp.Cost()
	if c["zrange"] < 1 || c["hkeys"] != 0 {
		t.Fatalf("cost %v: want zrange counted, no hkeys", c)
	}
}
