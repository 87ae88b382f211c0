package cli

import (
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// A follower segment runs no end check: its progress line prints "-" for
// the kinds only the end check counts, as its table row does, never 0;
// a run that checked prints its counts. Rates below 10 keep two decimals.
func TestSummaryUnmeasuredKinds(t *testing.T) {
	follower := report.Scenario{OpsPerSec: 1.0 / 3, DurationS: 3, StopReason: "duration",
		Violations: report.Violations{Overlap: 2, EndCheck: report.EndCheckNotRun}}
	checked := report.Scenario{OpsPerSec: 688, DurationS: 2, StopReason: "done",
		Violations: report.Violations{Overlap: 4, Oversell: 0, LostUpdates: 3}}
	for _, c := range []struct {
		got, want string
	}{
		{scenarioSummary(follower), "0.33 ops/s, overlap 2, oversell -, lost updates - (3.0s, duration)"},
		{shortSummary(follower), "0.33 ops/s overlap 2 oversell - lost upd - 3.0s"},
		{scenarioSummary(checked), "688 ops/s, overlap 4, oversell 0, lost updates 3 (2.0s, done)"},
		{shortSummary(checked), "688 ops/s overlap 4 oversell 0 lost upd 3 2.0s"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
