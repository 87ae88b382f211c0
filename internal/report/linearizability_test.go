package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// linRuns are two processes' files of one scenario, each with a history
// on one host whose sections (process A's, then B's) hold lock "L".
func linRuns(t *testing.T, a, b [][2]int64) ([]*Run, []string) {
	t.Helper()
	dir := t.TempDir()
	sc := Scenario{Strategy: "naive", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 1, Raw: &Raw{WindowS: 1, Runs: 1}}
	writeHistory(t, filepath.Join(dir, "a.history.jsonl.gz"), "A", sc.Key(), a...)
	writeHistory(t, filepath.Join(dir, "b.history.jsonl.gz"), "B", sc.Key(), b...)
	sa, sb := sc, sc
	sa.HistoryFile, sb.HistoryFile = "a.history.jsonl.gz", "b.history.jsonl.gz"
	return []*Run{{Schema: Schema, Scenarios: []Scenario{sa}}, {Schema: Schema, Scenarios: []Scenario{sb}}}, []string{dir, dir}
}

// CrossCheck records Porcupine's verdict beside the count: illegal where
// sections of the two processes overlap, ok where they only touch, and
// unknown over the size bound; the metrics, the table cells and Combine
// read it.
func TestCrossCheckLinearizability(t *testing.T) {
	check := func(b LinBounds, a, bb [][2]int64) Scenario {
		t.Helper()
		runs, dirs := linRuns(t, a, bb)
		m, err := Merge(runs)
		if err != nil {
			t.Fatal(err)
		}
		if err := CrossCheckWithin(m, runs, dirs, b); err != nil {
			t.Fatal(err)
		}
		if m.Scenarios[0].Linearizability == nil {
			t.Fatal("no linearizability block after CrossCheck")
		}
		return m.Scenarios[0]
	}
	a := [][2]int64{{0, 100}, {200, 300}}
	illegal := check(LinBounds{}, a, [][2]int64{{50, 150}, {300, 400}})
	l := *illegal.Linearizability
	if l.Verdict != "illegal" || l.Locks != 1 || l.IllegalLocks != 1 || l.OverlapLocks != 1 || l.OracleDisagreements != 0 ||
		l.Sections != 4 || l.Operations != 8 || l.BudgetMS != 10000 || l.MaxSections != 100000 || l.Checker != "porcupine v1.3.1, read-write lock per lock key" {
		t.Errorf("overlapping sections: %+v", l)
	}
	ok := check(LinBounds{}, a, [][2]int64{{100, 200}, {300, 400}}) // touching only
	if l := *ok.Linearizability; l.Verdict != "ok" || l.IllegalLocks != 0 || l.OverlapLocks != 0 || l.OracleDisagreements != 0 || *ok.Violations.CrossOverlap != 0 {
		t.Errorf("touching sections: %+v, cross_overlap %d", l, *ok.Violations.CrossOverlap)
	}
	unknown := check(LinBounds{Budget: time.Second, MaxSections: 3}, a, [][2]int64{{50, 150}, {300, 400}})
	if l := *unknown.Linearizability; l.Verdict != "unknown" || l.UnknownLocks != 1 || l.Operations != 0 || l.BudgetMS != 1000 ||
		l.MaxSections != 3 || !strings.Contains(l.Reason, "over the bound of 3") {
		t.Errorf("over the size bound: %+v", l)
	}

	// The thresholds' figures: linearizable 1 / 0 / not measured;
	// oracle_disagreements measured where a lock key was decided (not in
	// the unknown run, whose only key was not).
	lin, _ := LookupMetric("linearizable")
	dis, _ := LookupMetric("oracle_disagreements")
	for _, c := range []struct {
		name  string
		s     Scenario
		known bool
		v     float64
	}{{"illegal", illegal, true, 0}, {"ok", ok, true, 1}, {"unknown", unknown, false, 0}, {"not checked", Scenario{}, false, 0}} {
		if lin.Known(c.s) != c.known || lin.Of(c.s) != c.v || dis.Known(c.s) != c.known || dis.Of(c.s) != 0 {
			t.Errorf("%s: linearizable known %v = %g, oracle_disagreements known %v", c.name, lin.Known(c.s), lin.Of(c.s), dis.Known(c.s))
		}
	}

	// The cells: the column, and the other-violations cell only when not ok.
	for _, c := range []struct {
		s           Scenario
		col, other  string
		disagreeing int64
	}{
		{illegal, "illegal (1 of 1 locks)", "cross-proc 1, porcupine illegal (1 of 1 locks)", 0},
		{ok, "ok", "cross-proc 0", 0},
		{ok, "ok, 2 disagree", "cross-proc 0, porcupine ok, 2 disagree", 2},
		{unknown, "unknown", "cross-proc 1, porcupine unknown", 0},
		{Scenario{}, "-", "0", 0},
	} {
		s := c.s
		if s.Linearizability != nil {
			l := *s.Linearizability
			l.OracleDisagreements = c.disagreeing
			s.Linearizability = &l
		}
		if got := linCell(s); got != c.col {
			t.Errorf("linearizable cell %q, want %q", got, c.col)
		}
		if got := otherCellOf(s); got != c.other {
			t.Errorf("other violations cell %q, want %q", got, c.other)
		}
	}

	// Repeats: counts summed, the worst verdict; absent unless every run
	// was checked.
	r1, r2 := ok, illegal
	r1.Raw, r2.Raw = &Raw{WindowS: 1, Runs: 1}, &Raw{WindowS: 1, Runs: 1}
	c, err := Combine(Sequential, []Scenario{r1, r2})
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Linearizability; l == nil || l.Verdict != "illegal" || l.Sections != 8 || l.Locks != 2 || l.IllegalLocks != 1 || l.OverlapLocks != 1 {
		t.Errorf("combined ok and illegal: %+v", l)
	}
	if c, err = Combine(Sequential, []Scenario{r1, {Strategy: r1.Strategy, Driver: r1.Driver, Workload: r1.Workload, Retry: r1.Retry, Raw: &Raw{WindowS: 1, Runs: 1}}}); err != nil || c.Linearizability != nil {
		t.Errorf("combined with a run not checked: %+v (err %v), want absent", c.Linearizability, err)
	}
	if ok.Linearizability.Verdict != "ok" {
		t.Error("Combine modified its input")
	}
}
