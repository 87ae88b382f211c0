package faults

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// ProcFault is a fault on one child process of lockbench run --procs N
// (internal/cli procs.go), each child one execution segment of the run.
// The parent checks it against N (CheckProcs) and tells it of its child's
// events (ChildStarted, ChildKilled); in the children its Act runs only in
// the child it names, and only when InChild.
type ProcFault interface {
	Fault
	// Proc is the child it acts on, 1-based (1 is the leading segment).
	Proc() int
	// CheckProcs reports a problem of the fault with n children beyond
	// those Spec.CheckProcs reports itself (no --procs, Proc above n);
	// without the "fault SPEC: " prefix. nil: none.
	CheckProcs(n int) error
	// InChild reports whether the fault acts in its child's own process
	// (its Injector runs Act there and records the window); false: in the
	// parent only (ChildStarted).
	InChild() bool
	// ChildStarted runs in the parent when child Proc reported the
	// scenario's common start, in a goroutine of its own; it may act on
	// the child until pe.Stop is closed. It returns the windows to add to
	// the merged result (Fault is filled in for them), one per time it
	// acted (a repeating fault's several); none: nothing to record.
	ChildStarted(pe ParentEnv) []Window
	// ChildKilled runs in the parent when child Proc announced, at t,
	// that it kills itself; it returns the window to record, false for
	// none.
	ChildKilled(pe ParentEnv, t time.Time) (Window, bool)
}

// ParentEnv is one child of lockbench run --procs and one of its
// scenarios, as the parent's process faults see them.
type ParentEnv struct {
	// Signal sends sig to the child.
	Signal func(sig os.Signal) error
	// Exited reports whether the child has exited.
	Exited func() bool
	// Start is the scenario's common start, as the child reported it;
	// window times are in ms after it.
	Start time.Time
	// TTL is the scenario's lease (for default lengths).
	TTL time.Duration
	// End is when the scenario's measured window ends (Start + warm-up +
	// duration): a repeating fault starts no repetition from then on.
	// Zero: unknown (only Stop and the child's exit end the repetitions).
	End time.Time
	// Stop is closed when the run stops: a fault still waiting gives up,
	// one acting ends at once.
	Stop <-chan struct{}
}

// sleepUntil waits for t; false when pe.Stop is closed first.
func (pe ParentEnv) sleepUntil(t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-pe.Stop:
		return false
	}
}

// actsIn reports whether the fault acts in the process that is child proc
// of lockbench run --procs (0: not a child): every fault but a ProcFault,
// which acts in the child it names when it acts in a child at all.
func (s Spec) actsIn(proc int) bool {
	pf, ok := s.fault.(ProcFault)
	if !ok {
		return true
	}
	return pf.InChild() && proc > 0 && proc == pf.Proc()
}

// Proc returns the child of lockbench run --procs the fault acts on
// (1-based) and true for a ProcFault; 0 and false for any other fault.
func (s Spec) Proc() (int, bool) {
	if pf, ok := s.fault.(ProcFault); ok {
		return pf.Proc(), true
	}
	return 0, false
}

// CheckProcs reports why the fault cannot act in a run of n child
// processes (lockbench run --procs n; 0: none): a ProcFault needs
// --procs, a child from 1 to n, and whatever its own CheckProcs says. nil
// for any other fault.
func (s Spec) CheckProcs(n int) error {
	pf, ok := s.fault.(ProcFault)
	switch {
	case !ok:
		return nil
	case n == 0:
		return fmt.Errorf("fault %s acts on a child process of --procs N: give --procs (it runs the scenarios as N processes; lockbench sweep has none)", s)
	case pf.Proc() > n:
		return fmt.Errorf("fault %s: proc=%d, but --procs %d starts processes 1 to %d", s, pf.Proc(), n, n)
	}
	if err := pf.CheckProcs(n); err != nil {
		return fmt.Errorf("fault %s: %w", s, err)
	}
	return nil
}

// ChildStarted is ProcFault.ChildStarted with the windows' Fault filled
// in; none for any other fault.
func (s Spec) ChildStarted(pe ParentEnv) []Window {
	pf, ok := s.fault.(ProcFault)
	if !ok {
		return nil
	}
	ws := pf.ChildStarted(pe)
	for i := range ws {
		ws[i].Fault = s.String()
	}
	return ws
}

// ChildKilled is ProcFault.ChildKilled with the window's Fault filled
// in; false for any other fault.
func (s Spec) ChildKilled(pe ParentEnv, t time.Time) (Window, bool) {
	pf, ok := s.fault.(ProcFault)
	if !ok {
		return Window{}, false
	}
	w, ok := pf.ChildKilled(pe, t)
	w.Fault = s.String()
	return w, ok
}

// Die kills this process with SIGKILL (a Killer's client calls it): no
// deferred function, no flush, no release runs. Env.BeforeDeath runs
// first. If the signal could not be sent it waits for it a little and
// then exits with status 137, as a SIGKILL would.
func (in *Injector) Die() {
	if in.env.BeforeDeath != nil {
		in.env.BeforeDeath()
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Second)
	os.Exit(128 + int(syscall.SIGKILL))
}
