package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestFormats(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	if err := Write(&b, "csv", r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "naive" || rows[1][14] != "604" {
		t.Fatalf("csv rows %v, %v", rows, err)
	}
	b.Reset()
	if err := Write(&b, "json", r); err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Scenarios) != 2 {
		t.Fatalf("json: %v", err)
	}
	if err := Write(&b, "yaml", r); err == nil {
		t.Fatal("yaml accepted")
	}
}

// The benchstat format is one line per run of each scenario, which
// benchfmt's reader (benchstat's parser) reads back with the names, units
// and values written.
func TestBenchstatFormat(t *testing.T) {
	r := sample()
	r.Scenarios[0].Samples = []Sample{{OpsPerSec: 600, P99MS: 9, Violations: 2}, {OpsPerSec: 610, P99MS: 8}, {OpsPerSec: 590, P99MS: 10}}
	var b bytes.Buffer
	if err := WriteBenchstat(&b, r, "run", "base"); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(&b, "out.txt")
	var got []*benchfmt.Result
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			got = append(got, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	// 3 samples of the first scenario, 1 (its own figures) of the second.
	if len(got) != 4 {
		t.Fatalf("%d results, want 4:\n%s", len(got), b.String())
	}
	want := "Lock/strategy=naive/driver=goredis/workload=flash-sale/retry=fixed"
	if base, parts := got[0].Name.Parts(); string(base) != "Lock" || string(got[0].Name.Full()) != want+"-2" || len(parts) != 5 {
		t.Fatalf("name %q (base %q, %d parts), want %s-2", got[0].Name.Full(), base, len(parts), want)
	}
	for i, ops := range []float64{600, 610, 590} {
		if v, ok := got[i].Value("ops/s"); !ok || v != ops {
			t.Errorf("result %d ops/s = %v, %v; want %v", i, v, ok, ops)
		}
	}
	if v, _ := got[0].Value("violations"); v != 2 {
		t.Errorf("violations %v, want 2", v)
	}
	if got[0].GetConfig("run") != "base" || got[0].GetConfig("goos") == "" || got[0].Iters != 300 {
		t.Errorf("config run=%q goos=%q iters %d", got[0].GetConfig("run"), got[0].GetConfig("goos"), got[0].Iters)
	}
	if u := rd.Units()[benchfmt.UnitMetadataKey{Unit: "ops/s", Key: "better"}]; u == nil || u.Value != "higher" {
		t.Errorf("ops/s better = %+v, want higher", u)
	}
}

// Scenarios that differ only in the retry policy's parameters, or only in
// their client count (a sweep), get distinct benchmark names, so that
// benchstat never pools them.
func TestBenchNamesDistinct(t *testing.T) {
	base := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed:interval=1ms", Clients: 2}
	other := base
	other.Retry = "fixed:interval=50ms"
	if got := benchNames([]Scenario{base, other}); got[0] == got[1] ||
		got[0] != "Lock/strategy=atomic/driver=rueidis/workload=flash-sale/retry=fixed:interval=1ms" {
		t.Errorf("two fixed intervals: %q", got)
	}
	wide := base
	wide.Clients = 8
	got := benchNames([]Scenario{base, wide})
	want := []string{"Lock/strategy=atomic/driver=rueidis/workload=flash-sale/retry=fixed/clients=2",
		"Lock/strategy=atomic/driver=rueidis/workload=flash-sale/retry=fixed/clients=8"}
	if !slices.Equal(got, want) {
		t.Errorf("a sweep's names %q, want %q", got, want)
	}
	// One policy per cell, one client count: the names of BenchName.
	if got := benchNames([]Scenario{base}); got[0] != BenchName(base) {
		t.Errorf("one scenario: %q, want %q", got[0], BenchName(base))
	}
}
