package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies/ext"
)

var bin string

func TestMain(m *testing.M) {
	ext.ServeIfAdapter() // this binary started as ext-null's or ext-atomic's adapter
	setWriterChild()     // or as TestResultSetKilled's writer
	// The lockbench processes the tests start check every result file
	// they write against results/schema.json (report.WriteFile).
	os.Setenv("LOCKBENCH_CHECK_SCHEMA", "1")
	dir, err := os.MkdirTemp("", "lockbench-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "lockbench")
	// The run records of the runs the tests start (--addr): not in the
	// user's state directory.
	os.Setenv("LOCKBENCH_STATE_DIR", filepath.Join(dir, "state"))
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lockbench").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build lockbench: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func lockbench(t *testing.T, args ...string) result {
	t.Helper()
	return lockbenchEnv(t, nil, args...)
}

// runAndRead runs lockbench with args, which write the result file out,
// fails the test unless it exits 0, and returns its output and the file.
func runAndRead(t *testing.T, out string, args ...string) (result, *report.Run) {
	t.Helper()
	r := lockbench(t, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return r, readRun(t, out)
}

// strategyRun is one run of runStrategiesIn: the file's first scenario,
// its path and the run's error.
type strategyRun struct {
	sc   report.Scenario
	file string
	err  error
}

// runStrategiesIn runs lockbench in this process with args, --strategy
// S, --out DIR/S.json and extra[S] for each strategy S, the runs at once (each with
// servers of its own; they share nothing but dir), so that the test waits
// for the longest run rather than their sum, and returns each file's
// first scenario, its path and the run's error (a failing --fail-on
// threshold is one) by strategy. A run that wrote no readable file fails
// the test once all have ended.
func runStrategiesIn(t *testing.T, dir string, args []string, extra map[string][]string, strategies ...string) map[string]strategyRun {
	t.Helper()
	runs := make([]strategyRun, len(strategies))
	readErrs := make([]error, len(strategies))
	var wg sync.WaitGroup
	for i, s := range strategies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, s+".json")
			_, err := inProcess(t, append(append(append([]string{}, args...), "--strategy", s, "--out", out), extra[s]...)...)
			r, rerr := report.ReadFile(out)
			if rerr != nil {
				readErrs[i] = fmt.Errorf("%s: %v (run: %v)", s, rerr, err)
				return
			}
			runs[i] = strategyRun{r.Scenarios[0], out, err}
		}()
	}
	wg.Wait()
	got := map[string]strategyRun{}
	for i, s := range strategies {
		if readErrs[i] != nil {
			t.Fatal(readErrs[i])
		}
		got[s] = runs[i]
	}
	return got
}

// readRun reads the result file at path, failing the test on an error.
func readRun(t *testing.T, path string) *report.Run {
	t.Helper()
	run, err := report.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// lockbenchEnv runs lockbench with env added to the test's environment.
func lockbenchEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return startLockbench(t, env, args...).wait(t)
}

// started is a lockbench process started by startLockbench.
type started struct {
	cmd       *exec.Cmd
	args      []string
	out, errb *bytes.Buffer
}

// startLockbench starts lockbench with env added to the test's
// environment and returns without waiting for it: a test can start a long
// run before it calls t.Parallel and wait for it after (TestClaimsQuick).
func startLockbench(t *testing.T, env []string, args ...string) started {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	s := started{cmd: cmd, args: args, out: &bytes.Buffer{}, errb: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = s.out, s.errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// wait waits for the process to exit and returns its exit code and
// output, failing the test if it could not be waited for or panicked.
func (s started) wait(t *testing.T) result {
	t.Helper()
	err := s.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r := result{code, s.out.String(), s.errb.String()}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("lockbench %v panicked:\n%s", s.args, r.stderr)
	}
	return r
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dirJSON := filepath.Join(t.TempDir(), "d.json")
	if err := os.Mkdir(dirJSON, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--strategy", "nope"}, []string{`unknown strategy "nope"`, "atomic", "naive"}},
		{[]string{"run", "--driver", "redigo"}, []string{`unknown driver "redigo"`, "goredis", "rueidis"}},
		{[]string{"run", "--workload", "flashsale"}, []string{`unknown workload "flashsale"`, "flash-sale"}},
		{[]string{"run", "--retry", "sometimes"}, []string{`unknown retry policy "sometimes"`, "backoff, csc, fixed, none"}},
		{[]string{"run", "--clients", "0", "--ttl", "-1s", "--stock", "0"}, []string{"--clients", "--ttl", "--stock"}},
		{[]string{"run", "--duration", "0s"}, []string{"--duration must be > 0"}},
		{[]string{"run", "--addr", "localhost"}, []string{"want host:port"}},
		{[]string{"run", "--no-such-flag"}, []string{"unknown flag"}},
		{[]string{"run", "extra"}, []string{"unknown command"}},
		{[]string{"frobnicate"}, []string{"unknown command"}},
		{[]string{"run", "--retry", ",,"}, []string{"--retry is empty"}},
		{[]string{"run", "--work", "2562047h"}, []string{"--work must stay within 1h"}},
		{[]string{"run", "--duration", "2562047h", "--warmup", "2h"}, []string{"--duration must be > 0 and at most 24h"}},
		{[]string{"run", "--out", "/proc/x.json"}, []string{"--out"}},
		{[]string{"run", "--out", dirJSON}, []string{"is a directory"}},
		{[]string{"run", "--addr", "::1"}, []string{"want host:port"}},
		{[]string{"run", "--addr", "127.0.0.1:+1"}, []string{"port must be a number"}},
		{[]string{"run", "--strategy", "redlock", "--nodes", "2"}, []string{"redlock needs at least 3"}},
		{[]string{"run", "--read-ratio", "1.5"}, []string{"--read-ratio"}},
		{[]string{"run", "--clients", "1000000"}, []string{"--clients must be from 1 to 100000"}},
		{[]string{"run", "--retry", "backoff:max=NaN"}, []string{"not a finite number"}},
		{[]string{"run", "--guard", "fence"}, []string{"--guard"}},
		{[]string{"run", "--warmup", "-1s"}, []string{"--warmup"}},
		{[]string{"run", "--acquire-timeout", "-1s"}, []string{"--acquire-timeout"}},
		{[]string{"run", "--skus", "0"}, []string{"--skus"}},
		{[]string{"run", "--strategy", "segmented", "--segments", "0"}, []string{"--segments"}},
		{[]string{"run", "--strategy", "segmented", "--segments", "50", "--stock", "10"}, []string{"segments would start empty"}},
		{[]string{"run", "--instances", "0"}, []string{"--instances"}},
		{[]string{"run", "--wait-timeout", "-1ms"}, []string{"--wait-timeout"}},
		{[]string{"claims", "--only", "S2,X9"}, []string{"unknown claim id X9", "S1", "P8"}},
		{[]string{"claims", "--driver", "redigo"}, []string{`unknown driver "redigo"`}},
		{[]string{"claims", "--only", ","}, []string{"--only is empty"}},
		{[]string{"claims", "--only", ""}, []string{"--only is empty"}},
		{[]string{"run", "--load-sample", "10us"}, []string{"--load-sample"}},
		{[]string{"run", "--token", "fixed"}, []string{`--token "fixed" is not random or constant`}},
		{[]string{"run", "--strategy", "atomic,fencing", "--token", "constant"}, []string{`strategy "fencing" keeps its own token`}},
		{[]string{"run", "--nodes", "0"}, []string{"--nodes"}},
		{[]string{"run", "--ttl", "soon"}, []string{"not a duration"}},
		{[]string{"run", "--addr", "http://x:1"}, []string{"redis://"}},
		{[]string{"run", "--password", "x"}, []string{"--password goes with --addr"}},
		{[]string{"run", "--strategy", "atomc"}, []string{`did you mean "atomic"`}},
		{[]string{"run", "--driver", "go-redis"}, []string{`did you mean "goredis"`}},
		{[]string{"run", "--retry", "fixed:interval=1ms,interval=2ms"}, []string{"given twice"}},
		{[]string{"run", "--clients", "x"}, []string{"invalid argument"}},
		{[]string{"run", "--fault", "pauze"}, []string{`unknown fault "pauze"`, `did you mean "pause"`}},
		{[]string{"run", "--fault", "node-kill", "--addr", "127.0.0.1:6379"}, []string{"cannot be used with --addr"}},
		{[]string{"run", "--strategy", "redlock", "--fault", "failover"}, []string{"failover needs a master with a replica"}},
		{[]string{"run", "--fault", "node-kill:node=3"}, []string{"node=3, but the layout has 1 server"}},
		{[]string{"run", "--topology", "masters:0"}, []string{"want masters:N"}},
		{[]string{"run", "--topology", "ring"}, []string{"--topology"}},
		{[]string{"run", "--work", "uniform:9ms-1ms"}, []string{"--work"}},
		{[]string{"run", "--zipf", "0.5"}, []string{"--zipf"}},
		{[]string{"run", "--keys", "0"}, []string{"--keys"}},
		{[]string{"run", "--clients", "1,10"}, []string{`"--clients"`, "lockbench sweep --clients 1,10,100"}},
		{[]string{"run", "--strategy", "handoff", "--retry", "pubsub"}, []string{"--retry"}},
		{[]string{"run", "--own-keys", "--workload", "hot-key"}, []string{"--own-keys goes with lock-cycle"}},
		{[]string{"run", "--retry", "fixd", "--strategy", "atomc", "--stock", "0"}, []string{`unknown retry policy "fixd"`, `unknown strategy "atomc"; did you mean "atomic"?`, "--stock 0: must be from 1"}},
		{[]string{"run", "--strategy", "sql-rowlock", "--driver", "goredis,rueidsi"}, []string{`unknown driver "rueidsi"; did you mean "rueidis"?`}},
		{[]string{"run", "--strategy", "wait-replicas", "--wait-timeout", "0s"}, []string{"--wait-timeout 0s: must be from 1ms to 1h0m0s"}},
		{[]string{"run", "--format", "yaml"}, []string{"--format"}},
		{[]string{"run", "--repeat", "0"}, []string{"--repeat"}},
		{[]string{"harness", "--rounds", "0"}, []string{"--rounds must be at least 1, got 0"}},
		{[]string{"harness", "--requests", "10", "--duration", "0s"}, []string{"--requests must be at least 1000, got 10", "--duration must be above 0"}},
		{[]string{"harness", "--clients", "1000000"}, []string{"--clients must be from 1 to 100000, got 1000000"}},
		{[]string{"harness", "--handover-clients", "1", "--work", "10us"}, []string{"--handover-clients must be from 2 to 100000, got 1", "--work must be at least 100µs"}},
		{[]string{"harness", "--work", "2s", "--duration", "1s"}, []string{"--work 2s is more than --duration/10 (100ms)"}},
		{[]string{"run", "--rate", "-1"}, []string{"--rate"}},
		{[]string{"run", "--arrivals", "bursty", "--rate", "10"}, []string{"--arrivals"}},
	}
	for _, c := range cases {
		r := lockbench(t, c.args...)
		if r.code != exitUsage {
			t.Errorf("lockbench %v: exit %d, want 2\n%s", c.args, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("lockbench %v: stderr lacks %q:\n%s", c.args, w, r.stderr)
			}
		}
	}
}

// version and --version print the version, the commit and the Go version.
func TestVersion(t *testing.T) {
	want := regexp.MustCompile(`^lockbench \S+ commit \S+ .*go1\.\d+`)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := lockbench(t, args...)
		if r.code != 0 || !want.MatchString(r.stdout) {
			t.Errorf("lockbench %v: exit %d, %q", args, r.code, r.stdout)
		}
	}
}

func TestList(t *testing.T) {
	r := lockbench(t, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, w := range []string{"naive", "atomic", "watchdog", "reentrant", "redlock", "segmented", "fencing", "multilevel",
		"wait-replicas", "rwlock", "fair", "goredis", "rueidis", "flash-sale", "hot-key", "long-task", "nested",
		"none", "spin", "fixed", "backoff", "pubsub", "pause", "crash-after-setnx", "node-kill", "node-restart", "node-pause", "failover"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("list lacks %q", w)
		}
	}
}

func TestUnreachableAddr(t *testing.T) {
	start := time.Now()
	r := lockbench(t, "run", "--addr", "127.0.0.1:1", "--driver", "goredis,rueidis", "--out", filepath.Join(t.TempDir(), "x.json"))
	if r.code != exitFailure {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "cannot") || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Fatalf("error does not name the address:\n%s", r.stderr)
	}
	if time.Since(start) > time.Minute {
		t.Fatalf("took %v to give up", time.Since(start))
	}
}

// A real run prints the table, writes the JSON contract, and leaves no
// redis-server behind.
func TestRunWritesResult(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	r := lockbench(t, "run", "--strategy", "atomic", "--clients", "8", "--stock", "40", "--retry", "fixed:interval=2ms", "--out", out, "-q")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{"strategy", "ops/s", "p99 ms", "oversell", "atomic", "goredis", "rueidis", "results written to " + out} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, r.stdout)
		}
	}
	doc := readDoc(t, out)
	if doc["schema"] != float64(1) {
		t.Fatalf("schema = %v", doc["schema"])
	}
	meta := doc["meta"].(map[string]any)
	hasKeys(t, "meta", meta, "started_at", "git_commit", "go_version", "redis_version", "gomaxprocs", "args")
	scs := doc["scenarios"].([]any)
	if len(scs) != 2 {
		t.Fatalf("%d scenarios, want 2 (atomic x 2 drivers)", len(scs))
	}
	lat := []string{"p50", "p90", "p99", "p999", "max", "mean"}
	for _, s := range scs {
		sc := s.(map[string]any)
		hasKeys(t, "scenario", sc, "strategy", "driver", "workload", "retry", "clients", "params", "duration_s",
			"ops", "ops_per_sec", "latency_ms", "acquire_ms", "counters", "violations")
		hasKeys(t, "latency_ms", sc["latency_ms"].(map[string]any), lat...)
		hasKeys(t, "acquire_ms", sc["acquire_ms"].(map[string]any), lat...)
		hasKeys(t, "counters", sc["counters"].(map[string]any), "attempts", "failures", "errors")
		v := sc["violations"].(map[string]any)
		hasKeys(t, "violations", v, "oversell", "overlap", "lost_updates")
		if v["oversell"] != float64(0) || v["overlap"] != float64(0) || v["lost_updates"] != float64(0) {
			t.Errorf("%s: violations %v, want 0", sc["driver"], v)
		}
		if sc["ops"] != float64(40) {
			t.Errorf("%s: ops %v, want 40", sc["driver"], sc["ops"])
		}
	}
	assertServersGone(t, meta)
	// The .hgrm files beside it and the encoded histogram agree with ops.
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range run.Scenarios {
		h, err := hdrhistogram.Decode([]byte(s.LatencyHist))
		if err != nil || h.TotalCount() != s.Ops {
			t.Fatalf("scenario %d: encoded histogram %v, count %d, ops %d", i, err, h.TotalCount(), s.Ops)
		}
		hgrm := fmt.Sprintf("%s-%d-%s-%s-%s.hgrm", strings.TrimSuffix(out, ".json"), i+1, s.Strategy, s.Driver, s.Workload)
		if b, err := os.ReadFile(hgrm); err != nil || !strings.Contains(string(b), "Total count    =           40") {
			t.Fatalf("%s: %v\n%s", hgrm, err, b)
		}
	}
}

// Ctrl-C: the run stops, writes what it measured marked interrupted, exits
// 130, and stops its redis-server.
func TestInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "i.json")
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "rueidis", "--stock", "100000000",
		"--duration", "60s", "--clients", "4", "--out", out)
	stderr, _ := cmd.StderrPipe()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "[1/1]") // the progress line: the scenario has started
	time.Sleep(500 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 30*time.Second) {
		t.Fatal("lockbench did not stop within 30 s of Ctrl-C")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130", code)
	}
	doc := readDoc(t, out)
	if doc["interrupted"] != true {
		t.Fatalf("interrupted = %v, want true", doc["interrupted"])
	}
	scs := doc["scenarios"].([]any)
	if len(scs) != 1 || scs[0].(map[string]any)["ops"].(float64) <= 0 {
		t.Fatalf("want the one interrupted scenario with its ops, got %v", scs)
	}
	assertServersGone(t, doc["meta"].(map[string]any))
}

// SIGKILL: lockbench cannot clean up, so the kernel's parent-death signal
// must end its redis-server.
func TestKilledLeavesNoServer(t *testing.T) {
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "goredis", "--stock", "100000000",
		"--duration", "60s", "--clients", "2", "--out", filepath.Join(t.TempDir(), "k.json"))
	stderr, _ := cmd.StderrPipe()
	// Become the subreaper, so that the orphaned server is reparented to
	// this test process, which can then wait for it (and reap it).
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "[1/1]")
	kids := waitChildren(cmd.Process.Pid)
	if len(kids) == 0 {
		cmd.Process.Kill()
		t.Fatal("found no redis-server child of lockbench")
	}
	var dirs []string
	for _, pid := range kids {
		if d, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil {
			dirs = append(dirs, d)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	defer func() {
		// The next start sweeps the directories a killed run left.
		topology.SweepStale()
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("server directory %s not swept after its owner was killed", d)
			}
		}
	}()
	for _, pid := range kids {
		reaped := make(chan error, 1)
		go func() {
			var ws syscall.WaitStatus
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			reaped <- err
		}()
		select {
		case err := <-reaped:
			// ECHILD: not reparented to this test because lockbench had
			// already reaped it (a server that exited before the kill, such
			// as one that lost its port and was started again elsewhere):
			// it must be gone.
			if errors.Is(err, syscall.ECHILD) && !topology.Alive(pid) {
				continue
			}
			if err != nil {
				t.Fatalf("wait for redis-server %d: %v", pid, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("redis-server %d outlived its killed parent by 10 s", pid)
		}
	}
}

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER from <linux/prctl.h>

// waitFor reads r until s has appeared, then keeps draining r in the
// background so that the writer never blocks.
func waitFor(t *testing.T, r io.Reader, s string) *syncBuffer {
	t.Helper()
	br := bufio.NewReader(r)
	var seen strings.Builder
	for !strings.Contains(seen.String(), s) {
		b, err := br.ReadByte()
		if err != nil {
			t.Fatalf("output ended before %q appeared: %s", s, seen.String())
		}
		seen.WriteByte(b)
	}
	rest := &syncBuffer{}
	rest.Write([]byte(seen.String()))
	go io.Copy(rest, br)
	return rest
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// readDoc decodes the result file at path as generic JSON (the contract
// test reads field names, not Go types).
func readDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no result file: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func hasKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks key %q", what, k)
		}
	}
}

func assertServersGone(t *testing.T, meta map[string]any) {
	t.Helper()
	servers, _ := meta["servers"].([]any)
	if len(servers) == 0 {
		t.Fatal("meta.servers is empty; lockbench should record the redis-server it started")
	}
	for _, s := range servers {
		pid := int(s.(map[string]any)["pid"].(float64))
		if topology.Alive(pid) {
			t.Errorf("redis-server pid %d is still running after lockbench exited", pid)
		}
	}
}

// waitChildren waits up to 10 s for ppid to have children, and returns them.
func waitChildren(ppid int) []int {
	var kids []int
	for deadline := time.Now().Add(10 * time.Second); len(kids) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		kids = children(ppid)
	}
	return kids
}

// waitExit waits up to limit for cmd to exit and reports whether it did
// (killing it otherwise).
func waitExit(cmd *exec.Cmd, limit time.Duration) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		return false
	}
}

// children returns the pids whose parent is ppid.
func children(ppid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// On a user's server: refuse a non-empty database unless told, touch only
// lockbench's keys, delete them after (unless --keep-keys), and never write
// the password into the result file.
func TestExternalServerSafety(t *testing.T) {
	s := oneServer(t)
	cmd := func(args ...string) string {
		t.Helper()
		v, err := topology.Command(s.Addr, s.Password, time.Second, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	cmd("SET", "user:data", "precious")
	url := "redis://:" + s.Password + "@" + s.Addr
	out := filepath.Join(t.TempDir(), "ext.json")
	base := []string{"run", "-q", "--addr", url, "--strategy", "atomic", "--driver", "rueidis", "--stock", "20", "--clients", "4", "--force", "--out", out}

	r := lockbench(t, base...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "already holds 1 key;") || !strings.Contains(r.stderr, "--allow-nonempty") {
		t.Fatalf("non-empty db: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, s.Password) {
		t.Fatal("the password appears in the error output")
	}

	r = lockbench(t, append(base, "--allow-nonempty")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if cmd("GET", "user:data") != "precious" || cmd("DBSIZE") != "1" {
		t.Fatalf("after the run: user key %q, dbsize %s; want it untouched and nothing else", cmd("GET", "user:data"), cmd("DBSIZE"))
	}
	raw, _ := os.ReadFile(out)
	if strings.Contains(string(raw), s.Password) || !strings.Contains(string(raw), "xxxxx") {
		t.Fatal("the result file does not redact the password in args")
	}

	r = lockbench(t, append(base, "--allow-nonempty", "--keep-keys")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n, _ := strconv.Atoi(cmd("DBSIZE")); n < 3 {
		t.Fatalf("--keep-keys left %d keys, want the run's keys kept", n)
	}
}

// A second Ctrl-C quits at once and still ends the servers.
func TestSecondInterrupt(t *testing.T) {
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "rueidis", "--stock", "100000000",
		"--duration", "60s", "--clients", "2", "--work", "50ms", "--out", filepath.Join(t.TempDir(), "s.json"))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errOut := waitFor(t, stderr, "[1/1]")
	kids := waitChildren(cmd.Process.Pid)
	_ = cmd.Process.Signal(os.Interrupt)
	time.Sleep(20 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 15*time.Second) {
		t.Fatal("a second Ctrl-C did not stop lockbench")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, errOut)
	}
	for _, pid := range kids {
		if topology.Alive(pid) {
			t.Errorf("redis-server %d survived the second Ctrl-C", pid)
		}
	}
}

// The error path: a server dies mid-run, the scenario aborts, lockbench
// exits 1 with a clear message and partial results, and no server of the
// run is left.
func TestServerDiesMidRun(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "e.json")
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "rueidis", "--stock", "100000000",
		"--duration", "60s", "--clients", "4", "--retry", "fixed:interval=1ms", "--out", out)
	stderr, _ := cmd.StderrPipe()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "[1/1]")
	kids := waitChildren(cmd.Process.Pid)
	if len(kids) == 0 {
		cmd.Process.Kill()
		t.Fatal("no redis-server child")
	}
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(kids[0], syscall.SIGKILL)
	if !waitExit(cmd, 45*time.Second) {
		t.Fatal("lockbench did not give up on a dead server within 45 s")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailure {
		t.Fatalf("exit %d, want 1", code)
	}
	doc := readDoc(t, out)
	if f, _ := doc["failed"].(string); !strings.Contains(f, "only failed operations") {
		t.Fatalf("failed = %q", doc["failed"])
	}
	for _, pid := range kids {
		if topology.Alive(pid) {
			t.Errorf("redis-server %d left after the failed run", pid)
		}
	}
}

// Every fault runs from the CLI and its window lands in the JSON.
func TestFaultsFromCLI(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "f.json")
	r := lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--topology", "replica",
		"--stock", "100000", "--duration", "2s", "--clients", "4", "--ttl", "200ms", "--work", "5ms",
		"--fault", "pause:at=100ms,for=300ms", "--fault", "crash-after-setnx:at=150ms",
		"--fault", "node-pause:node=1,at=200ms,for=100ms", "--fault", "node-restart:node=1,at=400ms",
		"--fault", "node-kill:node=1,at=700ms", "--fault", "failover:at=800ms,hold=300ms",
		"--fault", "latency:node=0,delay=20ms,at=1200ms,for=200ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	fs := run.Scenarios[0].Faults
	if len(fs) != 7 {
		t.Fatalf("%d fault windows, want 7: %+v", len(fs), fs)
	}
	for _, f := range fs {
		if f.Note == "" || f.EndMS < f.StartMS || f.StartMS < f.ArmedMS {
			t.Errorf("window %+v", f)
		}
	}
	assertServersGone(t, map[string]any{"servers": toAny(run.Meta.Servers)})
}

// The run (#19): fencing on hot-key, flash-sale and lock-cycle
// under a pause between the loss check and the write. The token check
// acts on both workloads that write (exactly the paused holder's write
// rejected, nothing lost: every other holder keeps its 1 s lease), and
// the JSON records fence there and none on lock-cycle, which has no data.
func TestGuardsFromCLI(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "g.json")
	r := lockbench(t, "run", "-q", "--strategy", "fencing", "--driver", "rueidis", "--workload", "hot-key,flash-sale,lock-cycle",
		"--keys", "1", "--stock", "1000000", "--duration", "1800ms", "--clients", "6", "--ttl", "1s", "--work", "5ms",
		"--acquire-timeout", "1s", "--retry", "fixed:interval=5ms", "--fault", "pause:at=200ms,for=1300ms,point=write", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 3 {
		t.Fatalf("%d scenarios, want 3", len(run.Scenarios))
	}
	for _, s := range run.Scenarios {
		want, rejected := "fence", int64(1)
		if s.Workload == "lock-cycle" {
			want, rejected = "none", 0
		}
		v := s.Violations
		t.Logf("%s: guard %s, overlap %d, lost updates %d, oversell %d, rejected %d", s.Workload, s.Params["guard"], v.Overlap, v.LostUpdates, v.Oversell, s.Counters.Rejected)
		if s.Params["guard"] != want || s.Counters.Rejected != rejected || v.LostUpdates != 0 || v.Oversell != 0 {
			t.Errorf("%s: guard %q, rejected %d, lost updates %d, oversell %d; want %s, %d, 0, 0 (%s)",
				s.Workload, s.Params["guard"], s.Counters.Rejected, v.LostUpdates, v.Oversell, want, rejected, s.Faults[0].Note)
		}
	}
}

func toAny(ss []report.ServerInfo) []any {
	var out []any
	for _, s := range ss {
		out = append(out, map[string]any{"pid": float64(s.Pid)})
	}
	return out
}

// The open loop from the CLI: the JSON says so and carries both latencies.
func TestOpenLoopFromCLI(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	out := filepath.Join(t.TempDir(), "o.json")
	r := lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "goredis", "--workload", "hot-key",
		"--rate", "200", "--arrivals", "poisson", "--max-clients", "4", "--duration", "1s", "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, "4 @200/s") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Scenarios[0]
	if s.Loop != "open" || s.OfferedRate != 200 || s.ServiceMS == nil || s.Offered == 0 || s.Clients != 4 {
		t.Fatalf("open-loop fields: %+v", s)
	}
}

func TestRepeat(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rep.json")
	r := lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--stock", "30", "--clients", "4",
		"--retry", "fixed:interval=2ms", "--repeat", "3", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rp := run.Scenarios[0].Repeats
	if rp == nil || rp.N != 3 || len(rp.OpsPerSec.Values) != 3 || rp.OpsPerSec.Min > rp.OpsPerSec.Median || rp.OpsPerSec.Median > rp.OpsPerSec.Max {
		t.Fatalf("repeats %+v", rp)
	}
	// The row pools the three repeats: each sold its own stock of 30 on
	// fresh keys.
	s := run.Scenarios[0]
	var ops int64
	for _, x := range s.Samples {
		ops += x.Ops
	}
	if s.Figures["sold"] != 90 || s.Figures["final_stock"] != 0 || s.Raw.Runs != 3 || len(s.Samples) != 3 || ops != s.Ops {
		t.Fatalf("pooled repeats: sold %d, final stock %d, runs %d, samples %d, ops %d (samples' %d); want 90, 0, 3, 3, the samples' sum",
			s.Figures["sold"], s.Figures["final_stock"], s.Raw.Runs, len(s.Samples), s.Ops, ops)
	}
	// The interval log has the three runs' intervals, one after another
	// as in the timeline: two histograms (operation, acquire) per entry.
	hlog, err := os.ReadFile(report.HLOGName(out, 0, s))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range strings.Split(string(hlog), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "\"StartTimestamp\"") {
			lines++
		}
	}
	if len(s.Timeline) < 3 || lines != 2*len(s.Timeline) {
		t.Fatalf("interval log: %d histograms for a timeline of %d entries (3 runs): want 2 per entry", lines, len(s.Timeline))
	}
}

// compare exits 0 with no regression, 1 with one, 2 on bad input.
func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	base, worse := filepath.Join(dir, "b.json"), filepath.Join(dir, "w.json")
	mk := func(path string, ops float64, overlap int64, params ...string) {
		r := &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic", Driver: "rueidis",
			Workload: "flash-sale", Retry: "fixed", Clients: 1, OpsPerSec: ops, Violations: report.Violations{Overlap: overlap},
			Params: map[string]string{"token": "random"}}}}
		if len(params) == 2 {
			r.Scenarios[0].Params[params[0]] = params[1]
		}
		if err := report.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
	}
	mk(base, 1000, 0)
	mk(worse, 800, 1)
	if r := lockbench(t, "compare", base, base); r.code != 0 || !strings.Contains(r.stdout, "no regression") {
		t.Fatalf("same file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := lockbench(t, "compare", base, worse, "--threshold", "10%")
	if r.code != exitFailure || !strings.Contains(r.stdout, "REGRESSED: ops/s, violations") {
		t.Fatalf("regression: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := lockbench(t, "compare", base, worse, "--threshold", "lots"); r.code != exitUsage {
		t.Fatalf("bad threshold: exit %d", r.code)
	}
	if r := lockbench(t, "compare", base, filepath.Join(dir, "none.json")); r.code != exitUsage {
		t.Fatalf("missing file: exit %d", r.code)
	}
	// Nothing matched (a parameter differs): a failure that names the
	// parameter, never "no regression".
	other := filepath.Join(dir, "o.json")
	mk(other, 1000, 5, "token", "constant")
	r = lockbench(t, "compare", base, other)
	if r.code != exitFailure || strings.Contains(r.stdout, "no regression") || !strings.Contains(r.stdout, "token=constant") ||
		!strings.Contains(r.stderr, "no scenario of the new file matches") {
		t.Fatalf("no match: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Two real runs of one scenario with --repeat 5 compare without a
// regression; halving one file's ops/s samples is a significant drop that
// compare reports (exit 1), and its benchstat output has a line per run.
func TestCompareRepeatedRunsTimed(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--keys", "1000",
		"--work", "0s", "--clients", "4", "--retry", "none", "--duration", "400ms", "--repeat", "5", "--ttl", "5s"}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, out := range []string{a, b} {
		if r := lockbench(t, append(args, "--out", out)...); r.code != 0 {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
	}
	run, err := report.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	sc := &run.Scenarios[0]
	if len(sc.Samples) != 5 || run.Meta.ParamDefaults["lock-cycle"]["keys"] != "1000" {
		t.Fatalf("%d samples, param defaults %v", len(sc.Samples), run.Meta.ParamDefaults["lock-cycle"])
	}
	// The machine is shared: a real difference between two runs of 30 %
	// or more, significant over 5+5 runs, would be a finding, not noise.
	// CPU per operation is never normalized and follows the machine's
	// load between the two blocks; lockbench ab is the interleaved gate.
	r := lockbench(t, "compare", a, b, "--threshold", "30%", "--p99-threshold", "1000%", "--cpu-threshold", "1000%")
	if r.code != 0 || !strings.Contains(r.stdout, "n=5") || strings.Contains(r.stderr, "fewer than") {
		t.Fatalf("same scenario: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Every sample scaled below half the slowest one: on a loaded machine
	// the five runs of b can spread more than 2x, and a plain halving would
	// then overlap the originals (p=0.095 once, not 0.008).
	lo, hi := sc.Samples[0].OpsPerSec, sc.Samples[0].OpsPerSec
	for _, x := range sc.Samples {
		lo, hi = min(lo, x.OpsPerSec), max(hi, x.OpsPerSec)
	}
	for i := range sc.Samples {
		sc.Samples[i].OpsPerSec *= lo / (2 * hi)
	}
	sc.OpsPerSec *= lo / (2 * hi) // the row's figure, which compare prints, with them
	half := filepath.Join(dir, "half.json")
	if err := report.WriteFile(half, run); err != nil {
		t.Fatal(err)
	}
	// b against its own figures at most halved, whatever the noise
	// between the two real runs a and b.
	r = lockbench(t, "compare", b, half, "--threshold", "30%", "--p99-threshold", "1000%")
	if r.code != exitFailure || !strings.Contains(r.stdout, "REGRESSED: ops/s") || !strings.Contains(r.stdout, "p=0.008 n=5") {
		t.Fatalf("halved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = lockbench(t, "compare", b, half, "--format", "benchstat")
	if r.code != 0 || strings.Count(r.stdout, "BenchmarkLock/strategy=atomic/driver=rueidis/workload=lock-cycle/retry=none-") != 10 ||
		!strings.Contains(r.stdout, "run: base") || !strings.Contains(r.stdout, "run: new") {
		t.Fatalf("benchstat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// report draws a real run's result file; bad input exits 2 with a clear
// message and writes nothing.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	src := filepath.Join("..", "..", "internal", "report", "chart", "testdata", "crash-fault.json")
	dir := filepath.Join(t.TempDir(), "rep")
	r := lockbench(t, "report", src, "-o", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "4 charts (PNG and SVG) and index.html written to "+dir) {
		t.Fatalf("report: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"index.html", "spectrum.png", "spectrum.svg", "ops.png", "violations.svg", "timeline.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	// The file predates latency per interval: the report says so.
	if !strings.Contains(r.stdout, "latency: not drawn: no scenario's timeline has two entries or more with latency") {
		t.Errorf("report does not say why there is no latency chart:\n%s", r.stdout)
	}
	// The same run with latency in its timeline (made up: 2 and 20 ms in
	// every interval with operations): a latency chart per scenario.
	run, err := report.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for si := range run.Scenarios {
		for i := range run.Scenarios[si].Timeline {
			if e := &run.Scenarios[si].Timeline[i]; e.Ops > 0 {
				e.OpP50MS, e.OpP99MS, e.OpMaxMS, e.AcquireP50MS, e.AcquireP99MS, e.AcquireMaxMS = 2, 20, 20, 1, 10, 10
			}
		}
	}
	withLat := filepath.Join(t.TempDir(), "lat.json")
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(withLat, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	dir2 := filepath.Join(t.TempDir(), "rep")
	r = lockbench(t, "report", withLat, "-o", dir2)
	if r.code != 0 || !strings.Contains(r.stdout, "6 charts (PNG and SVG) and index.html written to "+dir2) || strings.Contains(r.stdout, "not drawn") {
		t.Fatalf("report with latency: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"latency-1.png", "latency-1.svg", "latency-2.png", "latency-2.svg"} {
		if _, err := os.Stat(filepath.Join(dir2, name)); err != nil {
			t.Error(err)
		}
	}
	tmp := t.TempDir()
	notJSON := filepath.Join(tmp, "x.json")
	os.WriteFile(notJSON, []byte("hello"), 0o644)
	schema2 := filepath.Join(tmp, "s2.json")
	os.WriteFile(schema2, []byte(`{"schema": 2, "scenarios": []}`), 0o644)
	empty := filepath.Join(tmp, "empty.json")
	os.WriteFile(empty, []byte(`{"schema": 1, "scenarios": []}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "requires at least 1 arg"},
		{[]string{"report", filepath.Join(tmp, "missing.json")}, "no such file"},
		{[]string{"report", notJSON}, "invalid character"},
		{[]string{"report", schema2}, "schema 2, this lockbench reads 1"},
		{[]string{"report", src, empty}, "empty.json: no scenario to draw"},
	} {
		out := filepath.Join(tmp, "out")
		r := lockbench(t, append(c.args, "-o", out)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v wrote %s", c.args, out)
		}
	}
}

// A table that cannot be printed (stdout's reader gone, as with
// `| head -1`) does not lose the results: the file is written first.
func TestResultsSurviveClosedStdout(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "rueidis", "--duration", "1s", "--out", out)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // writing the table now fails (EPIPE, SIGPIPE)
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_ = cmd.Wait() // killed by SIGPIPE or failed: either way after the file
	doc := readDoc(t, out)
	if scs, _ := doc["scenarios"].([]any); len(scs) != 1 {
		t.Fatalf("want the run's one scenario in %s, got %v", out, doc["scenarios"])
	}
}

// Ctrl-C in the middle of the harness's measurements exits 130 (the
// figures of a cut round are not results), not with the error of a
// measurement that the cancellation cut short.
func TestHarnessInterrupt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark (Debian's redis-tools) is not installed")
	}
	for _, after := range []time.Duration{1500 * time.Millisecond, 3500 * time.Millisecond} {
		cmd := exec.Command(bin, "harness", "--rounds", "4", "--duration", "1s", "--requests", "2000")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		_ = cmd.Process.Signal(os.Interrupt)
		if !waitExit(cmd, 30*time.Second) {
			t.Fatal("lockbench harness did not stop within 30 s of Ctrl-C")
		}
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("Ctrl-C after %v: exit %d, want 130\n%s\n%s", after, code, stdout.String(), stderr.String())
		}
		if strings.Contains(stdout.String(), "harness-overhead") {
			t.Fatalf("Ctrl-C after %v: figures printed for a cut run:\n%s", after, stdout.String())
		}
	}
}

// harness measures the three ways and ends with one harness-ratio and one
// harness-overhead line per driver. Each final figure is the median of the
// per-round figures the harness printed above it (to the rounding of the
// printed digits), agrees with its own summary lines (the lockbench, bare
// loop and redis-benchmark cycles/s of two rounds: their ratio lies
// between the two rounds' ratios), and lies in a plausible
// range: between 0.1 and 10, against the bare loop (both run the same cycle
// on the same driver in the same round) and against redis-benchmark; rounds
// of 300 ms on a shared 2-core machine have seen 0.3 and 4.4 (a unit or
// formula slip would be off by 1000). No figure is compared with a speed.
func TestHarnessLinesTimed(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark (Debian's redis-tools) is not installed")
	}
	const rounds = 2
	r := lockbench(t, "harness", "--rounds", strconv.Itoa(rounds), "--duration", "300ms", "--requests", "2000")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	num := func(s string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q is not a number:\n%s", s, r.stdout)
		}
		return v
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	drvs := []string{"goredis", "rueidis"}
	if len(lines) < 2*len(drvs) {
		t.Fatalf("too few lines:\n%s", r.stdout)
	}
	kinds := []string{"harness-ratio", "harness-overhead", "handover-bound", "handover-ratio"}
	if len(lines) < len(kinds)*len(drvs) {
		t.Fatalf("too few lines:\n%s", r.stdout)
	}
	final := map[string]map[string]float64{}
	last := lines[len(lines)-len(kinds)*len(drvs):]
	for i, kind := range kinds {
		final[kind] = map[string]float64{}
		for j, d := range drvs {
			f := strings.Fields(last[i*len(drvs)+j])
			if len(f) != 3 || f[0] != kind || f[1] != d {
				t.Fatalf("line %q, want %q %q <ratio>\n%s", last[i*len(drvs)+j], kind, d, r.stdout)
			}
			final[kind][d] = num(f[2])
		}
	}
	// The external lock's lines, before the final block: the summary's
	// three rates, each round's ratios, and the two final ratios, each
	// the median of its rounds.
	extRe := regexp.MustCompile(`(?m)^goredis +external lock \(50 clients, lock-cycle on keys of their own\): atomic ([0-9.]+) cycles/s, ext-atomic ([0-9.]+), ext-null ([0-9.]+); medians of 2 rounds$`)
	if m := extRe.FindStringSubmatch(r.stdout); m == nil || num(m[1]) <= 0 || num(m[2]) <= 0 || num(m[3]) <= 0 {
		t.Fatalf("no external lock summary with three rates > 0:\n%s", r.stdout)
	}
	for _, kind := range []string{"ext-ratio", "ext-null-ratio"} {
		what := map[string]string{"ext-ratio": "ext-atomic / atomic", "ext-null-ratio": "ext-null / atomic"}[kind]
		re := regexp.MustCompile(`(?m)^goredis +` + regexp.QuoteMeta(what) + ` by round: ([0-9.]+) ([0-9.]+)$`)
		m := re.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no %q line:\n%s", what, r.stdout)
		}
		fin := regexp.MustCompile(`(?m)^` + kind + ` goredis ([0-9.]+)$`).FindStringSubmatch(r.stdout)
		if fin == nil {
			t.Fatalf("no %s line:\n%s", kind, r.stdout)
		}
		if got, want := num(fin[1]), (num(m[1])+num(m[2]))/2; math.Abs(got-want) > 0.011 || got < 0.01 || got > 100 {
			t.Errorf("%s %.2f, want the median of its rounds %.3f, between 0.01 and 100\n%s", kind, got, want, r.stdout)
		}
	}
	rbRe := regexp.MustCompile(`(?m)^redis-benchmark .* -> ([0-9.]+) cycles/s`)
	m := rbRe.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no redis-benchmark summary line:\n%s", r.stdout)
	}
	rb := num(m[1])
	for _, d := range drvs {
		sumRe := regexp.MustCompile(`(?m)^` + d + ` +bare loop ([0-9.]+) cycles/s .*; lockbench ([0-9.]+) cycles/s`)
		m := sumRe.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no summary line for %s:\n%s", d, r.stdout)
		}
		bare, lb := num(m[1]), num(m[2])
		if bare <= 0 || lb <= 0 || rb <= 0 {
			t.Fatalf("%s: bare %v, lockbench %v, redis-benchmark %v cycles/s; want all > 0", d, bare, lb, rb)
		}
		// The hand-over summary: efficiencies of one turn at a time, so
		// above 0 and at most 1 (ops/s x mean hold over a window the holds
		// share: they cannot add up to more than the window); the bound
		// line is the ring's median.
		hoRe := regexp.MustCompile(`(?m)^` + d + ` +hand-over on one key \(10 clients, 1ms work\): bare ring efficiency ([0-9.]+), handoff ([0-9.]+);`)
		m = hoRe.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no hand-over summary line for %s:\n%s", d, r.stdout)
		}
		ring, hoff := num(m[1]), num(m[2])
		if ring <= 0 || ring > 1 || hoff <= 0 || hoff > 1.01 {
			t.Fatalf("%s: bare ring efficiency %v, handoff %v; want both in (0, 1]", d, ring, hoff)
		}
		if got := final["handover-bound"][d]; got != ring {
			t.Errorf("handover-bound %s %.2f, but the summary's bare ring efficiency is %.2f\n%s", d, got, ring, r.stdout)
		}
		for _, c := range []struct {
			what, kind string
			summary    float64 // the same ratio from the summary's medians
			sumLo      float64 // ... and its lowest and highest value for
			sumHi      float64 // the summary figures' printed rounding
			lo, hi     float64
		}{
			{"lockbench / bare loop", "harness-overhead", lb / bare, lb / bare * 0.99, lb / bare * 1.01, 0.1, 10},
			{"lockbench / redis-benchmark", "harness-ratio", lb / rb, lb / rb * 0.99, lb / rb * 1.01, 0.1, 10},
			// The efficiencies are printed to 0.01: +-0.005 each.
			{"handoff / bare ring", "handover-ratio", hoff / ring, (hoff - 0.005) / (ring + 0.005), (hoff + 0.005) / (ring - 0.005), 0.1, 10},
		} {
			re := regexp.MustCompile(`(?m)^` + d + ` +` + regexp.QuoteMeta(c.what+" by round:") + `((?: [0-9.]+)+)$`)
			m := re.FindStringSubmatch(r.stdout)
			if m == nil {
				t.Fatalf("no %q line for %s:\n%s", c.what, d, r.stdout)
			}
			var per []float64
			for _, f := range strings.Fields(m[1]) {
				per = append(per, num(f))
			}
			if len(per) != rounds {
				t.Fatalf("%s %s: %d rounds printed, want %d\n%s", d, c.what, len(per), rounds, r.stdout)
			}
			got := final[c.kind][d]
			if want := median(per); math.Abs(got-want) > 0.011 {
				t.Errorf("%s %s %.2f, but the median of its rounds %v is %.3f\n%s", c.kind, d, got, per, want, r.stdout)
			}
			// With two rounds each summary figure is the mean of the two
			// rounds' values, so the summary's ratio is the mediant of the
			// two rounds' ratios and lies between them, however noisy the
			// machine (within the printed rounding: the summary figures'
			// and 0.005 of each round's ratio).
			if lo, hi := slices.Min(per), slices.Max(per); c.sumHi < lo-0.005 || c.sumLo > hi+0.005 {
				t.Errorf("%s %s from the summary's medians %.3f, want between its rounds' %v\n%s", c.kind, d, c.summary, per, r.stdout)
			}
			if got < c.lo || got > c.hi {
				t.Errorf("%s %s %.2f, want between %v and %v\n%s", c.kind, d, got, c.lo, c.hi, r.stdout)
			}
		}
	}
}

// compare as a gate between two files (normalized to atomic, repeats,
// threshold and significance): two runs of the same matrix pass,
// and a real slowdown of one strategy (5 ms more in each of its critical
// sections, not recorded in the params) fails with exit 1.
func TestRegressGateTimed(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "-q", "--strategy", "atomic,segmented", "--driver", "rueidis", "--workload", "flash-sale",
		"--stock", "300", "--clients", "20", "--retry", "backoff:start=1ms,cap=20ms,tries=1000", "--repeat", "4", "--ttl", "5s"}
	base, same, slow := filepath.Join(dir, "base.json"), filepath.Join(dir, "same.json"), filepath.Join(dir, "slow.json")
	for _, c := range []struct {
		out   string
		extra []string
	}{{base, nil}, {same, nil}, {slow, []string{"--test-slowdown", "segmented=5ms"}}} {
		if r := lockbench(t, append(append(args, "--out", c.out), c.extra...)...); r.code != 0 {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
	}
	// ops/s is normalized to atomic's in the same file; CPU per operation
	// is not (cost is absolute) and follows the machine's load from one
	// block of runs to the next (+51 % once on a loaded runner), so this
	// gate of sequential files leaves it out: lockbench ab interleaves.
	// The normalized ops/s of two blocks of the same runs moved by 27 %
	// once at load 4; the 5 ms slowdown (6x the 1 ms critical section)
	// takes far more than the 50 % threshold (-70 % in a quiet run).
	// Commands per operation follow the retries, which follow the load.
	gate := []string{"--normalize", "atomic/rueidis/flash-sale/backoff", "--threshold", "50%", "--p99-threshold", "1000%", "--cpu-threshold", "1000%", "--cost-threshold", "100%"}
	if r := lockbench(t, append([]string{"compare", base, same}, gate...)...); r.code != 0 {
		t.Fatalf("the same matrix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := lockbench(t, append([]string{"compare", base, slow}, gate...)...)
	if r.code != exitFailure || !strings.Contains(r.stdout, "segmented/rueidis/flash-sale/backoff") || !strings.Contains(r.stdout, "REGRESSED: ops/s") {
		t.Fatalf("the slowed strategy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
