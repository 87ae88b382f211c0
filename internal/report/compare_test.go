package report

import (
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
)

func twoRuns() (*Run, *Run) {
	mk := func(strategy string, ops, p99 float64, overlap int64) Scenario {
		return Scenario{Strategy: strategy, Driver: "rueidis", Workload: "flash-sale", Retry: "fixed:interval=100ms",
			Clients: 50, Params: map[string]string{"ttl": "100ms", "seed": "1"}, OpsPerSec: ops,
			LatencyMS: latency(p99), Violations: Violations{Overlap: overlap}}
	}
	base := &Run{Schema: Schema, Scenarios: []Scenario{mk("atomic", 1000, 10, 0), mk("watchdog", 800, 20, 0), mk("naive", 900, 10, 5)}}
	cur := &Run{Schema: Schema, Scenarios: []Scenario{mk("atomic", 500, 20, 0), mk("watchdog", 300, 40, 1), mk("fair", 10, 1, 0)}}
	cur.Scenarios[1].Params = map[string]string{"ttl": "100ms", "seed": "99"} // the seed does not split scenarios
	return base, cur
}

func latency(p99 float64) metrics.Latency { return metrics.Latency{P99: p99} }

func TestCompare(t *testing.T) {
	base, cur := twoRuns()
	d, missing, err := Compare(base, cur, 0.05, 0.05, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || len(missing) != 2 {
		t.Fatalf("%d deltas, missing %v", len(d), missing)
	}
	if d[0].Name != "atomic/rueidis/flash-sale/fixed" || len(d[0].Regressed) != 2 || d[0].OpsChange != -0.5 {
		t.Fatalf("atomic: %+v", d[0])
	}
	if len(d[1].Regressed) != 3 { // ops/s, p99, violations
		t.Fatalf("watchdog: %+v", d[1])
	}
	// Normalized to atomic: watchdog went from 0.8 to 0.6 of atomic's ops/s
	// (-25 %) and p99 from 2x to 2x (no change); atomic itself is the unit.
	d, _, err = Compare(base, cur, 0.05, 0.05, "atomic/rueidis/flash-sale/fixed")
	if err != nil {
		t.Fatal(err)
	}
	if len(d[0].Regressed) != 0 {
		t.Fatalf("the reference regressed against itself: %+v", d[0])
	}
	if w := d[1]; w.BaseOps != 0.8 || w.NewOps != 0.6 || w.P99Change != 0 || len(w.Regressed) != 2 {
		t.Fatalf("normalized watchdog: %+v", w)
	}
	if d, _, _ := Compare(base, cur, 0.05, 10, ""); len(d[0].Regressed) != 1 || d[0].Regressed[0] != "ops/s" {
		t.Fatalf("with a 1000%% p99 threshold only ops/s regresses: %+v", d[0])
	}
	if _, _, err := Compare(base, cur, 0.05, 0.05, "nope/x/y/z"); err == nil {
		t.Fatal("a missing reference was accepted")
	}
}
