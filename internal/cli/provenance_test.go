package cli

import (
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// depsOf keeps the drivers and lock libraries only, and says when one is
// replaced.
func TestDepsOf(t *testing.T) {
	got := depsOf([]*debug.Module{
		{Path: "github.com/redis/go-redis/v9", Version: "v9.23.0"},
		{Path: "github.com/redis/rueidis", Version: "v1.0.79", Replace: &debug.Module{Path: "../rueidis"}},
		{Path: "github.com/go-redsync/redsync/v4", Version: "v4.18.1", Replace: &debug.Module{Path: "example.com/fork/redsync", Version: "v4.18.2"}},
		{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
	})
	want := map[string]string{
		"github.com/redis/go-redis/v9":     "v9.23.0",
		"github.com/redis/rueidis":         "v1.0.79 => ../rueidis",
		"github.com/go-redsync/redsync/v4": "v4.18.1 => example.com/fork/redsync v4.18.2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("depsOf: %v, want %v", got, want)
	}
	if got := depsOf(nil); got != nil {
		t.Errorf("no modules (a test binary): %v, want nil", got)
	}
}

func TestDistinctVersions(t *testing.T) {
	got := distinctVersions([]string{"7.10.0", "7.0.15", "7.2.4", "7.0.15", "6.2.14"})
	if want := []string{"6.2.14", "7.0.15", "7.2.4", "7.10.0"}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// A real run records the build that produced it: lockbench's version,
// the drivers' and lock libraries' module versions (the binary is built
// with go build, so its build info lists them) and the Redis version of
// every server.
func TestRunRecordsProvenance(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	r := lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "goredis", "--workload", "lock-cycle", "--keys", "10",
		"--work", "0s", "--clients", "2", "--retry", "none", "--duration", "200ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m := run.Meta
	if m.Version == "" {
		t.Error("meta.version is empty")
	}
	for _, mod := range []string{"github.com/redis/go-redis/v9", "github.com/redis/rueidis", "github.com/go-redsync/redsync/v4", "github.com/bsm/redislock"} {
		if !strings.HasPrefix(m.Deps[mod], "v") {
			t.Errorf("meta.deps[%s] = %q, want its version", mod, m.Deps[mod])
		}
	}
	if _, ok := m.Deps["github.com/spf13/cobra"]; ok {
		t.Errorf("meta.deps has cobra, not a driver or lock library: %v", m.Deps)
	}
	if m.RedisVersion == "" || !slices.Equal(m.RedisVersions, []string{m.RedisVersion}) {
		t.Errorf("redis_version %q, redis_versions %v: want the one server's version in both", m.RedisVersion, m.RedisVersions)
	}
}

// compare of two files from different builds shows where each came from
// and warns, naming every difference; two files of one build do not.
func TestCompareWarnsOnDifferentBuilds(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, goredis string) string {
		path := filepath.Join(dir, name)
		r := &report.Run{Schema: report.Schema,
			Meta: report.Meta{Version: "(devel)", GitCommit: "f5e5dda", GoVersion: "go1.26.8", RedisVersion: "7.0.15",
				Deps: map[string]string{"github.com/redis/go-redis/v9": goredis, "github.com/redis/rueidis": "v1.0.79"}},
			Scenarios: []report.Scenario{{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: "fixed", Clients: 1,
				OpsPerSec: 1000, Params: map[string]string{"token": "random"}}}}
		if err := report.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := mk("a.json", "v9.23.0"), mk("b.json", "v9.24.0")
	r := lockbench(t, "compare", a, b)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"base: lockbench (devel) commit f5e5dda go1.26.8, redis 7.0.15, go-redis v9.23.0, rueidis v1.0.79\n",
		"new:  lockbench (devel) commit f5e5dda go1.26.8, redis 7.0.15, go-redis v9.24.0, rueidis v1.0.79\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if want := "lockbench: warning: the two files were produced by different builds: go-redis v9.23.0 vs v9.24.0\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	// benchstat's format on stdout stays clean: the warning goes to stderr.
	r = lockbench(t, "compare", a, b, "--format", "benchstat")
	if r.code != 0 || strings.Contains(r.stdout, "base: lockbench") || !strings.Contains(r.stderr, "different builds: go-redis") {
		t.Errorf("benchstat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = lockbench(t, "compare", a, a)
	if r.code != 0 || strings.Contains(r.stdout, "base: lockbench") || strings.Contains(r.stderr, "different builds") {
		t.Errorf("one build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
