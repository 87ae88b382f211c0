package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// proc-kill:proc=I,at=D — with lockbench run --procs N, child I dies by a
// real SIGKILL inside a critical section: from D after the scenario's
// start, the first of its clients to enter its critical-section work
// raises SIGKILL on its own process at a uniformly random point of that
// work (a kill -9 certain to land mid-section, lock held). The parent sees
// the death, tells the barrier (segment.Gone), records the window and
// merges the other segments' files; meta.killed_segments names the
// segment. Segment 1, the leader that prepares and checks the data, cannot
// be killed.
func init() {
	Register("proc-kill", Info{
		Desc:   "with --procs: child process proc (not 1, the leader) raises SIGKILL on itself inside a critical section, at a random point of its work",
		Params: []registry.Param{procParam},
		AtOnly: true,
	}, func(v registry.Values) (Fault, error) {
		return procKill{proc: v.Int("proc"), at: v.Duration("at")}, nil
	})
}

// procKill is proc-kill's config.
type procKill struct {
	proc int           // the child, 1-based, 2 or more
	at   time.Duration // after the scenario's common start
}

func (procKill) Check(Layout) []error { return nil }

// Act, in child proc, arms the kill: the next client to start its
// critical-section work claims it (Kills), begins the window and kills
// the process (Injector.Die); the parent ends the window (ChildKilled).
func (procKill) Act(_ context.Context, a *Action) { a.Arm(&killHook{a: a}) }

type killHook struct {
	a     *Action
	taken atomic.Bool
}

func (h *killHook) Kills(int) (float64, bool) {
	if !h.taken.CompareAndSwap(false, true) {
		return 0, false
	}
	h.a.Disarm(h)
	h.a.Begin()
	return rand.Float64(), true
}

func (k procKill) Proc() int   { return k.proc }
func (procKill) InChild() bool { return true }

// CheckProcs refuses child 1, the leading segment.
func (k procKill) CheckProcs(n int) error {
	if k.proc != 1 {
		return nil
	}
	follower := fmt.Sprintf("proc=2..%d", n)
	if n < 2 {
		follower = "with --procs 2 or more"
	}
	return errors.New("process 1 is the leading segment, which writes the data, checks it at the end and deletes it: kill a follower (" + follower + ")")
}

func (procKill) ChildStarted(ParentEnv) []Window { return nil }

// ChildKilled records the kill the child announced at t.
func (k procKill) ChildKilled(pe ParentEnv, t time.Time) (Window, bool) {
	at := millis(t.Sub(pe.Start))
	return Window{ArmedMS: millis(k.at), StartMS: at, EndMS: at, StuckAfter: -1,
		Note: fmt.Sprintf("process %d (segment %d) killed itself with SIGKILL inside a critical section: its lock is left to its TTL", k.proc, k.proc)}, true
}
