package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// The CSV keeps its first columns in their order and adds the run
// figures, then one column per parameter: the common ones first, the
// others sorted, a key that is already a column's name prefixed.
func TestCSVParameterColumns(t *testing.T) {
	r := sample()
	r.Scenarios[0].Params = map[string]string{"ttl": "5ms", "work": "20ms", "acquire_timeout": "10s", "duration": "2s",
		"warmup": "0s", "seed": "7", "guard": "none", "token": "random", "stock": "100", "skus": "1", "clients": "odd"}
	r.Scenarios[1].Params = map[string]string{"ttl": "3s", "work": "1ms", "nodes": "5"}
	var b bytes.Buffer
	if err := Write(&b, "csv", r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	old := []string{"strategy", "driver", "workload", "retry", "clients", "loop", "ops", "ops_per_sec", "p50_ms", "p90_ms",
		"p99_ms", "p999_ms", "max_ms", "acquire_p99_ms"}
	for _, k := range ViolationKinds {
		old = append(old, k.Key)
	}
	old = append(old, "errors", "commands_per_op", "jain_index")
	added := []string{"duration_s", "stop_reason", "topology", "offered_rate", "offered", "dropped",
		"ttl", "work", "acquire_timeout", "duration", "warmup", "seed", "guard", "token",
		"param_clients", "nodes", "skus", "stock"}
	if want := append(old, added...); !slices.Equal(rows[0], want) {
		t.Fatalf("header\n%v\nwant\n%v", rows[0], want)
	}
	at := func(row []string, col string) string { return row[slices.Index(rows[0], col)] }
	for _, c := range []struct{ row, col, want string }{
		{"naive", "ttl", "5ms"}, {"naive", "work", "20ms"}, {"naive", "seed", "7"}, {"naive", "stock", "100"},
		{"naive", "param_clients", "odd"}, {"naive", "clients", "50"}, {"naive", "nodes", ""}, {"naive", "stop_reason", "done"},
		{"atomic", "ttl", "3s"}, {"atomic", "work", "1ms"}, {"atomic", "nodes", "5"}, {"atomic", "stock", ""}, {"atomic", "duration_s", "1"},
	} {
		row := rows[1]
		if c.row == "atomic" {
			row = rows[2]
		}
		if got := at(row, c.col); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.row, c.col, got, c.want)
		}
	}
}

// markdown: a header row, the separator, one row per scenario, each
// "|"-delimited with the table's cells; the footnote is not a list item.
func TestMarkdownFormat(t *testing.T) {
	r := sample()
	r.Scenarios[1].ClientCPU.ClientBound = true
	var b bytes.Buffer
	if err := Write(&b, "markdown", r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "| strategy ") || !strings.HasPrefix(lines[1], "|:--") ||
		!strings.HasPrefix(lines[2], "| naive ") || !strings.Contains(lines[3], "| 1000*") {
		t.Fatalf("markdown:\n%s", b.String())
	}
	if n := strings.Count(lines[0], "|"); n != len(TableColumns())+1 {
		t.Errorf("header has %d bars, want %d", n, len(TableColumns())+1)
	}
	if !strings.Contains(b.String(), "\n\n\\* client-bound") {
		t.Errorf("no escaped footnote paragraph:\n%s", b.String())
	}
}

// SelectColumns: all is the full table; keys from the full table and
// the extras, in the order given; unknown keys named with the valid ones.
func TestSelectColumns(t *testing.T) {
	full, extra := TableColumns(), TableExtras()
	if c, err := SelectColumns(full, extra, []string{"all"}); err != nil || len(c) != len(full) {
		t.Fatalf("all: %d columns, %v", len(c), err)
	}
	c, err := SelectColumns(full, extra, []string{"violations", "strategy", " p99"})
	if err != nil || !slices.Equal(ColumnKeys(c), []string{"violations", "strategy", "p99"}) {
		t.Fatalf("%v, %v", ColumnKeys(c), err)
	}
	_, err = SelectColumns(full, extra, []string{"strategy", "nope", "p95"})
	if err == nil || !strings.Contains(err.Error(), `unknown column "nope", "p95" (valid: all, strategy, driver,`) {
		t.Fatalf("unknown: %v", err)
	}
	for _, k := range CompactColumns {
		if _, err := SelectColumns(full, extra, []string{k}); err != nil {
			t.Errorf("compact column %s: %v", k, err)
		}
	}
	for _, k := range SweepCompactColumns {
		if _, err := SelectColumns(SweepColumns(), SweepExtras(), []string{k}); err != nil {
			t.Errorf("sweep compact column %s: %v", k, err)
		}
	}
}

// The sweep table's violations column names every kind that is not zero.
func TestSweepViolationsCell(t *testing.T) {
	var b bytes.Buffer
	if err := SweepTable(&b, sample().Scenarios); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "oversell 604, overlap 704, lost upd 604, stuck 1, foreign rel 700") {
		t.Errorf("sweep table:\n%s", b.String())
	}
}

// Rates below 10 keep two decimals, so a slow run's ops/s and ceiling are
// not printed as 0; from 10 up they are whole.
func TestRateCells(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1.0 / 3: "0.33", 9.994: "9.99", 9.996: "10", 10: "10", 150.4: "150", 2325.5: "2326"} {
		if got := FormatRate(v); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", v, got, want)
		}
	}
	s := Scenario{OpsPerSec: 1.0 / 3, CeilingOpsPerSec: 1.0 / 3, Ops: 1, DurationS: 3}
	if got := colOps.Cell(s); got != "0.33" {
		t.Errorf("ops/s cell %q, want 0.33", got)
	}
	if got := colCeiling.Cell(s); got != "0.33" {
		t.Errorf("ceiling cell %q, want 0.33", got)
	}
	s.ClientCPU.ClientBound = true
	if got := colOps.Cell(s); got != "0.33*" {
		t.Errorf("client-bound ops/s cell %q, want 0.33*", got)
	}
}
