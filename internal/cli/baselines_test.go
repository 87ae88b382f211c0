package cli

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

var sixStrategies = []string{"atomic", "sql-rowlock", "sql-guard", "zk", "etcd", "redis-guard"}

func needBaselines(t *testing.T) {
	t.Helper()
	for _, c := range []struct {
		ok  bool
		pkg string
	}{{topology.HaveMariaDB(), "mariadb-server"}, {topology.HaveZooKeeper(), "zookeeper"}, {topology.HaveEtcd(), "etcd-server"}} {
		if !c.ok {
			t.Skipf("the baseline servers are not installed: apt-get install %s (make test does it as root)", c.pkg)
		}
	}
}

// The "done when": one table with the six strategies, every one
// selling exactly its stock with no violation, and every server gone after.
func TestBaselinesOneTable(t *testing.T) {
	t.Parallel()
	needBaselines(t)
	out := filepath.Join(t.TempDir(), "b.json")
	r := lockbench(t, "run", "--strategy", strings.Join(sixStrategies, ","), "--workload", "flash-sale",
		"--stock", "60", "--retry", "fixed:interval=2ms", "--ttl", "5s", "--out", out, "-q")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "┌"); n != 1 {
		t.Fatalf("%d tables, want one:\n%s", n, r.stdout)
	}
	rows := map[string]int{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Split(line, "│"); len(f) > 2 {
			rows[strings.TrimSpace(f[1])]++
		}
	}
	// atomic, zk, etcd and redis-guard on both Redis drivers; the SQL
	// strategies once (their data path is the MySQL driver).
	want := map[string]int{"atomic": 2, "sql-rowlock": 1, "sql-guard": 1, "zk": 2, "etcd": 2, "redis-guard": 2}
	for st, n := range want {
		if rows[st] != n {
			t.Errorf("%d rows of %s, want %d:\n%s", rows[st], st, n, r.stdout)
		}
	}
	doc := readDoc(t, out)
	scs := doc["scenarios"].([]any)
	if len(scs) != 10 {
		t.Fatalf("%d scenarios, want 10", len(scs))
	}
	for _, s := range scs {
		sc := s.(map[string]any)
		name := sc["strategy"].(string) + "/" + sc["driver"].(string)
		if sold := sc["figures"].(map[string]any)["sold"]; sold != float64(60) {
			t.Errorf("%s: sold %v, want 60", name, sold)
		}
		// A 5 s lease: atomic's does not run out even on a loaded machine.
		v := sc["violations"].(map[string]any)
		if v["oversell"] != float64(0) || v["lost_updates"] != float64(0) || v["overlap"] != float64(0) {
			t.Errorf("%s: violations %v, want no oversell, overlap or lost update", name, v)
		}
	}
	meta := doc["meta"].(map[string]any)
	if topo := meta["topology"].(string); !strings.Contains(topo, "mariadb") || !strings.Contains(topo, "zookeeper") || !strings.Contains(topo, "etcd") {
		t.Errorf("meta.topology %q does not name the baseline servers", topo)
	}
	if n := len(meta["servers"].([]any)); n != 4 {
		t.Errorf("%d servers in meta, want 4 (redis, mariadb, zookeeper, etcd)", n)
	}
	assertServersGone(t, meta)
}

// A strategy whose server is not installed is skipped with a message
// naming the package; the rest of the matrix runs.
func TestBaselineSkippedWhenMissing(t *testing.T) {
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() // a PATH with redis-server and nothing else
	if err := os.Symlink(redis, filepath.Join(path, "redis-server")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s.json")
	cmd := exec.Command(bin, "run", "--strategy", "atomic,etcd,zk", "--driver", "rueidis", "--stock", "20",
		"--clients", "4", "--retry", "fixed:interval=2ms", "--out", out, "-q")
	cmd.Env = append(os.Environ(), "PATH="+path)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v:\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, w := range []string{"skipping scenario 2 (etcd)", "etcd-server", "skipping scenario 3 (zk)", "zookeeper"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	doc := readDoc(t, out)
	if n := len(doc["scenarios"].([]any)); n != 1 {
		t.Errorf("%d scenarios, want 1 (atomic)", n)
	}
	if n := len(doc["skipped"].([]any)); n != 2 {
		t.Errorf("%d skipped, want 2", n)
	}
	assertServersGone(t, doc["meta"].(map[string]any))
}

func TestBaselineUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--strategy", "sql-rowlock", "--workload", "nested"}, "sql-rowlock does not run workload nested"},
		{[]string{"run", "--strategy", "redis-guard", "--workload", "lock-cycle"}, "redis-guard does not run workload lock-cycle"},
		{[]string{"run", "--strategy", "zk", "--fault", "pause"}, "zk keeps its lock or data in zookeeper"},
		{[]string{"run", "--strategy", "sql-guard", "--guard", "cas"}, "leave --guard auto"},
	}
	for _, c := range cases {
		r := lockbench(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("lockbench %v: exit %d, want 2 with %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
	r := lockbench(t, "list")
	for _, st := range sixStrategies {
		if !strings.Contains(r.stdout, "  "+st+" ") {
			t.Errorf("list lacks %s:\n%s", st, r.stdout)
		}
	}
}

// zk and etcd run with --repeat 2: each row's raw.cost has an entry of
// the server lockbench started (its process CPU, no command counts)
// beside the Redis node's; redis_cost.server_cpu_ms is their sum, > 0,
// and server_cpu_ms_per_1k_ops derives from it over raw.cost_ops exactly.
// Each repeat's sample has its own figure, and the repeats' CPU (figure x
// ops) adds up to the row's. The file matches results/schema.json
// (LOCKBENCH_CHECK_SCHEMA, set by TestMain).
func TestBaselineServerCPURepeat(t *testing.T) {
	t.Parallel()
	if !topology.HaveZooKeeper() || !topology.HaveEtcd() {
		t.Skip("zk and etcd need their servers: apt-get install zookeeper etcd-server (make test does it as root)")
	}
	out := filepath.Join(t.TempDir(), "cpu.json")
	_, run := runAndRead(t, out, "run", "--strategy", "zk,etcd", "--workload", "lock-cycle", "--keys", "100",
		"--clients", "4", "--work", "1ms", "--duration", "1s", "--driver", "rueidis",
		"--repeat", "2", "--out", out, "-q")
	if len(run.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(run.Scenarios))
	}
	names := map[string]string{"zk": "zookeeper ", "etcd": "etcd "}
	for _, s := range run.Scenarios {
		var server *report.ServerCost
		sum := 0.0
		for i, c := range s.Raw.Cost {
			sum += c.CPUMS
			if strings.HasPrefix(c.Servers, names[s.Strategy]) {
				server = &s.Raw.Cost[i]
			}
		}
		if server == nil || server.CPUMS <= 0 || server.ByCommand != nil {
			t.Fatalf("%s: raw.cost %+v: want an entry %q... with CPU and no command counts", s.Strategy, s.Raw.Cost, names[s.Strategy])
		}
		c := s.RedisCost
		if c.ServerCPUMS <= 0 || c.ServerCPUMS != sum {
			t.Fatalf("%s: server_cpu_ms %v, want the raw entries' sum %v", s.Strategy, c.ServerCPUMS, sum)
		}
		if want := c.ServerCPUMS * 1000 / float64(s.Raw.CostOps); s.Raw.CostOps <= 0 || c.ServerCPUMSPer1kOps != want {
			t.Fatalf("%s: server_cpu_ms_per_1k_ops %v, want %v*1000/%d = %v", s.Strategy, c.ServerCPUMSPer1kOps, c.ServerCPUMS, s.Raw.CostOps, want)
		}
		if len(s.Samples) != 2 {
			t.Fatalf("%s: %d samples, want 2", s.Strategy, len(s.Samples))
		}
		ops, cpu := int64(0), 0.0
		for _, x := range s.Samples {
			if x.ServerCPUMSPer1kOps <= 0 {
				t.Fatalf("%s: a repeat's server_cpu_ms_per_1k_ops %v, want > 0", s.Strategy, x.ServerCPUMSPer1kOps)
			}
			ops += x.Ops
			cpu += x.ServerCPUMSPer1kOps * float64(x.Ops) / 1000
		}
		// No warm-up: each repeat's cost window is its measured window.
		if ops != s.Raw.CostOps || math.Abs(cpu-c.ServerCPUMS) > 1e-6*c.ServerCPUMS {
			t.Fatalf("%s: the repeats' %d ops and %v ms, want the row's %d and %v", s.Strategy, ops, cpu, s.Raw.CostOps, c.ServerCPUMS)
		}
		t.Logf("%s: %s %.0f ms, servers %.1f ms over %d ops: %.1f ms per 1k ops", s.Strategy, server.Servers, server.CPUMS, c.ServerCPUMS, s.Raw.CostOps, c.ServerCPUMSPer1kOps)
	}
}
