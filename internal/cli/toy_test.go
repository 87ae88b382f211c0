package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
)

// toyLevel is the value of --toy-level the toy strategy was last built with.
var toyLevel atomic.Int64

// The toy strategy is what a contributor adds: one registration with an
// option of its own, from outside the strategies package. Its factory
// records the option's value and takes the atomic lock.
func init() {
	strategies.Register("toy", strategies.Info{
		Desc: "test only: the atomic lock, built with an option of its own",
		Params: []registry.Param{{Name: "toy-level", Doc: "how toy it is", Default: 3,
			Check: registry.Between(1, 10)}},
	}, func(c strategies.Config) (strategies.Locker, error) {
		toyLevel.Store(int64(c.Params.Int("toy-level")))
		return strategies.New("atomic", strategies.Config{Nodes: c.Nodes, TTL: c.TTL})
	})
}

// inProcess runs lockbench's command line in this process (the toy
// strategy exists only in the test binary) and returns what it wrote and
// its error.
func inProcess(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetContext(context.Background())
	_, err := root.ExecuteC()
	return out.String(), err
}

// A strategy registered with its own option gets a flag (in run --help),
// a scenario-file field and a key in the result's params, and the value
// given reaches its factory.
func TestToyStrategyOption(t *testing.T) {
	help, err := inProcess(t, "run", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help, "--toy-level int") || !strings.Contains(help, "toy: how toy it is (default 3)") {
		t.Fatalf("run --help lacks --toy-level:\n%s", help)
	}
	list, _ := inProcess(t, "list")
	if !strings.Contains(list, "--toy-level int") {
		t.Fatalf("list lacks --toy-level:\n%s", list)
	}

	dir := t.TempDir()
	common := []string{"run", "-q", "--strategy", "toy", "--driver", "rueidis", "--stock", "20", "--clients", "2",
		"--duration", "5s", "--work", "0s"}
	out := filepath.Join(dir, "flag.json")
	if _, err := inProcess(t, append(common, "--toy-level", "7", "--out", out)...); err != nil {
		t.Fatal(err)
	}
	if got := toyLevel.Load(); got != 7 {
		t.Fatalf("the factory saw toy-level %d, want 7", got)
	}
	if got := resultParam(t, out, "toy_level"); got != "7" {
		t.Fatalf("result params toy_level = %q, want 7", got)
	}

	file := filepath.Join(dir, "toy.yaml")
	if err := os.WriteFile(file, []byte("strategy: toy\ntoy-level: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "file.json")
	if _, err := inProcess(t, append(common, "-f", file, "--out", out)...); err != nil {
		t.Fatal(err)
	}
	if got := toyLevel.Load(); got != 9 {
		t.Fatalf("the factory saw toy-level %d from the scenario file, want 9", got)
	}

	// Given after its name in --strategy (or the scenario file's strategy
	// list), the value is toy's alone (TestStrategyScopedParams: it
	// overrides the flag, which stays the other strategies' default).
	unnamed := []string{"run", "-q", "--driver", "rueidis", "--stock", "20", "--clients", "2", "--duration", "5s", "--work", "0s"}
	out = filepath.Join(dir, "scoped.json")
	if _, err := inProcess(t, append(unnamed, "--strategy", "toy:toy-level=8", "--out", out)...); err != nil {
		t.Fatal(err)
	}
	if got := toyLevel.Load(); got != 8 {
		t.Fatalf("the factory saw toy-level %d from --strategy toy:toy-level=8, want 8", got)
	}
	if got := resultParam(t, out, "toy_level"); got != "8" {
		t.Fatalf("result params toy_level = %q, want 8", got)
	}
	if err := os.WriteFile(file, []byte("strategy: [toy:toy-level=6]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "scopedfile.json")
	if _, err := inProcess(t, append(unnamed, "-f", file, "--out", out)...); err != nil {
		t.Fatal(err)
	}
	if got := toyLevel.Load(); got != 6 {
		t.Fatalf("the factory saw toy-level %d from the scenario file's toy:toy-level=6, want 6", got)
	}

	// Its declared check refuses a bad value as a usage error, naming the flag.
	_, err = inProcess(t, append(common, "--toy-level", "11", "--out", filepath.Join(dir, "bad.json"))...)
	var ue usageError
	if err == nil || !strings.Contains(err.Error(), "--toy-level 11: must be from 1 to 10, got 11") || !errors.As(err, &ue) {
		t.Fatalf("--toy-level 11: %v, want a usage error naming the flag", err)
	}
	// An option the selected strategies and workloads do not take is refused.
	_, err = inProcess(t, "run", "--toy-level", "5", "--out", filepath.Join(dir, "bad2.json"))
	if err == nil || !strings.Contains(err.Error(), "--toy-level goes with toy") {
		t.Fatalf("--toy-level without toy: %v", err)
	}
}

func resultParam(t *testing.T, path, key string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run report.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 1 {
		t.Fatalf("%d scenarios in %s, want 1", len(run.Scenarios), path)
	}
	return run.Scenarios[0].Params[key]
}
