package claims

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

func TestTableIsComplete(t *testing.T) {
	runs := map[string]bool{}
	for _, r := range Runs() {
		if runs[r.Name] {
			t.Errorf("run %q defined twice", r.Name)
		}
		runs[r.Name] = true
	}
	ids := map[string]bool{}
	for _, c := range Table() {
		ids[c.ID] = true
		if c.Claim == "" || c.Article == "" || c.Scaling == "" || c.Rule == "" || c.Judge == nil || len(c.Runs) == 0 {
			t.Errorf("%s: incomplete row %+v", c.ID, c)
		}
		for _, r := range c.Runs {
			if !runs[r] {
				t.Errorf("%s uses unknown run %q", c.ID, r)
			}
		}
	}
	for _, id := range []string{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "S11", "S12", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"} {
		if !ids[id] {
			t.Errorf("claims table row %s has no experiment", id)
		}
	}
	if len(ids) != 20 {
		t.Errorf("%d claims, want the 20 rows of the claims table (docs/claims.md)", len(ids))
	}
}

func TestSelect(t *testing.T) {
	cs, err := Select([]string{"p1", " S2"})
	if err != nil || len(cs) != 2 || cs[0].ID != "S2" || cs[1].ID != "P1" {
		t.Fatalf("Select = %v %v, want S2, P1 in table order", cs, err)
	}
	if _, err := Select([]string{"S2", "Z1"}); err == nil || !strings.Contains(err.Error(), "unknown claim id Z1") || !strings.Contains(err.Error(), "P8") {
		t.Fatalf("Select(Z1) = %v", err)
	}
}

func sc(strategy string, mod func(s *report.Scenario)) report.Scenario {
	s := report.Scenario{Strategy: strategy, Retry: "fixed:interval=5ms", Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	if mod != nil {
		mod(&s)
	}
	return s
}

// The judges compute verdicts from the figures: a broken strategy's
// violations make S2/S3 reproduced, their absence does not.
func TestJudgesUseMeasuredValues(t *testing.T) {
	c, _ := Select([]string{"S2", "S3"})
	broken := Results{"long-task": {Scenarios: []report.Scenario{
		sc("naive", func(s *report.Scenario) { s.Violations.Overlap, s.Violations.ForeignReleases = 5, 3 }),
		sc("atomic", func(s *report.Scenario) { s.Violations.Overlap = 2 }),
	}}}
	for _, cl := range c {
		if out := cl.Judge(broken); out.Verdict != Reproduced || len(out.Figures) == 0 {
			t.Errorf("%s on violations: %+v, want reproduced with figures", cl.ID, out)
		}
	}
	clean := Results{"long-task": {Scenarios: []report.Scenario{sc("naive", nil), sc("atomic", nil)}}}
	for _, cl := range c {
		if out := cl.Judge(clean); out.Verdict != NotReproduced {
			t.Errorf("%s without violations: %+v, want not reproduced", cl.ID, out)
		}
	}
	// A scenario missing from the run is a failure, not a verdict.
	if out := c[0].Judge(Results{"long-task": {}}); out.Verdict != Failed || !strings.Contains(out.Measured, "no naive") {
		t.Errorf("missing scenario: %+v", out)
	}
}

// Execute runs each run once, shares it between claims, appends the quick
// and extra flags, marks the claims of a failed run Failed, and reports
// missing strategies as NeedsBaseline.
func TestExecute(t *testing.T) {
	cs, _ := Select([]string{"S2", "S3", "S5", "S1"})
	cs = append(cs, Claim{ID: "X1", Runs: []string{"long-task"}, Needs: []string{"no-such-strategy"}})
	var calls []string
	runner := func(_ context.Context, r Run, args []string) (*report.Run, error) {
		calls = append(calls, r.Name)
		if args[len(args)-1] != "1.5s" && r.Name == "crash" || !strings.Contains(strings.Join(args, " "), "--driver goredis") {
			t.Errorf("%s args %v: want the extra and quick flags", r.Name, args)
		}
		if r.Name == "crash" {
			return nil, errors.New("boom")
		}
		return &report.Run{Scenarios: []report.Scenario{
			sc("naive", func(s *report.Scenario) { s.Violations.Overlap, s.Violations.ForeignReleases = 1, 1 }),
			sc("atomic", func(s *report.Scenario) { s.Violations.Overlap = 1 }),
			sc("watchdog", func(s *report.Scenario) { s.StrategyStats["renewals"] = 9 }),
		}}, nil
	}
	rows := Execute(context.Background(), cs, Options{Quick: true, Extra: []string{"--driver", "goredis"}}, runner)
	if strings.Join(calls, ",") != "crash,long-task" {
		t.Fatalf("runs %v, want crash then long-task once", calls)
	}
	got := map[string]Verdict{}
	for _, r := range rows {
		got[r.ID] = r.Verdict
	}
	want := map[string]Verdict{"S1": Failed, "S2": Reproduced, "S3": Reproduced, "S5": Reproduced, "X1": NeedsBaseline}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: %q, want %q", id, got[id], v)
		}
	}
	var md, tbl bytes.Buffer
	rep := &Report{Meta: Meta{Mode: "quick", Driver: "goredis"}, Rows: rows}
	if err := WriteMarkdown(&md, rep); err != nil || !strings.Contains(md.String(), "| S2 |") || !strings.Contains(md.String(), "**reproduced**") {
		t.Fatalf("markdown %v:\n%s", err, md.String())
	}
	if err := WriteTable(&tbl, rows); err != nil || !strings.Contains(tbl.String(), "needs baseline") {
		t.Fatalf("table %v:\n%s", err, tbl.String())
	}
	if c := rep.Counts(); c[Reproduced] != 3 || c[Failed] != 1 || c[NeedsBaseline] != 1 {
		t.Fatalf("counts %v", c)
	}
}
