package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// setWriterChild, in a test binary started by TestResultSetKilled (with
// $LOCKBENCH_TEST_SETWRITE=src.json and $LOCKBENCH_TEST_SETOUT), writes
// src.json's run as a result set at SETOUT, as run writes it (or, with
// $LOCKBENCH_TEST_SETWRITE_OLD=1, as lockbench wrote it before issue 38),
// and exits: 0 when written ($LOCKBENCH_TEST_KILL_AFTER kills it before).
func setWriterChild() {
	src := os.Getenv("LOCKBENCH_TEST_SETWRITE")
	if src == "" {
		return
	}
	run, err := report.ReadFile(src)
	if err == nil {
		if os.Getenv("LOCKBENCH_TEST_SETWRITE_OLD") == "1" {
			err = writeSetOldWay(os.Getenv("LOCKBENCH_TEST_SETOUT"), run)
		} else {
			err = (&outFiles{path: os.Getenv("LOCKBENCH_TEST_SETOUT")}).write(run)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// writeSetOldWay is the writer before issue 38, the broken variant: the
// .hgrm and .hlog files renamed into place one by one, the JSON last,
// over the old set's.
func writeSetOldWay(path string, run *report.Run) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	tmp, err := os.MkdirTemp(dir, tmpPrefix()+"*.tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := stageSet(tmp, base, run); err != nil {
		return err
	}
	for _, f := range run.Files {
		if err := os.Rename(filepath.Join(tmp, f.Name), filepath.Join(dir, f.Name)); err != nil {
			return err
		}
		killPoint()
	}
	return os.Rename(filepath.Join(tmp, base), path)
}

// setState checks dir's result set x.json as a reader sees it: the JSON
// absent, or the old run's or the new run's with every file it names
// there, whole (size and SHA-256 as it names them), and no other .hgrm or
// .hlog file but while a staging directory is there to take it away. It
// returns "old", "new" or "none", and the violations.
func setState(dir string, old, new *report.Run) (string, []string) {
	var bad []string
	entries, _ := os.ReadDir(dir)
	staging := false
	var visible []string
	for _, e := range entries {
		switch {
		case e.IsDir() && strings.HasPrefix(e.Name(), ".lockbench-"):
			staging = true
		case e.Name() != "x.json":
			visible = append(visible, e.Name())
		}
	}
	r, err := report.ReadFile(filepath.Join(dir, "x.json"))
	if err != nil {
		if len(visible) > 0 && !staging {
			bad = append(bad, fmt.Sprintf("no result file, and %q with no staging directory to remove them", visible))
		}
		return "none", bad
	}
	state := "other"
	switch r.Meta.RunID {
	case old.Meta.RunID:
		state = "old"
	case new.Meta.RunID:
		state = "new"
	}
	var named []string
	for _, f := range r.Files {
		named = append(named, f.Name)
		b, err := os.ReadFile(filepath.Join(dir, f.Name))
		sum := sha256.Sum256(b)
		if err != nil || int64(len(b)) != f.Bytes || hex.EncodeToString(sum[:]) != f.SHA256 {
			bad = append(bad, fmt.Sprintf("%s JSON: %s is not the file it names (a mix of two sets, or missing: %v)", state, f.Name, err))
		}
	}
	for _, n := range visible {
		if !slices.Contains(named, n) {
			bad = append(bad, fmt.Sprintf("%s JSON: %s beside it is not in its set", state, n))
		}
	}
	return state, bad
}

// A writer of a result set killed (SIGKILL) after its Nth file operation,
// for every N until it finishes, over an old set with other files (3
// scenarios, 2 of their names in the new set): each time a reader sees
// the old set whole, the new set whole, or no JSON with a staging
// directory; and after the next run's sweep (sweepStale) the old set,
// the new set, or nothing at all. The writer before issue 38 (renames,
// JSON last) shows the mix the other way.
func TestResultSetKilled(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	var runs [2]*report.Run
	for i, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(src, name)
		r := lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "goredis,rueidis", "--stock", "20", "--clients", "2", "--out", out)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		runs[i] = readRun(t, out)
	}
	old, new := runs[0], runs[1]
	old.Scenarios = append(old.Scenarios, old.Scenarios[1]) // x-3-atomic-rueidis: only in the old set
	new.Scenarios = append(new.Scenarios, new.Scenarios[0]) // x-3-atomic-goredis: only in the new set
	newSrc := filepath.Join(src, "new.json")
	if err := report.WriteFile(newSrc, new); err != nil {
		t.Fatal(err)
	}
	writer := func(n int, oldWay bool) (killed bool, dir string) {
		dir = filepath.Join(t.TempDir(), strconv.Itoa(n))
		if err := (&outFiles{path: filepath.Join(dir, "x.json")}).write(old); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LOCKBENCH_TEST_SETWRITE="+newSrc, "LOCKBENCH_TEST_SETOUT="+filepath.Join(dir, "x.json"),
			"LOCKBENCH_TEST_KILL_AFTER="+strconv.Itoa(n))
		if oldWay {
			cmd.Env = append(cmd.Env, "LOCKBENCH_TEST_SETWRITE_OLD=1")
		}
		out, err := cmd.CombinedOutput()
		if err == nil {
			return false, dir
		}
		if cmd.ProcessState == nil || cmd.ProcessState.String() != "signal: killed" {
			t.Fatalf("writer N=%d: %v\n%s", n, err, out)
		}
		return true, dir
	}
	seen := map[string]int{}
	n := 1
	for ; n < 40; n++ {
		killed, dir := writer(n, false)
		state, bad := setState(dir, old, new)
		for _, b := range bad {
			t.Errorf("killed after operation %d: %s", n, b)
		}
		if !killed {
			if state != "new" {
				t.Errorf("the writer finished, and the set is %s", state)
			}
			break
		}
		seen[state]++
		if state == "none" && seen[state] == 1 {
			// lockbench clean --stale --dir sweeps as the next run does.
			r := lockbenchEnv(t, []string{"LOCKBENCH_STATE_DIR=" + t.TempDir()}, "clean", "--stale", "--dir", dir)
			if r.code != 0 || !strings.Contains(r.stdout, "left by a lockbench process that is gone") {
				t.Errorf("clean --stale --dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		}
		sweepStale(dir)
		after, bad := setState(dir, old, new)
		for _, b := range bad {
			t.Errorf("killed after operation %d, then swept: %s", n, b)
		}
		if names := dirNames(t, dir); after != state || (after == "none" && len(names) != 0) {
			t.Errorf("killed after operation %d: %s, swept: %s with %q", n, state, after, names)
		}
	}
	t.Logf("writer killed after each of its %d file operations: a reader saw %v", n-1, seen)
	if seen["old"] == 0 || seen["none"] == 0 || seen["new"] == 0 {
		t.Errorf("states seen %v: want the old set, none and the new set each at least once", seen)
	}
	// The old writer, killed after its Nth operation until a reader sees
	// a mix (its first rename: operation 4).
	var mixes []string
	for k := 1; len(mixes) == 0; k++ {
		killed, dir := writer(k, true)
		_, mixes = setState(dir, old, new)
		if !killed {
			break
		}
	}
	t.Logf("the writer before issue 38: %q", mixes)
	if len(mixes) == 0 {
		t.Error("the old writer shows no mix: the check sees nothing")
	}
}
