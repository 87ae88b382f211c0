package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// Test-only defective fencing (this test binary only): cli-fence-constant
// is the fencing lock whose leases all carry fencing token 1, a token
// that never grows, so a resource that accepts a token at least as high
// as the last it saw accepts every holder's write, a stale one included.
func init() {
	strategies.Register("cli-fence-constant", strategies.Info{Desc: "test only: fencing whose every lease carries fencing token 1 (tokens that do not grow)",
		Guard: "fence"},
		func(c strategies.Config) (strategies.Locker, error) {
			in, err := strategies.New("fencing", strategies.Config{Nodes: c.Nodes, TTL: c.TTL})
			return constFence{in}, err
		})
}

type constFence struct{ in strategies.Locker }

func (f constFence) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	l, err := f.in.TryAcquire(ctx, key)
	if err != nil {
		return nil, err
	}
	return constFenceLease{l}, nil
}

type constFenceLease struct{ strategies.Lease }

func (constFenceLease) Fence() int64 { return 1 }

// resourceRun is the pause of TestPauseBeforeWriteHotKey (a holder paused
// 1.3 s between its loss check and its write, past its 1 s lease, while
// every other holder keeps its lease through 5 ms of work) on hot-key's
// one counter, its data on a separate resource.
var resourceRun = []string{"run", "-q", "--driver", "rueidis", "--workload", "hot-key", "--keys", "1",
	"--duration", "1800ms", "--clients", "6", "--ttl", "1s", "--work", "5ms", "--acquire-timeout", "1s",
	"--retry", "fixed:interval=5ms", "--fault", "pause:at=200ms,for=1300ms,point=write", "--resource", "separate"}

// Fencing at a separate resource, both ways, on a redis-server lockbench
// starts for the data: fencing's growing tokens let the resource refuse
// exactly the paused holder's late write (resource_rejected 1) and no
// update is lost; a lock whose tokens do not grow (cli-fence-constant)
// gets its stale write accepted by the same resource (resource_rejected
// 0) and loses updates, which --fail-on lost_updates==0 fails. The figure
// is in the JSON, in --fail-on and in show; the resource is a server of
// its own (two pids in meta.servers, topology standalone,resource), and
// every server is gone after the run.
func TestSeparateResourceFencing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "res.json")
	_, err := inProcess(t, append(append([]string{}, resourceRun...), "--strategy", "fencing,cli-fence-constant",
		"--fail-on", "lost_updates==0", "--fail-on", "fencing/*:resource_rejected==1", "--out", out)...)
	run, rerr := report.ReadFile(out)
	if rerr != nil {
		t.Fatalf("%v (run: %v)", rerr, err)
	}
	if !errors.Is(err, errThresholds) {
		t.Errorf("--fail-on lost_updates==0: error %v, want the defective lock's threshold failure", err)
	}
	for _, th := range run.Thresholds {
		t.Logf("threshold %s on %s: measured %v, pass %v", th.Expr, th.Scenario, th.Measured, th.Pass)
		if th.Pass != (th.Scenario == "" || strings.HasPrefix(th.Scenario, "fencing/")) {
			t.Errorf("threshold %s on %s: pass %v; want a pass on fencing only", th.Expr, th.Scenario, th.Pass)
		}
	}
	if len(run.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(run.Scenarios))
	}
	for _, s := range run.Scenarios {
		rej, ok := s.ResourceRejected()
		v := s.Violations
		t.Logf("%s: resource_rejected %d (%v), lost updates %d, overlap %d, increments %d, counter %d, rejected %d (%s)",
			s.Strategy, rej, ok, v.LostUpdates, v.Overlap, s.Figures["increments"], s.Figures["counter_sum"], s.Counters.Rejected, s.Faults[0].Note)
		if s.Params["resource"] != engine.ResourceSeparate || s.Params["guard"] != "fence" {
			t.Errorf("%s: params resource %q guard %q, want separate and fence", s.Strategy, s.Params["resource"], s.Params["guard"])
		}
		if s.Figures["increments"] == 0 {
			t.Fatalf("%s: no increment (%s)", s.Strategy, s.Faults[0].Note)
		}
		switch s.Strategy {
		case "fencing":
			if !ok || rej != 1 || v.LostUpdates != 0 || s.Counters.Rejected != 1 {
				t.Errorf("fencing: resource_rejected %d (measured %v), lost updates %d, rejected %d; want 1 (the paused holder's write), 0, 1",
					rej, ok, v.LostUpdates, s.Counters.Rejected)
			}
		default:
			if !ok || rej != 0 || v.LostUpdates == 0 || v.Overlap == 0 {
				t.Errorf("%s: resource_rejected %d (measured %v), lost updates %d, overlap %d; want 0 (its token never grows), > 0, > 0",
					s.Strategy, rej, ok, v.LostUpdates, v.Overlap)
			}
		}
	}
	if run.Meta.Topology != "standalone,resource" || len(run.Meta.Servers) != 2 || run.Meta.Servers[0].Pid == run.Meta.Servers[1].Pid {
		t.Errorf("topology %q, servers %+v; want standalone,resource and two processes", run.Meta.Topology, run.Meta.Servers)
	}
	for _, s := range run.Meta.Servers {
		if topology.Alive(s.Pid) {
			t.Errorf("redis-server pid %d (%s) is still running after the run", s.Pid, s.Addr)
		}
	}
	shown, err := inProcess(t, "show", out, "--columns", "strategy,lost_updates,resource_rejected")
	if err != nil || !strings.Contains(shown, "res rejected") {
		t.Fatalf("show: %v\n%s", err, shown)
	}
	t.Logf("show:\n%s", shown)
	for _, line := range strings.Split(shown, "\n") {
		if strings.Contains(line, "fencing ") && !strings.Contains(line, " 1 ") {
			t.Errorf("show's fencing row lacks resource_rejected 1: %q", line)
		}
	}
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), `"resource_rejected"`) || !strings.Contains(string(b), `"resource": "separate"`) {
		t.Errorf("the result file lacks figures.resource_rejected or params.resource")
	}
}

// With --addr, the data lives on the server --resource-addr names (a URL
// with its own password, warned about as a password on the command line):
// after a --keep-keys run the hot-key counter,
// the highest fencing token seen and the count of refusals are on the
// resource and none of them on the lock's server, whose keys are the
// lock's own (fencing's token counter); the resource holds no lock key.
// The run counts the keys it kept on both servers and prints the clean
// command of each.
func TestResourceAddrKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lockTopo, err := topology.Start(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer lockTopo.Stop()
	resTopo, err := topology.Start(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer resTopo.Stop()
	ls, rs := lockTopo.Servers[0], resTopo.Servers[0]
	url := func(s *topology.Server) string { return "redis://:" + s.Password + "@" + s.Addr }
	out := filepath.Join(t.TempDir(), "res.json")
	r := lockbenchEnv(t, []string{"LOCKBENCH_PASSWORD=" + ls.Password}, append(append([]string{}, resourceRun...), "--strategy", "fencing", "--keep-keys",
		"--addr", ls.Addr, "--resource-addr", url(rs), "--out", out)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "a password in the --resource-addr URL on the command line is visible") {
		t.Errorf("no warning about the password in --resource-addr's URL:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "--keep-keys: 4 keys kept") || !strings.Contains(r.stdout+r.stderr, "and on the resource: lockbench clean --addr redis://"+rs.Addr) {
		t.Errorf("the run does not count the kept keys on both servers (1 + 3) or lacks the resource's clean command:\n%s\n%s", r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Scenarios[0]
	if rej, ok := s.ResourceRejected(); !ok || rej != 1 || s.Violations.LostUpdates != 0 {
		t.Errorf("fencing: resource_rejected %d (measured %v), lost updates %d; want 1, 0", rej, ok, s.Violations.LostUpdates)
	}
	keys := func(s *topology.Server) []string {
		t.Helper()
		ds, err := engine.Open(ctx, "goredis", []engine.Node{{Addr: s.Addr, Password: s.Password}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer ds[0].Close()
		rep, err := ds[0].Do(ctx, "KEYS", "lockbench:*")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range rep.Array {
			out = append(out, k.Str)
		}
		return out
	}
	lockKeys, resKeys := keys(ls), keys(rs)
	t.Logf("lock server %s: %v; resource %s: %v", ls.Addr, lockKeys, rs.Addr, resKeys)
	has := func(ks []string, suffix string) bool {
		for _, k := range ks {
			if strings.HasSuffix(k, suffix) {
				return true
			}
		}
		return false
	}
	for _, suf := range []string{":n", ":fence-seen", ":resource:rejected"} {
		if !has(resKeys, suf) || has(lockKeys, suf) {
			t.Errorf("data key *%s: on the resource %v, on the lock's server %v; want the resource only", suf, has(resKeys, suf), has(lockKeys, suf))
		}
	}
	if !has(lockKeys, ":lock:fence") || has(resKeys, ":lock") || has(resKeys, ":lock:fence") {
		t.Errorf("lock keys: fencing's token counter on the lock's server %v; a lock key on the resource %v", has(lockKeys, ":lock:fence"), has(resKeys, ":lock") || has(resKeys, ":lock:fence"))
	}
}

// Ctrl-C during a run on a separate resource: the run exits 130 with its
// result marked interrupted, and neither the lock's redis-server nor the
// resource's (two children of lockbench, two pids in meta.servers) is
// left running.
func TestInterruptStopsResource(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "i.json")
	cmd := exec.Command(bin, "run", "--strategy", "fencing", "--driver", "rueidis", "--workload", "hot-key", "--keys", "1",
		"--duration", "60s", "--clients", "2", "--resource", "separate", "--out", out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "[1/1]")
	var kids []int
	for deadline := time.Now().Add(10 * time.Second); len(kids) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		kids = children(cmd.Process.Pid)
	}
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 30*time.Second) {
		t.Fatal("lockbench did not stop within 30 s of Ctrl-C")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130", code)
	}
	if len(kids) != 2 {
		t.Errorf("%d redis-server children of lockbench (%v), want 2: the lock's and the resource's", len(kids), kids)
	}
	for _, pid := range kids {
		if topology.Alive(pid) {
			t.Errorf("redis-server %d still running after Ctrl-C", pid)
		}
	}
	doc := readDoc(t, out)
	if doc["interrupted"] != true {
		t.Fatalf("interrupted = %v, want true", doc["interrupted"])
	}
	meta := doc["meta"].(map[string]any)
	if servers, _ := meta["servers"].([]any); len(servers) != 2 || meta["topology"] != "standalone,resource" {
		t.Errorf("meta.servers %v, topology %v; want the lock's and the resource's servers", servers, meta["topology"])
	}
	assertServersGone(t, meta)
}
