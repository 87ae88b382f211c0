package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/internal/topology/topotest"
)

// segServer starts one redis-server for a segments test and returns the
// flags that reach it (the password through the environment, out of ps:
// os.Setenv is inherited by the lockbench processes the test runs).
func segServer(t *testing.T) (addr string, cmd func(args ...string) string) {
	t.Helper()
	s := topotest.Start(t)
	t.Setenv("LOCKBENCH_PASSWORD", s.Password)
	return s.Addr, func(args ...string) string {
		t.Helper()
		v, err := topology.Command(s.Addr, s.Password, 2e9, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
}

// Bad segment flags: exit 2 with a message saying what to give.
func TestSegmentUsageErrors(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "")
	os.Unsetenv("JOB_COMPLETION_INDEX")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--segment", "1/2", "--addr", "127.0.0.1:1"}, "needs --run-id"},
		{[]string{"--segment", "3/2", "--run-id", "x", "--addr", "127.0.0.1:1"}, "the segment must be from 1 to 2"},
		{[]string{"--segment", "1-2", "--run-id", "x", "--addr", "127.0.0.1:1"}, "want i/N"},
		{[]string{"--segment", "1/2", "--run-id", "x"}, "needs --addr"},
		{[]string{"--segment-count", "3", "--run-id", "x", "--addr", "127.0.0.1:1"}, "needs $JOB_COMPLETION_INDEX"},
		{[]string{"--segment", "1/2", "--segment-count", "2", "--run-id", "x", "--addr", "127.0.0.1:1"}, "do not go together"},
		{[]string{"--segment", "1/2", "--run-id", "a b", "--addr", "127.0.0.1:1"}, "--run-id"},
		{[]string{"--procs", "2", "--segment", "1/2", "--run-id", "x", "--addr", "127.0.0.1:1"}, "does not go with --segment"},
		{[]string{"--segment", "1/2", "--run-id", "x", "--addr", "127.0.0.1:1", "--barrier-timeout", "0s"}, "--barrier-timeout"},
	} {
		r := lockbench(t, append([]string{"run", "-q", "--strategy", "atomic", "--driver", "rueidis"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
}

// One segment of 3 alone: its start barrier times out naming the two
// missing segments, and it leaves no key behind.
func TestSegmentBarrierTimeout(t *testing.T) {
	addr, cmd := segServer(t)
	out := filepath.Join(t.TempDir(), "s1.json")
	r := lockbench(t, "run", "-q", "--addr", addr, "--segment", "1/3", "--run-id", "lonely", "--barrier-timeout", "500ms",
		"--strategy", "atomic", "--driver", "rueidis", "--clients", "3", "--duration", "1s", "--out", out)
	if r.code != exitFailure || !strings.Contains(r.stderr, "segment(s) 2, 3 of 3") || !strings.Contains(r.stderr, "--barrier-timeout") ||
		!strings.Contains(r.stderr, "scenario 1 (") || !strings.Contains(r.stderr, "scenario 1's start barrier") {
		t.Fatalf("exit %d, want 1 naming segments 2, 3:\n%s", r.code, r.stderr)
	}
	if n := cmd("DBSIZE"); n != "0" {
		t.Fatalf("%s keys left, want 0", n)
	}
}

// Two segments of one run id with different plans: the second is refused
// (exit 2) with both plan hashes.
func TestSegmentPlanMismatch(t *testing.T) {
	addr, cmd := segServer(t)
	dir := t.TempDir()
	base := []string{"run", "-q", "--addr", addr, "--run-id", "mixed", "--barrier-timeout", "3s",
		"--strategy", "atomic", "--driver", "rueidis", "--duration", "1s"}
	first := exec.Command(bin, append(base, "--segment", "2/2", "--clients", "4", "--out", filepath.Join(dir, "a.json"))...)
	var ferr bytes.Buffer
	first.Stderr = &ferr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Wait() }()
	// The second starts once the first registered its plan (else the
	// second could register first and the first be the one refused).
	for k := 0; k < 300 && cmd("EXISTS", "lockbench:mixed:barrier:run") != "1"; k++ {
		time.Sleep(10 * time.Millisecond)
	}
	var r result
	for k := 0; k < 30; k++ {
		r = lockbench(t, append(base, "--segment", "1/2", "--clients", "6", "--allow-nonempty", "--force", "--out", filepath.Join(dir, "b.json"))...)
		if r.code == exitUsage {
			break
		}
	}
	if r.code != exitUsage || !strings.Contains(r.stderr, "plan (hash ") || strings.Count(r.stderr, "hash ") < 2 {
		t.Fatalf("exit %d, want 2 naming both plan hashes:\n%s", r.code, r.stderr)
	}
}

// merge refuses segment files of two runs, of two plans, and two files of
// one segment (exit 2).
func TestMergeRefusesOtherRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sc := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 2, Params: map[string]string{"ttl": "1s"},
		Raw: &report.Raw{WindowS: 1, Runs: 1}}
	write := func(name, runID, plan string, seg int) string {
		r := &report.Run{Schema: report.Schema, Meta: report.Meta{RunID: runID, PlanHash: plan, Segment: seg, Segments: 2}, Scenarios: []report.Scenario{sc}}
		p := filepath.Join(dir, name)
		if err := report.WriteFile(p, r); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", "r1", "p1", 1)
	b := write("b.json", "r2", "p1", 2)
	c := write("c.json", "r1", "p2", 2)
	d := write("d.json", "r1", "p1", 1)
	e := write("e.json", "r1", "p1", 2)
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{a, b}, "run id r2"},
		{[]string{a, c}, "plan hash p2"},
		{[]string{a, d}, "both segment 1/2"},
	} {
		r := lockbench(t, append([]string{"merge", "--out", filepath.Join(dir, "m.json")}, tc.files...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("merge %v: exit %d, want 2 and %q:\n%s", tc.files, r.code, tc.want, r.stderr)
		}
	}
	m := filepath.Join(dir, "ok.json")
	if r := lockbench(t, "merge", "--out", m, e, a); r.code != 0 {
		t.Fatalf("merge of one run's segments: exit %d\n%s", r.code, r.stderr)
	}
	// The merged file is no segment to merge again; --out must not be an
	// input (it would be replaced).
	if r := lockbench(t, "merge", "--out", filepath.Join(dir, "m2.json"), m, e); r.code != exitUsage || !strings.Contains(r.stderr, "is already the merge of 2 segments") {
		t.Errorf("merge of a merged file with a segment: exit %d\n%s", r.code, r.stderr)
	}
	if r := lockbench(t, "merge", "--out", a, a, e); r.code != exitUsage || !strings.Contains(r.stderr, "is one of the files to merge") {
		t.Errorf("merge --out an input: exit %d\n%s", r.code, r.stderr)
	}
	got, err := report.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.Segments != 2 || got.Meta.Segment != 0 || len(got.Meta.KilledSegments) != 0 || got.Scenarios[0].Clients != 4 {
		t.Fatalf("merged meta segment %d segments %d killed %v clients %d; want 0, 2, none, 4",
			got.Meta.Segment, got.Meta.Segments, got.Meta.KilledSegments, got.Scenarios[0].Clients)
	}
}

// --procs 4 runs every scenario's clients across 4 processes, one run id,
// and merges them: naive under a lease shorter than its work overlaps;
// atomic under a lease of seconds has no violation, and its end check
// (over every segment's orders: the leader pools them) agrees with the
// stock. 10 clients split 3, 3, 2, 2.
func TestProcs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "naive.json")
	r := lockbench(t, "run", "--procs", "4", "--strategy", "naive", "--driver", "rueidis", "--clients", "10", "--duration", "2s",
		"--ttl", "5ms", "--work", "20ms", "--retry", "fixed:interval=1ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("naive: exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Scenarios[0]
	if run.Meta.Segments != 4 || s.Clients != 10 || len(run.Meta.KilledSegments) != 0 || run.Meta.PlanHash == "" || run.Meta.RunNonce == "" {
		t.Fatalf("meta segments %d, clients %d, killed %v, plan %q, nonce %q", run.Meta.Segments, s.Clients, run.Meta.KilledSegments, run.Meta.PlanHash, run.Meta.RunNonce)
	}
	if s.Violations.Overlap == 0 {
		t.Fatalf("naive with a 5ms lease over 20ms of work: no overlap in-process: %+v", s.Violations)
	}
	if c := s.Violations.CrossOverlap; c == nil || *c == 0 || !strings.Contains(s.CrossCheck, "4 histories, same host") {
		t.Fatalf("naive with a 5ms lease over 20ms of work: cross-process overlaps %v (%q): want > 0 from 4 histories of one host", c, s.CrossCheck)
	}

	out = filepath.Join(dir, "atomic.json")
	// Its own TMPDIR, to see that the children's directory (and the
	// servers' data directories) are gone at the end.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	r = lockbenchEnv(t, []string{"TMPDIR=" + tmp}, "run", "--procs", "4", "--strategy", "atomic", "--driver", "rueidis", "--clients", "10", "--duration", "2s",
		"--ttl", "5s", "--work", "1ms", "--stock", "100000", "--out", out)
	if r.code != 0 {
		t.Fatalf("atomic: exit %d\n%s", r.code, r.stderr)
	}
	if run, err = report.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	s = run.Scenarios[0]
	if s.Violations.Total() != 0 {
		t.Fatalf("atomic with a 5s lease: violations %+v", s.Violations)
	}
	if c, p := s.Violations.CrossOverlap, s.Violations.CrossOverlapPossible; c == nil || *c != 0 || p == nil || *p != 0 {
		t.Fatalf("atomic with a 5s lease: cross-process overlaps %v, possible %v: want 0 and 0", c, p)
	}
	f := s.Figures
	if f["sold"] == 0 || f["acked_orders"] != f["sold"] || f["sold"]+f["final_stock"] != 100000 || f["sold"] < s.Ops {
		t.Fatalf("atomic end check: %v (ops %d): want acked = sold > 0, sold + final_stock = 100000", f, s.Ops)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("TMPDIR after the run: %v (err %v); want it empty", names, err)
	}
}

// Ctrl-C during --procs: the parent forwards it to its child processes
// and exits 130 once they stopped; no child lockbench and no redis-server
// outlives it, and the temporary directory of the children's result files
// (under TMPDIR) is removed.
func TestProcsInterrupt(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--procs", "2", "--strategy", "atomic", "--driver", "rueidis", "--stock", "100000000",
		"--duration", "60s", "--clients", "4", "--out", filepath.Join(dir, "int.json"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errOut := &syncBuffer{}
	go io.Copy(errOut, stderr)
	// A redis-server and the 2 segments, then 3 s for the segments to
	// pass their start barrier (500 ms after the last one registers).
	var procs []int // the children, and theirs
	for deadline := time.Now().Add(30 * time.Second); len(procs) < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("processes under lockbench: %v, want a redis-server and 2 segments within 30 s\n%s", procs, errOut)
		}
		procs = procs[:0]
		for _, c := range children(cmd.Process.Pid) {
			procs = append(procs, c)
			procs = append(procs, children(c)...)
		}
	}
	time.Sleep(3 * time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 30*time.Second) {
		t.Fatalf("lockbench --procs did not stop within 30 s of Ctrl-C\n%s", errOut)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(errOut.String(), "interrupted") {
		t.Fatalf("exit %d, want %d, and a line saying it was interrupted\n%s", code, exitInterrupted, errOut)
	}
	waitGone(t, procs)
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Fatalf("TMPDIR after Ctrl-C: %v (err %v); want it empty", entries, err)
	}
}

// --procs with Redlock: the parent starts the 5 masters once and every
// segment locks on all of them (quorum 3); a healthy lease shows no
// overlap in-process or across the processes, and the merged result
// names the 5 nodes.
func TestProcsRedlock(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "redlock.json")
	r := lockbench(t, "run", "--procs", "2", "--strategy", "redlock", "--driver", "rueidis", "--clients", "4", "--duration", "1s",
		"--ttl", "5s", "--work", "1ms", "--workload", "lock-cycle", "--keys", "1", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Scenarios[0]
	if run.Meta.Segments != 2 || s.Clients != 4 || s.Ops == 0 || len(run.Meta.Servers) != 5 {
		t.Fatalf("segments %d, clients %d, ops %d, servers %d; want 2, 4, > 0, 5", run.Meta.Segments, s.Clients, s.Ops, len(run.Meta.Servers))
	}
	if c := s.Violations.CrossOverlap; s.Violations.Total() != 0 || c == nil || *c != 0 {
		t.Fatalf("redlock with a 5s lease: violations %+v, cross-process overlaps %v; want none", s.Violations, c)
	}
}
