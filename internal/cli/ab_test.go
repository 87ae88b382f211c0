package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// abScenario is a lock-cycle without contention (each client its own
// key): a client's ops/s is set by its own cycle, so the test slowdown's
// share is the drop in ops/s. 5 s leases: no lease expires under load.
var abScenario = []string{"--", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--own-keys",
	"--clients", "4", "--ttl", "5s"}

// lockbench ab reaches both verdicts on real runs: a candidate slowed by
// half (the test slowdown) is "slower" (exit 1) with its interval, and
// the build against itself is never worse (exit 0: same, or undecided
// when the rounds run out first on a loaded machine). Each run's result
// file is kept with --keep.
func TestABTimed(t *testing.T) {
	dir := t.TempDir()
	r := lockbench(t, append([]string{"ab", "self", "self:--test-slowdown atomic=50%", "--run-duration", "300ms", "--budget", "60s",
		"--keep", dir, "--seed", "7"}, abScenario...)...)
	// Half the operations in the same runs is slower, and costlier too:
	// each run's fixed client CPU (start-up, connections, samplers) is
	// shared by half as many operations. ab stops at the first figure
	// decided worse; on a loaded machine ops/s is the noisier of the two
	// and client CPU per operation (x2.2 once) can be decided first.
	worse := func(v string) bool {
		return strings.Contains(r.stdout, "verdict: "+v+": atomic/rueidis/lock-cycle/") &&
			strings.Contains(r.stderr, "regression: NEW is "+v+" than BASE")
	}
	if r.code != exitFailure || !(worse("slower") || worse("costlier")) || !strings.Contains(r.stdout, "95% interval") {
		t.Fatalf("slowed by half: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	base, _ := filepath.Glob(filepath.Join(dir, "base-*.json"))
	if len(files) < 12 || len(base)*2 != len(files) {
		t.Fatalf("kept %d result files, %d of BASE: want a pair per round, at least 6 rounds", len(files), len(base))
	}
	r = lockbench(t, append([]string{"ab", "self", "self", "--run-duration", "300ms", "--max-rounds", "8", "--seed", "7"}, abScenario...)...)
	if r.code != 0 || !(strings.Contains(r.stdout, "verdict: same") || strings.Contains(r.stdout, "verdict: undecided")) ||
		strings.Contains(r.stdout, "slower") || strings.Contains(r.stdout, "costlier") {
		t.Fatalf("against itself: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// At most 8 rounds; all 8 unless every figure was decided (same)
	// before: on a quiet machine an A/A run decided all 6 at round 6.
	undecided := strings.Contains(r.stdout, "verdict: undecided")
	if strings.Contains(r.stderr, "ab: round 9 ") || undecided && !strings.Contains(r.stderr, "ab: round 8 ") {
		t.Fatalf("--max-rounds 8 not kept:\n%s", r.stderr)
	}
}

// A baseline whose leases expire under its work (5 ms under 20 ms, a
// strategy that promises no violation) is "invalid baseline": exit 4
// after its first round, nothing compared.
func TestABInvalidBaseline(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	r := lockbench(t, "ab", "self:--ttl 5ms --work 20ms", "self", "--run-duration", "500ms", "--",
		"--strategy", "atomic", "--driver", "rueidis", "--workload", "flash-sale", "--clients", "4", "--stock", "100000")
	if r.code != exitInvalidBase || !strings.Contains(r.stderr, "invalid baseline, nothing compared: atomic/rueidis/flash-sale/") ||
		strings.Contains(r.stdout, "verdict") || strings.Contains(r.stderr, "ab: round 2 ") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Bad input: exit 2 with a message, before any run.
func TestABBadInput(t *testing.T) {
	t.Parallel()
	yaml := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(yaml, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "self"}, "ab takes two sides"},
		{[]string{"ab", "self", "self", "--", "--out", "x.json"}, "cannot set --out"},
		{[]string{"ab", "self", "self", "--", "--repeat", "3"}, "cannot set --repeat"},
		{[]string{"ab", "self", "nope.yaml"}, "scenario file"},
		{[]string{"ab", "self", yaml}, "not an executable lockbench binary"},
		{[]string{"ab", "self", "self", "--threshold", "x"}, "--threshold"},
		{[]string{"ab", "self", "self", "--min-rounds", "1"}, "--min-rounds must be at least 2"},
		{[]string{"ab", "self", "self:--strategy nope"}, "NEW ("},
	} {
		r := lockbench(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
}

// The stopping rule on made-up rounds (ops/s only): a figure worse at
// 95 % but not at the interim 99.9 % runs on; worse at both stops; with
// the interim level at 95 % the first worse look stops (the rule without
// the boundary); a decided "same" stops after --min-rounds.
func TestABStopEarly(t *testing.T) {
	rounds := func(ratios ...float64) *abRun {
		ab := &abRun{confidence: 0.95, interim: 0.999,
			figs: []abFigure{{name: "ops/s", higherBetter: true, threshold: 0.05,
				of: func(_ *report.Run, s report.Scenario) float64 { return s.OpsPerSec }}}}
		for _, x := range ratios {
			for side, v := range []float64{1000, 1000 * x} {
				ab.runs[side] = append(ab.runs[side], &report.Run{Scenarios: []report.Scenario{{
					Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "none", OpsPerSec: v}}})
			}
		}
		return ab
	}
	rep := func(x float64, n int) []float64 { return slices.Repeat([]float64{x}, n) }
	for _, c := range []struct {
		name    string
		ab      *abRun
		interim float64
		want    string
		verdict string // of the 95 % decision
	}{
		{"8 rounds at x0.85: worse at 95 %, no 99.9 % interval yet", rounds(rep(0.85, 8)...), 0.999, "", report.Worse},
		{"11 rounds at x0.85: worse at 99.9 % too", rounds(rep(0.85, 11)...), 0.999, "a figure is worse at the interim level (0.999)", report.Worse},
		{"12 rounds, two of them x1.0: worse at 95 %, not at 99.9 %", rounds(append(rep(0.85, 10), 1, 1)...), 0.999, "", report.Worse},
		{"8 rounds at x0.85, no boundary", rounds(rep(0.85, 8)...), 0.95, "a figure is worse", report.Worse},
		{"6 rounds at x1.0: same", rounds(rep(1, 6)...), 0.999, "every figure is decided", report.Same},
		{"5 rounds at x1.0: fewer than --min-rounds", rounds(rep(1, 5)...), 0.999, "", report.Undecided},
	} {
		c.ab.interim = c.interim
		res := c.ab.decide(len(c.ab.runs[0]), c.ab.confidence)
		if got := c.ab.stopEarly(res, 6); got != c.want || res.decisions[0][0].Verdict != c.verdict {
			t.Errorf("%s: stop %q, verdict %s; want %q, %s", c.name, got, res.decisions[0][0].Verdict, c.want, c.verdict)
		}
	}
}
