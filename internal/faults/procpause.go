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

// proc-pause:proc=I,at=D,for=F,every=E — with lockbench run --procs N,
// the parent sends SIGSTOP to child I at D after the scenario's common
// start (the start barrier's moment) and SIGCONT F later (default 2 x the
// TTL): the whole process stops, its workers and its lease renewals (a
// watchdog's) together, wherever they are, and resumes believing it holds
// the locks it held. With every=E (> 0) it stops the child again every E
// (from one stop to the next) until the scenario's end, each stop a
// window of its own. The parent acts and records the windows in the
// merged result; the children do nothing for it.
func init() {
	Register("proc-pause", Info{
		Desc: "with --procs: SIGSTOP child process proc (workers and lease renewals alike) at at, SIGCONT for later; again every E with every=E",
		Params: []registry.Param{procParam, Span("for", "stop length; 0 = 2 x the TTL", 0),
			Span("every", "stop again every D (from one stop to the next) until the scenario's end, each stop a window; 0 = once", 0)},
		AtOnly: true,
	}, func(v registry.Values) (Fault, error) {
		p := procPause{proc: v.Int("proc"), at: v.Duration("at"), d: v.Duration("for"), every: v.Duration("every")}
		if p.every > 0 && p.d >= p.every {
			return nil, fmt.Errorf("for=%v is not shorter than every=%v (the child would never run between the stops)", p.d, p.every)
		}
		return p, nil
	})
}

// procPause is proc-pause's config.
type procPause struct {
	proc  int           // the child, 1-based
	at    time.Duration // after the scenario's common start
	d     time.Duration // the stop's length; 0 = 2 x the TTL
	every time.Duration // the period; 0 = once
}

func (procPause) Check(Layout) []error { return nil }

// Act does nothing: the parent acts (ChildStarted).
func (procPause) Act(context.Context, *Action) {}

func (p procPause) Proc() int                                     { return p.proc }
func (procPause) CheckProcs(int) error                            { return nil }
func (procPause) InChild() bool                                   { return false }
func (procPause) ChildKilled(ParentEnv, time.Time) (Window, bool) { return Window{}, false }

// ChildStarted stops the child at p.at after the start and continues it
// p.d later (2 x the TTL when 0; with every, at most half the period),
// unless the child exited or the run was stopped first; with every, again
// every p.every until the scenario's end (pe.End), one window per stop.
func (p procPause) ChildStarted(pe ParentEnv) []Window {
	d := p.d
	if d == 0 {
		d = 2 * pe.TTL
		if p.every > 0 && d >= p.every {
			d = p.every / 2
		}
	}
	var ws []Window
	for k := 0; ; k++ {
		at := p.at + time.Duration(k)*p.every
		if k > 0 && (!pe.End.IsZero() && !pe.Start.Add(at).Before(pe.End)) {
			return ws
		}
		w, acted, ok := p.stop(pe, at, d, k)
		if acted || k == 0 { // a repetition the end came before is no window
			ws = append(ws, w)
		}
		if !ok || p.every == 0 {
			return ws
		}
	}
}

// stop is one stop of the child, the k-th (0-based), at at after the
// start, for d: its window, whether it stopped the child, and false when
// it was not done or cut short (no repetition follows).
func (p procPause) stop(pe ParentEnv, at, d time.Duration, k int) (_ Window, acted, ok bool) {
	w := Window{ArmedMS: millis(at), StartMS: -1, EndMS: -1, StuckAfter: -1}
	if !pe.sleepUntil(pe.Start.Add(at)) || pe.Exited() {
		w.StartMS, w.EndMS = w.ArmedMS, w.ArmedMS
		w.Note = "not done: the process had ended or the run stopped"
		return w, false, false
	}
	if err := pe.Signal(syscall.SIGSTOP); err != nil {
		w.StartMS, w.EndMS, w.Note = millis(time.Since(pe.Start)), millis(time.Since(pe.Start)), "not done: "+err.Error()
		return w, false, false
	}
	began := time.Now()
	w.StartMS = millis(began.Sub(pe.Start))
	note, ok := "", true
	if !pe.sleepUntil(began.Add(d)) {
		note, ok = " (cut short: the run stopped)", false
	}
	_ = pe.Signal(syscall.SIGCONT)
	end := time.Now()
	w.EndMS = millis(end.Sub(pe.Start))
	w.Note = fmt.Sprintf("process %d (segment %d) stopped (SIGSTOP) for %v, workers and lease renewals alike, then continued (SIGCONT)%s", p.proc, p.proc, end.Sub(began).Round(time.Millisecond), note)
	if p.every > 0 {
		w.Note = fmt.Sprintf("stop %d, every %v: %s", k+1, p.every, w.Note)
	}
	return w, true, ok
}
