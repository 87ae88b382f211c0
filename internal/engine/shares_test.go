package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/testlocks"
	"github.com/lockbench/lockbench/workloads"
)

// sharesRun runs strategy's read side on one hot lock (flash-sale, every
// operation a read) for 5 s with a 1 s TTL, crashing crashes readers
// while they hold (crash-after-setnx: the next client to acquire dies
// right after, never releasing), one every 100 ms from 300 ms on.
func sharesRun(t *testing.T, strategy string, crashes int) report.Scenario {
	t.Helper()
	var fs []string
	for i := range crashes {
		fs = append(fs, "crash-after-setnx:at="+(time.Duration(300+100*i)*time.Millisecond).String())
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "goredis", Workload: "flash-sale",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 6,
		Duration: 5 * time.Second, TTL: time.Second, AcquireTimeout: 30 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)},
		Options: registry.Values{"skus": 1, "read-ratio": 1.0}, Seed: 1, Faults: parseFaults(t, fs...),
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":"+strategy+":")
	if err != nil {
		t.Fatal(err)
	}
	if res.Liveness == nil || !res.Liveness.Measured {
		t.Fatalf("liveness %+v, want measured", res.Liveness)
	}
	return res
}

// Readers crashed while holding: a lock whose every arrival extends the
// whole hash keeps their shares alive beside the live readers' for the
// rest of the run, exactly one orphan share per crashed reader, each
// older than 2 x the TTL; rwlock, whose shares expire one by one, shows
// none (each dead share is dropped at the first call past its lease).
//
// The test runs beside the package's other parallel tests, and its two
// strategies at once (keys of their own: the test's name; 10.8 s one
// after the other, 2026-12-04).
func TestOrphanShares(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strategy string
		want     int64
	}{{testlocks.WholeKeyReaders, 2}, {"rwlock", 0}} {
		t.Run(tc.strategy, func(t *testing.T) {
			t.Parallel()
			res := sharesRun(t, tc.strategy, 2)
			l := res.Liveness
			t.Logf("%s: orphan_shares %d, ages %+v, orphan_locks %d", tc.strategy, l.OrphanShares, l.OrphanShareAgeMS, l.OrphanLocks)
			if l.OrphanShares != tc.want || l.OrphanShareAgeMS.Count != tc.want {
				t.Fatalf("orphan_shares %d (ages %+v), want %d: %+v", l.OrphanShares, l.OrphanShareAgeMS, tc.want, l)
			}
			if l.OrphanLocks != 2 || res.Counters.Reads == 0 {
				t.Fatalf("orphan_locks %d, reads %d: want the 2 crashed readers' shares seen, reads made", l.OrphanLocks, res.Counters.Reads)
			}
			if tc.want > 0 && l.OrphanShareAgeMS.Max < 2100 {
				t.Fatalf("oldest orphan share %.0f ms, want past 2 x the 1 s TTL", l.OrphanShareAgeMS.Max)
			}
		})
	}
}
