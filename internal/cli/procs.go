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
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/segment"
	"github.com/lockbench/lockbench/internal/thresholds"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// procChildEnv is set in the environment of the children of --procs
// (its value: the segment), so that they accept the process faults.
const procChildEnv = "LOCKBENCH_PROCS_CHILD"

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
	var addrArgs []string
	var env []string
	var first engine.Node              // the first server, where the barrier lives
	var ownServers []report.ServerInfo // the servers this process started
	if len(p.addrs) > 0 {
		first = p.external(strategies.Standalone)[0]
	} else {
		if p.docker {
			return usageError{errors.New("--procs does not go with --backend docker: give the servers with --addr")}
		}
		masters := 1
		for _, sc := range p.scenarios {
			switch k := layoutKind(sc, p.topology); k {
			case strategies.Standalone:
			case strategies.Masters:
				masters = max(masters, p.nodes)
			default:
				return usageError{fmt.Errorf("--procs starts standalone servers or independent masters, and scenario %s/%s needs a %s layout: start it yourself and give --addr", sc.Strategy, sc.Workload, k)}
			}
		}
		// One password for all the masters, given to the children through
		// the environment (out of ps), with their addresses.
		topo, err := topology.StartShared(parent, masters)
		if err != nil {
			return err
		}
		defer topo.Stop()
		ownServers = serverInfo(topo)
		first = p.conn
		first.Addr, first.Password = topo.Servers[0].Addr, topo.Servers[0].Password
		var addrs []string
		for _, s := range topo.Servers {
			addrs = append(addrs, s.Addr)
		}
		env = append(env, "LOCKBENCH_PASSWORD="+topo.Servers[0].Password)
		addrArgs = []string{"--addr", strings.Join(addrs, ",")}
	}
	// The result file first, as run reserves it: a name in use stops
	// the run before anything starts.
	var files *outFiles
	if p.defaultOut {
		out, placeholder, err := reserveOut(filepath.Dir(p.out), time.Now().UTC(), runID)
		if err != nil {
			return fmt.Errorf("result file: %w", err)
		}
		files = &outFiles{path: out, placeholder: placeholder}
	} else if files, err = reserveExplicit(p.out, f.force); err != nil {
		return err
	}
	defer files.release()
	// One round of children per --repeat, on the same servers and run id
	// (each round's leader deletes its keys and barrier), pooled after.
	var rounds []*report.Run
	var failed []string
	var sig os.Signal
	for k := 0; k < max(p.repeat, 1); k++ {
		m, fails, s, err := procsRound(f, p, runID, first, self, addrArgs, env, stderr)
		if err != nil && errors.Is(err, errInterrupted) && len(rounds) > 0 {
			sig = s // Ctrl-C before this round ended a scenario: the rounds done are the result
			break
		}
		if err != nil {
			return err
		}
		rounds, failed, sig = append(rounds, m), append(failed, fails...), s
		if sig != nil || m.Interrupted || len(fails) > 0 {
			break
		}
	}
	merged, err := poolRounds(rounds)
	if err != nil {
		return err
	}
	merged.Interrupted = merged.Interrupted || sig != nil
	merged.Meta.Args = redactArgs(os.Args[1:])
	if ownServers != nil { // the children saw them as given (--addr)
		merged.Meta.Servers = ownServers
	}
	if len(failed) > 0 {
		merged.Failed = strings.Join(failed, "; ")
	}
	merged.Thresholds = thresholds.Evaluate(p.thresholds, merged.Scenarios)
	if err := files.write(merged); err != nil {
		return namedPath(files.path, err)
	}
	files.release()
	if err := printResults(stdout, f.format, f.columns, termWidth(stdout), merged); err != nil {
		return err
	}
	if len(p.thresholds) > 0 {
		if err := printThresholds(stdout, stderr, f.format, p.thresholds, merged.Thresholds); err != nil {
			return err
		}
	}
	if len(rounds) > 1 {
		fmt.Fprintf(stderr, "results of %d segments x %d repeats merged into %s\n", f.procs, len(rounds), files.path)
	} else {
		fmt.Fprintf(stderr, "results of %d segments merged into %s\n", f.procs, files.path)
	}
	switch {
	case sig != nil || merged.Interrupted:
		return errInterrupted
	case len(failed) > 0:
		return errors.New(strings.Join(failed, "; "))
	}
	if k := thresholds.Failed(merged.Thresholds); k > 0 {
		return fmt.Errorf("%w: %d of %d (threshold x scenario)", errThresholds, k, len(merged.Thresholds))
	}
	return nil
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
	var err error
	// .lockbench-<pid>-procs-*: a later run sweeps it when this process
	// was killed (SIGKILL) before removing it.
	tmp, err := os.MkdirTemp("", tmpPrefix()+"procs-")
	if err != nil {
		return nil, nil, nil, err
	}
	defer os.RemoveAll(tmp)

	base := childArgs(os.Args[1:])
	base = append(base, addrArgs...)
	children := make([]*exec.Cmd, n)
	pf := newProcFaulter(p, runID, first, n)
	defer pf.finish()
	var events []*os.File // the parent's ends of the children's event pipes
	var outs sync.WaitGroup
	var mu sync.Mutex // one child's line at a time on stderr
	lastLine := make([]string, n)
	for i := 0; i < n; i++ {
		seg := segment.Segment{Index: i + 1, Count: n}
		args := append(append([]string(nil), base...), "--segment", seg.String(), "--run-id", runID,
			"--out", filepath.Join(tmp, "seg-"+strconv.Itoa(i+1)+".json"), "--force", "-q", "--format", "json")
		// Each segment keeps its history by default (historyWriter), beside
		// its result file, for the cross-process check of the merge.
		c := exec.Command(self, args...)
		c.Env = append(append(os.Environ(), env...), procChildEnv+"="+strconv.Itoa(i+1), procEventsEnv+"=3")
		// Its events (its scenarios' start, a proc-kill) on fd 3.
		er, ew, err := os.Pipe()
		if err != nil {
			return nil, nil, nil, err
		}
		events = append(events, er)
		defer er.Close()
		c.ExtraFiles = []*os.File{ew}
		c.Stdout = io.Discard // its table: the parent prints the merged one
		// Its own process group: a Ctrl-C at the terminal reaches the
		// parent only, which forwards it once (twice would quit the child
		// at once, without results). Parent death kills it.
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		pr, err := c.StderrPipe()
		if err != nil {
			return nil, nil, nil, err
		}
		outs.Add(1)
		go func(i int, r io.Reader) {
			defer outs.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "results written to ") {
					continue // its temporary file: the parent says where the merged one is
				}
				mu.Lock()
				if strings.HasPrefix(line, "lockbench: ") {
					lastLine[i] = line // its error, for a usage error's exit
				}
				fmt.Fprintf(stderr, "[segment %d] %s\n", i+1, line)
				mu.Unlock()
			}
		}(i, pr)
		children[i] = c
	}
	started := 0
	defer func() { // every exit path: no child outlives the run
		for _, c := range children[:started] {
			if c.ProcessState == nil && c.Process != nil {
				_ = c.Process.Kill()
			}
		}
	}()
	for i, c := range children {
		err := c.Start()
		c.ExtraFiles[0].Close() // the child's end: EOF once it exits
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--procs: start segment %d: %w", started+1, err)
		}
		started++
		pf.procs = append(pf.procs, c.Process)
		outs.Add(1)
		go func(i int) {
			defer outs.Done()
			pf.read(i, events[i])
		}(i)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var signalled atomicSignal
	go func() {
		for sig := range sigs {
			if signalled.set(sig) {
				interruptCode.Store(int32(signalExit(sig)))
				for _, c := range children {
					_ = c.Process.Signal(sig)
					_ = c.Process.Signal(syscall.SIGCONT) // one proc-pause stopped
				}
			}
		}
	}()
	codes := make([]int, n)
	crashed := make([]string, n)
	killed := make([]bool, n) // by its proc-kill fault
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Add(1)
		go func(i int, c *exec.Cmd) {
			defer wg.Done()
			err := c.Wait()
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee):
				codes[i] = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					codes[i] = -1
					crashed[i] = ws.Signal().String()
					killed[i] = pf.died(i, ws.Signal(), true)
					return
				}
			default:
				codes[i], crashed[i] = -1, err.Error()
			}
			pf.died(i, 0, false)
		}(i, c)
	}
	wg.Wait()
	outs.Wait()
	if signalled.get() != nil {
		fmt.Fprintln(stderr, "lockbench: interrupted; the segments stopped")
	}
	var failed []string
	for i, code := range codes {
		switch code {
		case exitOK, exitThresholds:
		case exitUsage:
			return nil, nil, nil, usageError{fmt.Errorf("segment %d: %s", i+1, strings.TrimPrefix(lastLine[i], "lockbench: "))}
		case -1:
			if killed[i] {
				fmt.Fprintf(stderr, "lockbench: segment %d was killed by its proc-kill fault (SIGKILL inside a critical section); the others' results are merged\n", i+1)
				continue
			}
			failed = append(failed, fmt.Sprintf("segment %d crashed (%s)", i+1, crashed[i]))
		case exitInterrupted, exitSIGTERM, exitSIGHUP:
		default:
			failed = append(failed, fmt.Sprintf("segment %d failed (exit %d)", i+1, code))
		}
	}
	var runs []*report.Run
	var names []string
	for i := 0; i < n; i++ {
		path := filepath.Join(tmp, "seg-"+strconv.Itoa(i+1)+".json")
		r, err := readResult(path)
		if err != nil {
			continue // missing: a killed or failed segment
		}
		if len(r.Scenarios) == 0 && signalled.get() != nil {
			continue // interrupted before its first scenario ended
		}
		runs, names = append(runs, r), append(names, path)
	}
	if len(runs) == 0 {
		if signalled.get() != nil {
			return nil, nil, signalled.get(), errInterrupted
		}
		return nil, nil, nil, fmt.Errorf("--procs: no segment wrote a result: %s", strings.Join(failed, "; "))
	}
	missing, err := checkSegmentFiles(runs, names)
	if err != nil {
		return nil, nil, nil, err
	}
	merged, err := mergeSegments(runs, missing)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := crossCheck(merged, runs, names); err != nil {
		return nil, nil, nil, err
	}
	pf.finish()
	pf.addWindows(merged)
	return merged, failed, signalled.get(), nil
}
