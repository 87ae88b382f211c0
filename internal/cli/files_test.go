package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// dirNames lists dir's entries, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// assertOnlyResults fails when dir holds anything but result files
// (*.json, *.hgrm, *.hlog): no temporary file or directory, no
// reservation file.
func assertOnlyResults(t *testing.T, dir string) {
	t.Helper()
	for _, n := range dirNames(t, dir) {
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".hgrm") || strings.HasSuffix(n, ".hlog")) {
			t.Errorf("%s left in the output directory (all: %q)", n, dirNames(t, dir))
		}
	}
}

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// startLong starts a long run into out and waits until its first scenario
// is measuring; it returns the command, its stderr so far (and after) and
// its redis-server children.
func startLong(t *testing.T, out string, extra ...string) (*exec.Cmd, *syncBuffer, []int) {
	t.Helper()
	args := append([]string{"run", "--strategy", "atomic", "--driver", "rueidis", "--stock", "100000000",
		"--duration", "60s", "--clients", "2", "--out", out}, extra...)
	cmd := exec.Command(bin, args...)
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errOut := waitFor(t, stderr, "[1/")
	kids := waitChildren(cmd.Process.Pid)
	if len(kids) == 0 {
		cmd.Process.Kill()
		t.Fatal("no redis-server child")
	}
	return cmd, errOut, kids
}

func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for topology.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if topology.Alive(pid) {
			t.Errorf("redis-server %d is still running", pid)
		}
	}
}

// SIGINT, SIGTERM and SIGHUP each stop the run as the first Ctrl-C does:
// what was measured is written, marked interrupted, the exit is 128 + the
// signal, the servers are stopped and the output directory holds only the
// result files.
func TestSignals(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "sig.json")
			cmd, errOut, kids := startLong(t, out)
			time.Sleep(500 * time.Millisecond)
			_ = cmd.Process.Signal(c.sig)
			if !waitExit(cmd, 30*time.Second) {
				t.Fatalf("lockbench did not stop within 30 s of %v", c.sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, errOut)
			}
			doc := readDoc(t, out)
			scs, _ := doc["scenarios"].([]any)
			if doc["interrupted"] != true || len(scs) != 1 || scs[0].(map[string]any)["ops"].(float64) <= 0 {
				t.Fatalf("interrupted %v, scenarios %v: want the interrupted scenario with its ops", doc["interrupted"], scs)
			}
			assertServersGone(t, doc["meta"].(map[string]any))
			waitGone(t, kids)
			assertOnlyResults(t, dir)
			if n := dirNames(t, dir); !slices.Contains(n, "sig-1-atomic-rueidis-flash-sale.hgrm") {
				t.Errorf("no .hgrm beside the result: %q", n)
			}
		})
	}
}

// A second Ctrl-C quits at once and still leaves a result marked
// interrupted with the scenarios that had finished.
func TestSecondInterruptKeepsFinished(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "two.json")
	// 2 s critical sections: after the first Ctrl-C the second scenario
	// still has well over a second of work to finish, so the second Ctrl-C
	// (20 ms later) always comes first, however loaded the machine.
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "goredis,rueidis", "--stock", "100000000",
		"--duration", "1s", "--clients", "2", "--work", "2s", "--out", out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errOut := waitFor(t, stderr, "[2/2]") // the first scenario is done
	kids := children(cmd.Process.Pid)
	time.Sleep(400 * time.Millisecond) // the second is in its critical sections
	_ = cmd.Process.Signal(os.Interrupt)
	time.Sleep(20 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 15*time.Second) {
		t.Fatal("a second Ctrl-C did not stop lockbench")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, errOut)
	}
	doc := readDoc(t, out)
	scs, _ := doc["scenarios"].([]any)
	if doc["interrupted"] != true || len(scs) != 1 || scs[0].(map[string]any)["driver"] != "goredis" {
		t.Fatalf("interrupted %v, scenarios %v: want the finished goredis scenario, marked interrupted\n%s", doc["interrupted"], scs, errOut)
	}
	if f, _ := doc["failed"].(string); strings.Contains(f, "still running") {
		t.Fatal("the placeholder is left")
	}
	waitGone(t, kids)
	assertOnlyResults(t, dir)
}

// SIGKILL mid-run: the servers die with lockbench (parent-death signal);
// the reservation file and any temporary directory it left are swept by
// the next run into that directory, which may then take the same --out.
// With the default name, the placeholder left carries the run id.
func TestKilledRunIsSwept(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "k.json")
	cmd, _, kids := startLong(t, out)
	killed := cmd.Process.Pid
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	waitGone(t, kids)
	// What a SIGKILL while writing leaves: a temporary directory with half
	// of its files (made here: the moment cannot be hit reliably).
	half := filepath.Join(dir, fmt.Sprintf(".lockbench-%d-123.tmp", killed))
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(half, "k.json"), []byte(`{"schema":`), 0o644)
	os.WriteFile(filepath.Join(dir, fmt.Sprintf(".lockbench-%d-456.tmp", killed)), nil, 0o644)
	live := filepath.Join(dir, fmt.Sprintf(".lockbench-%d-789.tmp", os.Getpid())) // a live process's
	os.WriteFile(live, nil, 0o644)
	mine := filepath.Join(dir, "notes.txt")
	os.WriteFile(mine, []byte("the user's"), 0o644)
	if !slices.Contains(dirNames(t, dir), ".lockbench-lock-k.json") {
		t.Fatalf("no reservation file while the run was going: %q", dirNames(t, dir))
	}

	r := lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--stock", "20", "--clients", "2", "--out", out)
	if r.code != 0 {
		t.Fatalf("the next run: exit %d\n%s", r.code, r.stderr)
	}
	for _, p := range []string{live, mine} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was swept: %v", p, err)
		}
	}
	os.Remove(live)
	os.Remove(mine)
	assertOnlyResults(t, dir)
	if !strings.Contains(r.stderr, "left by a lockbench run that is gone") {
		t.Errorf("the sweep is not reported:\n%s", r.stderr)
	}

	// The default name: the killed run's placeholder says so, with its id.
	cmd2 := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "rueidis", "--stock", "100000000", "--duration", "60s", "--clients", "2")
	cmd2.Dir = t.TempDir()
	stderr, _ := cmd2.StderrPipe()
	if err := cmd2.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "[1/1]")
	_ = cmd2.Process.Kill()
	_ = cmd2.Wait()
	files, _ := filepath.Glob(filepath.Join(cmd2.Dir, "results", "*.json"))
	if len(files) != 1 {
		t.Fatalf("placeholders %q, want one", files)
	}
	doc := readDoc(t, files[0])
	if id, _ := doc["meta"].(map[string]any)["run_id"].(string); !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(id) {
		t.Fatalf("placeholder run_id %q", id)
	}
	if !strings.Contains(doc["failed"].(string), "still running, or was killed") || doc["interrupted"] != false {
		t.Fatalf("placeholder %v", doc)
	}
}

// An existing --out is refused unless --force; two runs with one --out at
// once: the second stops at its start with exit 2.
func TestOutReserved(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	os.WriteFile(out, []byte("earlier"), 0o644)
	quick := []string{"run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--stock", "20", "--clients", "2", "--out", out}
	r := lockbench(t, quick...)
	if r.code != exitUsage || !strings.Contains(r.stderr, out) || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("existing --out: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "earlier" {
		t.Fatal("the existing file was changed")
	}
	if r := lockbench(t, append(quick, "--force")...); r.code != 0 {
		t.Fatalf("--force: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := report.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	assertOnlyResults(t, dir)

	other := filepath.Join(dir, "busy.json")
	cmd, errOut, _ := startLong(t, other)
	r = lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--stock", "20", "--out", other)
	if r.code != exitUsage || !strings.Contains(r.stderr, other) || !strings.Contains(r.stderr, "another lockbench run") {
		t.Errorf("a second run on the same --out: exit %d\n%s", r.code, r.stderr)
	}
	r = lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--stock", "20", "--force", "--out", other)
	if r.code != exitUsage {
		t.Errorf("a second run on the same --out with --force: exit %d\n%s", r.code, r.stderr)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 30*time.Second) || cmd.ProcessState.ExitCode() != exitInterrupted {
		t.Fatalf("the first run: %v\n%s", cmd.ProcessState, errOut)
	}
	if doc := readDoc(t, other); doc["interrupted"] != true {
		t.Fatal("the first run's result is not its own")
	}
	assertOnlyResults(t, dir)
}

// The result JSON and its .hgrm and .hlog files appear together: staged
// in a temporary directory, the .hgrm and .hlog renamed first, the JSON
// last; a write that fails leaves nothing.
func TestResultFilesTogether(t *testing.T) {
	dir := t.TempDir()
	r := lockbench(t, "run", "-q", "--strategy", "atomic,naive", "--driver", "rueidis", "--stock", "20", "--clients", "2",
		"--out", filepath.Join(dir, "t.json"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := []string{"t-1-atomic-rueidis-flash-sale.hgrm", "t-1-atomic-rueidis-flash-sale.hlog",
		"t-2-naive-rueidis-flash-sale.hgrm", "t-2-naive-rueidis-flash-sale.hlog", "t.json"}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	run, err := report.ReadFile(filepath.Join(dir, "t.json"))
	if err != nil {
		t.Fatal(err)
	}

	// In process: a scenario whose histogram cannot be written.
	bad := t.TempDir()
	broken := *run
	broken.Scenarios = append(slices.Clone(run.Scenarios), run.Scenarios[0])
	broken.Scenarios[2].LatencyHist = "not a histogram"
	o := &outFiles{path: filepath.Join(bad, "b.json")}
	if err := o.write(&broken); err == nil {
		t.Fatal("a broken histogram was written")
	}
	if n := dirNames(t, bad); len(n) != 0 {
		t.Fatalf("a failed write left %q", n)
	}
	o = &outFiles{path: filepath.Join(bad, "g.json")}
	if err := o.write(run); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, bad); len(got) != 3 || got[2] != "g.json" {
		t.Fatalf("files %q", got)
	}
}

// sweepStale removes only lockbench's own temporary and reservation files
// of processes that are gone, and only in the directory it is given.
func TestSweepStale(t *testing.T) {
	dir := t.TempDir()
	dead, me := deadPid(t), os.Getpid()
	mk := func(name, body string) {
		if strings.HasSuffix(name, "/") {
			os.MkdirAll(filepath.Join(dir, name, "sub"), 0o755)
			return
		}
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	gone := []string{fmt.Sprintf(".lockbench-%d-1.tmp/", dead), fmt.Sprintf(".lockbench-%d-2.tmp", dead),
		fmt.Sprintf(".lockbench-%d-check-3", dead), ".lockbench-lock-a.json", ".lockbench-98765.tmp"}
	kept := []string{fmt.Sprintf(".lockbench-%d-4.tmp", me), ".lockbench-lock-b.json", ".lockbench-55555.tmp",
		".lockbench-notes", "x.json", fmt.Sprintf("lockbench-%d-5.tmp", dead)}
	for _, n := range gone {
		mk(n, strconv.Itoa(dead))
	}
	for _, n := range kept {
		mk(n, strconv.Itoa(me))
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(dir, ".lockbench-98765.tmp"), old, old) // an older version's, an hour old
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, fmt.Sprintf(".lockbench-%d-6.tmp", dead)), nil, 0o644)

	swept := sweepStale(dir)
	var want []string
	for _, n := range gone {
		want = append(want, strings.TrimSuffix(n, "/"))
	}
	slices.Sort(want)
	slices.Sort(swept)
	if !slices.Equal(swept, want) {
		t.Errorf("swept %q, want %q", swept, want)
	}
	got := dirNames(t, dir)
	for _, n := range append(kept, "sub") {
		if !slices.Contains(got, n) {
			t.Errorf("%s was removed", n)
		}
	}
	if len(dirNames(t, sub)) != 1 {
		t.Error("a subdirectory was swept")
	}
}

// lockbench clean deletes exactly the run's keys (not another run's, not
// the user's) and says how many; --all-lockbench-runs needs --yes.
func TestCleanCommand(t *testing.T) {
	t.Parallel()
	s := oneServer(t)
	redis := func(args ...string) string {
		t.Helper()
		v, err := topology.Command(s.Addr, s.Password, time.Second, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	for _, k := range []string{"lockbench:aaaa1111:0:{sku:0:0}:stock", "lockbench:aaaa1111:0:{sku:0:0}:sold", "lockbench:aaaa1111:1:r0:{ctr:3}:n",
		"lockbench:aaaa11112:0:x", "lockbench:bbbb2222:0:x", "user:data", "lockbenchx"} {
		redis("SET", k, "1")
	}
	r := lockbench(t, "clean", "--addr", s.Addr, "--password", s.Password, "--run-id", "aaaa1111")
	if r.code != 0 || !strings.Contains(r.stdout, "deleted 3 keys under lockbench:aaaa1111:") {
		t.Fatalf("clean: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if redis("DBSIZE") != "4" || redis("EXISTS", "lockbench:aaaa11112:0:x", "lockbench:bbbb2222:0:x", "user:data", "lockbenchx") != "4" {
		t.Fatalf("clean touched other keys: dbsize %s", redis("DBSIZE"))
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--all-lockbench-runs"}, "--yes"},
		{[]string{}, "--run-id"},
		{[]string{"--run-id", "a*"}, "not a run id"},
		{[]string{"--run-id", "a", "--all-lockbench-runs", "--yes"}, "exclude each other"},
	} {
		r := lockbench(t, append([]string{"clean", "--addr", s.Addr, "--password", s.Password}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%v: exit %d, want 2 with %q\n%s", c.args, r.code, c.msg, r.stderr)
		}
	}
	if r := lockbench(t, "clean", "--run-id", "a"); r.code != exitUsage || !strings.Contains(r.stderr, "--addr") {
		t.Errorf("no --addr: exit %d\n%s", r.code, r.stderr)
	}
	r = lockbench(t, "clean", "--addr", "redis://:"+s.Password+"@"+s.Addr, "--all-lockbench-runs", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "deleted 2 keys under lockbench:") {
		t.Fatalf("--all-lockbench-runs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if redis("DBSIZE") != "2" {
		t.Fatalf("dbsize %s after --all-lockbench-runs, want the user's 2 keys", redis("DBSIZE"))
	}
	if r := lockbench(t, "clean", "--addr", "127.0.0.1:1", "--run-id", "a"); r.code != exitFailure || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("unreachable: exit %d\n%s", r.code, r.stderr)
	}
}

// The data keys of a run with --keep-keys carry the safety TTL (flash-sale
// stock, sold and fence key, hot-key counters, and fencing's token
// counter, with the same bound), and the run prints the
// clean command that removes them, which does.
func TestKeepKeysHaveTTL(t *testing.T) {
	t.Parallel()
	s := oneServer(t)
	redis := func(args ...string) string {
		t.Helper()
		v, err := topology.Command(s.Addr, s.Password, time.Second, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	out := filepath.Join(t.TempDir(), "kk.json")
	r := lockbench(t, "run", "-q", "--addr", "redis://:"+s.Password+"@"+s.Addr, "--keep-keys", "--strategy", "atomic,fencing",
		"--workload", "flash-sale,hot-key", "--driver", "rueidis", "--stock", "20", "--keys", "5", "--duration", "1s",
		"--clients", "2", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	id := run.Meta.RunID
	ds, err := engine.Open(context.Background(), "goredis", []engine.Node{{Addr: s.Addr, Password: s.Password}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := ds[0].Do(context.Background(), "KEYS", "lockbench:"+id+":*")
	ds[0].Close()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range reply.Array {
		keys = append(keys, k.Str)
	}
	kinds := map[string]int{}
	for _, k := range keys {
		kind := k[strings.LastIndexByte(k, ':')+1:]
		if kind == "lock" {
			continue // the lease's own TTL
		}
		kinds[kind]++
		pttl, _ := strconv.Atoi(redis("PTTL", k))
		if max := (1*time.Second + 10*time.Minute).Milliseconds(); pttl <= 0 || int64(pttl) > max {
			t.Errorf("%s: PTTL %d, want 1..%d", k, pttl, max)
		}
	}
	for _, kind := range []string{"stock", "sold", "fence-seen", "n", "fence"} { // fence: fencing's token counter
		if kinds[kind] == 0 {
			t.Errorf("no %s key kept (%v)", kind, kinds)
		}
	}
	m := regexp.MustCompile(`to remove them: (lockbench clean [^(\n]*)`).FindStringSubmatch(r.stderr)
	if m == nil || !strings.Contains(r.stderr, "keys kept under lockbench:"+id+":") || strings.Contains(r.stderr, s.Password) {
		t.Fatalf("no clean command (or the password) in:\n%s", r.stderr)
	}
	args := append(strings.Fields(m[1])[1:], "--password", s.Password)
	r = lockbench(t, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "deleted") || redis("DBSIZE") != "0" {
		t.Fatalf("%v: exit %d, dbsize %s\n%s%s", args, r.code, redis("DBSIZE"), r.stdout, r.stderr)
	}
}

// A run whose clean-up did not finish says how many keys it left and the
// command that removes them (in process: keys planted under the run's id).
func TestReportLeftKeys(t *testing.T) {
	s := oneServer(t)
	for _, k := range []string{"lockbench:cafe0001:0:a", "lockbench:cafe0001:1:b", "lockbench:other:0:c"} {
		if _, err := topology.Command(s.Addr, s.Password, time.Second, "SET", k, "1"); err != nil {
			t.Fatal(err)
		}
	}
	f := &runFlags{addr: "redis://:" + s.Password + "@" + s.Addr + "/0"}
	p := &plan{addrs: []string{s.Addr}, conn: drivers.Endpoint{Password: s.Password},
		scenarios: []engine.Scenario{{Spec: engine.Spec{Driver: "rueidis"}}}}
	var b bytes.Buffer
	reportLeftKeys(p, f, "cafe0001", &b)
	want := "this run left 2 keys under lockbench:cafe0001:"
	cmd := "lockbench clean --addr redis://" + s.Addr + "/0 --run-id cafe0001 (with your login"
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), cmd) || strings.Contains(b.String(), s.Password) {
		t.Fatalf("got %q, want %q and %q", b.String(), want, cmd)
	}
	b.Reset()
	reportLeftKeys(p, f, "feed0002", &b)
	if b.Len() != 0 {
		t.Fatalf("nothing left, but: %q", b.String())
	}
}
