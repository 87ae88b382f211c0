package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/testlocks"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// marginScenario is strategy with 2 clients on 2 locks for 8 s, a 5 s
// TTL and 4.5 s of work per hold: each hold outlives the late lock's
// renewal at 4 s once, and the watchdog's at 1.67 s and 3.33 s.
func marginScenario(t *testing.T, strategy string) engine.Scenario {
	t.Helper()
	return engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=20ms"), Clients: 2,
		Duration: 8 * time.Second, TTL: 5 * time.Second, AcquireTimeout: 30 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(4500 * time.Millisecond)},
		Options: registry.Values{"keys": 2}, Seed: 1,
	}}
}

// A lock whose renewals come at 0.8 x TTL shows every renewal in the
// window late (late_renewals = renewals) and a minimum margin under
// TTL/3; the renewals it made after the window's end, in the stop's drain
// (the holds begun at about 4.5 s renew at about 8.5 s), count in no
// figure: renewals is at least those it made before the run's start + 8
// s (in the window whatever the set-up took) and at most those it made
// minus those after its first renewal + 4 s (the window began at least
// 4 s before its first renewal, so ended by then). The watchdog's
// renewals, every TTL/3, none late, with a minimum above TTL/3; a lock
// that does not renew (atomic) shows no renewal_margin at all.
//
// The two runs go at once, each on keys of its own (20 s one after the
// other, 2026-12-04), and the test beside the package's other parallel
// tests: testlocks.Late is this test's alone in this package.
func TestRenewalMargins(t *testing.T) {
	t.Parallel()
	testlocks.ResetLate()
	t0 := time.Now()
	runs, _ := atOnce(t, []string{"lockbench:test:" + t.Name() + ":late:", "lockbench:test:" + t.Name() + ":watchdog:"},
		marginScenario(t, testlocks.LateRenewal), marginScenario(t, "watchdog"))
	late, wd := runs[0], runs[1]
	m := late.RenewalMargin
	if m == nil || m.MinMS == nil || m.P1MS == nil {
		t.Fatalf("test-late-renewal: renewal_margin %+v, want measured", m)
	}
	testlocks.Late.Lock()
	if lost := testlocks.Late.Lost; lost != 0 {
		t.Logf("test-late-renewal lost %d leases (a stall of a second): the counts below still hold", lost)
	}
	times := testlocks.Late.Renewals
	testlocks.Late.Unlock()
	n := int64(len(times))
	var sureIn, sureOut int64
	for _, at := range times {
		if at.Before(t0.Add(8 * time.Second)) {
			sureIn++
		}
		if at.After(times[0].Add(4 * time.Second)) {
			sureOut++
		}
	}
	t.Logf("test-late-renewal: %d renewals made, %d surely in the window, %d surely after it; renewal_margin.renewals %d", n, sureIn, sureOut, m.Renewals)
	if sureIn == 0 || m.Renewals < sureIn || m.Renewals > n-sureOut || m.LateRenewals != m.Renewals {
		t.Fatalf("test-late-renewal: renewals %d, late_renewals %d; want %d <= renewals <= %d (made %d, %d after the window), all late", m.Renewals, m.LateRenewals, sureIn, n-sureOut, n, sureOut)
	}
	third := float64(5*time.Second/3) / 1e6
	if *m.MinMS >= third || *m.P1MS >= third {
		t.Fatalf("test-late-renewal: margin min %v ms, p1 %v ms; want both under TTL/3 = %v ms", *m.MinMS, *m.P1MS, third)
	}

	w := wd.RenewalMargin
	if w == nil {
		t.Fatal("watchdog: no renewal_margin")
	}
	t.Logf("late_renewals: test-late-renewal %d of %d (min %v ms, p1 %v ms), watchdog %d of %d (min %v ms)",
		m.LateRenewals, m.Renewals, *m.MinMS, *m.P1MS, w.LateRenewals, w.Renewals, ptr(w.MinMS))
	if w == nil || w.Renewals == 0 || w.LateRenewals != 0 || w.MinMS == nil || *w.MinMS < third {
		t.Fatalf("watchdog: renewal_margin %+v; want renewals, none late, min over TTL/3 = %v ms", w, third)
	}
	if wd.StrategyStats["renewals"] < float64(w.Renewals) {
		t.Fatalf("watchdog: %v renewals in strategy_stats, %d margins", wd.StrategyStats["renewals"], w.Renewals)
	}
	// The other-violations cell names the late renewals (beside "liveness
	// n/a": the test lock tells no token registry of its tokens).
	for _, col := range report.TableColumns() {
		if col.Key == "other" {
			if want := "late renew " + strconv.FormatInt(m.LateRenewals, 10); !strings.HasSuffix(col.Cell(late), want) {
				t.Fatalf("other cell %q, want it to end with %q", col.Cell(late), want)
			}
			if got := col.Cell(wd); got != "0" {
				t.Fatalf("watchdog's other cell %q, want 0", got)
			}
		}
	}
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A strategy that does not renew reports no renewal margin (absent, not
// 0).
func TestRenewalMarginsAbsent(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 2,
		Duration: time.Second, TTL: 5 * time.Second, AcquireTimeout: 30 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"keys": 2}, Seed: 1,
	}}
	r, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if r.RenewalMargin != nil || r.Raw.RenewalMargin != nil {
		t.Fatalf("atomic: renewal_margin %+v, raw %+v; want absent", r.RenewalMargin, r.Raw.RenewalMargin)
	}
}

// test-extends-never-granted (registered in this test binary only) is a
// lock whose leases would be Extenders (it declares
// strategies.ExtendsLeases) but which never grants one: its clients never
// extend.
func init() {
	strategies.Register("test-extends-never-granted", strategies.Info{Desc: "test only: declares extending leases, refuses every acquire"},
		func(c strategies.Config) (strategies.Locker, error) { return neverLocker{}, nil })
}

type neverLocker struct{}

func (neverLocker) TryAcquire(context.Context, string) (strategies.Lease, error) {
	return nil, strategies.ErrNotAcquired
}

func (neverLocker) ExtendsLeases() bool { return true }

// A strategy whose leases extend is measured whether or not its clients
// extended: a run without a single extend reports renewal_margin with
// renewals 0 (not absent), so that a --procs result keeps the figure
// (report.Combine drops it when one input did not measure it).
func TestRenewalMarginsNoExtends(t *testing.T) {
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "test-extends-never-granted", Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=20ms"), Clients: 2,
		Duration: 500 * time.Millisecond, TTL: 5 * time.Second, AcquireTimeout: 100 * time.Millisecond,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"keys": 2}, Seed: 1,
	}}
	r, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if m := r.RenewalMargin; m == nil || r.Raw.RenewalMargin == nil || m.Renewals != 0 || m.LateRenewals != 0 || m.MinMS != nil {
		t.Fatalf("renewal_margin %+v, raw %+v; want measured with 0 renewals", m, r.Raw.RenewalMargin)
	}
}
