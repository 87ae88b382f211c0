package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

func TestParseClientList(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []int
	}{
		{"1,10,100", []int{1, 10, 100}},
		{" 1 , 4 ", []int{1, 4}},
		{"1..10000", []int{1, 10, 100, 1000, 10000}},
		{"1..500", []int{1, 10, 100, 500}},
		{"1..64x2", []int{1, 2, 4, 8, 16, 32, 64}},
		{"1..100x3", []int{1, 3, 9, 27, 81, 100}},
		{"10..40+10", []int{10, 20, 30, 40}},
		{"2..3x9223372036854775807", []int{2, 3}}, // a step past int64 ends the range
		{"2..5+9223372036854775807", []int{2, 5}},
		{"1,5..20+5,100..1000", []int{1, 5, 10, 15, 20, 100, 1000}},
		{"1,20000", []int{1, 20000}},
	} {
		got, err := parseClientList(c.spec)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("parseClientList(%q) = %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
	for _, c := range []struct{ spec, want string }{
		{"", "--clients is empty"},
		{" , ", "--clients is empty"},
		{"100", "is one count; a sweep needs two or more"},
		{"0,10", "client counts must be from 1 to 100000, got 0"},
		{"-5,10", "client counts must be from 1 to 100000, got -5"},
		{"1,100001", "got 100001"},
		{"10,1", "is not ascending (1 after 10)"},
		{"1,10,10", "has 10 twice"},
		{"1,ten", `"ten" is not a whole number`},
		{"+1,10", `"+1" is not a whole number`},
		{"10..1", "needs A < B, got 10..1"},
		{"5..5", "needs A < B"},
		{"1..100x1", "the factor after x must be a whole number >= 2"},
		{"1..100x", "the factor after x must be a whole number >= 2"},
		{"1..100+0", "the step after + must be a whole number >= 1"},
		{"1..1000+1", "more than 100 counts"},
		{"1..", `"" is not a whole number`},
		{"1..10,5..50+5", "is not ascending (5 after 10)"},
	} {
		got, err := parseClientList(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseClientList(%q) = %v, %v; want an error with %q", c.spec, got, err, c.want)
		}
	}
}

// Bad --clients lists and flags sweep refuses: exit 2, nothing written.
func TestSweepUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "x.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", ""}, "--clients is empty"},
		{[]string{"--clients", "0,10"}, "client counts must be from 1 to 100000, got 0"},
		{[]string{"--clients", "100,10"}, "not ascending"},
		{[]string{"--clients", "1,1"}, "has 1 twice"},
		{[]string{"--clients", "50"}, "a sweep needs two or more"},
		{[]string{"--clients", "1,10", "--rate", "100", "--max-clients", "5"}, "--max-clients does not go with sweep"},
		{[]string{"--clients", "1,10", "--strategy", "nope"}, "nope"},
		{[]string{"--clients", "1,10", "--duration", "0s"}, "--duration must be > 0"},
	} {
		r := lockbench(t, append([]string{"sweep", "--driver", "rueidis", "--out", out}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("sweep %v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("sweep %v wrote %s", c.args, out)
		}
	}
	// A scenario file's clients may be a YAML list; a bad one is exit 2.
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("clients: [1, 10]\nstrategy: nope\n"), 0o644)
	if r := lockbench(t, "sweep", "-f", good, "--out", out); r.code != exitUsage || !strings.Contains(r.stderr, "nope") || strings.Contains(r.stderr, "clients") {
		t.Errorf("sweep -f with a clients list: exit %d, stderr %q; want 2 on the strategy alone", r.code, r.stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("clients: [10, 1]\n"), 0o644)
	if r := lockbench(t, "sweep", "-f", bad, "--out", out); r.code != exitUsage || !strings.Contains(r.stderr, "not ascending") {
		t.Errorf("sweep -f with clients [10, 1]: exit %d, stderr %q; want 2, not ascending", r.code, r.stderr)
	}
}

// A sweep on a real redis-server writes one result file with one scenario
// per matrix cell and client count, in order, meta.sweep naming the counts;
// it prints the sweep table; report draws sweep.png and sweep.svg from it.
func TestSweepWritesOneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.json")
	r := lockbench(t, "sweep", "-q", "--strategy", "atomic", "--retry", "spin,fixed", "--workload", "lock-cycle", "--keys", "1",
		"--work", "1ms", "--ttl", "2s", "--clients", "1,4", "--duration", "1s", "--driver", "rueidis", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if run.Meta.Sweep == nil || run.Meta.Sweep.Param != "clients" || run.Meta.Sweep.Spec != "1,4" || !slices.Equal(run.Meta.Sweep.Clients, []int{1, 4}) {
		t.Fatalf("meta.sweep = %+v, want clients 1,4", run.Meta.Sweep)
	}
	var got []string
	for _, s := range run.Scenarios {
		got = append(got, s.Name()+"@"+strings.Repeat("|", s.Clients))
		if s.Ops == 0 || s.Violations.Total() != 0 {
			t.Errorf("%s at %d clients: %d ops, %d violations; want ops and no violation", s.Name(), s.Clients, s.Ops, s.Violations.Total())
		}
		if !s.HasCeiling() || s.Efficiency <= 0 {
			t.Errorf("%s at %d clients: no ceiling with 1 ms of work (ceiling %v)", s.Name(), s.Clients, s.CeilingOpsPerSec)
		}
	}
	want := []string{"atomic/rueidis/lock-cycle/spin@|", "atomic/rueidis/lock-cycle/spin@||||",
		"atomic/rueidis/lock-cycle/fixed@|", "atomic/rueidis/lock-cycle/fixed@||||"}
	if !slices.Equal(got, want) {
		t.Fatalf("scenarios %v, want %v", got, want)
	}
	for _, w := range []string{"│ clients │ ops/s │ ceiling │ efficiency │ jain │ acquire p99 ms │ p99 ms │ cmds/op │",
		"atomic/rueidis/lock-cycle/spin: ", "atomic/rueidis/lock-cycle/fixed: ", "results written to " + out} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "│ atomic   │ rueidis │ lock-cycle │"); n != 4 {
		t.Errorf("the table has %d scenario rows, want 4:\n%s", n, r.stdout)
	}

	rep := filepath.Join(dir, "rep")
	rr := lockbench(t, "report", out, "-o", rep)
	if rr.code != 0 || !strings.Contains(rr.stdout, "4 charts (PNG and SVG) and index.html written to "+rep) /* timeline: not drawn for 1 s */ {
		t.Fatalf("report: exit %d\n%s%s", rr.code, rr.stdout, rr.stderr)
	}
	f, err := os.Open(filepath.Join(rep, "sweep.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("sweep.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1296 || b.Dy() != 768 {
		t.Fatalf("sweep.png is %v, want 1296x768", b)
	}
	svg, err := os.ReadFile(filepath.Join(rep, "sweep.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("sweep.svg is not XML: %v", err)
	}
	for _, w := range []string{"clients (log scale)", "Efficiency", "Jain", "Acquire wait p99", "Operation latency p99", "commands per operation",
		"atomic/rueidis/lock-cycle/spin", "atomic/rueidis/lock-cycle/fixed"} {
		if !bytes.Contains(svg, []byte(w)) {
			t.Errorf("sweep.svg lacks %q", w)
		}
	}
	html, _ := os.ReadFile(filepath.Join(rep, "index.html"))
	if !bytes.Contains(html, []byte(`<a href="sweep.svg"><img src="sweep.png"`)) {
		t.Error("index.html does not show sweep.png")
	}
}

// No critical section (--work 0s, one client): the mean hold is under
// report.CeilingMinHoldMicros, so there is no ceiling: '-' in the table,
// ceiling_ops_per_sec and efficiency absent from the JSON, a threshold on
// efficiency fails as not measured (exit 3).
func TestZeroWorkHasNoCeiling(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "zero.json")
	r := lockbench(t, "run", "-q", "--strategy", "atomic", "--retry", "spin", "--workload", "lock-cycle", "--keys", "1",
		"--work", "0s", "--ttl", "2s", "--clients", "1", "--duration", "1s", "--driver", "rueidis",
		"--fail-on", "efficiency>=0.5", "--out", out)
	if r.code != exitThresholds {
		t.Fatalf("exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios  []map[string]any         `json:"scenarios"`
		Thresholds []report.ThresholdResult `json:"thresholds"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(doc.Scenarios))
	}
	s := doc.Scenarios[0]
	for _, k := range []string{"ceiling_ops_per_sec", "efficiency"} {
		if v, ok := s[k]; ok {
			t.Errorf("the JSON has %s = %v; want it absent (hold_ms %v)", k, v, s["hold_ms"])
		}
	}
	if s["ops"].(float64) == 0 {
		t.Fatal("nothing measured")
	}
	want := report.ThresholdResult{Expr: "efficiency>=0.5", Scenario: "atomic/rueidis/lock-cycle/spin", Clients: 1, Metric: "efficiency",
		Op: ">=", Value: 0.5, NotMeasured: true}
	if len(doc.Thresholds) != 1 || doc.Thresholds[0] != want {
		t.Fatalf("thresholds %+v, want [%+v]", doc.Thresholds, want)
	}
	// The table's ceiling cell is '-': the row's 7th cell.
	var row []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "│ atomic ") {
			row = strings.Split(l, "│")
		}
	}
	if len(row) < 8 || strings.TrimSpace(row[7]) != "-" {
		t.Errorf("ceiling cell %q, want -:\n%s", row, r.stdout)
	}
	if !strings.Contains(r.stdout, "│ efficiency>=0.5 │ atomic/rueidis/lock-cycle/spin │ not measured │ FAIL   │") {
		t.Errorf("the thresholds table does not say not measured:\n%s", r.stdout)
	}
}

// csc runs on rueidis only: a sweep with both drivers skips the goredis
// cells at every count, with a message, as run does, instead of refusing
// the matrix.
func TestSweepSkipsCSCOnGoredis(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "csc.json")
	r := lockbench(t, "sweep", "-q", "--strategy", "atomic", "--retry", "csc", "--workload", "lock-cycle", "--keys", "1",
		"--work", "1ms", "--ttl", "2s", "--clients", "1,2", "--duration", "1s", "--driver", "goredis,rueidis", "--out", out)
	if r.code != 0 || strings.Count(r.stderr, "retry csc runs on the rueidis driver only, not on goredis") != 2 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range run.Scenarios {
		got = append(got, fmt.Sprintf("%s@%d", s.Name(), s.Clients))
	}
	if want := []string{"atomic/rueidis/lock-cycle/csc@1", "atomic/rueidis/lock-cycle/csc@2"}; !slices.Equal(got, want) || len(run.Skipped) != 2 {
		t.Fatalf("scenarios %v (skipped %v), want %v and 2 skipped", got, run.Skipped, want)
	}
}
