package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// Process faults given where they cannot act: exit 2 with the reason.
func TestProcFaultUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fault", "proc-pause:proc=2,at=1s,for=1s"}, "give --procs"},
		{[]string{"--fault", "proc-kill:proc=2"}, "give --procs"},
		{[]string{"--procs", "2", "--fault", "proc-pause:proc=3"}, "proc=3, but --procs 2 starts processes 1 to 2"},
		{[]string{"--procs", "3", "--fault", "proc-kill:proc=1"}, "process 1 is the leading segment"},
		{[]string{"--procs", "2", "--fault", "proc-kill:proc=2,after=10"}, `unknown parameter "after"`},
		{[]string{"--procs", "2", "--fault", "proc-pause:proc=0"}, "proc=0"},
		{[]string{"--segment", "2/2", "--run-id", "x", "--addr", "127.0.0.1:1", "--fault", "proc-kill:proc=2"}, "give --procs"},
	} {
		r := lockbench(t, append([]string{"run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--duration", "1s"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
	r := lockbench(t, "list")
	for _, want := range []string{"proc-pause", "proc-kill", "proc=int"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lockbench list: no %q", want)
		}
	}
}

// proc-kill: process 2 of 3 dies by SIGKILL inside a critical section on
// the one lock. The run exits 0 and merges segments 1 and 3
// (meta.killed_segments [2]); the leader's liveness oracle saw the dead
// process's token stay in the lock for about one TTL (2s) before it
// expired, and its clients took the lock again after it.
func TestProcKill(t *testing.T) {
	out := filepath.Join(t.TempDir(), "kill.json")
	r := lockbench(t, "run", "--procs", "3", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--keys", "1",
		"--clients", "3", "--ttl", "2s", "--work", "5ms", "--retry", "fixed:interval=5ms", "--duration", "5s", "--fault", "proc-kill:proc=2,at=200ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "segment 2 was killed by its proc-kill fault") {
		t.Errorf("stderr does not say segment 2 was killed:\n%s", r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(run.Meta.KilledSegments, []int{2}) || run.Meta.Segments != 3 || run.Failed != "" {
		t.Fatalf("meta: killed %v, segments %d, failed %q; want [2], 3, none", run.Meta.KilledSegments, run.Meta.Segments, run.Failed)
	}
	s := run.Scenarios[0]
	if s.Clients != 2 { // the killed segment's client has no file
		t.Errorf("merged clients %d, want 2", s.Clients)
	}
	var w *report.FaultWindow
	for i := range s.Faults {
		if s.Faults[i].Fault == "proc-kill:proc=2,at=200ms" {
			w = &s.Faults[i]
		}
	}
	if w == nil || !strings.Contains(w.Note, "SIGKILL inside a critical section") || w.StartMS < 200 {
		t.Fatalf("no proc-kill window after 200ms: %+v", s.Faults)
	}
	if s.Liveness == nil || !s.Liveness.Measured {
		t.Fatalf("no liveness figures: %+v", s.Liveness)
	}
	// The orphaned lock: the dead process's token, seen for about one TTL
	// (when the kill came early enough for the TTL to end in the window).
	if got := s.Liveness.ForeignHoldMaxMS; got < 2000-400 && w.StartMS+2000 < 5000 {
		t.Errorf("foreign_hold_max_ms %.0f, want about one TTL (>= 1600 ms)", got)
	}
	if s.Violations.Total() != 0 {
		t.Errorf("violations %+v, want none (atomic, 2s lease)", s.Violations)
	}
	// Freed: the lock was taken again in the last second, when the kill
	// came early enough for its TTL to end before it.
	if end := w.StartMS + 2000 + 500; end < 4000 && len(s.Timeline) > 0 {
		if last := s.Timeline[len(s.Timeline)-1]; last.Ops == 0 {
			t.Errorf("no operation in the last second (kill at %.0f ms + 2s TTL): %+v", w.StartMS, s.Timeline)
		}
	} else {
		t.Logf("kill at %.0f ms: its TTL ends too late to look for operations after it", w.StartMS)
	}
}

// proc-pause: process 2 of 2 is stopped (SIGSTOP) for 2s, twice its 1s
// lease, while its clients hold counters of hot-key mid-section (16 keys,
// 8 clients, 100ms of work: a client is nearly always in one), and
// resumes believing it holds them; meanwhile the leases expired and
// process 1 took the counters and incremented them. atomic (no renewal,
// no loss check) writes the stale values: lost updates, which the end
// check finds over both processes' acknowledged increments. watchdog's
// renewals stopped with the process; on SIGCONT its renewal loop (lease
// deadline passed) and its workers wake together: a worker that checks
// its lease first writes stale (a lost update), the others refuse to
// write (counters.rejected), which of the two varies run to run, so the
// test asserts their sum. fencing: the fence refuses the stale writes
// (counters.rejected > 0) and no update is lost. All three in one run:
// the fault acts in each scenario.
func TestProcPause(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pause.json")
	r := lockbench(t, "run", "--procs", "2", "--strategy", "atomic,watchdog,fencing", "--driver", "goredis", "--workload", "hot-key",
		"--keys", "16", "--zipf", "0", "--clients", "8", "--ttl", "1s", "--work", "100ms", "--duration", "2500ms",
		"--fault", "proc-pause:proc=2,at=300ms,for=2s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Meta.KilledSegments) != 0 || len(run.Scenarios) != 3 {
		t.Fatalf("killed %v, %d scenarios", run.Meta.KilledSegments, len(run.Scenarios))
	}
	for _, s := range run.Scenarios {
		var w *report.FaultWindow
		for i := range s.Faults {
			if strings.HasPrefix(s.Faults[i].Fault, "proc-pause") {
				w = &s.Faults[i]
			}
		}
		if w == nil || !strings.Contains(w.Note, "stopped (SIGSTOP)") || w.EndMS-w.StartMS < 2000 {
			t.Fatalf("%s: no 2s proc-pause window: %+v", s.Strategy, s.Faults)
		}
		// The stopped process's sections outlive their 1 s leases; the
		// other process takes those locks meanwhile: the merge's
		// cross-process check sees it, fenced or not.
		if c := s.Violations.CrossOverlap; c == nil || *c == 0 {
			t.Errorf("%s: cross-process overlaps %v after a 2s stop of a 1s lease's holders: want > 0 (%s)", s.Strategy, c, s.CrossCheck)
		}
		switch s.Strategy {
		case "atomic":
			if s.Violations.LostUpdates == 0 {
				t.Errorf("atomic: no lost update after a 2s stop of a 1s lease's holders: %+v %v", s.Violations, s.Figures)
			}
		case "watchdog":
			if s.Violations.LostUpdates+s.Counters.Rejected == 0 {
				t.Errorf("watchdog: neither a lost update nor a refused write after a 2s stop of a 1s lease's holders: %+v %+v %v", s.Violations, s.Counters, s.Figures)
			}
			t.Logf("watchdog: %d lost updates, %d writes refused, %d leases lost", s.Violations.LostUpdates, s.Counters.Rejected, s.Violations.LostLeases)
		case "fencing":
			if s.Violations.LostUpdates != 0 || s.Counters.Rejected == 0 || s.Params["guard"] != "fence" {
				t.Errorf("fencing: lost updates %d, rejected %d, guard %s: want 0, > 0, fence", s.Violations.LostUpdates, s.Counters.Rejected, s.Params["guard"])
			}
		}
	}
}

// proc-pause with every=: process 2 of 2 is stopped for 200ms at 300ms
// after the common start and again every 800ms until the scenario's end
// (3s): at 300, 1100, 1900 and 2700 ms, four stops (the next, at 3500,
// is past the end), each its own window in the merged result. The count
// is fixed by the schedule, not measured: the parent starts no stop at or
// after the end, and the child (whose clock runs on while it is stopped)
// is still in its scenario at 2700 ms.
func TestProcPauseEvery(t *testing.T) {
	out := filepath.Join(t.TempDir(), "every.json")
	r := lockbench(t, "run", "--procs", "2", "--strategy", "atomic", "--driver", "goredis", "--workload", "hot-key",
		"--keys", "16", "--zipf", "0", "--clients", "4", "--ttl", "1s", "--work", "20ms", "--duration", "3s",
		"--fault", "proc-pause:proc=2,at=300ms,for=200ms,every=800ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(run.Scenarios))
	}
	var ws []report.FaultWindow
	for _, w := range run.Scenarios[0].Faults {
		if strings.HasPrefix(w.Fault, "proc-pause") {
			ws = append(ws, w)
		}
	}
	if len(ws) != 4 {
		t.Fatalf("%d proc-pause windows, want 4 (at 300, 1100, 1900, 2700 ms): %+v", len(ws), ws)
	}
	for i, w := range ws {
		want := float64(300 + 800*i)
		if !strings.Contains(w.Note, "stopped (SIGSTOP)") || w.ArmedMS != want || w.StartMS < want || w.EndMS-w.StartMS < 200 {
			t.Errorf("window %d: %+v; want a stop of 200ms armed at %v ms", i+1, w, want)
		}
	}
}
