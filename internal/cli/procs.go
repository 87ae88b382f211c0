package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/segment"
	"github.com/lockbench/lockbench/internal/thresholds"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// parentOnly are the run flags a --procs parent keeps to itself: the
// children get their own --segment, --run-id and --out, serve no
// metrics, and test no thresholds (the parent tests the merged result).
var parentOnly = map[string]bool{"procs": true, "out": true, "run-id": true, "force": true, "metrics-addr": true,
	"metrics-linger": true, "fail-on": true, "format": true, "columns": true, "quiet": true, "q": true, "repeat": true}

// childArgs is the parent's command line (without the program name) with
// the parentOnly flags taken out (--flag value and --flag=value forms;
// --force and -q/--quiet take no value).
func childArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !parentOnly[name] {
			out = append(out, a)
			continue
		}
		if !hasValue && name != "force" && name != "quiet" && name != "q" {
			i++ // its value
		}
	}
	return out
}

// runProcs runs the plan as f.procs execution segments in child processes
// of this binary (os.Executable) and merges their results: it starts the
// servers as run does (unless --addr), runs the children with the same
// flags plus --segment i/N, --run-id and --out <tmp>/seg-i.json against
// them, prefixes their stderr lines with "[segment i]", waits, merges the
// files (report.Merge), writes --out and prints the table. Ctrl-C (SIGINT,
// SIGTERM, SIGHUP) is forwarded to the children once; the run then exits
// 130 (143, 129). A child exiting 2 makes the run exit 2 with its message;
// a child that crashed or failed is named in the error (exit 1).
func runProcs(parent context.Context, f *runFlags, p *plan, stdout, stderr io.Writer) error {
	if parent == nil {
		parent = context.Background()
	}
	runID := f.runID
	if runID == "" {
		runID = randomID()
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--procs: the running binary: %w", err)
	}
	// The children's directories that killed --procs runs left behind.
	for _, name := range sweepStale(os.TempDir()) {
		fmt.Fprintf(stderr, "lockbench: removed %s, left by a lockbench process that is gone\n", filepath.Join(os.TempDir(), name))
	}
	srv, err := startProcServers(parent, p)
	if err != nil {
		return err
	}
	if srv.topo != nil {
		defer srv.topo.Stop()
	}
	// The result file first, as run reserves it: a name in use stops
	// the run before anything starts.
	files, err := reserveFiles(p, runID, f.force)
	if err != nil {
		return err
	}
	defer files.release()
	rounds, failed, sig, err := procsRounds(f, p, runID, srv, self, stderr)
	if err != nil {
		return err
	}
	// A signal from here on lets the merged file be written whole, then
	// makes the exit 130, 143 or 129.
	late := make(chan os.Signal, 1)
	signal.Notify(late, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(late)
	merged, err := poolRounds(rounds)
	if err != nil {
		return err
	}
	merged.Interrupted = merged.Interrupted || sig != nil
	merged.Meta.Args = redactArgs(os.Args[1:])
	if srv.own != nil { // the children saw them as given (--addr)
		merged.Meta.Servers = srv.own
	}
	if len(failed) > 0 {
		merged.Failed = strings.Join(failed, "; ")
	}
	merged.Thresholds = thresholds.Evaluate(p.thresholds, merged.Scenarios)
	if err := writeResults(files, merged, f, p, stdout, stderr); err != nil {
		return err
	}
	if len(rounds) > 1 {
		fmt.Fprintf(stderr, "results of %d segments x %d repeats merged into %s\n", f.procs, len(rounds), files.path)
	} else {
		fmt.Fprintf(stderr, "results of %d segments merged into %s\n", f.procs, files.path)
	}
	select {
	case s := <-late:
		if sig == nil {
			interruptCode.Store(int32(signalExit(s)))
			sig = s
		}
	default:
	}
	return runExit(sig != nil || merged.Interrupted, failed, merged.Thresholds)
}

// procServers are the servers the children of --procs run against.
type procServers struct {
	addrArgs []string            // --addr for the children (none: the user's, in their flags)
	env      []string            // the children's environment: the servers' password
	first    engine.Node         // the first server, where the barrier lives
	own      []report.ServerInfo // the servers this process started
	topo     *topology.Topology  // those servers, to stop (nil: --addr)
}

// startProcServers starts the standalone servers or independent masters
// the plan's scenarios need, unless --addr gives them.
func startProcServers(parent context.Context, p *plan) (procServers, error) {
	var srv procServers
	if len(p.addrs) > 0 {
		srv.first = p.external(strategies.Standalone)[0]
		return srv, nil
	}
	if p.docker {
		return srv, usageError{errors.New("--procs does not go with --backend docker: give the servers with --addr")}
	}
	masters := 1
	for _, sc := range p.scenarios {
		switch k := layoutKind(sc, p.topology); k {
		case strategies.Standalone:
		case strategies.Masters:
			masters = max(masters, p.nodes)
		default:
			return srv, usageError{fmt.Errorf("--procs starts standalone servers or independent masters, and scenario %s/%s needs a %s layout: start it yourself and give --addr", sc.Strategy, sc.Workload, k)}
		}
	}
	// One password for all the masters, given to the children through
	// the environment (out of ps), with their addresses.
	topo, err := topology.StartShared(parent, masters)
	if err != nil {
		return srv, err
	}
	srv.topo = topo
	srv.own = serverInfo(topo)
	srv.first = p.conn
	srv.first.Addr, srv.first.Password = topo.Servers[0].Addr, topo.Servers[0].Password
	var addrs []string
	for _, s := range topo.Servers {
		addrs = append(addrs, s.Addr)
	}
	// The servers go with this process: the children record no run.
	srv.env = append(srv.env, "LOCKBENCH_PASSWORD="+topo.Servers[0].Password, "LOCKBENCH_NO_RUN_RECORD=1")
	srv.addrArgs = []string{"--addr", strings.Join(addrs, ",")}
	return srv, nil
}

// procsRounds runs one round of children per --repeat, on the same
// servers and run id (each round's leader deletes its keys and barrier):
// the rounds' merged runs, to be pooled, the segments that failed, and
// the signal that interrupted them (nil: none).
func procsRounds(f *runFlags, p *plan, runID string, srv procServers, self string, stderr io.Writer) ([]*report.Run, []string, os.Signal, error) {
	var rounds []*report.Run
	var failed []string
	var sig os.Signal
	for k := 0; k < max(p.repeat, 1); k++ {
		m, fails, s, err := procsRound(f, p, runID, srv.first, self, srv.addrArgs, srv.env, stderr)
		if err != nil && errors.Is(err, errInterrupted) && len(rounds) > 0 {
			sig = s // Ctrl-C before this round ended a scenario: the rounds done are the result
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		rounds, failed, sig = append(rounds, m), append(failed, fails...), s
		if sig != nil || m.Interrupted || len(fails) > 0 {
			break
		}
	}
	return rounds, failed, sig, nil
}

// atomicSignal holds the first signal received.
type atomicSignal struct {
	mu  sync.Mutex
	sig os.Signal
}

// set records sig if none was, and reports whether it did.
func (a *atomicSignal) set(sig os.Signal) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sig != nil {
		return false
	}
	a.sig = sig
	return true
}

func (a *atomicSignal) get() os.Signal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sig
}

// poolRounds pools the merged runs of the rounds of --procs --repeat:
// each scenario's rounds combined Sequential (report.Combine), in the
// first round's order; one round is returned as it is.
func poolRounds(rounds []*report.Run) (*report.Run, error) {
	if len(rounds) == 1 {
		return rounds[0], nil
	}
	out := *rounds[0]
	out.Scenarios = nil
	for i, s := range rounds[0].Scenarios {
		parts := []report.Scenario{s}
		for _, r := range rounds[1:] {
			for _, o := range r.Scenarios {
				if o.Key() == s.Key() {
					parts = append(parts, o)
					break
				}
			}
		}
		pooled, err := report.Combine(report.Sequential, parts)
		if err != nil {
			return nil, fmt.Errorf("scenario %d: %w", i+1, err)
		}
		out.Scenarios = append(out.Scenarios, pooled)
	}
	for _, r := range rounds[1:] {
		out.Interrupted = out.Interrupted || r.Interrupted
		out.Meta.KilledSegments = append(out.Meta.KilledSegments, r.Meta.KilledSegments...)
	}
	slices.Sort(out.Meta.KilledSegments)
	out.Meta.KilledSegments = slices.Compact(out.Meta.KilledSegments)
	return &out, nil
}

// procsRound runs the children of one round of --procs (one repeat)
// against the servers (addrArgs, env) and merges their result files: the
// round's merged run, the segments that failed, the signal that
// interrupted it (nil: none). Errors: a child's usage error (exit 2), no
// result at all, a merge or cross-check failure.
func procsRound(f *runFlags, p *plan, runID string, first engine.Node, self string, addrArgs, env []string, stderr io.Writer) (*report.Run, []string, os.Signal, error) {
	n := f.procs
	// .lockbench-<pid>-procs-*: a later run sweeps it when this process
	// was killed (SIGKILL) before removing it.
	tmp, err := os.MkdirTemp("", tmpPrefix()+"procs-")
	if err != nil {
		return nil, nil, nil, err
	}
	defer os.RemoveAll(tmp)
	r := &procsRun{n: n, tmp: tmp, stderr: stderr, children: make([]*exec.Cmd, n), lastLine: make([]string, n)}
	r.pf = newProcFaulter(p, runID, first, n)
	defer r.pf.finish()
	defer r.closeEvents()
	base := append(childArgs(os.Args[1:]), addrArgs...)
	for i := 0; i < n; i++ {
		if err := r.child(i, base, runID, self, env); err != nil {
			return nil, nil, nil, err
		}
	}
	defer r.killStarted() // every exit path: no child outlives the run
	if err := r.start(); err != nil {
		return nil, nil, nil, err
	}
	defer r.forwardSignals()()
	r.wait()
	if r.signalled.get() != nil {
		fmt.Fprintln(stderr, "lockbench: interrupted; the segments stopped")
	}
	failed, err := r.failures()
	if err != nil {
		return nil, nil, nil, err
	}
	merged, err := r.merge(failed)
	if err != nil {
		return nil, nil, r.signalled.get(), err
	}
	return merged, failed, r.signalled.get(), nil
}

// procsRun is one round of --procs children (procsRound).
type procsRun struct {
	n        int    // segments
	tmp      string // the children's result files
	stderr   io.Writer
	pf       *procFaulter
	children []*exec.Cmd
	started  int        // children started
	events   []*os.File // the parent's ends of the children's event pipes
	outs     sync.WaitGroup
	mu       sync.Mutex // one child's line at a time on stderr
	lastLine []string   // each child's last "lockbench: " line, for a usage error's exit
	// The children's ends: their exit codes (-1: crashed), the signal or
	// error of a crash, and whether their proc-kill fault killed them.
	codes     []int
	crashed   []string
	killed    []bool
	signalled atomicSignal
}

// resultPath is child i's result file.
func (r *procsRun) resultPath(i int) string {
	return filepath.Join(r.tmp, "seg-"+strconv.Itoa(i+1)+".json")
}

// child prepares child i: its command line (base, then its segment, the
// run id and its result file), environment, event pipe (fd 3) and stderr
// relay.
func (r *procsRun) child(i int, base []string, runID, self string, env []string) error {
	seg := segment.Segment{Index: i + 1, Count: r.n}
	args := append(append([]string(nil), base...), "--segment", seg.String(), "--run-id", runID,
		"--out", r.resultPath(i), "--force", "-q", "--format", "json")
	// Each segment keeps its history by default (historyWriter), beside
	// its result file, for the cross-process check of the merge.
	c := exec.Command(self, args...)
	c.Env = append(append(os.Environ(), env...), procChildEnv+"="+strconv.Itoa(i+1), procEventsEnv+"=3")
	// Its events (its scenarios' start, a proc-kill) on fd 3.
	er, ew, err := os.Pipe()
	if err != nil {
		return err
	}
	r.events = append(r.events, er)
	c.ExtraFiles = []*os.File{ew}
	c.Stdout = io.Discard // its table: the parent prints the merged one
	// Its own process group: a Ctrl-C at the terminal reaches the
	// parent only, which forwards it once (twice would quit the child
	// at once, without results). Parent death kills it.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr, err := c.StderrPipe()
	if err != nil {
		return err
	}
	r.outs.Add(1)
	go r.relay(i, pr)
	r.children[i] = c
	return nil
}

// relay copies child i's stderr lines to stderr, each after
// "[segment i]", but for its "results written to" line.
func (r *procsRun) relay(i int, rd io.Reader) {
	defer r.outs.Done()
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "results written to ") {
			continue // its temporary file: the parent says where the merged one is
		}
		r.mu.Lock()
		if strings.HasPrefix(line, "lockbench: ") {
			r.lastLine[i] = line // its error, for a usage error's exit
		}
		fmt.Fprintf(r.stderr, "[segment %d] %s\n", i+1, line)
		r.mu.Unlock()
	}
}

// closeEvents closes the parent's ends of the event pipes.
func (r *procsRun) closeEvents() {
	for _, er := range r.events {
		er.Close()
	}
}

// start starts the children, each with a reader of its events.
func (r *procsRun) start() error {
	for i, c := range r.children {
		err := c.Start()
		c.ExtraFiles[0].Close() // the child's end: EOF once it exits
		if err != nil {
			return fmt.Errorf("--procs: start segment %d: %w", r.started+1, err)
		}
		r.started++
		r.pf.procs = append(r.pf.procs, c.Process)
		r.outs.Add(1)
		go func(i int) {
			defer r.outs.Done()
			r.pf.read(i, r.events[i])
		}(i)
	}
	return nil
}

// killStarted kills the children started that have not exited.
func (r *procsRun) killStarted() {
	for _, c := range r.children[:r.started] {
		if c.ProcessState == nil && c.Process != nil {
			_ = c.Process.Kill()
		}
	}
}

// forwardSignals forwards the first signal (SIGINT, SIGTERM, SIGHUP) to
// every child, until the returned function is called.
func (r *procsRun) forwardSignals() (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for sig := range sigs {
			if r.signalled.set(sig) {
				interruptCode.Store(int32(signalExit(sig)))
				for _, c := range r.children {
					_ = c.Process.Signal(sig)
					_ = c.Process.Signal(syscall.SIGCONT) // one proc-pause stopped
				}
			}
		}
	}()
	return func() { signal.Stop(sigs) }
}

// wait waits for every child to exit and its output to end, recording
// how each ended.
func (r *procsRun) wait() {
	r.codes, r.crashed, r.killed = make([]int, r.n), make([]string, r.n), make([]bool, r.n)
	var wg sync.WaitGroup
	for i, c := range r.children {
		wg.Add(1)
		go func(i int, c *exec.Cmd) {
			defer wg.Done()
			err := c.Wait()
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee):
				r.codes[i] = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					r.codes[i] = -1
					r.crashed[i] = ws.Signal().String()
					r.killed[i] = r.pf.died(i, ws.Signal(), true)
					return
				}
			default:
				r.codes[i], r.crashed[i] = -1, err.Error()
			}
			r.pf.died(i, 0, false)
		}(i, c)
	}
	wg.Wait()
	r.outs.Wait()
}

// failures are the segments that crashed or failed, named; a child's
// usage error (exit 2) is the round's.
func (r *procsRun) failures() ([]string, error) {
	var failed []string
	for i, code := range r.codes {
		switch code {
		case exitOK, exitThresholds:
		case exitUsage:
			return nil, usageError{fmt.Errorf("segment %d: %s", i+1, strings.TrimPrefix(r.lastLine[i], "lockbench: "))}
		case -1:
			if r.killed[i] {
				fmt.Fprintf(r.stderr, "lockbench: segment %d was killed by its proc-kill fault (SIGKILL inside a critical section); the others' results are merged\n", i+1)
				continue
			}
			failed = append(failed, fmt.Sprintf("segment %d crashed (%s)", i+1, r.crashed[i]))
		case exitInterrupted, exitSIGTERM, exitSIGHUP:
		default:
			failed = append(failed, fmt.Sprintf("segment %d failed (exit %d)", i+1, code))
		}
	}
	return failed, nil
}

// merge reads the children's result files and merges them, cross-checked
// (errInterrupted: none had a result when a signal came).
func (r *procsRun) merge(failed []string) (*report.Run, error) {
	var runs []*report.Run
	var names []string
	for i := 0; i < r.n; i++ {
		path := r.resultPath(i)
		res, err := readResult(path, 0)
		if err != nil {
			continue // missing: a killed or failed segment
		}
		if len(res.Scenarios) == 0 && r.signalled.get() != nil {
			continue // interrupted before its first scenario ended
		}
		runs, names = append(runs, res), append(names, path)
	}
	if len(runs) == 0 {
		if r.signalled.get() != nil {
			return nil, errInterrupted
		}
		return nil, fmt.Errorf("--procs: no segment wrote a result: %s", strings.Join(failed, "; "))
	}
	missing, err := checkSegmentFiles(runs, names)
	if err != nil {
		return nil, err
	}
	merged, err := mergeSegments(runs, missing)
	if err != nil {
		return nil, err
	}
	if err := crossCheck(merged, runs, names, report.LinBounds{}); err != nil {
		return nil, err
	}
	r.pf.finish()
	r.pf.addWindows(merged)
	return merged, nil
}
