package faults_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	_ "github.com/lockbench/lockbench/strategies/libs" // rueidislock
)

// cpu-starve on the whole process, three windows of 1 s (at 300 ms,
// then every 1.5 s): watchdog's renewal loop is starved with the workers,
// so with a 300 ms lease a holder caught by a window loses its lease while
// it still works (lost_leases; the others, starved too, seldom take the
// lock before it releases, so overlaps vary: 0 to 15 in trials), and
// with a 20 s lease (twenty windows long) nothing is lost. rueidislock,
// whose renewals run on the library's own goroutine, loses leases the
// same way with a 300 ms lease; fencing loses them too, but its fence
// refuses the stale writes: no oversell, no lost update. Three windows:
// one holder caught is enough, and each window nearly always catches one
// (6 clients on one lock with 5 ms of work). Not parallel: the fault
// lowers the test process's GOMAXPROCS for its windows, which must not
// slow the package's other tests (the parallel ones wait for the
// sequential ones to finish). Counts only.
func TestCPUStarve(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	const fault = "cpu-starve:at=300ms,for=1s,every=1500ms"
	const dur = 4500 * time.Millisecond
	bad := scenario(t, "watchdog", "goredis", "flash-sale", "", 300*time.Millisecond, "5ms", fault, 6, dur)
	v := bad.Violations
	t.Logf("300ms lease: lost_leases %d, overlap %d, worked_after_loss %d, lost_updates %d (%s)", v.LostLeases, v.Overlap, v.WorkedAfterLoss, v.LostUpdates, bad.Faults[0].Note)
	if v.LostLeases == 0 {
		t.Errorf("watchdog with a 300ms lease under three 1s windows of cpu-starve: lost_leases 0 (overlap %d); want > 0", v.Overlap)
	}
	// A library's own renewals are starved too: rueidislock extends its
	// keys on a goroutine of its own (the pause fault cannot stop it).
	lib := scenario(t, "rueidislock", "rueidis", "flash-sale", "", 300*time.Millisecond, "5ms", fault, 6, dur)
	t.Logf("rueidislock, 300ms lease: lost_leases %d, worked_after_loss %d (%s)", lib.Violations.LostLeases, lib.Violations.WorkedAfterLoss, lib.Faults[0].Note)
	if lib.Violations.LostLeases == 0 {
		t.Errorf("rueidislock with a 300ms lease under cpu-starve: lost_leases 0; want > 0 (its own renewals starved)")
	}
	// Fenced: the same lost leases, but the fence refuses the stale writes.
	fenced := scenario(t, "fencing", "goredis", "flash-sale", "", 300*time.Millisecond, "5ms", fault, 6, dur)
	t.Logf("fencing, 300ms lease: %+v, rejected %d", fenced.Violations, fenced.Counters.Rejected)
	if fenced.Violations.Oversell != 0 || fenced.Violations.LostUpdates != 0 {
		t.Errorf("fencing under cpu-starve: oversell %d, lost updates %d; want 0 and 0", fenced.Violations.Oversell, fenced.Violations.LostUpdates)
	}
	good := scenario(t, "watchdog", "goredis", "flash-sale", "", 20*time.Second, "5ms", fault, 6, dur)
	t.Logf("20s lease: violations %+v (%s)", good.Violations, good.Faults[0].Note)
	if good.Violations.Total() != 0 || good.Violations.LostLeases != 0 {
		t.Errorf("watchdog with a 20s lease under cpu-starve: %+v; want no violation", good.Violations)
	}
	for _, w := range []string{bad.Faults[0].Note, lib.Faults[0].Note, fenced.Faults[0].Note, good.Faults[0].Note} {
		if !strings.Contains(w, "starved of CPU") || !strings.Contains(w, "times, every 1.5s") {
			t.Errorf("window note %q: want repeated starvation every 1.5s", w)
		}
	}
	if p := runtime.GOMAXPROCS(0); p != procs {
		t.Errorf("GOMAXPROCS %d after the fault, want %d restored", p, procs)
	}
}
