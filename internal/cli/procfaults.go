package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/segment"
)

// procEventsEnv names, in a --procs child's environment, the file
// descriptor of its event pipe to the parent (ExtraFiles: 3). The child
// writes one line per event:
//
//	start <scenario index, 0-based> <unix ns>   its clock starts (the barrier's common start)
//	kill <scenario index> <unix ns>             the proc-kill fault's SIGKILL follows at once
//
// Children and parent run on one machine: one clock.
const procEventsEnv = "LOCKBENCH_PROCS_EVENTS"

// procFaultsWithout checks the process faults (faults.ProcFault) of the
// plan's scenarios against n, the number of child processes (0 when the
// run has none): each fault's Spec.CheckProcs, once per spec.
func procFaultsWithout(p *plan, n int) []error {
	var errs []error
	seen := map[string]bool{}
	for _, sc := range p.scenarios {
		for _, f := range sc.Faults {
			if _, ok := f.Proc(); !ok || seen[f.String()] {
				continue
			}
			seen[f.String()] = true
			if err := f.CheckProcs(n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// procChild is a --procs child's side of the process faults: its number
// (1-based) and its event pipe to the parent (nil: none).
type procChild struct {
	n  int
	mu sync.Mutex
	w  *os.File
}

// openProcChild returns this process's procChild, nil when it is not a
// --procs child.
func openProcChild() *procChild {
	n, err := strconv.Atoi(os.Getenv(procChildEnv))
	if err != nil || n < 1 {
		return nil
	}
	pc := &procChild{n: n}
	if fd, err := strconv.Atoi(os.Getenv(procEventsEnv)); err == nil && fd > 2 {
		pc.w = os.NewFile(uintptr(fd), "procs-events")
	}
	return pc
}

// event writes one event line (best effort: the parent may be gone).
func (pc *procChild) event(kind string, scenario int, t time.Time) {
	if pc == nil || pc.w == nil {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	_, _ = fmt.Fprintf(pc.w, "%s %d %d\n", kind, scenario, t.UnixNano())
}

// scenario makes sc tell the parent its start and its proc-kill.
func (pc *procChild) scenario(sc engine.Scenario, i int) engine.Scenario {
	if pc == nil {
		return sc
	}
	sc.Env.Proc = pc.n
	sc.Env.Sync = &notifySync{Sync: sc.Env.Sync, pc: pc, i: i}
	sc.Env.BeforeKill = func() { pc.event("kill", i, time.Now()) }
	return sc
}

// notifySync is an engine.Sync that tells the parent the common start.
type notifySync struct {
	engine.Sync
	pc *procChild
	i  int
}

func (s *notifySync) Start(ctx context.Context) (time.Time, error) {
	at, err := s.Sync.Start(ctx)
	if err == nil {
		s.pc.event("start", s.i, at)
	}
	return at, err
}

// procFaulter is the parent's side of the process faults of a --procs
// run: it reads the children's events, hands them to the faults that name
// the child (faults.ProcFault: ChildStarted, ChildKilled), tells the
// barrier of dead ones (segment.Gone) and records the windows.
type procFaulter struct {
	p     *plan
	runID string
	node  engine.Node // the first server, for segment.Gone
	procs []*os.Process

	mu      sync.Mutex
	exited  []bool
	killing []bool // announced its proc-kill
	windows map[int][]report.FaultWindow
	starts  map[[2]int]time.Time // scenario, child -> the start it reported
	read1   []chan struct{}      // closed when child i's event pipe ended
	d       drivers.Driver
	wg      sync.WaitGroup
	stop    chan struct{}
}

func newProcFaulter(p *plan, runID string, node engine.Node, n int) *procFaulter {
	read1 := make([]chan struct{}, n)
	for i := range read1 {
		read1[i] = make(chan struct{})
	}
	return &procFaulter{p: p, runID: runID, node: node, exited: make([]bool, n), killing: make([]bool, n), read1: read1,
		windows: map[int][]report.FaultWindow{}, starts: map[[2]int]time.Time{}, stop: make(chan struct{})}
}

// read handles child i's events until r ends.
func (pf *procFaulter) read(i int, r io.Reader) {
	defer close(pf.read1[i])
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var kind string
		var n int
		var ns int64
		if _, err := fmt.Sscanf(sc.Text(), "%s %d %d", &kind, &n, &ns); err != nil || n < 0 || n >= len(pf.p.scenarios) {
			continue
		}
		t := time.Unix(0, ns)
		switch kind {
		case "start":
			pf.mu.Lock()
			pf.starts[[2]int{n, i}] = t
			pf.mu.Unlock()
			for _, f := range pf.p.scenarios[n].Faults {
				if p, ok := f.Proc(); ok && p == i+1 {
					pf.wg.Add(1)
					go func(f faults.Spec) {
						defer pf.wg.Done()
						for _, w := range f.ChildStarted(pf.parentEnv(i, n, t)) {
							pf.record(n, w)
						}
					}(f)
				}
			}
		case "kill":
			pf.mu.Lock()
			pf.killing[i] = true
			start := pf.starts[[2]int{n, i}] // its start line comes before its kill line on the same pipe
			pf.mu.Unlock()
			for _, f := range pf.p.scenarios[n].Faults {
				if p, ok := f.Proc(); ok && p == i+1 {
					if w, ok := f.ChildKilled(pf.parentEnv(i, n, start), t); ok {
						pf.record(n, w)
						break
					}
				}
			}
		}
	}
}

// parentEnv is child i (0-based) in scenario n, whose common start the
// child reported as start, for its process faults.
func (pf *procFaulter) parentEnv(i, n int, start time.Time) faults.ParentEnv {
	return faults.ParentEnv{
		Signal: func(sig os.Signal) error { return pf.procs[i].Signal(sig) },
		Exited: func() bool { return pf.gone(i) },
		Start:  start, TTL: pf.p.scenarios[n].TTL, Stop: pf.stop,
		End: start.Add(pf.p.scenarios[n].Warmup + pf.p.scenarios[n].Duration),
	}
}

func (pf *procFaulter) record(n int, w report.FaultWindow) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.windows[n] = append(pf.windows[n], w)
}

func (pf *procFaulter) gone(i int) bool {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return pf.exited[i]
}

// died records that child i exited; when a signal killed it, the barrier
// is told (segment.Gone), so that the others do not wait for it. It
// reports whether its proc-kill fault killed it (SIGKILL after its "kill"
// event): not a failure of the run.
func (pf *procFaulter) died(i int, sig syscall.Signal, signalled bool) (byFault bool) {
	if signalled { // its last events first: a "kill" line may still be in the pipe
		select {
		case <-pf.read1[i]:
		case <-time.After(2 * time.Second):
		}
	}
	pf.mu.Lock()
	pf.exited[i] = true
	byFault = signalled && sig == syscall.SIGKILL && pf.killing[i]
	pf.mu.Unlock()
	if !signalled {
		return false
	}
	why := "killed by " + sig.String()
	if byFault {
		why = "killed by the proc-kill fault"
	}
	if err := pf.markGone(i+1, why); err != nil {
		fmt.Fprintf(os.Stderr, "lockbench: telling the barrier that segment %d is gone: %v (the others wait for it until --barrier-timeout)\n", i+1, err)
	}
	return byFault
}

// markGone records segment seg as gone in the run's barrier.
func (pf *procFaulter) markGone(seg int, why string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if pf.d == nil {
		ds, err := engine.Open(ctx, pf.p.scenarios[0].Driver, []engine.Node{pf.node}, 1)
		if err != nil {
			return err
		}
		pf.d = ds[0]
	}
	return segment.Gone(ctx, pf.d, pf.runID, seg, why)
}

// finish stops the pauses still waiting, continues every child (none is
// left stopped) and closes the connection.
func (pf *procFaulter) finish() {
	select {
	case <-pf.stop:
	default:
		close(pf.stop)
	}
	pf.wg.Wait()
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if pf.d != nil {
		pf.d.Close()
		pf.d = nil
	}
}

// addWindows puts the recorded windows into the merged result's
// scenarios: scenario n of the plan is the k-th of the merged file's with
// its strategy, driver, workload and retry, k its rank among the plan's.
func (pf *procFaulter) addWindows(m *report.Run) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	name := func(strategy, driver, workload, retry string) string {
		return strings.Join([]string{strategy, driver, workload, retry}, "/")
	}
	for n, ws := range pf.windows {
		sc := pf.p.scenarios[n]
		key := name(sc.Strategy, sc.Driver, sc.Workload, sc.Retry.String())
		k := 0
		for _, o := range pf.p.scenarios[:n] {
			if name(o.Strategy, o.Driver, o.Workload, o.Retry.String()) == key {
				k++
			}
		}
		for j := range m.Scenarios {
			s := &m.Scenarios[j]
			if name(s.Strategy, s.Driver, s.Workload, s.Retry) != key {
				continue
			}
			if k > 0 {
				k--
				continue
			}
			s.Faults = append(s.Faults, ws...)
			break
		}
	}
}

// procChildEnv is set in the environment of the children of --procs
// (its value: the segment), so that they accept the process faults.
const procChildEnv = "LOCKBENCH_PROCS_CHILD"
