package faults

import (
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// The process faults act on the child processes of lockbench run --procs
// N (internal/cli procs.go), each one execution segment of the run:
//
//   - proc-pause:proc=I,at=D,for=F — the parent sends SIGSTOP to child I
//     at D after the scenario's common start (the start barrier's moment)
//     and SIGCONT F later (default 2 x the TTL): the whole process stops,
//     its workers and its lease renewals (a watchdog's) together, wherever
//     they are, and resumes believing it holds the locks it held.
//   - proc-kill:proc=I,at=D — child I dies by a real SIGKILL inside a
//     critical section: from D after the scenario's start, the first of
//     its clients to enter its critical-section work raises SIGKILL on its
//     own process at a uniformly random point of that work (a kill -9
//     certain to land mid-section, lock held). The parent sees the death,
//     tells the barrier (segment.Gone) and merges the other segments'
//     files; meta.killed_segments names the segment. Segment 1, the
//     leader that prepares and checks the data, cannot be killed.
//
// Both take at= only (the parent, or the process itself, times them from
// the scenario's start; after=N counts locks of one process). They need
// --procs: without it, or with proc outside 1..N, the run refuses them
// (internal/cli). In the children the Injector does nothing for
// proc-pause (the parent acts and records its window in the merged
// result) and arms proc-kill in child I only (Env.Proc).
func init() {
	procParam := func(def int) registry.Param {
		return registry.Param{Name: "proc", Doc: "the --procs child (execution segment) it acts on, 1..N (1 = the leader)", Default: def, Check: registry.AtLeast(1)}
	}
	registerAt("proc-pause", "with --procs: SIGSTOP child process proc (workers and lease renewals alike) at at, SIGCONT for later", NeedsNothing,
		procParam(2), span("for", "stop length; 0 = 2 x the TTL", 0))
	registerAt("proc-kill", "with --procs: child process proc (not 1, the leader) raises SIGKILL on itself inside a critical section, at a random point of its work", NeedsNothing,
		procParam(2))
}

// registerAt is Register with the trigger at= only.
func registerAt(name, desc string, needs Needs, params ...registry.Param) {
	reg.Register(name, desc, append(append([]registry.Param{}, params...), Trigger[0]), needs)
}

// Process reports whether fault name acts on a --procs child process
// (proc-pause, proc-kill).
func Process(name string) bool { return name == "proc-pause" || name == "proc-kill" }

// procKill arms the proc-kill fault of window i in this process: the next
// client to start its critical-section work dies in it (Kills).
func (in *Injector) procKill(i int) {
	in.pendingKill.Store(int64(i) + 1)
}

// Kills implements workloads.FaultHooks: when a proc-kill fault is armed
// in this process, the first client to ask claims it and is to kill the
// process at share at (0..1) of its work (Die).
func (in *Injector) Kills(client int) (at float64, ok bool) {
	w := in.pendingKill.Load()
	if w == 0 || !in.pendingKill.CompareAndSwap(w, 0) {
		return 0, false
	}
	in.begin(int(w - 1))
	return rand.Float64(), true
}

// Die kills this process with SIGKILL (the proc-kill fault): no deferred
// function, no flush, no release runs. If the signal could not be sent it
// waits for it a little and then exits with status 137, as a SIGKILL would.
func (in *Injector) Die() {
	if in.env.BeforeDeath != nil {
		in.env.BeforeDeath()
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Second)
	os.Exit(128 + int(syscall.SIGKILL))
}
