package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies/locktest"
)

// inMain is set in the environment while a test calls lockbench.Main. A
// process that starts with it set was re-executed from inside Main: Main
// must never do that to a test binary (it re-executes only for the
// process's own command line, and a test's os.Args are -test.* flags).
const inMain = "CUSTOM_LOCK_TEST_IN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(inMain) != "" {
		fmt.Fprintln(os.Stderr, "lockbench.Main re-executed the test binary")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The custom lock passes lockbench's conformance suite on both drivers,
// token reporting included.
func TestConformance(t *testing.T) {
	locktest.Suite{RequireTokens: true}.Run(t, "custom")
}

// main runs lockbench's CLI in-process: list shows the custom strategy,
// and a 1 s run of it writes a result with one scenario per driver, each
// of strategy custom with no violation. The lease is 2 s: the default
// (3 x the 1 ms work, at least 100 ms) is shorter than the stalls of a
// loaded machine, which the oracle would rightly count.
func TestCLIInProcess(t *testing.T) {
	t.Setenv(inMain, "1")
	code, out := mainOutput(t, "list")
	if code != 0 || !strings.Contains(out, "\n  custom ") {
		t.Fatalf("list exited %d; its strategies do not include custom:\n%s", code, out)
	}
	path := filepath.Join(t.TempDir(), "custom.json")
	if code := lockbench.Main([]string{"run", "--strategy", "custom", "--duration", "1s", "--ttl", "2s", "--out", path}); code != 0 {
		t.Fatalf("run exited %d, want 0", code)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scenarios []struct {
			Strategy, Driver string
			Ops              int64
			Violations       map[string]int64
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, s := range res.Scenarios {
		seen = append(seen, s.Driver)
		if s.Strategy != "custom" || s.Ops == 0 {
			t.Errorf("scenario %s/%s: %d ops; want strategy custom with ops > 0", s.Strategy, s.Driver, s.Ops)
		}
		for k, v := range s.Violations {
			if v != 0 {
				t.Errorf("%s/%s: %s %d, want 0", s.Strategy, s.Driver, k, v)
			}
		}
	}
	if want := drivers.Names(); !slices.Equal(seen, want) {
		t.Fatalf("scenarios on drivers %v, want one per driver %v", seen, want)
	}
}

// mainOutput runs lockbench.Main with args and returns its exit code and
// what it wrote to standard output.
func mainOutput(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	code := lockbench.Main(args)
	os.Stdout = stdout
	w.Close()
	return code, <-done
}

// docs/custom-lock.md shows lock.go's code, from its init function on,
// as it is.
func TestDocShowsTheCode(t *testing.T) {
	src, err := os.ReadFile("lock.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/custom-lock.md")
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(src), "\nfunc init() {")
	if !ok {
		t.Fatal("lock.go has no init function")
	}
	if code = "func init() {" + code; !strings.Contains(string(doc), code) {
		t.Fatalf("docs/custom-lock.md does not show lock.go's code from func init() on:\n%s", code)
	}
}
