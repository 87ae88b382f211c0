package faults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

func TestParse(t *testing.T) {
	t.Parallel()
	sp, err := faults.Parse("node-restart:node=2,down=50ms,after=100")
	if err != nil || sp.Values.Int("node") != 2 || sp.Values.Duration("down") != 50*time.Millisecond || sp.After != 100 {
		t.Fatalf("%+v %v", sp, err)
	}
	if sp, _ := faults.Parse("pause"); sp.At != time.Second {
		t.Fatalf("default trigger %v, want 1s", sp.At)
	}
	for spec, want := range map[string]string{
		"pauze":               "unknown fault",
		"pause:for=soon":      "not a duration",
		"pause:node=1":        `unknown parameter "node"`,
		"pause:point=later":   `"later" is not one of work, write`,
		"node-kill:node=-1":   "not a server index",
		"failover:after=-1":   "after=-1: must be at least 0",
		"crash-after-setnx:x": "not key=value",
	} {
		if _, err := faults.Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", spec, err, want)
		}
	}
}

// scenario runs one fault scenario on a fresh layout of the given kind.
func scenario(t *testing.T, strategy, driver, workload string, kind string, ttl time.Duration, work string, fault string, clients int, dur time.Duration) report.Scenario {
	t.Helper()
	return guardedScenario(t, "auto", strategy, driver, workload, kind, ttl, work, fault, clients, dur)
}

// guardedScenario is scenario with the write guard given (--guard).
func guardedScenario(t *testing.T, guard, strategy, driver, workload string, kind string, ttl time.Duration, work string, fault string, clients int, dur time.Duration) report.Scenario {
	t.Helper()
	ctx := context.Background()
	var topo *topology.Topology
	var err error
	switch kind {
	case "replica":
		topo, err = topology.StartReplicated(ctx)
	case "masters":
		topo, err = topology.Start(ctx, 5)
	default:
		topo, err = topology.Start(ctx, 1)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	var nodes []engine.Node
	for _, s := range topo.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	if kind == "replica" {
		nodes = nodes[:1]
	}
	sp, err := faults.Parse(fault)
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := retry.Parse("fixed:interval=5ms")
	if strategies.InfoOf(strategy).OwnsRetry { // a lock library's own loop
		pol = retry.Library()
	}
	w, err := workloads.ParseDist(work)
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: driver, Workload: workload, Retry: pol, Clients: clients,
		Duration: dur, TTL: ttl, AcquireTimeout: time.Second, Seed: 1, Guard: guard,
		Params: workloads.Params{Work: w}, Options: registry.Values{"stock": int64(1_000_000), "skus": 1, "keys": 1},
		Faults: []faults.Spec{sp},
	}, Env: engine.Env{Servers: topo.Servers}}
	res, err := engine.Run(ctx, sc, nodes, "lockbench:faulttest:"+strings.ReplaceAll(t.Name(), "/", ":")+":")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 || res.Faults[0].StartMS < res.Faults[0].ArmedMS || res.Faults[0].EndMS < res.Faults[0].StartMS {
		t.Fatalf("fault window %+v", res.Faults)
	}
	return res
}

// each runs f on every driver, the drivers at once (t.Parallel): a
// subtest that calls each starts servers of its own (scenario, topology.Start)
// and shares none with the other driver's.
// inTurn is each without t.Parallel: one driver after the other, for
// the timing lane.
func inTurn(t *testing.T, f func(t *testing.T, driver string)) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) { f(t, d) })
	}
}

func each(t *testing.T, f func(t *testing.T, driver string)) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f(t, d)
		})
	}
}

// naive dies between SETNX and EXPIRE: the lock has no TTL and nobody
// sells again; atomic dies holding a lock with a TTL and the others carry
// on after it expires.
func TestCrashAfterSetnx(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		n := scenario(t, "naive", d, "flash-sale", "", 200*time.Millisecond, "1ms", "crash-after-setnx:at=200ms", 8, 1500*time.Millisecond)
		if n.Violations.StuckLocks != 1 || n.Faults[0].StuckAfter != 1 || n.Faults[0].OpsAfter != 0 || !strings.Contains(n.Faults[0].Note, "after-setnx") {
			t.Fatalf("naive: stuck %d, ops after the crash %d (%s); want 1 and 0", n.Violations.StuckLocks, n.Faults[0].OpsAfter, n.Faults[0].Note)
		}
		a := scenario(t, "atomic", d, "flash-sale", "", 200*time.Millisecond, "1ms", "crash-after-setnx:at=200ms", 8, 1500*time.Millisecond)
		if a.Violations.StuckLocks != 0 || a.Faults[0].OpsAfter == 0 || !strings.Contains(a.Faults[0].Note, "after-acquire") {
			t.Fatalf("atomic: stuck %d, ops after %d; want 0 and > 0 (recovered after one TTL)", a.Violations.StuckLocks, a.Faults[0].OpsAfter)
		}
	})
}

// A pause longer than the TTL: the watchdog's renewals stop with the
// holder, another client enters (overlap); fencing rejects the paused
// holder's stale write and nothing is oversold. The lease is 1 s (the
// pause 1.3 s, so others hold the lock for at least 0.3 s of it): a
// holder that is not paused keeps its lease through any delay a loaded
// machine makes in 5 ms of work or a renewal every 333 ms, so the counts
// of exactly one are the paused holder's alone.
func TestPauseBeatsWatchdogNotFencing(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		w := scenario(t, "watchdog", d, "flash-sale", "", time.Second, "5ms", "pause:for=1300ms,at=200ms", 6, 1800*time.Millisecond)
		if w.Violations.Overlap == 0 || w.StrategyStats["lost_leases"] != 1 {
			t.Fatalf("watchdog: overlap %d, lost %v; want > 0 and 1", w.Violations.Overlap, w.StrategyStats["lost_leases"])
		}
		f := scenario(t, "fencing", d, "flash-sale", "", time.Second, "5ms", "pause:for=1300ms,at=200ms", 6, 1800*time.Millisecond)
		if f.Counters.Rejected == 0 || f.Violations.Oversell != 0 || f.Violations.LostUpdates != 0 {
			t.Fatalf("fencing: rejected %d oversell %d lost %d; want > 0, 0, 0", f.Counters.Rejected, f.Violations.Oversell, f.Violations.LostUpdates)
		}
	})
}

// A pause between the holder's loss check and its write (point=write): the
// watchdog's holder writes on a lock it lost, so its stale stock value
// overwrites every decrement made while it slept (TestPauseBeforeWriteWatchdogTimed); the
// fencing token rejects that write and the data stays right. Leases of
// 1 s and a 1.3 s pause, as above.
func TestPauseBeforeWrite(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		f := scenario(t, "fencing", d, "flash-sale", "", time.Second, "5ms", "pause:for=1300ms,at=200ms,point=write", 6, 1800*time.Millisecond)
		if f.Counters.Rejected != 1 || f.Violations.Oversell != 0 || f.Violations.LostUpdates != 0 {
			t.Fatalf("fencing: rejected %d oversell %d lost %d; want 1, 0, 0", f.Counters.Rejected, f.Violations.Oversell, f.Violations.LostUpdates)
		}
	})
}

// The watchdog's side of TestPauseBeforeWrite and of
// TestPauseBeforeWriteHotKey, in the timing lane, one driver at a time: its worked_after_loss of exactly 1 needs the woken
// renewal loop to report the loss before the woken holder's write
// completes, a race of two goroutines that a shared CPU flipped (0 on
// goredis, on hot-key, beside another package's tests).
func TestPauseBeforeWriteWatchdogTimed(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			w := scenario(t, "watchdog", d, "flash-sale", "", time.Second, "5ms", "pause:for=1300ms,at=200ms,point=write", 6, 1800*time.Millisecond)
			if w.Violations.Overlap == 0 || w.Violations.LostUpdates == 0 || w.Violations.WorkedAfterLoss != 1 {
				t.Fatalf("watchdog: overlap %d, lost updates %d, worked after loss %d; want > 0, > 0 (its stale stock value overwrote the others' decrements), 1 (%s)",
					w.Violations.Overlap, w.Violations.LostUpdates, w.Violations.WorkedAfterLoss, w.Faults[0].Note)
			}
			hotKeyPause(t, d, "watchdog", "auto", false)
		})
	}
}

// The same pause before the write on hot-key (one counter): the watchdog's
// holder, paused past its lease with the value it read, writes it back
// plus one over every increment made while it slept; atomic without a
// guard does the same. fencing's token check and the cas guard on atomic
// reject that one stale write (exactly 1: every other holder keeps its 1 s
// lease through 5 ms of work) and no update is lost. The params record
// the guard that ran. (The watchdog's case is in
// TestPauseBeforeWriteWatchdogTimed.)
func TestPauseBeforeWriteHotKey(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		// The watchdog's case: TestPauseBeforeWriteWatchdogTimed.
		for _, c := range []struct {
			strategy, guard string
			guarded         bool
		}{
			{"fencing", "auto", true},
			{"atomic", "none", false},
			{"atomic", "cas", true},
		} {
			hotKeyPause(t, d, c.strategy, c.guard, c.guarded)
		}
	})
}

// hotKeyPause runs one case of TestPauseBeforeWriteHotKey: strategy with
// --guard guard on hot-key under the pause before the write.
func hotKeyPause(t *testing.T, d, strategy, guard string, guarded bool) {
	t.Helper()
	const pause = "pause:for=1300ms,at=200ms,point=write"
	r := guardedScenario(t, guard, strategy, d, "hot-key", "", time.Second, "5ms", pause, 6, 1800*time.Millisecond)
	v, name := r.Violations, strategy+" --guard "+guard
	t.Logf("%s: overlap %d, increments %d, lost updates %d, rejected %d, guard %s (%+v)", name, v.Overlap, r.Figures["increments"], v.LostUpdates, r.Counters.Rejected, r.Params["guard"], r.Faults[0])
	want := map[string]string{"watchdog": "none", "fencing": "fence", "atomic": guard}[strategy]
	if r.Params["guard"] != want {
		t.Errorf("%s: params.guard %q, want %q", name, r.Params["guard"], want)
	}
	if r.Figures["increments"] == 0 {
		t.Fatalf("%s: no increment (%s)", name, r.Faults[0].Note)
	}
	if guarded {
		if r.Counters.Rejected != 1 || v.LostUpdates != 0 {
			t.Errorf("%s: rejected %d, lost updates %d; want 1, 0 (%s)", name, r.Counters.Rejected, v.LostUpdates, r.Faults[0].Note)
		}
		return
	}
	if v.Overlap == 0 || v.LostUpdates == 0 || r.Counters.Rejected != 0 {
		t.Errorf("%s: overlap %d, lost updates %d, rejected %d; want > 0, > 0 (its stale value overwrote the others' increments), 0 (%s)",
			name, v.Overlap, v.LostUpdates, r.Counters.Rejected, r.Faults[0].Note)
	}
	if strategy == "watchdog" && v.WorkedAfterLoss != 1 {
		t.Errorf("watchdog: worked after loss %d, want 1", v.WorkedAfterLoss)
	}
}

// Failover with a lagging replica loses a held lock (atomic overlaps);
// wait-replicas acquires nothing the replica has not acknowledged.
// In the timing lane, one driver at a time (not each): the fault is timed
// from the scenario's start, not from a grant, so atomic's overlap needs
// the holders' 1 s turns to keep their phase against it, and a slow start
// on a shared CPU shifted them (overlap 0 on rueidis, with this package's
// other tests and another package running beside it).
func TestFailoverTimed(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			// Holders follow each other every 1 s; the replica is cut off at
			// 0.2 s and the master killed at 2.2 s, while the third holder
			// (whose lock the replica never saw) has 0.8 s of work left.
			a := scenario(t, "atomic", d, "flash-sale", "replica", 1500*time.Millisecond, "1s", "failover:at=200ms,hold=2s", 10, 3500*time.Millisecond)
			if a.Violations.Overlap == 0 {
				t.Fatalf("atomic + failover: overlap 0, want > 0 (%s)", a.Faults[0].Note)
			}
			w := scenario(t, "wait-replicas", d, "flash-sale", "replica", 1500*time.Millisecond, "1s", "failover:at=200ms,hold=2s", 10, 3500*time.Millisecond)
			if w.Violations.Overlap != 0 {
				t.Fatalf("wait-replicas + failover: overlap %d, want 0", w.Violations.Overlap)
			}
		})
	}
}

// Redlock forgets a lock when a majority of its masters restart empty
// while it is held: another client takes it and the oracle sees the
// overlap. In the timing lane, drivers in turn: the restarts must land
// while a holder holds, and beside another test package at load 8-10 one
// restart was armed 130 ms late and no client entered (overlap 0).
func TestRedlockMajorityRestartTimed(t *testing.T) {
	inTurn(t, func(t *testing.T, d string) {
		// Node 0, 1 and 2 restart together through three faults.
		ctx := context.Background()
		topo, err := topology.Start(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Stop()
		var nodes []engine.Node
		for _, s := range topo.Servers {
			nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
		}
		var specs []faults.Spec
		for _, f := range []string{"node-restart:node=0,at=300ms", "node-restart:node=1,at=300ms", "node-restart:node=2,at=300ms"} {
			sp, _ := faults.Parse(f)
			specs = append(specs, sp)
		}
		pol, _ := retry.Parse("fixed:interval=10ms")
		res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
			Strategy: "redlock", Driver: d, Workload: "long-task", Retry: pol, Clients: 6,
			Duration: 1500 * time.Millisecond, TTL: 3 * time.Second, AcquireTimeout: 2 * time.Second, Seed: 1,
			Params: workloads.Params{Work: workloads.Fixed(time.Second)}, Options: registry.Values{"keys": 1},
			Faults: specs,
		}, Env: engine.Env{Servers: topo.Servers}}, nodes, "lockbench:faulttest:redlock:")
		if err != nil {
			t.Fatal(err)
		}
		if res.Violations.Overlap == 0 {
			t.Fatalf("redlock after a majority restart: overlap 0, want > 0; faults %+v", res.Faults)
		}
	})
}

// long-task with work > TTL: fixed leases overlap, the watchdog does not;
// plain DEL releases other clients' locks, the Lua release never does.
// naive and atomic run 80 ms of work on 50 ms leases (a loaded machine
// only makes their overlaps likelier); the watchdog, asserted to have no
// violation at all, runs one 1.5 s section on a 1 s lease renewed every
// 333 ms, so only a renewal late by more than 667 ms would lose it, and a
// watchdog that did not renew would let a waiter in at 1 s, half a second
// before the run ends.
func TestLongTaskPattern(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		ctx := context.Background()
		topo, err := topology.Start(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Stop()
		s := topo.Servers[0]
		pol, _ := retry.Parse("fixed:interval=5ms")
		for _, strat := range []string{"naive", "atomic", "watchdog"} {
			dur, ttl, work := 1200*time.Millisecond, 50*time.Millisecond, 80*time.Millisecond
			if strat == "watchdog" {
				dur, ttl, work = 1500*time.Millisecond, time.Second, 1500*time.Millisecond
			}
			res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
				Strategy: strat, Driver: d, Workload: "long-task", Retry: pol, Clients: 8,
				Duration: dur, TTL: ttl, AcquireTimeout: 2 * time.Second, Seed: 1,
				Params: workloads.Params{Work: workloads.Fixed(work)}, Options: registry.Values{"keys": 1},
			}}, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:faulttest:lt:"+strat+":")
			if err != nil {
				t.Fatal(err)
			}
			v := res.Violations
			switch strat {
			case "naive":
				if v.Overlap == 0 || v.ForeignReleases == 0 || v.LostUpdates == 0 {
					t.Fatalf("naive: %+v, want overlap, foreign releases and lost updates", v)
				}
			case "atomic":
				if v.Overlap == 0 || v.ForeignReleases != 0 || v.LostLeases == 0 {
					t.Fatalf("atomic: %+v, want overlap and lost leases, no foreign release", v)
				}
			case "watchdog":
				if v.Total() != 0 || res.StrategyStats["renewals"] < 2 || res.StrategyStats["lost_leases"] != 0 {
					t.Fatalf("watchdog: %+v, stats %v; want no violation, >= 2 renewals, no lost lease", v, res.StrategyStats)
				}
			}
		}
	})
}

// Added latency on the only node: every operation takes at least the delay
// (a lower bound; the run still completes its orders exactly).
func TestLatencyFault(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		res := scenario(t, "atomic", d, "flash-sale", "", time.Second, "1ms", "latency:node=0,delay=100ms,at=0s", 4, 800*time.Millisecond)
		if res.LatencyMS.Count == 0 || res.LatencyMS.P50 < 100 {
			t.Fatalf("p50 %.1f ms over %d ops; want >= 100 ms with 100 ms added to each reply", res.LatencyMS.P50, res.LatencyMS.Count)
		}
		if res.Violations.Total() != 0 || !strings.Contains(res.Faults[0].Note, "+100ms") {
			t.Fatalf("violations %+v, window %+v", res.Violations, res.Faults[0])
		}
	})
}

// Through Sentinel: the replica is cut off, the master killed, Sentinel
// promotes the replica and the clients follow it; the lock the replica
// never saw is taken again while its holder still works.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		ctx := context.Background()
		link := &faults.ReplLink{}
		topo, err := topology.StartSentinel(ctx, link.Linker())
		if err != nil {
			t.Fatal(err)
		}
		defer topo.Stop()
		defer link.Close()
		sp, _ := faults.Parse("failover:after=1,hold=3800ms")
		pol, _ := retry.Parse("fixed:interval=10ms")
		node := engine.Node{Addr: "sentinel", Password: topo.Servers[0].Password, Sentinels: topo.SentinelAddrs(),
			SentinelPassword: topo.SentinelPassword(), MasterName: topology.MasterName}
		// Holders follow each other every 3.5 s. The replica is cut off
		// when the first lock is granted (after=1: timed from that grant,
		// not from the start, so a slow start shifts nothing) and the
		// master killed 3.8 s later, 0.3 s into the second holder's
		// section; the replica saw at most the first lock (expired on it
		// at 4.5 s), and the second holder works on until 7 s: Sentinel
		// (down-after 500 ms, about 1 s to promote) has 3.2 s to promote
		// the replica while it still holds.
		res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
			Strategy: "atomic", Driver: d, Workload: "flash-sale", Retry: pol, Clients: 6,
			Duration: 8 * time.Second, TTL: 4500 * time.Millisecond, AcquireTimeout: 3 * time.Second, Seed: 1,
			Params: workloads.Params{Work: workloads.Fixed(3500 * time.Millisecond)}, Options: registry.Values{"stock": int64(100), "skus": 1},
			Faults: []faults.Spec{sp},
		}, Env: engine.Env{Servers: topo.Servers, ReplLink: link}}, []engine.Node{node}, "lockbench:faulttest:sentinel:")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Faults[0].Note, "Sentinel promoted") || res.Violations.Overlap == 0 {
			t.Fatalf("overlap %d, window %+v; want a Sentinel promotion and overlap > 0", res.Violations.Overlap, res.Faults[0])
		}
	})
}

// A node paused past the scenario's end is resumed when the scenario
// stops: the run ends on time (not when the pause would have run out), and
// the window ends at the stop and says so.
func TestNodePauseEndsWithScenario(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		began := time.Now()
		res := scenario(t, "atomic", d, "flash-sale", "", time.Second, "1ms", "node-pause:at=300ms,for=30s", 4, time.Second)
		if took := time.Since(began); took > 20*time.Second {
			t.Fatalf("the scenario took %v; the 30 s pause held it up", took)
		}
		w := res.Faults[0]
		if w.EndMS > 5000 || !strings.Contains(w.Note, "of 30s: the scenario ended") {
			t.Fatalf("window %+v; want it closed at the stop", w)
		}
		if res.Violations.Total() != 0 {
			t.Fatalf("violations %+v", res.Violations)
		}
	})
}

// Redlock extend under a pause (issue 17): a holder paused past its TTL
// wakes, finishes its work and extends (Worker.Work) while another client
// holds the lock. The unchecked extend (a plain PEXPIRE on every node)
// reports success on the other client's keys: false_extends >= 1, and the
// revived lease writes its stale stock value. The owner-checked extend
// (extend=on) fails there: false_extends 0 and extend_failures >= 1, and
// the holder, told of its loss, does not write. The others spin at 1 ms
// with 400 ms of work under a 1 s lease, so the keys are held nearly all
// the time the paused holder extends (a PEXPIRE on a free key fails: no
// false extend to count): with 50 ms of work the hand-over gaps of a
// loaded machine left the extend between holders in one run of six.
//
// The paused holder's extend is counted by the oracle's registry
// generation (Oracle.TakenSince): other clients registered as holders
// since the paused one did, whether the registry names one of them when
// the extend lands or nobody (a hand-over, between one holder's release
// and the next one's registration). Counted by the registry's name alone,
// an extend in such a gap was missed once in a CI run on a loaded
// machine, and the broken variant got up to three runs; now one must do.
func TestRedlockExtendUnderPause(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		for _, mode := range []string{"unchecked", "on"} {
			res := extendScenario(t, d, mode)
			v, st := res.Violations, res.StrategyStats
			t.Logf("extend=%s: false_extends %d overlap %d lost_updates %d extends %v extend_failures %v (%s)",
				mode, v.FalseExtends, v.Overlap, v.LostUpdates, st["extends"], st["extend_failures"], res.Faults[0].Note)
			switch mode {
			case "unchecked":
				if v.FalseExtends < 1 {
					t.Fatalf("extend=unchecked: false_extends %d, want >= 1", v.FalseExtends)
				}
			case "on":
				if v.FalseExtends != 0 || st["extend_failures"] < 1 || st["extends"] < 1 || v.LostUpdates != 0 {
					t.Fatalf("extend=on: false_extends %d, extend failures %v, extends %v, lost updates %d; want 0, >= 1, >= 1, 0",
						v.FalseExtends, st["extend_failures"], st["extends"], v.LostUpdates)
				}
			}
		}
	})
}

func extendScenario(t *testing.T, driver, mode string) report.Scenario {
	t.Helper()
	ctx := context.Background()
	topo, err := topology.Start(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	var nodes []engine.Node
	for _, s := range topo.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	sp, err := faults.Parse("pause:for=2200ms,at=300ms")
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := retry.Parse("fixed:interval=1ms")
	res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
		Strategy: "redlock", Driver: driver, Workload: "flash-sale", Retry: pol, Clients: 6,
		Duration: 3500 * time.Millisecond, TTL: time.Second, AcquireTimeout: 3 * time.Second, Seed: 1,
		Params:  workloads.Params{Work: workloads.Fixed(400 * time.Millisecond)},
		Options: registry.Values{"stock": int64(1_000_000), "skus": 1, "extend": mode},
		Faults:  []faults.Spec{sp},
	}, Env: engine.Env{Servers: topo.Servers}}, nodes, "lockbench:faulttest:extend:"+mode+":")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 || res.Faults[0].EndMS <= res.Faults[0].StartMS {
		t.Fatalf("fault window %+v", res.Faults)
	}
	return res
}
