package faults_test

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// cpu-starve of 2 s on the whole process: watchdog's renewal loop is
// starved with the workers, so with a 300 ms lease the leases run out
// while their holders still work (lost leases and overlaps), and with a
// 20 s lease (ten times the window) nothing is lost. Not parallel: the
// fault lowers the test process's GOMAXPROCS for its window, which must
// not slow the package's other tests (the parallel ones wait for the
// sequential ones to finish). Counts only, with wide margins: the window
// is nearly seven leases long on one side, a tenth of one on the other.
func TestCPUStarve(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	const fault = "cpu-starve:at=500ms,for=2s"
	bad := scenario(t, "watchdog", "goredis", "flash-sale", "", 300*time.Millisecond, "5ms", fault, 6, 3*time.Second)
	t.Logf("300ms lease: overlap %d, lost_leases %d, worked_after_loss %d (%s)", bad.Violations.Overlap, bad.Violations.LostLeases, bad.Violations.WorkedAfterLoss, bad.Faults[0].Note)
	if bad.Violations.LostLeases == 0 || bad.Violations.Overlap+bad.Violations.WorkedAfterLoss == 0 {
		t.Errorf("watchdog with a 300ms lease under 2s of cpu-starve: lost_leases %d, overlap %d, worked_after_loss %d; want lost leases and overlaps > 0",
			bad.Violations.LostLeases, bad.Violations.Overlap, bad.Violations.WorkedAfterLoss)
	}
	good := scenario(t, "watchdog", "goredis", "flash-sale", "", 20*time.Second, "5ms", fault, 6, 3*time.Second)
	t.Logf("20s lease: violations %+v (%s)", good.Violations, good.Faults[0].Note)
	if good.Violations.Total() != 0 || good.Violations.LostLeases != 0 {
		t.Errorf("watchdog with a 20s lease under 2s of cpu-starve: %+v; want no violation", good.Violations)
	}
	for _, w := range []string{bad.Faults[0].Note, good.Faults[0].Note} {
		if !strings.Contains(w, "starved of CPU for 2") {
			t.Errorf("window note %q: want a 2s starvation", w)
		}
	}
	if p := runtime.GOMAXPROCS(0); p != procs {
		t.Errorf("GOMAXPROCS %d after the fault, want %d restored", p, procs)
	}
}
