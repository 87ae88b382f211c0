package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

// runBounded runs the lockbench binary with args and fails the test when
// it has not exited within 20 s (a read that never ends): exit code and
// stderr.
func runBounded(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("lockbench %q did not exit within 20 s", args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// Item 5 of issue 38: show, compare, merge, check and report refuse what
// is not a regular file (/dev/zero, a FIFO, a directory), a file over
// --max-input-size, and a result whose figures a result cannot hold
// (a negative count, p50 above p99, ops that are not the histogram's
// count), each with exit 2 and a message naming the file or the field,
// within a bounded time; the good file is read by every command.
func TestBoundedInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	s := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 1, Ops: 10, OpsPerSec: 10,
		LatencyMS: metrics.Latency{P50: 1, P90: 2, P99: 3, P999: 4, Max: 5, Mean: 1.5, Count: 10}}
	if err := report.WriteFile(good, &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{s}}); err != nil {
		t.Fatal(err)
	}
	// bad writes good.json with one scenario field changed.
	bad := func(name string, edit func(s map[string]any)) string {
		b, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		edit(m["scenarios"].([]any)[0].(map[string]any))
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	negative := bad("negative.json", func(s map[string]any) { s["violations"].(map[string]any)["overlap"] = -3 })
	p50 := bad("p50.json", func(s map[string]any) { s["latency_ms"].(map[string]any)["p50"] = 3.5 })
	ops := bad("ops.json", func(s map[string]any) { s["ops"] = 11 })
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, flag, want string
	}{
		{"/dev/zero", "", "/dev/zero is not a regular file (a character device)"},
		{fifo, "", fifo + " is not a regular file (a FIFO)"},
		{dir, "", dir + " is a directory, not a result file"},
		{good, "--max-input-size=100B", "over the input limit of 100B (--max-input-size)"},
		{negative, "", "scenarios[0].violations.overlap: -3 is negative"},
		{p50, "", "scenarios[0].latency_ms.p50: 3.5 is above p99 3 (percentiles cannot decrease)"},
		{ops, "", "scenarios[0].ops: 11, but latency_ms.count is 10"},
	}
	commands := [][]string{{"show"}, {"compare", good}, {"merge", "--out", filepath.Join(dir, "merged.json"), good}, {"check", good}, {"report", "-o", filepath.Join(dir, "rep")}}
	for _, c := range cases {
		for _, cmd := range commands {
			args := append(append([]string{}, cmd...), c.file)
			if c.flag != "" {
				args = append(args, c.flag)
			}
			code, stderr := runBounded(t, args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "panic:") {
				t.Errorf("lockbench %q: exit %d, want 2 and %q:\n%s", args, code, c.want, stderr)
			}
		}
	}
	if code, stderr := runBounded(t, "show", good, "--max-input-size", "1MiB"); code != 0 {
		t.Errorf("show good.json: exit %d\n%s", code, stderr)
	}
	if code, stderr := runBounded(t, "compare", good, good); code != 0 {
		t.Errorf("compare good.json good.json: exit %d\n%s", code, stderr)
	}
}
