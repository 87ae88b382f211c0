package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/topology"
)

// A concurrent file of two scenarios (atomic on a flash sale, fencing on
// a hot key) runs both at once on the one server: their measured windows
// overlap, each sold or counted exactly with no violation, each wrote its
// keys under its own prefix (seen while they ran), none is left after,
// their cost is marked shared (no commands/op), and the table and the
// file carry their names.
func TestConcurrentFile(t *testing.T) {
	t.Parallel() // its own server and a lockbench process
	s := oneServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	body := `concurrent: true
duration: 2s
driver: rueidis
ttl: 5s
scenarios:
  - name: checkout
    strategy: atomic
    workload: flash-sale
    clients: 8
    stock: 150
    work: 1ms
  - name: reports
    strategy: fencing
    workload: hot-key
    clients: 6
    think: exp:mean=2ms
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The keys while the scenarios run: how many under each prefix, and
	// any elsewhere.
	const script = `local n0, n1 = #redis.call('KEYS', 'lockbench:conc1:0:*'), #redis.call('KEYS', 'lockbench:conc1:1:*')
return n0 .. ' ' .. n1 .. ' ' .. (redis.call('DBSIZE') - n0 - n1)`
	var seen0, seen1, elsewhere int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			v, err := topology.Command(s.Addr, s.Password, time.Second, "EVAL", script, "0")
			var n0, n1, n2 int
			if _, serr := fmt.Sscan(v, &n0, &n1, &n2); err == nil && serr == nil {
				seen0, seen1, elsewhere = max(seen0, n0), max(seen1, n1), max(elsewhere, n2)
			}
		}
	}()
	out := filepath.Join(dir, "r.json")
	r, run := runAndRead(t, out, "run", "-f", path, "--run-id", "conc1", "--out", out,
		"--addr", "redis://:"+s.Password+"@"+s.Addr)
	close(stop)
	wg.Wait()
	if len(run.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2\n%s", len(run.Scenarios), r.stdout)
	}
	for _, want := range []string{"checkout: atomic", "reports: fencing"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table without %q:\n%s", want, r.stdout)
		}
	}
	co, rep := run.Scenarios[0], run.Scenarios[1]
	if co.Label != "checkout" || co.Strategy != "atomic" || co.Workload != "flash-sale" || rep.Label != "reports" || rep.Strategy != "fencing" || rep.Workload != "hot-key" {
		t.Fatalf("scenarios %s (%s), %s (%s)", co.Label, co.Name(), rep.Label, rep.Name())
	}
	if co.Figures["sold"] != 150 || co.Figures["final_stock"] != 0 || co.Figures["acked_orders"] != 150 || co.Ops == 0 {
		t.Errorf("checkout: figures %v, %d ops: want the 150 sold exactly", co.Figures, co.Ops)
	}
	if rep.Ops == 0 || rep.Figures["counter_sum"] != rep.Figures["increments"] {
		t.Errorf("reports: %d ops, figures %v: want the counter exact", rep.Ops, rep.Figures)
	}
	for _, sc := range run.Scenarios {
		if sc.Violations.Total() != 0 {
			t.Errorf("%s: violations %+v", sc.Label, sc.Violations)
		}
		if !sc.Raw.SharedCost || sc.RedisCost.CommandsPerOp != 0 || sc.ClientCPU.CPUMicrosPerOp != 0 || sc.RedisCost.ServerCPUMSPer1kOps != 0 {
			t.Errorf("%s: shared_cost %v, commands/op %v, cpu/op %v: want the cost shared, no figure per op", sc.Label, sc.Raw.SharedCost, sc.RedisCost.CommandsPerOp, sc.ClientCPU.CPUMicrosPerOp)
		}
		if sc.MeasuredAt == nil || len(sc.Timeline) == 0 {
			t.Fatalf("%s: measured_at %v, %d timeline entries", sc.Label, sc.MeasuredAt, len(sc.Timeline))
		}
	}
	// The windows overlap: each starts before the other ends.
	a, b := co.MeasuredAt, rep.MeasuredAt
	if !(a.Start < b.End && b.Start < a.End) {
		t.Errorf("windows %v and %v do not overlap", *a, *b)
	}
	if co.Raw.LockSpace != "lockbench:conc1:0:" || rep.Raw.LockSpace != "lockbench:conc1:1:" {
		t.Errorf("lock spaces %q, %q", co.Raw.LockSpace, rep.Raw.LockSpace)
	}
	if seen0 == 0 || seen1 == 0 || elsewhere > 0 {
		t.Errorf("while running: up to %d keys under lockbench:conc1:0:, %d under lockbench:conc1:1:, %d elsewhere; want both scenarios' keys under their own prefixes only", seen0, seen1, elsewhere)
	}
	if n := dbsize(t, s.Addr, s.Password); n != "0" {
		t.Errorf("DBSIZE after the run = %s, want 0", n)
	}
}

// Bad concurrent files: exit 2, each problem at its file:line.
func TestConcurrentFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, body, want string }{
		{"list in an item", "concurrent: true\ndriver: rueidis\nscenarios:\n  - strategy: atomic\n  - strategy: [atomic, naive]\n", "f.yaml:5: scenario 2 is 2 scenarios (strategy atomic,naive)"},
		{"default drivers", "concurrent: true\nscenarios:\n  - strategy: atomic\n", "f.yaml:3: scenario 1 is 2 scenarios (driver goredis,rueidis)"},
		{"topologies", "concurrent: true\ndriver: rueidis\nscenarios:\n  - strategy: atomic\n  - name: rl\n    strategy: redlock\n", "f.yaml:5: scenario 2 (rl) runs on masters (5 servers), scenario 1 (atomic) on standalone"},
		{"unknown field", "concurrent: true\ndriver: rueidis\nscenarios:\n  - strategy: atomic\n    clientz: 3\n", `f.yaml:5: unknown field "clientz"`},
		{"bad value", "concurrent: true\ndriver: rueidis\nscenarios:\n  - strategy: atomic\n    clients: ten\n", "f.yaml:5: clients:"},
		{"concurrent alone", "concurrent: true\nstrategy: atomic\n", "f.yaml:1: concurrent goes with scenarios:"},
		{"run-level in an item", "concurrent: true\ndriver: rueidis\nscenarios:\n  - strategy: atomic\n    out: x.json\n", "f.yaml:5: out is the run's, not a scenario's"},
		{"fault in an item", "concurrent: true\ndriver: rueidis\nscenarios:\n  - strategy: atomic\n    fault: node-kill\n", "f.yaml:5: fault: a concurrent file injects no faults"},
		{"fault at the top", "concurrent: true\ndriver: rueidis\nfault: node-kill\nscenarios:\n  - strategy: atomic\n", "f.yaml:3: fault: a concurrent file injects no faults"},
		{"not a list", "concurrent: true\nscenarios: atomic\n", "f.yaml:2: scenarios: want a list"},
		{"top-level parameter no one takes", "concurrent: true\ndriver: rueidis\nskus: 3\nscenarios:\n  - {strategy: atomic, workload: hot-key}\n", "f.yaml:3: skus goes with flash-sale"},
		{"same name", "concurrent: true\ndriver: rueidis\nscenarios:\n  - {name: a, strategy: atomic}\n  - {name: a, strategy: naive}\n", `f.yaml:5: name "a" is given to two scenarios`},
		{"clients together", "concurrent: true\ndriver: rueidis\nscenarios:\n  - {strategy: atomic, clients: 60000}\n  - {strategy: naive, clients: 40001}\n", "f.yaml: the scenarios' clients add up to 100001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "f.yaml")
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			r := lockbench(t, "run", "-q", "-f", path, "--duration", "100ms", "--out", filepath.Join(dir, "r.json"))
			if r.code != 2 || !strings.Contains(r.stderr, path[:len(path)-len("f.yaml")]+c.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", r.code, r.stderr, c.want)
			}
		})
	}
}

// scenarios: without concurrent: true runs them one after another, each
// item's fields over the top level's; the command line wins over both.
func TestScenariosListSequential(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	body := "driver: rueidis\nclients: 3\nduration: 2s\nscenarios:\n  - {name: one, strategy: atomic, clients: 2}\n  - {name: two, strategy: naive, workload: hot-key}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	_, run := runAndRead(t, out, "run", "-q", "-f", path, "--duration", "300ms", "--out", out)
	if len(run.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(run.Scenarios))
	}
	one, two := run.Scenarios[0], run.Scenarios[1]
	if one.Label != "one" || one.Clients != 2 || one.Workload != "flash-sale" || two.Label != "two" || two.Clients != 3 || two.Workload != "hot-key" {
		t.Errorf("scenarios %s %s %d, %s %s %d", one.Label, one.Workload, one.Clients, two.Label, two.Workload, two.Clients)
	}
	for _, sc := range run.Scenarios {
		if sc.Params["duration"] != "300ms" || sc.Raw.SharedCost || sc.MeasuredAt != nil {
			t.Errorf("%s: duration %s, shared %v: want the command line's 300ms, not shared", sc.Label, sc.Params["duration"], sc.Raw.SharedCost)
		}
	}
}

// Ctrl-C during a concurrent run stops every scenario: exit 130, both
// recorded with what they measured, marked interrupted, the server gone.
func TestConcurrentInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "i.json")
	cmd := exec.Command(bin, "run", "-f", "../../scenarios/concurrent.yaml", "--duration", "60s", "--ttl", "5s", "--out", out)
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, "[2/2]") // both started
	time.Sleep(700 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	if !waitExit(cmd, 30*time.Second) {
		t.Fatal("lockbench did not stop within 30 s of Ctrl-C")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130", code)
	}
	run := readRun(t, out)
	if !run.Interrupted || len(run.Scenarios) != 2 {
		t.Fatalf("interrupted %v, %d scenarios; want both, interrupted", run.Interrupted, len(run.Scenarios))
	}
	for _, sc := range run.Scenarios {
		if sc.Ops == 0 || sc.StopReason != "interrupted" || sc.Violations.Total() != 0 {
			t.Errorf("%s: %d ops, stop %q, %d violations", sc.Label, sc.Ops, sc.StopReason, sc.Violations.Total())
		}
	}
	doc := readDoc(t, out)
	assertServersGone(t, doc["meta"].(map[string]any))
}
