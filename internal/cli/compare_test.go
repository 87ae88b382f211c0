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
			"regression: 1 of 2 scenarios past the 5% threshold (not tested for significance: fewer than 4 runs on a side) or with more violations"},
		{"tested", []report.Delta{{Ops: tested, P99: tested, Regressed: []string{"ops/s", "p99"}}},
			"regression: 1 of 1 scenarios past the 5% threshold (and significant) or with more violations"},
		{"both", []report.Delta{{Ops: tested, P99: tested, Regressed: []string{"ops/s"}}, {Ops: few, P99: few, Regressed: []string{"p99"}}},
			"regression: 2 of 2 scenarios past the 5% threshold (and significant, or not tested for significance where a side has fewer than 4 runs) or with more violations"},
		{"violations, one run a side", []report.Delta{{Ops: few, P99: few, Regressed: []string{"violations"}}},
			"regression: 1 of 1 scenarios past the 5% threshold (not tested for significance: fewer than 4 runs on a side) or with more violations"},
	}
	for _, c := range cases {
		err := regressionError(c.deltas, "5%")
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
	want := "lockbench: regression: 1 of 1 scenarios past the 10% threshold (not tested for significance: fewer than 4 runs on a side) or with more violations\n"
	if r.code != exitFailure || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "and significant") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
