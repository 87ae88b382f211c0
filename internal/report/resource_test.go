package report

import "testing"

// resource_rejected is the workload figure of a separate resource: a
// threshold on it reads the figure where it was measured (0 included)
// and fails as not measured without it; repeats and merges sum it, as
// every figure; the --columns column shows it, "-" when not measured.
func TestResourceRejectedFigure(t *testing.T) {
	m, ok := LookupMetric("resource_rejected")
	if !ok {
		t.Fatal("no resource_rejected metric")
	}
	sep := func(n int64) Scenario {
		return Scenario{Strategy: "fencing", Workload: "hot-key", Params: map[string]string{"resource": "separate"},
			Figures: map[string]int64{"increments": 10, "counter_sum": 10, FigureResourceRejected: n}}
	}
	lock := Scenario{Strategy: "fencing", Workload: "hot-key", Figures: map[string]int64{"increments": 10, "counter_sum": 10}}
	for _, c := range []struct {
		s     Scenario
		known bool
		v     float64
		cell  string
	}{{sep(1), true, 1, "1"}, {sep(0), true, 0, "0"}, {lock, false, 0, "-"}} {
		if got := m.Known(c.s); got != c.known || m.Of(c.s) != c.v {
			t.Errorf("%v: known %v, value %v; want %v, %v", c.s.Figures, got, m.Of(c.s), c.known, c.v)
		}
		if got := colResourceRejected.cell(c.s); got != c.cell {
			t.Errorf("%v: cell %q, want %q", c.s.Figures, got, c.cell)
		}
	}
	a, b := sep(1), sep(2)
	a.Raw, b.Raw = &Raw{WindowS: 1, Runs: 1}, &Raw{WindowS: 1, Runs: 1}
	sum, err := Combine(Sequential, []Scenario{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := sum.ResourceRejected(); !ok || n != 3 {
		t.Fatalf("combined: %d (measured %v), want 3", n, ok)
	}
	cols, err := SelectColumns(TableColumns(), TableExtras(), []string{"strategy", "resource_rejected"})
	if err != nil || len(cols) != 2 || cols[1].Header != "res rejected" {
		t.Fatalf("--columns resource_rejected: %v %+v", err, cols)
	}
}
