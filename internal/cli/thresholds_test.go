package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// A lease shorter than the critical section: naive overlaps (the run the
// claims and scenario files use for it).
var brokenRun = []string{"run", "-q", "--strategy", "naive", "--ttl", "5ms", "--work", "20ms", "--retry", "fixed:interval=1ms",
	"--stock", "50", "--clients", "10", "--driver", "rueidis", "--duration", "5s"}

// A lease far longer than the critical section: atomic is safe.
var safeRun = []string{"run", "-q", "--strategy", "atomic", "--ttl", "5s", "--work", "1ms", "--retry", "fixed:interval=1ms",
	"--stock", "50", "--clients", "10", "--driver", "rueidis", "--duration", "5s"}

func TestFailOnBrokenExits3(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "broken.json")
	r := lockbench(t, append(brokenRun, "--fail-on", "overlap==0", "--out", out)...)
	if r.code != exitThresholds {
		t.Fatalf("exit %d, want 3\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out) // written before the exit
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 1 || len(run.Thresholds) != 1 {
		t.Fatalf("%d scenarios, %d thresholds; want 1 and 1", len(run.Scenarios), len(run.Thresholds))
	}
	s, th := run.Scenarios[0], run.Thresholds[0]
	if s.Violations.Overlap == 0 {
		t.Fatalf("the broken setup did not overlap: %+v", s.Violations)
	}
	want := report.ThresholdResult{Expr: "overlap==0", Scenario: "naive/rueidis/flash-sale/fixed", Clients: 10, Metric: "overlap", Op: "==",
		Value: 0, Measured: float64(s.Violations.Overlap), Pass: false}
	if th != want {
		t.Fatalf("thresholds[0] = %+v, want %+v", th, want)
	}
	for _, w := range []string{"overlap==0", "naive/rueidis/flash-sale/fixed", "FAIL", "thresholds: 0 passed, 1 failed\nresults written to " + out} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "lockbench: thresholds failed: 1 of 1") {
		t.Errorf("stderr lacks the verdict:\n%s", r.stderr)
	}
}

func TestFailOnSafeExits0(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "safe.json")
	r := lockbench(t, append(safeRun, "--fail-on", "safety", "--fail-on", "atomic/*:ops==50, errors < 1", "--out", out)...)
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	n := len(report.ViolationKinds) + 2
	if len(run.Thresholds) != n {
		t.Fatalf("%d thresholds, want %d (safety's %d kinds, ops, errors): %+v", len(run.Thresholds), n, len(report.ViolationKinds), run.Thresholds)
	}
	for i, k := range report.ViolationKinds {
		if th := run.Thresholds[i]; th.Expr != k.Key+"==0" || th.Measured != 0 || !th.Pass {
			t.Errorf("thresholds[%d] = %+v, want %s==0 measured 0, passed", i, th, k.Key)
		}
	}
	ops := run.Thresholds[n-2]
	if ops.Expr != "atomic/*:ops==50" || ops.Measured != 50 || !ops.Pass || ops.Scenario != "atomic/rueidis/flash-sale/fixed" {
		t.Errorf("ops threshold %+v", ops)
	}
	if e := run.Thresholds[n-1]; e.Expr != "errors<1" || e.Measured != 0 || !e.Pass {
		t.Errorf("errors threshold %+v", e)
	}
	if want := fmt.Sprintf("thresholds: %d passed, 0 failed\n", n); !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	if strings.Contains(r.stdout, "FAIL") {
		t.Errorf("stdout shows a failure:\n%s", r.stdout)
	}
}

// thresholds: in a scenario file (a YAML list here) sets --fail-on; with
// --format json stdout is the JSON alone, thresholds included, and the
// summary goes to stderr.
func TestFailOnScenarioFileJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	yaml := "strategy: naive\nttl: 5ms\nwork: 20ms\nretry: fixed:interval=1ms\nstock: 50\nclients: 10\ndriver: rueidis\nduration: 5s\n" +
		"thresholds:\n  - overlap==0\n  - \"*/rueidis:ops > 0\"\n  - naive:p99_ms>=0,violations==0\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "f.json")
	r := lockbench(t, "run", "-q", "-f", file, "--format", "json", "--out", out)
	if r.code != exitThresholds {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	var run report.Run
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		t.Fatalf("stdout is not the JSON alone: %v\n%s", err, r.stdout)
	}
	exprs := []string{"overlap==0", "*/rueidis:ops>0", "naive:p99_ms>=0", "violations==0"} // a scope is per item
	pass := []bool{false, true, true, false}
	if len(run.Thresholds) != len(exprs) {
		t.Fatalf("%d thresholds, want %d: %+v", len(run.Thresholds), len(exprs), run.Thresholds)
	}
	for i, th := range run.Thresholds {
		if th.Expr != exprs[i] || th.Pass != pass[i] {
			t.Errorf("thresholds[%d] = %+v, want %s pass=%v", i, th, exprs[i], pass[i])
		}
	}
	if v := run.Thresholds[3]; v.Measured != float64(run.Scenarios[0].Violations.Total()) {
		t.Errorf("violations measured %g, the scenario's total is %d", v.Measured, run.Scenarios[0].Violations.Total())
	}
	for _, w := range []string{"thresholds: 2 passed, 2 failed", "threshold overlap==0 failed on naive/rueidis/flash-sale/fixed"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// Bad thresholds stop the run before anything starts (no result file),
// each problem named; a comma string in a scenario file works as the flag.
func TestFailOnUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "never.json")
	file := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(file, []byte("strategy: atomic\nthresholds: p99<5, overlap=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	twice := filepath.Join(dir, "twice.yaml")
	if err := os.WriteFile(twice, []byte("thresholds: safety\nfail-on: safety\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--fail-on", "p99<50"}, []string{`unknown metric "p99"; did you mean "p99_ms"?`, "metrics: oversell, overlap,", "commands_per_op"}},
		{[]string{"--fail-on", "overlap=0", "--fail-on", "ops_per_sec>fast"}, []string{`unknown operator "="`, `value "fast" is not a finite number`}},
		{[]string{"--fail-on", "redlock/*:safety"}, []string{`scope "redlock/*" matches no scenario`, "atomic/goredis/flash-sale/fixed"}},
		{[]string{"--fail-on", "atomic/*:"}, []string{"no metric after the scope"}},
		{[]string{"--fail-on", ""}, []string{"empty threshold"}},
		{[]string{"--clients", "0", "--fail-on", "opps>1"}, []string{"--clients", `unknown metric "opps"; did you mean "ops"?`}},
		{[]string{"-f", file}, []string{`unknown metric "p99"`, `unknown operator "="`}},
		{[]string{"-f", twice}, []string{"fail-on is given twice (thresholds and fail-on are one field)"}},
	}
	for _, c := range cases {
		args := append([]string{"run", "--force", "--out", out}, c.args...)
		r := lockbench(t, args...)
		if r.code != exitUsage {
			t.Errorf("lockbench %v: exit %d, want 2\n%s", args, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("lockbench %v: stderr lacks %q:\n%s", args, w, r.stderr)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("lockbench %v wrote %s", args, out)
		}
	}
}

// A run that fails for another reason keeps its exit code (1).
func TestFailOnFailedRunKeepsExit1(t *testing.T) {
	r := lockbench(t, "run", "--addr", "127.0.0.1:1", "--driver", "rueidis", "--strategy", "atomic",
		"--fail-on", "overlap==0", "--out", filepath.Join(t.TempDir(), "x.json"))
	if r.code != exitFailure {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
}
