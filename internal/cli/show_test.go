package cli

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockbench/lockbench/internal/report"
)

// show prints a run's result file exactly as the run printed it: the
// table and the thresholds' table, byte for byte (both to a pipe); json
// is the file; csv has every parameter as a column, with the run's
// values; markdown is a GitHub-flavoured table.
func TestShowReproducesRun(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	r := lockbench(t, "run", "-q", "--strategy", "naive,atomic", "--driver", "rueidis", "--ttl", "3s", "--work", "2ms",
		"--stock", "30", "--clients", "4", "--retry", "fixed:interval=1ms", "--duration", "5s", "--fail-on", "safety", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	table, ok := strings.CutSuffix(r.stdout, "results written to "+out+"\n")
	if !ok || !strings.Contains(table, "│ naive") || !strings.Contains(table, "threshold") {
		t.Fatalf("run's stdout is not the table, the thresholds and the file line:\n%s", r.stdout)
	}
	s := lockbench(t, "show", out)
	if s.code != 0 || s.stdout != table {
		t.Fatalf("show: exit %d, stdout differs from the run's table:\n%q\nwant\n%q\n%s", s.code, s.stdout, table, s.stderr)
	}

	// merge prints the table show prints of the merged file.
	copyOut := filepath.Join(filepath.Dir(out), "copy.json")
	merged := filepath.Join(filepath.Dir(out), "merged.json")
	// The copy stands for another machine's run made at the same time:
	// its own run id, so its own keys (raw.lock_space).
	orig, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || os.WriteFile(copyOut, []byte(strings.ReplaceAll(string(b), orig.Meta.RunID, "other")), 0o644) != nil {
		t.Fatal(err)
	}
	if m := lockbench(t, "merge", out, out, "--out", merged); m.code != exitUsage || !strings.Contains(m.stderr, "are of one run (run id "+orig.Meta.RunID+")") {
		t.Fatalf("merge of a file with itself: exit %d, want 2 and 'of one run'\n%s", m.code, m.stderr)
	}
	m := lockbench(t, "merge", out, copyOut, "--out", merged)
	mergedTable, ok := strings.CutSuffix(m.stdout, "merged 2 files into "+merged+"\n")
	if m.code != 0 || !ok {
		t.Fatalf("merge: exit %d\n%s%s", m.code, m.stdout, m.stderr)
	}
	if s := lockbench(t, "show", merged); s.code != 0 || s.stdout != mergedTable {
		t.Errorf("show of the merged file differs from merge's table:\n%q\nwant\n%q", s.stdout, mergedTable)
	}

	s = lockbench(t, "show", out, "--format", "json")
	if file, err := os.ReadFile(out); err != nil || s.code != 0 || s.stdout != string(file) {
		t.Fatalf("show --format json: exit %d (%v), not the file:\n%s", s.code, err, s.stdout)
	}

	s = lockbench(t, "show", out, "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(s.stdout)).ReadAll()
	if s.code != 0 || err != nil || len(rows) != 3 {
		t.Fatalf("show --format csv: exit %d, %v, %d rows:\n%s", s.code, err, len(rows), s.stdout)
	}
	header := rows[0]
	// The columns of before the parameters, unmoved.
	if !slices.Equal(header[:8], []string{"strategy", "driver", "workload", "retry", "clients", "loop", "ops", "ops_per_sec"}) {
		t.Errorf("csv header starts %v", header[:8])
	}
	at := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("csv header lacks %q: %v", name, header)
		}
		return i
	}
	if at("jain_index") > at("ttl") {
		t.Errorf("the parameter columns come before the figures': %v", header)
	}
	for _, row := range rows[1:] {
		for col, want := range map[string]string{"ttl": "3s", "work": "2ms", "acquire_timeout": "10s", "duration": "5s",
			"warmup": "0s", "seed": "1", "stock": "30", "skus": "1", "token": "random", "driver": "rueidis", "clients": "4", "ops": "30"} {
			if got := row[at(col)]; got != want {
				t.Errorf("%s: %s = %q, want %q", row[0], col, got, want)
			}
		}
	}

	s = lockbench(t, "show", out, "--format", "markdown", "--columns", "strategy,ops,violations")
	lines := strings.Split(strings.TrimSuffix(s.stdout, "\n"), "\n")
	if s.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "|") || !strings.Contains(lines[0], "strategy") ||
		!strings.Contains(lines[1], "---") || !strings.HasPrefix(lines[2], "| naive") {
		t.Fatalf("show --format markdown: exit %d:\n%s%s", s.code, s.stdout, s.stderr)
	}
	if strings.Contains(lines[0], "driver") {
		t.Errorf("--columns strategy,ops,violations shows driver:\n%s", s.stdout)
	}
}

// A sweep's file is shown with the sweep's table, as the sweep printed it.
func TestShowReproducesSweep(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "sweep.json")
	r := lockbench(t, "sweep", "-q", "--strategy", "atomic", "--workload", "lock-cycle", "--keys", "1", "--work", "1ms",
		"--ttl", "2s", "--clients", "1,2", "--duration", "1s", "--driver", "rueidis", "--out", out)
	if r.code != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	table, ok := strings.CutSuffix(r.stdout, "results written to "+out+"\n")
	if !ok || !strings.Contains(table, "cmds/op") {
		t.Fatalf("sweep's stdout is not its table and the file line:\n%s", r.stdout)
	}
	if s := lockbench(t, "show", out); s.code != 0 || s.stdout != table {
		t.Fatalf("show: exit %d, stdout differs from the sweep's table:\n%q\nwant\n%q\n%s", s.code, s.stdout, table, s.stderr)
	}
}

// Bad input exits 2 with a message that says what is wrong; run checks
// --columns before it starts anything.
func TestShowBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notResult := filepath.Join(dir, "other.json")
	text := filepath.Join(dir, "notes.txt")
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(notResult, []byte(`{"name": "something else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFile(good, &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic"}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"show", filepath.Join(dir, "missing.json")}, []string{"missing.json", "no such file"}},
		{[]string{"show", notResult}, []string{"other.json: not a lockbench result file"}},
		{[]string{"show", text}, []string{"notes.txt"}},
		{[]string{"show"}, []string{"accepts 1 arg"}},
		{[]string{"show", good, "--format", "yaml"}, []string{`--format "yaml" is not one of table, json, csv, benchstat, markdown`}},
		{[]string{"show", good, "--columns", "strategy,nope,p99"}, []string{`unknown column "nope"`, "valid: all, strategy, driver,", "violations"}},
		{[]string{"show", good, "--format", "csv", "--columns", "strategy"}, []string{"--columns chooses the columns of --format table or markdown"}},
		{[]string{"run", "--columns", "bogus", "--out", filepath.Join(dir, "never.json")}, []string{`unknown column "bogus"`, "valid: all, strategy"}},
	} {
		r := lockbench(t, c.args...)
		if r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2\n%s%s", c.args, r.code, r.stdout, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, r.stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never.json")); err == nil {
		t.Error("a run with a bad --columns wrote a result file")
	}
	// p50 and max are columns of the sweep table (extras): a sweep takes
	// them (its other error, --clients, is the one reported).
	if r := lockbench(t, "sweep", "--columns", "p50,max", "--clients", "x", "--out", filepath.Join(dir, "never.json")); r.code != exitUsage || strings.Contains(r.stderr, "column") {
		t.Errorf("sweep --columns p50,max: exit %d\n%s", r.code, r.stderr)
	}
}

// headers are the header cells of a table printResults drew.
func headers(t *testing.T, table string) []string {
	t.Helper()
	lines := strings.Split(table, "\n")
	if len(lines) < 2 {
		t.Fatalf("no table:\n%s", table)
	}
	var out []string
	for _, c := range strings.Split(strings.Trim(lines[1], "│"), "│") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// The terminal's width (injected: 0 is not a terminal) chooses the table:
// the full one when it fits or the output is not a terminal, else the
// compact columns and a line naming --columns; --columns overrides both.
func TestCompactTableByWidth(t *testing.T) {
	run, err := report.ReadFile("../../results/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	var full bytes.Buffer
	if err := report.Table(&full, run.Scenarios); err != nil {
		t.Fatal(err)
	}
	wide := report.Width(full.Bytes())
	if wide <= 80 {
		t.Fatalf("the full table is %d wide; the test needs one wider than 80", wide)
	}
	for _, width := range []int{0, wide, 10 * wide} {
		var b bytes.Buffer
		if err := printResults(&b, "table", "", width, run); err != nil || b.String() != full.String() {
			t.Fatalf("width %d: %v, not the full table:\n%s", width, err, b.String())
		}
	}
	var b bytes.Buffer
	if err := printResults(&b, "table", "", 80, run); err != nil {
		t.Fatal(err)
	}
	// Every row has the same workload, retry and clients: those columns
	// leave for a line, which gets the compact table to fit.
	want := []string{"strategy", "driver", "ops/s", "p50 ms", "p99 ms", "violations", "errors"}
	if got := headers(t, b.String()); !slices.Equal(got, want) {
		t.Errorf("compact headers %v, want %v", got, want)
	}
	if !strings.Contains(b.String(), "\nevery row: workload flash-sale, retry backoff, clients 50\n") {
		t.Errorf("no line with the columns every row shares:\n%s", b.String())
	}
	// Wide enough for the compact columns: all of them, no line.
	b.Reset()
	if err := printResults(&b, "table", "", 110, run); err != nil {
		t.Fatal(err)
	}
	want = []string{"strategy", "driver", "workload", "retry", "clients", "ops/s", "p50 ms", "p99 ms", "violations", "errors"}
	if got := headers(t, b.String()); !slices.Equal(got, want) || strings.Contains(b.String(), "every row") || !strings.Contains(b.String(), "fit 110 columns") {
		t.Errorf("compact headers at 110 %v, want %v:\n%s", got, want, b.String())
	}
	b.Reset()
	if err := printResults(&b, "table", "", 80, run); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d characters at 80 columns: %q", n, l)
		}
	}
	note := "compact table to fit 80 columns; --columns all for every column, or a,b,c\n"
	if !strings.HasSuffix(b.String(), note) {
		t.Errorf("no --columns note after the compact table:\n%s", b.String())
	}
	if n := report.Width(b.Bytes()); n > 80 {
		t.Errorf("compact table %d wide at 80 columns:\n%s", n, b.String())
	}
	for _, c := range []struct {
		columns string
		want    []string
	}{
		{"all", headers(t, full.String())},
		{"strategy,ops,acquire_p99,lost_updates", []string{"strategy", "ops/s", "acquire p99 ms", "lost upd"}},
	} {
		b.Reset()
		if err := printResults(&b, "table", c.columns, 80, run); err != nil {
			t.Fatal(err)
		}
		if got := headers(t, b.String()); !slices.Equal(got, c.want) || strings.Contains(b.String(), "compact") {
			t.Errorf("--columns %s at 80: headers %v, want %v:\n%s", c.columns, got, c.want, b.String())
		}
	}
	if err := printResults(&b, "table", "strategy,nope", 80, run); err == nil || !strings.Contains(err.Error(), `unknown column "nope"`) {
		t.Errorf("unknown column: %v", err)
	}
	// A sweep's file: the sweep's compact columns.
	run.Meta.Sweep = &report.Sweep{Param: "clients", Spec: "50", Clients: []int{50}}
	b.Reset()
	if err := printResults(&b, "table", "", 80, run); err != nil {
		t.Fatal(err)
	}
	want = []string{"strategy", "driver", "ops/s", "p99 ms", "violations", "errors"}
	if got := headers(t, b.String()); !slices.Equal(got, want) || !strings.Contains(b.String(), note) {
		t.Errorf("sweep compact headers %v, want %v:\n%s", got, want, b.String())
	}
}
