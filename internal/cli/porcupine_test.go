package cli

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// porcupineCase is one lock of the Porcupine tests, on lock-cycle's two
// locks with 4 clients: naive with a 5 ms lease under 20 ms of work (its
// leases expire mid-section: two holders at once, across the processes
// and within them), atomic with a 10 s lease (never two holders).
type porcupineCase struct {
	strategy string
	flags    []string
	illegal  bool
}

var porcupineCases = []porcupineCase{
	{"naive", []string{"--workload", "lock-cycle", "--keys", "2", "--ttl", "5ms", "--work", "20ms", "--retry", "fixed:interval=1ms"}, true},
	{"atomic", []string{"--workload", "lock-cycle", "--keys", "2", "--ttl", "10s", "--work", "2ms", "--retry", "fixed:interval=1ms"}, false},
}

// checkLin asserts s's linearizability block and cross-process count for
// c: the defective lock illegal on every lock key where lockbench counts
// an overlap and on no other (no disagreement), with cross-process
// overlaps; the correct one ok, no overlap, 0 disagreements.
func checkLin(t *testing.T, c porcupineCase, s report.Scenario) {
	t.Helper()
	l, cross := s.Linearizability, s.Violations.CrossOverlap
	if l == nil || cross == nil {
		t.Fatalf("%s: linearizability %+v, cross_overlap %v: want both (the histories were checked)", c.strategy, l, cross)
	}
	for i, n := range s.Raw.ClientOps {
		if n == 0 { // the processes' sections must meet for a count of 0 to say anything
			t.Fatalf("%s: client %d of the merged run made no operation (client ops %v)", c.strategy, i, s.Raw.ClientOps)
		}
	}
	if l.Sections == 0 || l.Operations != 2*l.Sections || l.Locks != 2 || l.UnknownLocks != 0 || l.Reason != "" ||
		!strings.HasPrefix(l.Checker, "porcupine v1.3.1") || l.BudgetMS != 10000 || l.MaxSections != 100000 {
		t.Fatalf("%s: linearizability %+v: want sections checked (2 operations each), both lock keys decided, the default bounds", c.strategy, *l)
	}
	t.Logf("%s: verdict %s, illegal locks %d of %d, overlap locks %d, cross_overlap %d, oracle_disagreements %d, %d sections checked in %.1f ms",
		c.strategy, l.Verdict, l.IllegalLocks, l.Locks, l.OverlapLocks, *cross, l.OracleDisagreements, l.Sections, l.ElapsedMS)
	if l.OracleDisagreements != 0 {
		t.Errorf("%s: %d lock keys where Porcupine and lockbench's count disagree (%+v); want 0", c.strategy, l.OracleDisagreements, *l)
	}
	if c.illegal {
		if l.Verdict != "illegal" || l.IllegalLocks == 0 || l.IllegalLocks != l.OverlapLocks || *cross == 0 {
			t.Errorf("%s: verdict %s, illegal locks %d, overlap locks %d, cross_overlap %d; want illegal on the keys with an overlap (> 0) and cross-process overlaps > 0",
				c.strategy, l.Verdict, l.IllegalLocks, l.OverlapLocks, *cross)
		}
		return
	}
	if l.Verdict != "ok" || l.IllegalLocks != 0 || l.OverlapLocks != 0 || *cross != 0 || *s.Violations.CrossOverlapPossible != 0 {
		t.Errorf("%s: verdict %s, illegal locks %d, overlap locks %d, cross_overlap %d (+%d possible); want ok and 0 everywhere",
			c.strategy, l.Verdict, l.IllegalLocks, l.OverlapLocks, *cross, *s.Violations.CrossOverlapPossible)
	}
}

// run --procs 2 checks its children's histories with Porcupine beside
// the cross-process count: naive is illegal where lockbench counts
// overlaps (--fail-on linearizable==1 fails, exit 3), atomic ok with 0
// overlaps (the same threshold and oracle_disagreements==0 pass); show
// --columns linearizable prints the verdict.
func TestPorcupineProcs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range porcupineCases {
		out := filepath.Join(dir, c.strategy+".json")
		args := append([]string{"run", "-q", "--procs", "2", "--strategy", c.strategy, "--driver", "rueidis", "--clients", "4",
			"--duration", "1s", "--out", out, "--fail-on", "linearizable==1,oracle_disagreements==0"}, c.flags...)
		r := lockbench(t, args...)
		want := 0
		if c.illegal {
			want = exitThresholds
		}
		if r.code != want {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", c.strategy, r.code, want, r.stdout, r.stderr)
		}
		run, err := report.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		checkLin(t, c, run.Scenarios[0])
		for _, th := range run.Thresholds {
			if th.Pass != (th.Metric == "oracle_disagreements" || !c.illegal) || th.NotMeasured {
				t.Errorf("%s: threshold %s: pass %v, measured %g (not measured %v)", c.strategy, th.Expr, th.Pass, th.Measured, th.NotMeasured)
			}
		}
		if len(run.Thresholds) != 2 {
			t.Errorf("%s: %d threshold results, want 2", c.strategy, len(run.Thresholds))
		}
		show := lockbench(t, "show", out, "--columns", "strategy,linearizable,other")
		l := run.Scenarios[0].Linearizability
		cell := "ok"
		if c.illegal {
			cell = "illegal (" + strconv.FormatInt(l.IllegalLocks, 10) + " of " + strconv.FormatInt(l.Locks, 10) + " locks)"
		}
		if show.code != 0 || !strings.Contains(show.stdout, cell) || c.illegal != strings.Contains(show.stdout, "porcupine illegal") {
			t.Errorf("%s: show exit %d, want the cell %q (and porcupine in the other violations only when illegal):\n%s%s", c.strategy, show.code, cell, show.stdout, show.stderr)
		}
	}
}

// Two segments run by hand, then merged and checked: merge records the
// same linearizability block, and lockbench check exits 3 on naive
// (illegal) and 0 on atomic (ok), with the verdict in its line.
func TestPorcupineMergeCheck(t *testing.T) {
	addr, _ := segServer(t)
	dir := t.TempDir()
	for _, c := range porcupineCases {
		id := "porc-" + c.strategy
		seg := func(i string) []string {
			return append([]string{"run", "-q", "--addr", addr, "--run-id", id, "--segment", i + "/2", "--barrier-timeout", "30s",
				"--strategy", c.strategy, "--driver", "rueidis", "--clients", "4", "--duration", "1s",
				"--out", filepath.Join(dir, id+"-"+i+".json")}, c.flags...)
		}
		second := exec.Command(bin, seg("2")...)
		var serr bytes.Buffer
		second.Stderr = &serr
		if err := second.Start(); err != nil {
			t.Fatal(err)
		}
		r := lockbench(t, seg("1")...)
		if err := second.Wait(); err != nil || r.code != 0 {
			t.Fatalf("%s: segment 1 exit %d (%s), segment 2 %v (%s)", c.strategy, r.code, r.stderr, err, serr.String())
		}
		files := []string{filepath.Join(dir, id+"-1.json"), filepath.Join(dir, id+"-2.json")}
		out := filepath.Join(dir, id+".json")
		if r := lockbench(t, append([]string{"merge", "--out", out}, files...)...); r.code != 0 {
			t.Fatalf("%s: merge exit %d\n%s", c.strategy, r.code, r.stderr)
		}
		run, err := report.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		checkLin(t, c, run.Scenarios[0])
		r = lockbench(t, append([]string{"check"}, files...)...)
		want, verdict := 0, "  ok  "
		if c.illegal {
			want, verdict = exitThresholds, "  illegal  "
		}
		if r.code != want || !strings.Contains(r.stdout, verdict) || !strings.Contains(r.stdout, c.strategy+"/rueidis/lock-cycle") {
			t.Errorf("%s: check exit %d, want %d and the verdict %q:\n%s\n%s", c.strategy, r.code, want, verdict, r.stdout, r.stderr)
		}
	}
	// A file without a history: nothing to check (exit 2).
	plain := filepath.Join(dir, "plain.json")
	if err := report.WriteFile(plain, &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic", Driver: "rueidis",
		Workload: "flash-sale", Retry: "fixed", Clients: 1, Raw: &report.Raw{WindowS: 1, Runs: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if r := lockbench(t, "check", plain); r.code != exitUsage || !strings.Contains(r.stderr, "no history to check") {
		t.Errorf("check of a file without a history: exit %d, want 2\n%s", r.code, r.stderr)
	}
	if r := lockbench(t, "check", "--check-budget", "0s", plain); r.code != exitUsage || !strings.Contains(r.stderr, "--check-budget") {
		t.Errorf("check --check-budget 0s: exit %d, want 2\n%s", r.code, r.stderr)
	}
}
