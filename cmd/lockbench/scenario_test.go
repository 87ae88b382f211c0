package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// fileList reads a list field of a scenario file as the run would: a YAML
// list or a comma string, else the flag's default.
func fileList(t *testing.T, doc map[string]any, name string) []string {
	t.Helper()
	switch v := doc[name].(type) {
	case nil:
		return splitList(newRunCmd().Flags().Lookup(name).DefValue)
	case string:
		return splitList(v)
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	default:
		t.Fatalf("field %s: %T", name, v)
	}
	return nil
}

// Every example in scenarios/ runs (with a 1 s duration from the command
// line) and exits 0 with exactly the strategy x driver x workload x retry
// scenarios its file lists, on the file's parameters. external-tls.yaml
// runs against a TLS server the test starts, its address and CA given on
// the command line.
func TestScenarioExamples(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "-q", "-f", path, "--duration", "1s", "--out", out}
			if _, ok := doc["addr"]; ok {
				pki, err := topology.NewTLSFiles(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				topo, addr, err := topology.StartTLS(context.Background(), pki, false)
				if err != nil {
					t.Fatal(err)
				}
				defer topo.Stop()
				args = append(args, "--addr", "rediss://:"+topo.Servers[0].Password+"@"+addr, "--tls-ca-file", pki.CA)
			}
			r := lockbench(t, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			run, err := report.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			strats, drvs, wls := fileList(t, doc, "strategy"), fileList(t, doc, "driver"), fileList(t, doc, "workload")
			retries := splitRetry(strings.Join(fileList(t, doc, "retry"), ","))
			for _, wl := range wls {
				for _, st := range strats {
					for range retries {
						for _, d := range drvs {
							want = append(want, st+"/"+d+"/"+wl)
						}
					}
				}
			}
			for _, sc := range run.Scenarios {
				got = append(got, sc.Strategy+"/"+sc.Driver+"/"+sc.Workload)
				if ttl, ok := doc["ttl"].(string); ok && sc.Params["ttl"] != mustDuration(t, ttl).String() {
					t.Errorf("%s: ttl %s, want the file's %s", sc.Strategy, sc.Params["ttl"], ttl)
				}
				if stock, ok := doc["stock"].(int); ok && sc.Params["stock"] != strconv.Itoa(stock) {
					t.Errorf("%s: stock %s, want the file's %d", sc.Strategy, sc.Params["stock"], stock)
				}
				if n, ok := doc["clients"].(int); ok && sc.Clients != n {
					t.Errorf("%s: %d clients, want the file's %d", sc.Strategy, sc.Clients, n)
				}
				if d := sc.Params["duration"]; d != "1s" {
					t.Errorf("%s: duration %s, want the command line's 1s", sc.Strategy, d)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("scenarios %v, want %v", got, want)
			}
			if _, ok := doc["fault"]; ok {
				fs := splitRetry(strings.Join(fileList(t, doc, "fault"), ",")) // as the run reads them
				for _, sc := range run.Scenarios {
					if len(sc.Faults) != len(fs) {
						t.Errorf("%s/%s: %d fault windows, want %d", sc.Strategy, sc.Driver, len(sc.Faults), len(fs))
					}
				}
			}
		})
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Flags on the command line beat the file's fields; fields the command
// line leaves alone come from the file; lists may be comma strings or
// YAML lists.
func TestScenarioFilePrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	body := `# precedence
strategy: naive
driver: "goredis, rueidis"
retry: [fixed:interval=2ms, spin]
clients: 3
stock: 7
ttl: 5s # a loaded machine does not outlast it
quiet: true
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	r := lockbench(t, "run", "-f", path, "--strategy", "atomic", "--stock", "5", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "[1/") {
		t.Errorf("quiet: true in the file did not silence the progress lines:\n%s", r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 4 {
		t.Fatalf("%d scenarios, want 4 (1 strategy x 2 drivers x 2 retry policies)", len(run.Scenarios))
	}
	retries := map[string]int{}
	for _, sc := range run.Scenarios {
		retries[strings.SplitN(sc.Retry, ":", 2)[0]]++
		if sc.Strategy != "atomic" || sc.Ops != 5 || sc.Params["stock"] != "5" || sc.Clients != 3 || sc.Params["ttl"] != "5s" {
			t.Errorf("%s/%s/%s: ops %d, stock %s, %d clients; ttl %s; want atomic (flag), 5 orders of stock 5 (flag), 3 clients and ttl 5s (file)",
				sc.Strategy, sc.Driver, sc.Retry, sc.Ops, sc.Params["stock"], sc.Clients, sc.Params["ttl"])
		}
	}
	if retries["fixed"] != 2 || retries["spin"] != 2 {
		t.Errorf("retry policies %v, want fixed and spin on both drivers", retries)
	}
}

func TestScenarioFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		path string
		want []string
	}{
		{filepath.Join(dir, "missing.yaml"), []string{"scenario file", "missing.yaml", "no such file"}},
		{write("unknown.yaml", "strategy: atomic\ncliens: 4\n"), []string{"unknown.yaml:2", `unknown field "cliens"`, `did you mean "clients"?`}},
		{write("underscore.yaml", "acquire_timeout: 1s\n"), []string{`did you mean "acquire-timeout"?`}},
		{write("type.yaml", "clients: many\nduration: soon\n"), []string{"type.yaml:1: clients", `"many"`, "type.yaml:2: duration", `"soon"`}},
		{write("list.yaml", "stock: [1, 2]\n"), []string{"stock takes one value, not a list"}},
		{write("map.yaml", "ttl: {a: 1}\n"), []string{"ttl: want a value or a list, not a mapping"}},
		{write("twice.yaml", "stock: 1\nstock: 2\n"), []string{"stock is given twice"}},
		{write("null.yaml", "ttl:\n"), []string{"ttl has no value"}},
		{write("top.yaml", "- strategy\n"), []string{"want a mapping"}},
		{write("empty.yaml", "# nothing\n"), []string{"is empty"}},
		{write("syntax.yaml", "strategy: [atomic\n"), []string{"syntax.yaml", "yaml:"}},
		{write("self.yaml", "file: other.yaml\n"), []string{`unknown field "file"`}},
		// The file's values are validated as flags are.
		{write("value.yaml", "strategy: atomc\n"), []string{`did you mean "atomic"`}},
	}
	for _, c := range cases {
		r := lockbench(t, "run", "-f", c.path, "--out", filepath.Join(dir, "r.json"))
		if r.code != exitUsage {
			t.Errorf("%s: exit %d, want 2\n%s", filepath.Base(c.path), r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", filepath.Base(c.path), w, r.stderr)
			}
		}
	}
}
