package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/topology"
)

// countUnder is the number of keys under prefix on the server.
func countUnder(t *testing.T, addr, pw, prefix string) int {
	t.Helper()
	v, err := topology.Command(addr, pw, 2*time.Second, "EVAL", "return #redis.call('KEYS', ARGV[1])", "0", prefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(v)
	return n
}

// Five runs on an --addr server killed with SIGKILL: lockbench clean
// --stale finds their records and deletes exactly their five namespaces,
// leaving a live run's keys, a foreign key and, the other way, the keys of
// a killed run that recorded nothing (LOCKBENCH_NO_RUN_RECORD=1: the
// issue as it was), which it cannot know of. A run that ends normally
// removes its record.
func TestCleanStale(t *testing.T) {
	t.Parallel()
	s := oneServer(t)
	if _, err := topology.Command(s.Addr, s.Password, time.Second, "SET", "other:key", "precious"); err != nil {
		t.Fatal(err)
	}
	state, dir := t.TempDir(), t.TempDir()
	env := []string{"LOCKBENCH_STATE_DIR=" + state, "LOCKBENCH_PASSWORD=" + s.Password}
	start := func(id string, extraEnv ...string) *exec.Cmd {
		cmd := exec.Command(bin, "run", "--addr", s.Addr, "--allow-nonempty", "--run-id", id, "--strategy", "atomic", "--driver", "rueidis",
			"--stock", "100000000", "--duration", "60s", "--clients", "2", "--out", filepath.Join(dir, id+".json"))
		cmd.Env = append(append(os.Environ(), env...), extraEnv...)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, stderr, "[1/")
		for deadline := time.Now().Add(10 * time.Second); countUnder(t, s.Addr, s.Password, "lockbench:"+id+":") == 0; {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("run %s wrote no key", id)
			}
			time.Sleep(20 * time.Millisecond)
		}
		return cmd
	}
	if r := lockbenchEnv(t, env, "clean", "--stale"); r.code != 0 || !strings.Contains(r.stdout, "nothing stale: 0 recorded run processes") {
		t.Fatalf("no records: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	live := start("live")
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	killed := []string{"k1", "k2", "k3", "k4", "k5"}
	for _, id := range append(killed, "unrecorded") {
		var cmd *exec.Cmd
		if id == "unrecorded" {
			cmd = start(id, "LOCKBENCH_NO_RUN_RECORD=1")
		} else {
			cmd = start(id)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	before := map[string]int{}
	for _, id := range append(killed, "live", "unrecorded") {
		if before[id] = countUnder(t, s.Addr, s.Password, "lockbench:"+id+":"); before[id] == 0 {
			t.Fatalf("run %s has no keys to clean", id)
		}
	}
	if local, _ := filepath.Glob(filepath.Join(dir, ".lockbench-run-*.json")); len(local) != 6 {
		t.Fatalf("records beside the results: %q, want 6", local)
	}
	// k5's record in the state directory lost: its copy beside the
	// results (--dir) is enough.
	lost, _ := filepath.Glob(filepath.Join(state, "runs", "k5-*.json"))
	if len(lost) != 1 || os.Remove(lost[0]) != nil {
		t.Fatalf("k5's record: %q", lost)
	}
	r := lockbenchEnv(t, env, "clean", "--stale", "--dir", dir)
	t.Logf("clean --stale:\n%s", r.stdout)
	if r.code != 0 || strings.Count(r.stdout, "stale run ") != 5 || strings.Count(r.stdout, "deleted ") != 5 || !strings.Contains(r.stdout, "removed 5 stale runs") {
		t.Fatalf("clean --stale: exit %d, want 5 stale runs\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, id := range killed {
		// Its lock key may expire in between: at least its data keys.
		want := regexp.MustCompile(`deleted [1-9][0-9]* keys under lockbench:` + id + `: on ` + regexp.QuoteMeta(s.Addr))
		if !want.MatchString(r.stdout) {
			t.Errorf("no %s in\n%s", want, r.stdout)
		}
		if n := countUnder(t, s.Addr, s.Password, "lockbench:"+id+":"); n != 0 {
			t.Errorf("run %s: %d keys left", id, n)
		}
	}
	if n := countUnder(t, s.Addr, s.Password, "lockbench:live:"); n == 0 {
		t.Error("the live run's keys were deleted")
	}
	if n := countUnder(t, s.Addr, s.Password, "lockbench:unrecorded:"); n == 0 {
		t.Errorf("the unrecorded run's keys are gone, want them left (nothing names them): %d before", before["unrecorded"])
	}
	if v, _ := topology.Command(s.Addr, s.Password, time.Second, "GET", "other:key"); v != "precious" {
		t.Errorf("other:key = %q", v)
	}
	recs, _ := filepath.Glob(filepath.Join(state, "runs", "*.json"))
	local, _ := filepath.Glob(filepath.Join(dir, ".lockbench-run-*.json"))
	if len(recs) != 1 || !strings.Contains(recs[0], "live-") || len(local) != 1 {
		t.Fatalf("records left: %q and %q, want the live run's", recs, local)
	}
	if r := lockbenchEnv(t, env, "clean", "--stale"); r.code != 0 || !strings.Contains(r.stdout, "nothing stale: 1 recorded run processes, 1 of them still running") {
		t.Fatalf("again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The live run ends normally (SIGTERM): its keys and its records go.
	_ = live.Process.Signal(os.Interrupt)
	_ = live.Wait()
	recs, _ = filepath.Glob(filepath.Join(state, "runs", "*.json"))
	local, _ = filepath.Glob(filepath.Join(dir, ".lockbench-run-*.json"))
	if len(recs)+len(local) != 0 || countUnder(t, s.Addr, s.Password, "lockbench:live:") != 0 {
		t.Errorf("after the live run ended: records %q %q, %d keys", recs, local, countUnder(t, s.Addr, s.Password, "lockbench:live:"))
	}
}
