package report

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sample() *Run {
	return &Run{
		Schema: Schema,
		Meta:   Meta{StartedAt: "2026-11-29T00:00:00Z", GitCommit: "abc", GoVersion: "go1.26.8", RedisVersion: "7.0.15", GOMAXPROCS: 2, Args: []string{"run"}, RunID: "r1", Topology: "standalone"},
		Scenarios: []Scenario{
			{
				Strategy: "naive", Driver: "goredis", Workload: "flash-sale", Retry: "fixed:interval=1ms", Clients: 50,
				Params: map[string]string{"ttl": "5ms"}, DurationS: 2, Ops: 300, OpsPerSec: 150, CeilingOpsPerSec: 2325, Fairness: Fairness{JainIndex: 0.41},
				LatencyMS:  metrics.Latency{P50: 21.5, P90: 40, P99: 1115.2, P999: 1458, Max: 1493, Mean: 30, Count: 300},
				Counters:   Counters{Attempts: 900, Timeouts: 2, Failures: 1, Errors: 3, ErrorsByKind: map[string]int64{"timeout": 1, "readonly": 2}},
				Violations: Violations{Oversell: 604, Overlap: 704, LostUpdates: 604, StuckLocks: 1, ForeignReleases: 700},
				Figures:    map[string]int64{"sold": 704, "final_stock": 0}, StopReason: "done",
			},
			{
				Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "backoff:cap=3s", Clients: 50,
				DurationS: 1, Ops: 1000, OpsPerSec: 999.6,
				LatencyMS:  metrics.Latency{P50: 1.55, P99: 4.09, P999: 12.1, Max: 16.1},
				Counters:   Counters{ErrorsByKind: map[string]int64{}},
				StopReason: "done",
			},
		},
	}
}

func TestTableGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Table(&buf, sample().Scenarios); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("table differs from %s:\n%s", golden, buf.String())
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	in := sample()
	if err := WriteFile(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the run:\n%+v\n%+v", in, out)
	}
	// Nothing but the result file is left in the directory (no temp file).
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("%d files in the result dir, want 1", len(entries))
	}
}

func TestReadFileRejects(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":`), 0o644)
	if _, err := ReadFile(bad); err == nil {
		t.Error("truncated JSON accepted")
	}
	v2 := filepath.Join(dir, "v2.json")
	os.WriteFile(v2, []byte(`{"schema":2}`), 0o644)
	if _, err := ReadFile(v2); err == nil {
		t.Error("schema 2 accepted")
	}
}

// acquire_p99_per_turn is the p99 wait over clients / ceiling: 200
// clients at a ceiling of 800 ops/s take 0.25 s to hold the lock once
// each, so a p99 wait of 300 ms is 1.2 turns; with no ceiling it is not
// measured.
func TestAcquireP99PerTurn(t *testing.T) {
	m, ok := LookupMetric("acquire_p99_per_turn")
	if !ok {
		t.Fatal("no metric acquire_p99_per_turn")
	}
	s := Scenario{Clients: 200, CeilingOpsPerSec: 800, Efficiency: 0.9}
	s.AcquireMS.P99 = 300
	if got := m.Of(s); math.Abs(got-1.2) > 1e-9 || !m.Known(s) {
		t.Errorf("acquire_p99_per_turn = %v (known %v), want 1.2", got, m.Known(s))
	}
	if s.CeilingOpsPerSec = 0; m.Known(s) {
		t.Error("acquire_p99_per_turn known without a ceiling")
	}
}

// Two rows of one strategy, driver and workload whose retry policies share
// a name show their whole specs in the retry column; a name with one spec
// (and the same name under another strategy) stays short.
func TestTableRetrySpecs(t *testing.T) {
	mk := func(strategy, retry string) Scenario {
		return Scenario{Strategy: strategy, Driver: "rueidis", Workload: "lock-cycle", Retry: retry, Clients: 10}
	}
	scs := []Scenario{
		mk("atomic", "fixed:interval=10ms"), mk("atomic", "fixed:interval=50ms"),
		mk("atomic", "backoff:cap=20ms"), mk("watchdog", "fixed:interval=10ms"),
	}
	var buf bytes.Buffer
	if err := TableOf(&buf, scs, TableColumns()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	cells := func(row int) []string {
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "│") && !strings.Contains(l, "strategy") {
				rows = append(rows, l)
			}
		}
		if row >= len(rows) {
			t.Fatalf("row %d of %d:\n%s", row, len(rows), out)
		}
		var c []string
		for _, f := range strings.Split(rows[row], "│") {
			if f = strings.TrimSpace(f); f != "" {
				c = append(c, f)
			}
		}
		return c
	}
	for i, want := range []string{"fixed:interval=10ms", "fixed:interval=50ms", "backoff", "fixed"} {
		if got := cells(i)[3]; got != want {
			t.Errorf("row %d retry %q, want %q\n%s", i, got, want, out)
		}
	}
}

// A sweep of two specs of one policy keeps two cells: two series, each
// with its client counts, and a peak line each under the whole spec.
func TestSweepSeriesRetrySpecs(t *testing.T) {
	var scs []Scenario
	for _, r := range []string{"fixed:interval=10ms", "fixed:interval=50ms"} {
		for _, c := range []int{10, 200} {
			scs = append(scs, Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: r, Clients: c, OpsPerSec: float64(1000 / c)})
		}
	}
	names, cells := SweepSeries(scs)
	want := []string{"atomic/rueidis/lock-cycle/fixed:interval=10ms", "atomic/rueidis/lock-cycle/fixed:interval=50ms"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("cells %q, want %q", names, want)
	}
	for _, n := range names {
		if len(cells[n]) != 2 {
			t.Errorf("cell %s: %d scenarios, want 2", n, len(cells[n]))
		}
	}
	var buf bytes.Buffer
	if err := SweepTable(&buf, scs); err != nil {
		t.Fatal(err)
	}
	for _, n := range want {
		if !strings.Contains(buf.String(), n+": peak ") {
			t.Errorf("no peak line for %s:\n%s", n, buf.String())
		}
	}
}
