package report

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
)

// marginScenario is a scenario whose raw data holds renewal margins of
// the given lengths in the first and the second half of its window, late
// of them late.
func marginScenario(late int64, first, second []time.Duration) Scenario {
	f, s2 := metrics.NewHistogram(), metrics.NewHistogram()
	min := time.Duration(0)
	for i, m := range append(append([]time.Duration{}, first...), second...) {
		if i == 0 || m < min {
			min = m
		}
	}
	for _, m := range first {
		metrics.Record(f, m)
	}
	for _, m := range second {
		metrics.Record(s2, m)
	}
	r := &Raw{WindowS: 1, Runs: 1, RenewalMargin: &RenewalMarginRaw{Renewals: int64(len(first) + len(second)), Late: late, MinMS: float64(min) / 1e6}}
	r.SetHist(HistMarginFirst, f)
	r.SetHist(HistMarginSecond, s2)
	s := Scenario{Strategy: "watchdog", Driver: "goredis", Workload: "lock-cycle", Retry: "fixed", Raw: r}
	if err := Derive(&s); err != nil {
		panic(err)
	}
	return s
}

// The renewal-margin figures derive from raw data alone, and combine:
// counts add up, the minimum is the smaller, the halves merge half by
// half; the trend is the second half's p1 minus the first's; a strategy
// that renews but made no renewal has counts and no margins; one that
// does not renew has none (absent), and an input without the measurement
// leaves the combination without it.
func TestRenewalMarginDeriveCombine(t *testing.T) {
	ms := time.Millisecond
	a := marginScenario(0, []time.Duration{600 * ms, 700 * ms}, []time.Duration{500 * ms})
	b := marginScenario(2, []time.Duration{650 * ms}, []time.Duration{200 * ms, 250 * ms})
	m := a.RenewalMargin
	if m == nil || m.Renewals != 3 || m.LateRenewals != 0 || *m.MinMS != 500 || *m.FirstHalfP1MS < 599 || *m.FirstHalfP1MS > 601 || *m.TrendMS > -99 || *m.TrendMS < -101 {
		t.Fatalf("derived %+v", m)
	}
	c, err := Combine(Sequential, []Scenario{a, b})
	if err != nil {
		t.Fatal(err)
	}
	m = c.RenewalMargin
	if m == nil || m.Renewals != 6 || m.LateRenewals != 2 || *m.MinMS != 200 || *m.P1MS < 199 || *m.P1MS > 201 || *m.SecondHalfP1MS < 199 || *m.SecondHalfP1MS > 201 || *m.FirstHalfP1MS < 599 {
		t.Fatalf("combined %+v", m)
	}
	for name, want := range map[string]float64{"late_renewals": 2, "renewal_margin_min_ms": 200, "renewal_margin_p1_ms": 200, "renewal_margin_trend_ms": -400} {
		mt, _ := LookupMetric(name)
		if !mt.Known(c) || mt.Of(c) < want-1 || mt.Of(c) > want+1 {
			t.Errorf("%s: known %v, %g; want %g", name, mt.Known(c), mt.Of(c), want)
		}
	}
	none := marginScenario(0, nil, nil)
	if n := none.RenewalMargin; n == nil || n.Renewals != 0 || n.MinMS != nil || n.P1MS != nil || n.TrendMS != nil {
		t.Fatalf("no renewals: %+v, want counts only", n)
	}
	if mt, _ := LookupMetric("renewal_margin_min_ms"); mt.Known(none) {
		t.Error("renewal_margin_min_ms known without renewals")
	}
	if mt, _ := LookupMetric("late_renewals"); !mt.Known(none) || mt.Known(Scenario{}) {
		t.Error("late_renewals: known for a renewing strategy without renewals, and not for one that does not renew")
	}
	if c, err := Combine(Concurrent, []Scenario{none, a}); err != nil || c.RenewalMargin.Renewals != 3 || *c.RenewalMargin.MinMS != 500 {
		t.Fatalf("combined with an input without renewals: %+v, %v", c.RenewalMargin, err)
	}
	absent := a
	absent.Raw = cloneRaw(a.Raw)
	absent.Raw.RenewalMargin = nil
	if c, err := Combine(Sequential, []Scenario{a, absent}); err != nil || c.RenewalMargin != nil {
		t.Errorf("combined with an input that did not measure it: %+v, %v; want absent", c.RenewalMargin, err)
	}
}

// The table shows the renewal margins with --columns, "-" where not
// measured, and names late renewals in the other-violations cell.
func TestRenewalMarginColumns(t *testing.T) {
	ms := time.Millisecond
	s := marginScenario(2, []time.Duration{650 * ms}, []time.Duration{200 * ms, 250 * ms})
	cols, err := SelectColumns(TableColumns(), TableExtras(), []string{"margin_min", "margin_p1", "other"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"200 (2 late)", "200 (-450)", "late renew 2"}
	for i, c := range cols {
		if got := c.Cell(s); got != want[i] {
			t.Errorf("%s: %q, want %q", c.Key, got, want[i])
		}
	}
	for _, c := range cols[:2] {
		if got := c.Cell(Scenario{}); got != "-" {
			t.Errorf("%s without the measurement: %q, want -", c.Key, got)
		}
	}
}
