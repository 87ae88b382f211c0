package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/history"
)

// writeHistory writes a one-scenario history of process proc on host h
// whose sections ([start, end) ns, process clock = CLOCK_MONOTONIC) hold
// lock "L".
func writeHistory(t *testing.T, path, proc, key string, secs ...[2]int64) {
	t.Helper()
	s := &history.Scenario{Key: key, Name: "n", Measured: true}
	for _, x := range secs {
		s.Entries = append(s.Entries, history.Entry{Key: "L", Enter: x[0], Leave: x[1]})
	}
	f := &history.File{Header: history.Header{Format: history.Format, Version: history.Version, Host: "h", BootID: "b", Proc: proc}, Scenarios: []*history.Scenario{s}}
	if err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

func TestCrossCheck(t *testing.T) {
	dir := t.TempDir()
	sc := Scenario{Strategy: "naive", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 1, Raw: &Raw{WindowS: 1, Runs: 1}}
	key := sc.Key()
	if err := os.Mkdir(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeHistory(t, filepath.Join(dir, "a.history.jsonl.gz"), "A", key, [2]int64{0, 100}, [2]int64{200, 300})
	writeHistory(t, filepath.Join(dir, "b", "b.history.jsonl.gz"), "B", key, [2]int64{50, 150}, [2]int64{300, 400}, [2]int64{210, 220})
	a, b := sc, sc
	a.HistoryFile, b.HistoryFile = "a.history.jsonl.gz", "b.history.jsonl.gz" // each relative to its result file
	runs := []*Run{{Schema: Schema, Scenarios: []Scenario{a}}, {Schema: Schema, Scenarios: []Scenario{b}}}
	dirs := []string{dir, filepath.Join(dir, "b")}
	m, err := Merge(runs)
	if err != nil {
		t.Fatal(err)
	}
	if err := CrossCheck(m, runs, dirs); err != nil {
		t.Fatal(err)
	}
	s := m.Scenarios[0]
	v := s.Violations
	// [0,100) x [50,150) and [200,300) x [210,220) overlap; [200,300) and
	// [300,400) only touch.
	if v.CrossOverlap == nil || *v.CrossOverlap != 2 || v.CrossOverlapPossible == nil || *v.CrossOverlapPossible != 0 {
		t.Fatalf("violations %+v", v)
	}
	if s.CrossCheck != "2 histories, same host: exact" || s.HistoryFile != "" {
		t.Fatalf("cross_check %q, history_file %q", s.CrossCheck, s.HistoryFile)
	}
	if got := otherCell(v, nil, 0, 0); got != "cross-proc 2" {
		t.Fatalf("table cell %q", got)
	}
	if runs[0].Scenarios[0].Violations.CrossOverlap != nil {
		t.Fatal("CrossCheck modified its input")
	}

	// A missing history file is an error naming it.
	runs[1].Scenarios[0].HistoryFile = "gone.history.jsonl.gz"
	m, _ = Merge(runs)
	if err := CrossCheck(m, runs, dirs); err == nil || !strings.Contains(err.Error(), "gone.history.jsonl.gz") {
		t.Fatalf("missing history: err = %v", err)
	}
	// A history in one file and not in the other cannot be checked.
	runs[1].Scenarios[0].HistoryFile = ""
	m, _ = Merge(runs)
	if err := CrossCheck(m, runs, dirs); err == nil || !strings.Contains(err.Error(), "--history") {
		t.Fatalf("half the histories: err = %v", err)
	}
	// Files without histories are merged as before.
	runs[0].Scenarios[0].HistoryFile = ""
	m, _ = Merge(runs)
	if err := CrossCheck(m, runs, dirs); err != nil || m.Scenarios[0].Violations.CrossOverlap != nil || m.Scenarios[0].CrossCheck != "" {
		t.Fatalf("no histories: err %v, %+v", err, m.Scenarios[0].Violations)
	}
}
