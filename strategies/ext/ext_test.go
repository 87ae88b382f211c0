package ext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	_ "github.com/lockbench/lockbench/drivers/all"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/locktest"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// servers are the package's redis-server processes, shared by its tests.
var servers = locktest.NewServers()

// childCheck, set in a child test process's environment to
// "CHECK/STRATEGY", makes TestSuiteChild run that check of the
// conformance suite (TestSuiteFailsBrokenAdapter).
const childCheck = "EXT_TEST_CHILD_CHECK"

func TestMain(m *testing.M) {
	ServeIfAdapter() // this binary started as one of the Go adapters
	code := m.Run()
	servers.Close()
	os.Exit(code)
}

func init() {
	// A deliberately broken adapter: atomic, except that release deletes
	// the key whoever holds it (DEL without the owner check) and always
	// says ok. The conformance suite's OwnerOnlyRelease must fail on it.
	goAdapters["broken-release"] = func(h Hello, hr *HelloReply) (goAdapter, func(), error) {
		a, closer, err := goAdapters["atomic"](h, hr)
		if err != nil {
			return nil, nil, err
		}
		return brokenRelease{a.(*atomicAdapter)}, closer, nil
	}
	// An adapter whose every lease is reported lost 200 ms after its
	// grant (caps.lost): the lease's Context must end.
	goAdapters["lost"] = func(h Hello, hr *HelloReply) (goAdapter, func(), error) {
		hr.Caps.Lost, hr.Caps.Renews = true, true
		return &lostAdapter{}, nil, nil
	}
	goAdapters["dies"] = func(Hello, *HelloReply) (goAdapter, func(), error) { return &dyingAdapter{}, nil, nil }
	self := func(string) ([]string, error) { return []string{os.Args[0]}, nil }
	Register("ext-test-broken-release", Adapter{Desc: "test only: atomic whose release deletes any holder's lock",
		Command: self, env: []string{EnvGoAdapter + "=broken-release"}})
	Register("ext-test-dies", Adapter{Desc: "test only: grants 5 acquires, then exits",
		Command: self, env: []string{EnvGoAdapter + "=dies"}, Unsafe: true})
	Register("ext-test-lost", Adapter{Desc: "test only: every lease reported lost after 200ms",
		Command: self, env: []string{EnvGoAdapter + "=lost"}, Unsafe: true})
}

type brokenRelease struct{ *atomicAdapter }

func (b brokenRelease) do(q request) (reply, bool) {
	if q.Op != "release" {
		return b.atomicAdapter.do(q)
	}
	b.mu.Lock()
	ls, held := b.leases[q.Lease]
	delete(b.leases, q.Lease)
	b.mu.Unlock()
	if held {
		_, _ = b.d.Do(context.Background(), "DEL", ls.key)
	}
	return reply{OK: true}, true
}

type lostAdapter struct {
	nullAdapter
	send func(any)
}

func (l *lostAdapter) notify(send func(any)) { l.send = send }

func (l *lostAdapter) do(q request) (reply, bool) {
	rep, ok := l.nullAdapter.do(q)
	if q.Op == "acquire" {
		time.AfterFunc(200*time.Millisecond, func() { l.send(map[string]any{"op": "lost", "lease": rep.Lease}) })
	}
	return rep, ok
}

// The conformance suite passes on ext-atomic, with and without extend.
func TestConformanceExtAtomic(t *testing.T) {
	locktest.Suite{Servers: servers, RequireTokens: true}.Run(t, "ext-atomic")
}

// The suite fails on the broken adapter where its defect shows, and
// passes on ext-atomic: run in child processes, since a failing check
// fails its test.
func TestSuiteFailsBrokenAdapter(t *testing.T) {
	for _, c := range []struct{ check, strategy, fails string }{
		{"OwnerOnlyRelease", "ext-test-broken-release", "A's release = <nil>, want ErrNotOwner"},
		{"OwnerOnlyRelease", "ext-atomic", ""},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSuiteChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), childCheck+"="+c.check+"/"+c.strategy)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			switch {
			case c.fails != "" && !errors.As(err, &ee):
				t.Fatalf("the suite's %s passed on %s (err %v):\n%s", c.check, c.strategy, err, out)
			case c.fails != "" && !strings.Contains(string(out), c.fails):
				t.Fatalf("the child failed, but not with %q:\n%s", c.fails, out)
			case c.fails == "" && (err != nil || !strings.Contains(string(out), "--- PASS: TestSuiteChild")):
				t.Fatalf("%s did not pass on %s: %v\n%s", c.check, c.strategy, err, out)
			}
		})
	}
}

// TestSuiteChild runs the check named by childCheck; without it, it is
// skipped.
func TestSuiteChild(t *testing.T) {
	v := os.Getenv(childCheck)
	if v == "" {
		t.Skip("run by TestSuiteFailsBrokenAdapter")
	}
	check, s, _ := strings.Cut(v, "/")
	suite := locktest.Suite{Servers: servers}
	switch check {
	case "OwnerOnlyRelease":
		suite.OwnerOnlyRelease(t, s, DataDriver)
	default:
		t.Fatalf("no check %q", check)
	}
}

// openLocker opens strategy on the package's standalone server.
func openLocker(t *testing.T, strategy string, p registry.Values) strategies.Locker {
	t.Helper()
	eps, err := servers.Nodes(strategy)
	if err != nil {
		t.Fatal(err)
	}
	d, err := drivers.Open(DataDriver, drivers.Options{Endpoint: eps[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	l, err := strategies.New(strategy, strategies.Config{Nodes: []drivers.Driver{d}, TTL: 2 * time.Second, Params: p,
		Prefix: "lockbench:ext-test:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.(interface{ Close() error }).Close() })
	return l
}

// A lost notice cancels the lease's Context; a lease of an adapter
// without caps.lost is not Watched; an extend of ext-atomic with
// extend=on keeps the lock, and one after the key was taken away is
// ErrNotOwner.
func TestLostAndExtend(t *testing.T) {
	ctx := context.Background()
	l := openLocker(t, "ext-test-lost", nil)
	ls, err := l.TryAcquire(ctx, "lockbench:ext-test:lost")
	if err != nil {
		t.Fatal(err)
	}
	w, ok := ls.(strategies.Watched)
	if !ok {
		t.Fatalf("lease %T of an adapter with caps.lost is not Watched", ls)
	}
	select {
	case <-w.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the lost notice did not cancel the lease's context")
	}

	a := openLocker(t, "ext-atomic", registry.Values{"extend": "on"})
	key := "lockbench:ext-test:extend"
	ls, err = a.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ls.(strategies.Watched); ok {
		t.Fatalf("ext-atomic's lease %T is Watched without caps.lost", ls)
	}
	e, ok := ls.(strategies.Extender)
	if !ok {
		t.Fatalf("ext-atomic:extend=on's lease %T is not an Extender", ls)
	}
	if err := e.Extend(ctx); err != nil {
		t.Fatalf("extend of a held lease: %v", err)
	}
	d := a.(*locker).c.Nodes[0]
	if _, err := d.Do(ctx, "SET", key, "someone-else"); err != nil {
		t.Fatal(err)
	}
	if err := e.Extend(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("extend after the key was taken = %v, want ErrNotOwner", err)
	}
	if err := ls.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release after the key was taken = %v, want ErrNotOwner", err)
	}
	if r, _ := d.Do(ctx, "GET", key); r.Str != "someone-else" {
		t.Fatalf("the other holder's lock became %+v", r)
	}
}

// An adapter that fails at its start is reported with its stderr; `ext`
// without cmd is refused.
func TestAdapterStartErrors(t *testing.T) {
	eps, err := servers.Nodes("ext")
	if err != nil {
		t.Fatal(err)
	}
	d, err := drivers.Open(DataDriver, drivers.Options{Endpoint: eps[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		cmd, script, want string // script: run as sh -c script
	}{
		{"", "", "ext: needs cmd=PATH"},
		{"/nonexistent/adapter", "", "ext: cmd=/nonexistent/adapter: exec: \"/nonexistent/adapter\": stat /nonexistent/adapter: no such file or directory"},
		{"", "exit 0", "exited before its hello reply"},
		{"", "echo hi", "its first line is not a hello reply"},
		{"", `printf '{"op":"hello","v":2}\n'`, "speaks protocol version 2"},
		{"", `printf '{"op":"hello","v":1,"error":"no such variant"}\n'`, "no such variant"},
		{"", "echo broken >&2; exit 3", "its stderr ended with:\nbroken"},
	} {
		var l strategies.Locker
		if c.script != "" {
			l, err = startScript(d, c.script)
		} else {
			l, err = strategies.New("ext", strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second,
				Params: registry.Values{"cmd": c.cmd}})
		}
		if err == nil {
			l.(interface{ Close() error }).Close()
			t.Fatalf("%s%s started", c.cmd, c.script)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%s: %v, want %q", c.cmd, c.script, err, c.want)
		}
	}
}

// startScript starts `sh -c script` as an adapter (args= splits on
// spaces, so a script goes through here).
func startScript(d drivers.Driver, script string) (strategies.Locker, error) {
	return newLocker("ext", Adapter{Command: func(string) ([]string, error) { return []string{"sh", "-c", script}, nil }},
		strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second, Params: registry.Values{}})
}

// An adapter that exits in the middle of a run stops the scenario at once
// (StopReason "aborted", its error naming the adapter and its stderr)
// instead of counting one error per attempt until the run's end; one
// that answers hello without name, library or version is refused.
func TestAdapterDiesMidRun(t *testing.T) {
	eps, err := servers.Nodes("ext-atomic")
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "ext-test-dies", Driver: DataDriver, Workload: "flash-sale",
		Clients: 4, Duration: 20 * time.Second, TTL: time.Second, AcquireTimeout: time.Second,
		Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(1000)}, Seed: 1,
	}}
	sc.Retry, _ = retry.Parse("none")
	start := time.Now()
	res, err := engine.Run(context.Background(), sc, eps, "lockbench:ext-test:dies:")
	if !errors.Is(err, engine.ErrAborted) || !strings.Contains(err.Error(), "adapter ext-test-dies") || !strings.Contains(err.Error(), "dying after 5 requests") {
		t.Fatalf("Run = %v, want an abort naming the adapter and its stderr", err)
	}
	if res.StopReason != "aborted" || time.Since(start) > 15*time.Second {
		t.Errorf("stop reason %q after %v, want aborted well before the 20 s duration", res.StopReason, time.Since(start))
	}

	d, err := drivers.Open(DataDriver, drivers.Options{Endpoint: eps[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := startScript(d, `printf '{"op":"hello","v":1}\n'; cat >/dev/null`); err == nil || !strings.Contains(err.Error(), "its hello reply lacks name, library or version") {
		t.Errorf("a hello without name, library and version: %v", err)
	}
}

// dyingAdapter grants 5 acquires, then writes to stderr and exits.
type dyingAdapter struct {
	nullAdapter
	n atomic.Int64
}

func (a *dyingAdapter) do(q request) (reply, bool) {
	if a.n.Add(1) > 5 {
		fmt.Fprintln(os.Stderr, "dying after 5 requests")
		os.Exit(3)
	}
	return a.nullAdapter.do(q)
}

// needAdapter skips t when a runtime strategy's adapter needs is not on
// PATH (Available's reason), and fails it when the adapter is not built
// (the error says to run make adapters).
func needAdapter(t *testing.T, strategy string) {
	t.Helper()
	if err := Available(strategy); errors.Is(err, ErrNoRuntime) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// permitsRun runs a semaphore strategy with 3 permits, 8 clients on one
// key (lock-cycle, the workload a shared lock may run), through its own
// wait, and checks that the oracle judges it by permits: ops, no
// capacity violation, no overlap, 1 to 3 holders at once.
func permitsRun(t *testing.T, name string, seed uint64, prefix string) {
	t.Helper()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: name, Driver: DataDriver, Workload: "lock-cycle", Retry: retry.Library(),
		Clients: 8, Duration: 2 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 5 * time.Second,
		Params: workloads.Params{Work: workloads.Fixed(5 * time.Millisecond)}, Options: registry.Values{"permits": 3, "keys": 1}, Seed: seed,
	}}
	nodes, err := servers.Nodes(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), sc, nodes, prefix)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Violations
	if v.MaxHolders != nil {
		t.Logf("%s permits=3: ops %d, capacity violations %d, max holders %d, overlap %d, stuck %d",
			name, res.Ops, v.CapacityViolations, *v.MaxHolders, v.Overlap, v.StuckLocks)
	}
	if res.Ops == 0 || v.CapacityViolations != 0 || v.Overlap != 0 || v.MaxHolders == nil || *v.MaxHolders < 1 || *v.MaxHolders > 3 {
		t.Errorf("ops %d, capacity violations %d, overlap %d, max holders %v; want ops, 0, 0 and 1 to 3", res.Ops, v.CapacityViolations, v.Overlap, v.MaxHolders)
	}
}
