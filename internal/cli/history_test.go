package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/history"
)

// Two runs with --history, merged: each result names its history
// (relative to its own directory) and has no linearizability block (a
// run of one process runs no Porcupine check), lockbench check of one
// run's file gives the verdict ok, the merge sets the cross-process
// counts, cross_check and linearizability (ok); a missing history file is
// bad input (exit 2).
func TestHistoryRunAndMerge(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	dir := t.TempDir()
	var outs []string
	for _, name := range []string{"a", "b"} {
		out := filepath.Join(dir, name, name+".json")
		hist := filepath.Join(dir, "hist", name+".history.jsonl.gz")
		r := lockbench(t, "run", "--strategy", "atomic", "--driver", "rueidis", "--clients", "4", "--stock", "40",
			"--retry", "fixed:interval=2ms", "--out", out, "--history", hist, "-q")
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		doc := readDoc(t, out)
		sc := doc["scenarios"].([]any)[0].(map[string]any)
		if got, want := sc["history_file"], filepath.Join("..", "hist", name+".history.jsonl.gz"); got != want {
			t.Fatalf("history_file %v, want %v", got, want)
		}
		// A run of one process runs no Porcupine check, --history or not:
		// only check, merge and the --procs parent do.
		if l, ok := sc["linearizability"]; ok {
			t.Errorf("a single run's file has linearizability %v, want it absent", l)
		}
		f, err := history.ReadFile(hist)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Scenarios) != 1 || len(f.Scenarios[0].Entries) < 40 || !f.Scenarios[0].Measured || f.Header.RunID != doc["meta"].(map[string]any)["run_id"] {
			t.Fatalf("history: %d scenarios, header %+v", len(f.Scenarios), f.Header)
		}
		outs = append(outs, out)
	}
	// One run's file gets the check through lockbench check.
	if r := lockbench(t, "check", outs[0]); r.code != 0 || !strings.Contains(r.stdout, "  ok  ") {
		t.Errorf("check of one run's file: exit %d, want 0 and the verdict ok:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	merged := filepath.Join(dir, "m.json")
	r := lockbench(t, "merge", outs[0], outs[1], "--out", merged)
	if r.code != 0 {
		t.Fatalf("merge exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sc := readDoc(t, merged)["scenarios"].([]any)[0].(map[string]any)
	if l, _ := sc["linearizability"].(map[string]any); l["verdict"] != "ok" {
		t.Errorf("merged linearizability %v, want the verdict ok", sc["linearizability"])
	}
	v := sc["violations"].(map[string]any)
	if v["cross_overlap"] != float64(0) || v["cross_overlap_possible"] != float64(0) || !strings.HasPrefix(sc["cross_check"].(string), "2 histories, same host: exact") {
		t.Fatalf("merged violations %v, cross_check %v", v, sc["cross_check"])
	}
	if !strings.Contains(r.stdout, "cross-proc 0") {
		t.Fatalf("table lacks the cross-process count:\n%s", r.stdout)
	}
	if err := os.Remove(filepath.Join(dir, "hist", "b.history.jsonl.gz")); err != nil {
		t.Fatal(err)
	}
	r = lockbench(t, "merge", outs[0], outs[1], "--out", filepath.Join(dir, "m2.json"))
	if r.code != 2 || !strings.Contains(r.stderr, "b.history.jsonl.gz") {
		t.Fatalf("merge with a missing history: exit %d:\n%s", r.code, r.stderr)
	}
}

func TestHistoryFlagRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	exists := filepath.Join(dir, "old.history.jsonl.gz")
	if err := os.WriteFile(exists, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for hist, want := range map[string]string{out: "is the result file", filepath.Join(dir, "h.jsonl"): "must end in .gz", exists: "exists (--force overwrites it)"} {
		r := lockbench(t, "run", "--strategy", "atomic", "--out", out, "--history", hist, "-q")
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("--history %s: exit %d, want 2 and %q:\n%s", hist, r.code, want, r.stderr)
		}
	}
}
