package export

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lockbench/lockbench/internal/report"
)

// value is the counter of family name with scenario number sc (and kind,
// when not "") as the registry gathers it now; -1 when absent.
func value(t *testing.T, p *Prom, name string, sc, kind string) float64 {
	t.Helper()
	fams, err := p.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if (l.GetName() == "scenario" && l.GetValue() != sc) || (l.GetName() == "kind" && l.GetValue() != kind) {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// Violations: every kind has a series from the scenario's start (zeros);
// the overlap series reads the oracle at each scrape; the clients' kinds
// count as they happen; the end check sets each kind to the result's
// count without counting a live one twice; a second run with the same
// labels (--repeat) adds to the series; Stop keeps the oracle's last
// count and stops reading it. Two scenarios differing only in their
// retry policy and number have series of their own.
func TestViolationsLive(t *testing.T) {
	p := New()
	l := Labels{Strategy: "naive", Driver: "goredis", Workload: "flash-sale", Retry: "fixed:interval=1ms", Clients: 8, Scenario: 1}
	o := p.For(l)
	other := l
	other.Retry, other.Scenario = "backoff", 2
	o2 := p.For(other)
	for _, k := range report.ViolationKinds {
		if got := value(t, p, ViolationsName, "1", k.Key); got != 0 {
			t.Errorf("kind %s at the start: %v, want a zero series", k.Key, got)
		}
	}
	var oracle atomic.Int64
	o.Overlaps(oracle.Load)
	oracle.Store(3)
	if got := value(t, p, ViolationsName, "1", "overlap"); got != 3 {
		t.Errorf("overlap while running: %v, want the oracle's 3", got)
	}
	oracle.Store(5)
	o.LeaseLost()
	o.LeaseLost()
	o.ForeignRelease()
	o.WroteAfterLoss()
	o.FalseExtend()
	for kind, want := range map[string]float64{"overlap": 5, "lost_leases": 2, "foreign_releases": 1, "worked_after_loss": 1, "false_extends": 1, "oversell": 0} {
		if got := value(t, p, ViolationsName, "1", kind); got != want {
			t.Errorf("%s while running: %v, want %v", kind, got, want)
		}
	}
	o.Violations(report.Violations{Overlap: 5, LostLeases: 2, ForeignReleases: 1, WorkedAfterLoss: 1, FalseExtends: 1, Oversell: 7, LostUpdates: 4, StuckLocks: 1})
	oracle.Store(100) // read no more
	for kind, want := range map[string]float64{"overlap": 5, "lost_leases": 2, "foreign_releases": 1, "oversell": 7, "lost_updates": 4, "stuck_locks": 1, "lost_acked_writes": 0} {
		if got := value(t, p, ViolationsName, "1", kind); got != want {
			t.Errorf("%s after the end check: %v, want %v", kind, got, want)
		}
	}
	if got := value(t, p, ViolationsName, "2", "overlap"); got != 0 {
		t.Errorf("scenario 2's overlap %v, want its own zero", got)
	}
	o2.Op()
	o.Op()
	o.Op()
	if a, b := value(t, p, OperationsName, "1", ""), value(t, p, OperationsName, "2", ""); a != 2 || b != 1 {
		t.Errorf("operations: scenario 1 %v, 2 %v; want 2 and 1", a, b)
	}

	// The next run of the same scenario (--repeat) adds to its series.
	r := p.For(l)
	var oracle2 atomic.Int64
	r.Overlaps(oracle2.Load)
	oracle2.Store(2)
	if got := value(t, p, ViolationsName, "1", "overlap"); got != 7 {
		t.Errorf("overlap in the second run: %v, want 5 + 2", got)
	}
	r.Op()
	if got := value(t, p, OperationsName, "1", ""); got != 3 {
		t.Errorf("operations after the second run's first: %v, want 3", got)
	}
	r.Stop() // no end check: the run failed
	oracle2.Store(50)
	if got := value(t, p, ViolationsName, "1", "overlap"); got != 7 {
		t.Errorf("overlap after Stop: %v, want the oracle's last count kept (7)", got)
	}
	r.Stop()
	if got := value(t, p, ViolationsName, "1", "overlap"); got != 7 {
		t.Errorf("overlap after a second Stop: %v, want 7", got)
	}

	if problems, err := testutil.GatherAndLint(p.Gatherer()); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

// Every name follows Prometheus naming: the redis_lock_ prefix, _total on
// the counters, _seconds on the times; the families gathered are Names.
func TestNames(t *testing.T) {
	p := New()
	o := p.For(Labels{Strategy: "atomic", Driver: "rueidis", Workload: "hot-key", Retry: "none", Clients: 1, Scenario: 1})
	o.Acquired(2, time.Millisecond)
	o.AcquireFailed(1, false)
	o.Hold(time.Millisecond)
	o.Op()
	o.Error("timeout")
	o.TTL(time.Second)
	fams, err := p.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range fams {
		got[f.GetName()] = true
		name := f.GetName()
		if !strings.HasPrefix(name, "redis_lock_") {
			t.Errorf("%s: want the redis_lock_ prefix", name)
		}
		switch f.GetType().String() {
		case "COUNTER":
			if !strings.HasSuffix(name, "_total") {
				t.Errorf("counter %s: want _total", name)
			}
		case "HISTOGRAM", "GAUGE":
			if !strings.HasSuffix(name, "_seconds") {
				t.Errorf("%s %s: want _seconds", f.GetType(), name)
			}
		}
		for _, m := range f.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			if s := strings.Join(names, ","); s != "clients,driver,retry,scenario,strategy,workload" && s != "clients,driver,kind,retry,scenario,strategy,workload" {
				t.Errorf("%s labels %s", name, s)
			}
		}
	}
	for _, n := range Names {
		if !got[n] {
			t.Errorf("%s not gathered", n)
		}
	}
	if len(got) != len(Names) {
		t.Errorf("gathered %d families, Names has %d", len(got), len(Names))
	}
	if problems, err := testutil.GatherAndLint(p.Gatherer()); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

// A nil *Obs (no --metrics-addr) records nothing and does not panic.
func TestNilObs(t *testing.T) {
	var o *Obs
	o.TTL(time.Second)
	o.Acquired(1, time.Millisecond)
	o.AcquireFailed(1, true)
	o.Hold(time.Millisecond)
	o.Op()
	o.Error("timeout")
	o.LeaseLost()
	o.ForeignRelease()
	o.WroteAfterLoss()
	o.FalseExtend()
	o.Overlaps(func() int64 { return 1 })
	o.Violations(report.Violations{Overlap: 1})
	o.Stop()
}
