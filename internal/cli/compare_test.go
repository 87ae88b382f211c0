package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// compare's regression message says whether the changes past the
// threshold were tested for significance: with fewer than 4 runs on a
// side they were not, and it does not claim "(and significant)".
func TestRegressionMessage(t *testing.T) {
	few := report.Change{FewSamples: true, BaseN: 1, NewN: 1}
	tested := report.Change{BaseN: 5, NewN: 5, Significant: true}
	cases := []struct {
		name   string
		deltas []report.Delta
		want   string
	}{
		{"none", []report.Delta{{Ops: few, P99: few}}, ""},
		{"one run a side", []report.Delta{{Ops: few, P99: few, Regressed: []string{"ops/s"}}, {Ops: few, P99: few}},
			"regression: 1 of 2 scenarios past their thresholds (threshold only, not tested: fewer than 4 runs on a side) or with more violations (ops/s)"},
		{"tested", []report.Delta{{Ops: tested, P99: tested, Regressed: []string{"ops/s", "p99"}}},
			"regression: 1 of 1 scenarios past their thresholds (and significant) or with more violations (ops/s, p99)"},
		{"both", []report.Delta{{Ops: tested, P99: tested, Regressed: []string{"ops/s"}}, {Ops: few, P99: few, Regressed: []string{"p99"}}},
			"regression: 2 of 2 scenarios past their thresholds (and significant, or threshold only, not tested, where a side has fewer than 4 runs) or with more violations (ops/s, p99)"},
		{"violations, one run a side", []report.Delta{{Ops: few, P99: few, Regressed: []string{"violations"}}},
			"regression: 1 of 1 scenarios past their thresholds (threshold only, not tested: fewer than 4 runs on a side) or with more violations (violations)"},
	}
	for _, c := range cases {
		err := regressionError(c.deltas)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want none", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, errRegressed)):
			t.Errorf("%s:\ngot  %v\nwant %s", c.name, err, c.want)
		}
	}
}

// Two one-run files: compare exits 1 and says the drop was not tested for
// significance.
func TestCompareUntestedMessage(t *testing.T) {
	dir := t.TempDir()
	base, worse := filepath.Join(dir, "b.json"), filepath.Join(dir, "w.json")
	for path, ops := range map[string]float64{base: 1000, worse: 800} {
		r := &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic", Driver: "rueidis",
			Workload: "flash-sale", Retry: "fixed", Clients: 1, OpsPerSec: ops, Params: map[string]string{"token": "random"}}}}
		if err := report.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
	}
	r := lockbench(t, "compare", base, worse, "--threshold", "10%")
	want := "lockbench: regression: 1 of 1 scenarios past their thresholds (threshold only, not tested: fewer than 4 runs on a side) or with more violations (ops/s)\n"
	if r.code != exitFailure || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "and significant") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Two one-run files differing only in commands per operation, 10x: exit 1
// naming cmds/op. A baseline with violations and no fault, for a strategy
// that promises none, is "invalid baseline" (exit 4, nothing compared);
// the same for naive, which is known to break, is compared.
func TestCompareCostAndInvalidBaseline(t *testing.T) {
	dir := t.TempDir()
	write := func(name, strategy string, cmds float64, overlap int64) string {
		path := filepath.Join(dir, name)
		s := report.Scenario{Strategy: strategy, Driver: "rueidis", Workload: "lock-cycle", Retry: "none", Clients: 4, Ops: 3000,
			OpsPerSec: 1000, Params: map[string]string{"token": "random"}}
		s.LatencyMS.Count, s.LatencyMS.P50, s.LatencyMS.P90, s.LatencyMS.P99, s.LatencyMS.P999, s.LatencyMS.Max, s.LatencyMS.Mean = 3000, 0.5, 0.8, 1, 2, 3, 0.6
		s.RedisCost.Commands, s.RedisCost.CommandsPerOp = int64(cmds*3000), cmds
		s.Violations.Overlap = overlap
		r := &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{s}}
		if err := report.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		return path
	}
	base, costly := write("b.json", "atomic", 4, 0), write("c.json", "atomic", 40, 0)
	r := lockbench(t, "compare", base, costly)
	if r.code != exitFailure || !strings.Contains(r.stdout, "REGRESSED: cmds/op") || !strings.Contains(r.stderr, "(cmds/op)") ||
		!strings.Contains(r.stdout, "+900.0% (n<4, not tested)") || strings.Contains(r.stderr, "and significant") {
		t.Fatalf("cmds/op x10: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := lockbench(t, "compare", base, base); r.code != 0 || !strings.Contains(r.stdout, "no regression in 1 scenarios") {
		t.Fatalf("same file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	broken := write("broken.json", "atomic", 4, 2)
	r = lockbench(t, "compare", broken, base)
	if r.code != exitInvalidBase || !strings.Contains(r.stderr, "invalid baseline, nothing compared: atomic/rueidis/lock-cycle/none: 2 violations and 0 errors") ||
		strings.Contains(r.stdout, "verdict") {
		t.Fatalf("invalid baseline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	naiveBase, naiveNew := write("nb.json", "naive", 4, 2), write("nn.json", "naive", 4, 2)
	if r := lockbench(t, "compare", naiveBase, naiveNew); r.code != 0 {
		t.Fatalf("naive's own violations: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
