package faults

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// procParam is the proc parameter of the process faults: the --procs
// child they act on.
var procParam = registry.Param{Name: "proc", Doc: "the --procs child (execution segment) it acts on, 1..N (1 = the leader)", Default: 2, Check: registry.AtLeast(1)}

// proc-pause:proc=I,at=D,for=F — with lockbench run --procs N, the parent
// sends SIGSTOP to child I at D after the scenario's common start (the
// start barrier's moment) and SIGCONT F later (default 2 x the TTL): the
// whole process stops, its workers and its lease renewals (a watchdog's)
// together, wherever they are, and resumes believing it holds the locks
// it held. The parent acts and records the window in the merged result;
// the children do nothing for it.
func init() {
	Register("proc-pause", Info{
		Desc:   "with --procs: SIGSTOP child process proc (workers and lease renewals alike) at at, SIGCONT for later",
		Params: []registry.Param{procParam, Span("for", "stop length; 0 = 2 x the TTL", 0)},
		AtOnly: true,
	}, func(v registry.Values) (Fault, error) {
		return procPause{proc: v.Int("proc"), at: v.Duration("at"), d: v.Duration("for")}, nil
	})
}

// procPause is proc-pause's config.
type procPause struct {
	proc int           // the child, 1-based
	at   time.Duration // after the scenario's common start
	d    time.Duration // the stop's length; 0 = 2 x the TTL
}

func (procPause) Check(Layout) []error { return nil }

// Act does nothing: the parent acts (ChildStarted).
func (procPause) Act(context.Context, *Action) {}

func (p procPause) Proc() int                                     { return p.proc }
func (procPause) CheckProcs(int) error                            { return nil }
func (procPause) InChild() bool                                   { return false }
func (procPause) ChildKilled(ParentEnv, time.Time) (Window, bool) { return Window{}, false }

// ChildStarted stops the child at p.at after the start and continues it
// p.d later (2 x the TTL when 0), unless the child exited or the run was
// stopped first.
func (p procPause) ChildStarted(pe ParentEnv) (Window, bool) {
	d := p.d
	if d == 0 {
		d = 2 * pe.TTL
	}
	w := Window{ArmedMS: millis(p.at), StartMS: -1, EndMS: -1, StuckAfter: -1}
	if !pe.sleepUntil(pe.Start.Add(p.at)) || pe.Exited() {
		w.StartMS, w.EndMS = w.ArmedMS, w.ArmedMS
		w.Note = "not done: the process had ended or the run stopped"
		return w, true
	}
	if err := pe.Signal(syscall.SIGSTOP); err != nil {
		w.StartMS, w.EndMS, w.Note = millis(time.Since(pe.Start)), millis(time.Since(pe.Start)), "not done: "+err.Error()
		return w, true
	}
	began := time.Now()
	w.StartMS = millis(began.Sub(pe.Start))
	note := ""
	if !pe.sleepUntil(began.Add(d)) {
		note = " (cut short: the run stopped)"
	}
	_ = pe.Signal(syscall.SIGCONT)
	end := time.Now()
	w.EndMS = millis(end.Sub(pe.Start))
	w.Note = fmt.Sprintf("process %d (segment %d) stopped (SIGSTOP) for %v, workers and lease renewals alike, then continued (SIGCONT)%s", p.proc, p.proc, end.Sub(began).Round(time.Millisecond), note)
	return w, true
}
