package cli

import (
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/internal/testlocks"
)

// A semaphore end to end, by exit code: `lockbench run --strategy
// semaphore:permits=3 --workload lock-cycle --fail-on
// capacity_violations==0` exits 0 (and its file has max_holders at most
// 3, raw.permits 3); the check-then-add semaphore of 3 permits exits 3
// (a threshold failed: capacity violations counted); and a semaphore of
// 3 permits on flash-sale, whose data needs mutual exclusion, is bad
// input: exit 2, nothing run.
func TestSemaphoreRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	run := func(strategy, workload string) (int, string) {
		t.Helper()
		out := filepath.Join(dir, workload+"-"+strategy[:4]+".json")
		return execute([]string{"run", "-q", "--driver", "goredis", "--strategy", strategy, "--workload", workload,
			"--clients", "8", "--duration", "1500ms", "--warmup", "0s", "--work", "2ms", "--ttl", "1s", "--retry", "fixed:interval=1ms",
			"--fail-on", "capacity_violations==0", "--out", out}), out
	}
	code, out := run("semaphore:permits=3", "lock-cycle:keys=1")
	if code != exitOK {
		t.Fatalf("semaphore:permits=3: exit %d, want 0", code)
	}
	r := readRun(t, out)
	s := r.Scenarios[0]
	if mh := s.Violations.MaxHolders; mh == nil || *mh > 3 || s.Violations.CapacityViolations != 0 || s.Raw.Permits != 3 {
		t.Fatalf("semaphore:permits=3: violations %+v, raw.permits %d; want max_holders <= 3, none over, permits 3", s.Violations, s.Raw.Permits)
	}
	code, out = run(testlocks.SemCheckThenAdd+":permits=3", "lock-cycle:keys=1")
	if code != exitThresholds {
		t.Fatalf("%s: exit %d, want 3 (capacity_violations==0 failed)", testlocks.SemCheckThenAdd, code)
	}
	if s := readRun(t, out).Scenarios[0]; s.Violations.CapacityViolations == 0 || *s.Violations.MaxHolders <= 3 {
		t.Fatalf("%s: violations %+v; want capacity violations and max_holders above 3", testlocks.SemCheckThenAdd, s.Violations)
	}
	if code, _ := run("semaphore:permits=3", "flash-sale"); code != exitUsage {
		t.Fatalf("semaphore:permits=3 on flash-sale: exit %d, want 2", code)
	}
}
