package report

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
)

// handoverScenario is a scenario whose raw data holds hand-over gaps of
// the given lengths over a window of windowS on locks locks.
func handoverScenario(windowS float64, locks int, fifo bool, violations, turns int64, gaps ...time.Duration) Scenario {
	h := metrics.NewHistogram()
	var idle time.Duration
	for _, g := range gaps {
		metrics.Record(h, g)
		idle += g
	}
	r := &Raw{WindowS: windowS, Runs: 1, Handover: &HandoverRaw{IdleS: idle.Seconds(), Locks: locks, Grants: int64(len(gaps)) + 1, FIFO: fifo}}
	if fifo {
		r.Handover.FIFOViolations, r.Handover.MaxWaitTurns = violations, turns
	}
	r.SetHist(HistHandoverGap, h)
	s := Scenario{Strategy: "atomic", Driver: "goredis", Workload: "lock-cycle", Retry: "fixed", Raw: r}
	if err := Derive(&s); err != nil {
		panic(err)
	}
	return s
}

// The hand-over figures derive from raw data alone, and combine: repeats
// add their gaps, violations and windows and keep the longest wait; a
// lock that declares no FIFO order has no order figures (absent, not 0),
// and an input without the measurement leaves the combination without it.
func TestHandoverDeriveCombine(t *testing.T) {
	a := handoverScenario(1, 1, true, 3, 5, 100*time.Millisecond, 100*time.Millisecond)
	b := handoverScenario(1, 1, true, 1, 9, 300*time.Millisecond)
	if h := a.Handover; h.GapMS == nil || h.GapMS.P50 < 99 || h.GapMS.P50 > 101 || h.IdleShare < 0.199 || h.IdleShare > 0.201 || *h.FIFOViolations != 3 {
		t.Fatalf("derived %+v", h)
	}
	c, err := Combine(Sequential, []Scenario{a, b})
	if err != nil {
		t.Fatal(err)
	}
	h := c.Handover
	if h == nil || h.GapMS.Count != 3 || h.GapMS.Max < 299 || h.IdleShare < 0.249 || h.IdleShare > 0.251 || *h.FIFOViolations != 4 || *h.MaxWaitTurns != 9 || h.Grants != 5 {
		t.Fatalf("combined %+v (gaps %+v)", h, h.GapMS)
	}
	for name, want := range map[string]float64{"fifo_violations": 4, "fifo_max_wait_turns": 9, "handover_idle_share": 0.25} {
		m, _ := LookupMetric(name)
		if !m.Known(c) || m.Of(c) < want-0.001 || m.Of(c) > want+0.001 {
			t.Errorf("%s: known %v, %g; want %g", name, m.Known(c), m.Of(c), want)
		}
	}
	plain := handoverScenario(1, 1, false, 0, 0, 50*time.Millisecond)
	if plain.Handover.FIFOViolations != nil || plain.Handover.MaxWaitTurns != nil {
		t.Errorf("no FIFO declared, yet order figures: %+v", plain.Handover)
	}
	if m, _ := LookupMetric("fifo_violations"); m.Known(plain) {
		t.Error("fifo_violations known for a lock that declares no FIFO order")
	}
	none := a
	none.Raw = cloneRaw(a.Raw)
	none.Raw.Handover = nil
	if c, err := Combine(Sequential, []Scenario{a, none}); err != nil || c.Handover != nil {
		t.Errorf("combined with an input that did not measure it: %+v, %v; want absent", c.Handover, err)
	}
	if m, _ := LookupMetric("handover_gap_p50_ms"); m.Known(Scenario{}) {
		t.Error("handover_gap_p50_ms known for a scenario without the measurement")
	}
}

// The table shows the hand-over figures with --columns, "-" where not
// measured, and names grants out of FIFO order in the other-violations
// cell.
func TestHandoverColumns(t *testing.T) {
	s := handoverScenario(1, 1, true, 3, 5, 100*time.Millisecond, 100*time.Millisecond)
	cols, err := SelectColumns(TableColumns(), TableExtras(), []string{"handover_p50", "handover_p99", "idle_share", "fifo_violations", "other"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"100", "100", "0.200", "3 (max 5 turns)", "out of fifo order 3"}
	for i, c := range cols {
		if got := c.Cell(s); got != want[i] {
			t.Errorf("%s: %q, want %q", c.Key, got, want[i])
		}
	}
	for _, c := range cols[:4] {
		if got := c.Cell(Scenario{}); got != "-" {
			t.Errorf("%s without the measurement: %q, want -", c.Key, got)
		}
	}
}
