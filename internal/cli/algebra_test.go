package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// --procs with --repeat: each repeat is a round of child processes, and
// the row is the rounds pooled (report.Combine, Sequential): its ops are
// the sum of the rounds' (one sample each), its window their sum, and the
// table, show --format benchstat, compare and the JSON give one ops/s,
// p99 and commands/op.
func TestProcsRepeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "pr.json")
	// A children's directory left by a --procs run killed with SIGKILL
	// (a process now gone): this run removes it, and leaves its own none.
	tmp := filepath.Join(dir, "tmp")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(tmp, fmt.Sprintf(".lockbench-%d-procs-123", dead.Process.Pid))
	if err := os.MkdirAll(filepath.Join(stale, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := lockbenchEnv(t, []string{"TMPDIR=" + tmp}, "run", "--procs", "2", "--repeat", "2", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle",
		"--keys", "1", "--clients", "6", "--work", "1ms", "--duration", "1s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 || !strings.Contains(r.stderr, "removed "+stale) {
		t.Fatalf("TMPDIR after the run: %v (%v); stderr:\n%s", entries, err, r.stderr)
	}
	if !strings.Contains(r.stderr, "results of 2 segments x 2 repeats merged into") {
		t.Fatalf("stderr lacks the rounds line:\n%s", r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Check(run); err != nil {
		t.Fatal(err)
	}
	s := run.Scenarios[0]
	if s.Raw == nil || s.Raw.Runs != 2 || len(s.Samples) != 2 || s.Repeats == nil || s.Repeats.N != 2 || s.Clients != 6 || len(s.Raw.ClientOps) != 6 {
		t.Fatalf("raw %+v, samples %d, repeats %+v, clients %d: want 2 runs of 6 clients", s.Raw, len(s.Samples), s.Repeats, s.Clients)
	}
	var ops int64
	for _, x := range s.Samples {
		ops += x.Ops
	}
	if ops != s.Ops || s.Ops != s.LatencyMS.Count {
		t.Fatalf("ops %d, samples' ops sum %d, latency count %d", s.Ops, ops, s.LatencyMS.Count)
	}
	if c := s.Violations.CrossOverlap; c == nil || *c != 0 {
		t.Fatalf("cross-process overlaps %v: want 0 summed over both rounds", c)
	}
	checkAgree(t, out, s)
}

// checkAgree runs show (table, benchstat) and compare on the file out of
// one scenario s and checks they print s's ops/s, p99 and commands/op.
func checkAgree(t *testing.T, out string, s report.Scenario) {
	t.Helper()
	show := lockbench(t, "show", out)
	if show.code != 0 {
		t.Fatalf("show: exit %d\n%s", show.code, show.stderr)
	}
	row := fmt.Sprintf("│ %.0f ", s.OpsPerSec)
	if !strings.Contains(show.stdout, row) || !strings.Contains(show.stdout, "│ "+report.FormatMS(s.LatencyMS.P99)+" ") {
		t.Fatalf("show's table lacks ops/s %q or p99 %s:\n%s", row, report.FormatMS(s.LatencyMS.P99), show.stdout)
	}
	cmp := lockbench(t, "compare", out, out)
	if cmp.code != 0 {
		t.Fatalf("compare: exit %d\n%s", cmp.code, cmp.stderr)
	}
	if !strings.Contains(cmp.stdout, fmt.Sprintf("│ %.1f ", s.OpsPerSec)) || !strings.Contains(cmp.stdout, fmt.Sprintf("│ %.1f ", s.LatencyMS.P99)) {
		t.Fatalf("compare lacks ops/s %.1f or p99 %.1f:\n%s", s.OpsPerSec, s.LatencyMS.P99, cmp.stdout)
	}
	bs := lockbench(t, "show", out, "--format", "benchstat")
	if bs.code != 0 {
		t.Fatalf("show --format benchstat: exit %d\n%s", bs.code, bs.stderr)
	}
	// One line per run: its ops, ops/s, p99 and cmds/op are the sample's.
	line := regexp.MustCompile(`(?m)^BenchmarkLock/\S+ (\d+) (\S+) ops/s .* (\S+) p99-ms .* (\S+) cmds/op$`)
	m := line.FindAllStringSubmatch(bs.stdout, -1)
	if len(m) != len(s.Samples) {
		t.Fatalf("benchstat lines %d, samples %d:\n%s", len(m), len(s.Samples), bs.stdout)
	}
	var ops int64
	for i, x := range s.Samples {
		n, _ := strconv.ParseInt(m[i][1], 10, 64)
		o, _ := strconv.ParseFloat(m[i][2], 64)
		p, _ := strconv.ParseFloat(m[i][3], 64)
		c, _ := strconv.ParseFloat(m[i][4], 64)
		if n != x.Ops || o != x.OpsPerSec || p != x.P99MS || c != x.CommandsPerOp {
			t.Fatalf("benchstat line %d: %v; sample %+v", i, m[i][1:], x)
		}
		ops += n
	}
	if ops != s.Ops {
		t.Fatalf("benchstat lines' ops sum %d, the row's %d", ops, s.Ops)
	}
	if len(s.Samples) == 1 && (s.Samples[0].OpsPerSec != s.OpsPerSec || s.Samples[0].P99MS != s.LatencyMS.P99 || s.Samples[0].CommandsPerOp != s.RedisCost.CommandsPerOp) {
		t.Fatalf("one run: sample %+v, row ops/s %v p99 %v cmds/op %v", s.Samples[0], s.OpsPerSec, s.LatencyMS.P99, s.RedisCost.CommandsPerOp)
	}
	if s.RedisCost.CommandsPerOp != float64(s.RedisCost.Commands)/float64(s.RedisCost.Ops) {
		t.Fatalf("commands/op %v, commands %d / ops %d", s.RedisCost.CommandsPerOp, s.RedisCost.Commands, s.RedisCost.Ops)
	}
}

// Two segments run by hand and merged: the merged row's ops are the two
// files' summed, its clients' counts the two concatenated, its server cost
// counted once (both processes read the same server), and show, benchstat
// and compare print its figures. The follower's own table prints "-" for
// the end checks it does not run, and its JSON leaves them out.
func TestSegmentsByHandMerge(t *testing.T) {
	addr, _ := segServer(t)
	dir := t.TempDir()
	base := []string{"run", "-q", "--addr", addr, "--run-id", "byhand", "--barrier-timeout", "10s",
		"--strategy", "atomic", "--driver", "goredis", "--workload", "flash-sale", "--stock", "100000", "--clients", "6", "--duration", "1s", "--ttl", "10s"}
	follower := exec.Command(bin, append(base, "--segment", "2/2", "--out", filepath.Join(dir, "b.json"))...)
	var ferr, fout bytes.Buffer
	follower.Stderr, follower.Stdout = &ferr, &fout
	if err := follower.Start(); err != nil {
		t.Fatal(err)
	}
	r := lockbench(t, append(base, "--segment", "1/2", "--allow-nonempty", "--out", filepath.Join(dir, "a.json"))...)
	if err := follower.Wait(); err != nil || r.code != 0 {
		t.Fatalf("leader exit %d (%s), follower %v (%s)", r.code, r.stderr, err, ferr.String())
	}
	a, err := report.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := report.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	as := a.Scenarios[0]
	fs := b.Scenarios[0]
	// A segment's own file: the server's commands are every segment's, so
	// it derives no commands per operation.
	if as.RedisCost.CommandsPerOp != 0 || fs.RedisCost.CommandsPerOp != 0 || !as.Raw.Segment || as.RedisCost.Commands == 0 {
		t.Fatalf("segments' own commands/op %v and %v (raw.segment %v, commands %d): want absent", as.RedisCost.CommandsPerOp, fs.RedisCost.CommandsPerOp, as.Raw.Segment, as.RedisCost.Commands)
	}
	if fs.Violations.EndCheck != report.EndCheckNotRun {
		t.Fatalf("follower's end_check %q, want %q", fs.Violations.EndCheck, report.EndCheckNotRun)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"oversell"`) || strings.Contains(string(raw), `"lost_updates"`) || !strings.Contains(string(raw), `"overlap"`) {
		t.Fatalf("the follower's JSON has an end check's count, or lacks its own overlap count")
	}
	show := lockbench(t, "show", filepath.Join(dir, "b.json"), "--columns", "strategy,oversell,overlap,lost_updates")
	if !regexp.MustCompile(`│ atomic\s+│ -\s+│ 0\s+│ -\s+│`).MatchString(show.stdout) {
		t.Fatalf("the follower's table: want '-' for oversell and lost updates, 0 for overlap:\n%s", show.stdout)
	}
	m := filepath.Join(dir, "m.json")
	if r := lockbench(t, "merge", "--out", m, filepath.Join(dir, "b.json"), filepath.Join(dir, "a.json")); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	merged, err := report.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	s := merged.Scenarios[0]
	if s.Ops != as.Ops+fs.Ops || s.Clients != 6 || len(s.Raw.ClientOps) != 6 || s.Violations.EndCheck != "" {
		t.Fatalf("merged ops %d (files %d + %d), clients %d, client counts %v, end check %q",
			s.Ops, as.Ops, fs.Ops, s.Clients, s.Raw.ClientOps, s.Violations.EndCheck)
	}
	// One server: the wider delta of the two, less both processes' own
	// reads, per command and not below 0 (a process's own reads outside
	// the wider delta's window are not in it: on a loaded machine a few
	// GETs or EXECs of one process fell outside the other's).
	sum := func(m map[string]int64) (n int64) {
		for _, v := range m {
			n += v
		}
		return n
	}
	ca, cb := as.Raw.Cost[0], fs.Raw.Cost[0]
	wide := ca.ByCommand
	if sum(cb.ByCommand) > sum(ca.ByCommand) {
		wide = cb.ByCommand
	}
	var wantCmds int64
	for k, v := range wide {
		wantCmds += max(0, v-ca.Own[k]-cb.Own[k])
	}
	if s.RedisCost.Commands != wantCmds || s.RedisCost.Ops != as.RedisCost.Ops+fs.RedisCost.Ops {
		t.Fatalf("merged cost: %d commands over %d ops; want the wider file's less both samplers' %d over %d + %d",
			s.RedisCost.Commands, s.RedisCost.Ops, wantCmds, as.RedisCost.Ops, fs.RedisCost.Ops)
	}
	if sold := s.Figures["sold"]; sold+s.Figures["final_stock"] != 100000 || s.Violations.Oversell != 0 || s.Violations.LostUpdates != 0 {
		t.Fatalf("merged end check: %v, violations %+v", s.Figures, s.Violations)
	}
	checkAgree(t, m, s)
	// The merged result is where a run of segments is gated: safety holds
	// (the leader's end check covers the run), an impossible rate fails.
	if r := lockbench(t, "merge", "--out", filepath.Join(dir, "g.json"), "--fail-on", "safety", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")); r.code != 0 || !strings.Contains(r.stdout, "PASS") {
		t.Fatalf("merge --fail-on safety: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := lockbench(t, "merge", "--out", filepath.Join(dir, "g2.json"), "--fail-on", "ops_per_sec>1e9", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")); r.code != exitThresholds || !strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("merge --fail-on ops_per_sec>1e9: exit %d, want %d\n%s%s", r.code, exitThresholds, r.stdout, r.stderr)
	}
}
