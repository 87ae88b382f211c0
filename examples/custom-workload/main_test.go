package main

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/drivers"
)

// build compiles this example into a temporary directory and returns the
// binary's path: the program a user of the seam would build.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "custom-workload")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// run runs the built binary with args and returns its exit code and
// output (stdout and stderr).
func run(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

type scenario struct {
	Strategy, Driver string
	Ops              int64
	Figures          map[string]int64
	Violations       map[string]int64
	Params           map[string]string
}

func scenarios(t *testing.T, path string) []scenario {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Scenarios []scenario }
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res.Scenarios
}

// The built program lists the workload with its parameters, and runs it
// against the redis-server it starts: under atomic with a 5 s lease the
// 2 shows of 40 seats (given after the workload's name) are booked out,
// exactly 80 bookings acknowledged, counted and measured, with no
// violation, on each driver. Under naive with a 5 ms lease and 20 ms of
// work, holders overlap and bookings are lost, and the lost ones are
// exactly the acknowledged ones the count lacks. A bad parameter is bad
// input (exit 2).
func TestBuildAndRun(t *testing.T) {
	bin := build(t)
	code, out := run(t, bin, "list")
	if code != 0 || !strings.Contains(out, "\n  seats ") || !strings.Contains(out, "--seats int") || !strings.Contains(out, "--shows int") {
		t.Fatalf("list exited %d; its workloads do not include seats with --seats and --shows:\n%s", code, out)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "atomic.json")
	code, out = run(t, bin, "run", "-q", "--workload", "seats:seats=40,shows=2", "--strategy", "atomic", "--ttl", "5s",
		"--clients", "8", "--duration", "60s", "--out", path)
	if code != 0 {
		t.Fatalf("run exited %d, want 0:\n%s", code, out)
	}
	var seen []string
	for _, s := range scenarios(t, path) {
		seen = append(seen, s.Driver)
		name := s.Strategy + "/" + s.Driver
		if s.Ops != 80 || s.Figures["booked"] != 80 || s.Figures["acked_bookings"] != 80 {
			t.Errorf("%s: ops %d, booked %d, acked_bookings %d; want 80 each", name, s.Ops, s.Figures["booked"], s.Figures["acked_bookings"])
		}
		for k, v := range s.Violations {
			if v != 0 {
				t.Errorf("%s: %s %d, want 0", name, k, v)
			}
		}
		if s.Params["seats"] != "40" || s.Params["shows"] != "2" {
			t.Errorf("%s: params seats %q, shows %q; want 40 and 2", name, s.Params["seats"], s.Params["shows"])
		}
	}
	if want := drivers.Names(); !slices.Equal(seen, want) {
		t.Fatalf("scenarios on drivers %v, want one per driver %v", seen, want)
	}

	path = filepath.Join(dir, "naive.json")
	code, out = run(t, bin, "run", "-q", "--workload", "seats", "--seats", "30", "--strategy", "naive", "--driver", "rueidis",
		"--ttl", "5ms", "--work", "20ms", "--retry", "fixed:interval=1ms", "--clients", "8", "--duration", "3s", "--out", path)
	if code != 0 {
		t.Fatalf("naive run exited %d, want 0:\n%s", code, out)
	}
	s := scenarios(t, path)[0]
	booked, acked := s.Figures["booked"], s.Figures["acked_bookings"]
	if s.Violations["overlap"] == 0 || s.Violations["lost_updates"] == 0 || s.Violations["lost_updates"] != acked-booked {
		t.Errorf("naive with a 5 ms lease: overlap %d, lost_updates %d, acked %d, booked %d; want overlap and lost updates > 0, lost = acked - booked",
			s.Violations["overlap"], s.Violations["lost_updates"], acked, booked)
	}

	code, out = run(t, bin, "run", "--workload", "seats:seats=0,shows=x", "--out", filepath.Join(dir, "bad.json"))
	for _, want := range []string{"workload seats: seats=0: must be at least 1, got 0", `workload seats: shows=x: "x" is not a whole number`} {
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("seats:seats=0,shows=x: exit %d, want 2 and %q:\n%s", code, want, out)
		}
	}
}

// The example uses lockbench's public packages only, as a program outside
// the module must: no import path with an internal element.
func TestPublicAPIOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			n++
			if slices.Contains(strings.Split(p, "/"), "internal") {
				t.Errorf("%s imports %s, an internal package", f, p)
			}
		}
	}
	if n == 0 {
		t.Fatal("no imports found")
	}
}

// docs/custom-workload.md shows workload.go's code, from its init function
// on, as it is.
func TestDocShowsTheCode(t *testing.T) {
	src, err := os.ReadFile("workload.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/custom-workload.md")
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(src), "\nfunc init() {")
	if !ok {
		t.Fatal("workload.go has no init function")
	}
	if code = "func init() {" + code; !strings.Contains(string(doc), code) {
		t.Fatalf("docs/custom-workload.md does not show workload.go's code from func init() on:\n%s", code)
	}
}
