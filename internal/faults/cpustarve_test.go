package faults_test

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// cpu-starve on the whole process, three windows of 1 s (at 300 ms,
// then every 1.5 s): watchdog's renewal loop is starved with the workers,
// so with a 300 ms lease a holder caught by a window loses its lease while
// it still works (lost_leases; the others, starved too, seldom take the
// lock before it releases, so overlaps vary: 0 to 15 in trials), and
// with a 20 s lease (twenty windows long) nothing is lost. Three windows:
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
	good := scenario(t, "watchdog", "goredis", "flash-sale", "", 20*time.Second, "5ms", fault, 6, dur)
	t.Logf("20s lease: violations %+v (%s)", good.Violations, good.Faults[0].Note)
	if good.Violations.Total() != 0 || good.Violations.LostLeases != 0 {
		t.Errorf("watchdog with a 20s lease under cpu-starve: %+v; want no violation", good.Violations)
	}
	for _, w := range []string{bad.Faults[0].Note, good.Faults[0].Note} {
		if !strings.Contains(w, "starved of CPU") || !strings.Contains(w, "times, every 1.5s") {
			t.Errorf("window note %q: want repeated starvation every 1.5s", w)
		}
	}
	if p := runtime.GOMAXPROCS(0); p != procs {
		t.Errorf("GOMAXPROCS %d after the fault, want %d restored", p, procs)
	}
}
