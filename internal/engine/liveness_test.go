package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/workloads"
)

// parseFaults parses fault specs, failing the test on a bad one.
func parseFaults(t *testing.T, fs ...string) []faults.Spec {
	t.Helper()
	var specs []faults.Spec
	for _, f := range fs {
		sp, err := faults.Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	return specs
}

// liveRun runs atomic on one hot lock with the faults given and returns
// the result's liveness figures.
func liveRun(t *testing.T, drv string, release string, fs ...string) report.Scenario {
	t.Helper()
	specs := parseFaults(t, fs...)
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: drv, Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 4,
		Duration: 2500 * time.Millisecond, TTL: time.Second, AcquireTimeout: 5 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(2 * time.Millisecond), Release: release},
		Options: registry.Values{"keys": 1}, Seed: 1, Faults: specs,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if res.Liveness == nil || !res.Liveness.Measured {
		t.Fatalf("liveness %+v, want measured", res.Liveness)
	}
	if res.Liveness.Samples < 10 {
		t.Fatalf("%d liveness reads in 2.5 s, want many", res.Liveness.Samples)
	}
	return res
}

// A client that dies right after acquiring leaves its lock orphaned for
// about its TTL: one orphan, and the time to free of that exit is the
// lease's remainder; without the fault there is none.
func TestLivenessCrashOrphan(t *testing.T) {
	for _, drv := range driverNames {
		t.Run(drv, func(t *testing.T) {
			l := liveRun(t, drv, "", "crash-after-setnx:at=500ms").Liveness
			if l.OrphanLocks != 1 {
				t.Fatalf("orphan_locks %d, want 1 (the crashed client's lock): %+v", l.OrphanLocks, l)
			}
			// The lease had all but a few ms of its 1 s left when the client
			// died; the oracle reads every 5 ms (plus a read's time).
			if l.TimeToFreeMS.Max < 900 || l.TimeToFreeMS.Max > 1500 {
				t.Fatalf("time_to_free max %.1f ms, want about the 1 s TTL", l.TimeToFreeMS.Max)
			}
			if l.OrphanLockMS < 900 || l.OrphanLockMS > 1100 {
				t.Fatalf("orphan_lock_ms %.1f, want about the 1 s TTL", l.OrphanLockMS)
			}
			if l.OrphansAtEnd != 0 || l.HeldPastTTL != 0 || l.OrphanRenewals != 0 {
				t.Fatalf("%+v: want no orphan at the end, none held past 3 x TTL, no renewals", l)
			}
			clean := liveRun(t, drv, "").Liveness
			if clean.OrphanLocks != 0 || clean.OrphanLockMS != 0 || clean.HeldPastTTL != 0 {
				t.Fatalf("without a fault: %+v, want no orphan", clean)
			}
			if clean.TimeToFreeMS.Count == 0 || clean.TimeToFreeMS.Max > 900 {
				t.Fatalf("without a fault: time_to_free %+v, want every exit freed by its release", clean.TimeToFreeMS)
			}
		})
	}
}

// The cancel fault with the caller's context for the release (the common
// bug) leaves orphans; the detached release leaves none. Beside the
// package's other parallel tests: keys of its own (the test's name), a
// client-side fault, counts rather than times.
func TestLivenessCancel(t *testing.T) {
	t.Parallel()
	bad := liveRun(t, "rueidis", workloads.ReleaseCaller, "cancel:p=0.05,at=200ms,for=1s")
	if bad.Liveness.OrphanLocks == 0 {
		t.Fatalf("release=caller under cancel: %+v, want orphans", bad.Liveness)
	}
	if bad.Params["release"] != "caller" {
		t.Fatalf("params %v, want release=caller recorded", bad.Params)
	}
	good := liveRun(t, "rueidis", workloads.ReleaseDetached, "cancel:p=0.05,at=200ms,for=1s")
	if good.Liveness.OrphanLocks != 0 {
		t.Fatalf("release=detached under cancel: %+v, want no orphan", good.Liveness)
	}
	if !cancelledSome(good) {
		t.Fatalf("the cancel fault cancelled nothing: %+v", good.Faults)
	}
}

func cancelledSome(s report.Scenario) bool {
	for _, f := range s.Faults {
		if f.StartMS >= 0 && f.Note != "" && f.Note[0] != '0' {
			return true
		}
	}
	return false
}

// With the failure-streak guard off, a scenario whose server is gone runs
// its whole duration (an outage experiment) instead of stopping.
func TestErrorStreakOff(t *testing.T) {
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	go func() { time.Sleep(300 * time.Millisecond); s.Stop() }()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=1ms"), Clients: 2, Duration: 7 * time.Second, TTL: time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Seed: 4, ErrorStreak: -1,
	}}
	res, err := engine.Run(context.Background(), sc, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:test:streakoff:")
	if errors.Is(err, engine.ErrAborted) || res.StopReason != "duration" {
		t.Fatalf("stop %q, err %v; want the whole duration run, no abort", res.StopReason, err)
	}
	if res.Ops == 0 || res.Counters.Errors == 0 {
		t.Fatalf("ops %d errors %d: want ops before the server went and errors after", res.Ops, res.Counters.Errors)
	}
}

// clientRun runs atomic (with its on-timeout setting) on one hot lock
// under the faults given, with the driver settings c.
func clientRun(t *testing.T, drv, onTimeout string, c engine.Client, acquireTimeout time.Duration, fs ...string) report.Scenario {
	return clientRunOn(t, drv, onTimeout, false, c, acquireTimeout, fs...)
}

// clientRunOn is clientRun, with each client on a lock of its own when own
// is set (every acquire then succeeds: a lost SET reply is always an
// applied SET).
func clientRunOn(t *testing.T, drv, onTimeout string, own bool, c engine.Client, acquireTimeout time.Duration, fs ...string) report.Scenario {
	t.Helper()
	specs := parseFaults(t, fs...)
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: drv, Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 4,
		Duration: 2500 * time.Millisecond, TTL: 2 * time.Second, AcquireTimeout: acquireTimeout,
		Params:  workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)},
		Options: registry.Values{"keys": 4, "own-keys": own, "on-timeout": onTimeout}, Seed: 1, Faults: specs, Client: c,
		ErrorStreak: -1,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if res.Liveness == nil || !res.Liveness.Measured {
		t.Fatalf("liveness %+v, want measured", res.Liveness)
	}
	return res
}

// A SET the server applied whose reply came after the client's read
// timeout leaves an orphan (the client never learned it held the lock)
// unless the strategy releases the attempt's token after a timed-out
// acquire (on-timeout=release). Beside the package's other parallel
// tests, the drivers at once: keys of their own (the test's name), the
// fault in each run's own proxy, counts rather than times (13 s serial,
// 2026-12-04).
func TestReplyLossOrphans(t *testing.T) {
	t.Parallel()
	for _, drv := range driverNames {
		t.Run(drv, func(t *testing.T) {
			t.Parallel()
			c := engine.Client{ReadTimeout: 100 * time.Millisecond}
			// Each client on a lock of its own: every SET NX succeeds, so
			// each reply lost is a lock the server gave.
			fault := "reply-loss:node=0,p=0.2,delay=500ms,at=300ms,for=1s"
			keep := clientRunOn(t, drv, "keep", true, c, 5*time.Second, fault)
			if keep.Liveness.OrphanAcquires == 0 || keep.Counters.ErrorsByKind["timeout"] == 0 {
				t.Fatalf("keep: orphan acquires %d, timeouts %d (%v); want orphans from applied SETs whose reply was lost",
					keep.Liveness.OrphanAcquires, keep.Counters.ErrorsByKind["timeout"], keep.Counters.ErrorsByKind)
			}
			// A release whose own connection or reply the fault cost can
			// still leave its lock (orphan_locks counts those too); what
			// on-timeout=release undoes is the acquires'.
			rel := clientRunOn(t, drv, "release", true, c, 5*time.Second, fault)
			if rel.Liveness.OrphanAcquires != 0 || rel.Counters.ErrorsByKind["timeout"] == 0 {
				t.Fatalf("release: orphan acquires %d, timeouts %d; want timeouts and no orphan from an acquire", rel.Liveness.OrphanAcquires, rel.Counters.ErrorsByKind["timeout"])
			}
		})
	}
}

// Through a 2 s blackhole, acquires bounded by a 500 ms acquire timeout
// and a 500 ms read timeout return within about their deadline: no
// acquire takes twice its deadline.
func TestBlackholeDeadlines(t *testing.T) {
	for _, drv := range driverNames {
		t.Run(drv, func(t *testing.T) {
			c := engine.Client{ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond}
			res := clientRun(t, drv, "keep", c, 500*time.Millisecond, "blackhole:node=0,at=300ms,for=2s")
			if res.Liveness.DeadlineOvershoots != 0 {
				t.Fatalf("deadline_overshoots %d, want 0 (acquire_failed_ms %+v)", res.Liveness.DeadlineOvershoots, res.AcquireFailedMS)
			}
			if res.AcquireFailedMS == nil || res.AcquireFailedMS.Count == 0 || res.AcquireFailedMS.Max > 1000 {
				t.Fatalf("acquire_failed_ms %+v; want failed acquires, none longer than 2 x 500 ms", res.AcquireFailedMS)
			}
			// The default 5 s read timeout lets a call hang through the
			// blackhole: the acquire timeout alone does not end it. The
			// call is an acquire (an overshoot) or, when every client was
			// in its release as the blackhole began (a cycle is mostly
			// release and work), a release: an operation past 2 x 500 ms.
			slow := clientRun(t, drv, "keep", engine.Client{}, 500*time.Millisecond, "blackhole:node=0,at=300ms,for=2s")
			if slow.Liveness.DeadlineOvershoots == 0 && slow.LatencyMS.Max <= 1000 {
				t.Fatalf("default read timeout: no overshoot (acquire_failed_ms %+v) and longest operation %.0f ms, want a call hung past 2 x 500 ms", slow.AcquireFailedMS, slow.LatencyMS.Max)
			}
		})
	}
}
