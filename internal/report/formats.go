package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Formats lists the run output formats.
var Formats = []string{"table", "json", "csv", "benchstat"}

// Write renders r to w in format: "table" (Table), "json" (the result
// file), "csv" (one row per scenario) or "benchstat" (Go benchmark lines
// that benchstat compares across runs). Errors: an unknown format.
func Write(w io.Writer, format string, r *Run) error {
	switch format {
	case "table", "":
		return Table(w, r.Scenarios)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "csv":
		return writeCSV(w, r.Scenarios)
	case "benchstat":
		return writeBenchstat(w, r)
	}
	return fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
}

func writeCSV(w io.Writer, scs []Scenario) error {
	c := csv.NewWriter(w)
	header := []string{"strategy", "driver", "workload", "retry", "clients", "loop", "ops", "ops_per_sec",
		"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "acquire_p99_ms"}
	for _, k := range ViolationKinds {
		header = append(header, k.Key)
	}
	_ = c.Write(append(header, "errors", "commands_per_op", "jain_index"))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, s := range scs {
		row := []string{s.Strategy, s.Driver, s.Workload, s.Retry, strconv.Itoa(s.Clients), s.Loop, i(s.Ops),
			f(s.OpsPerSec), f(s.LatencyMS.P50), f(s.LatencyMS.P90), f(s.LatencyMS.P99), f(s.LatencyMS.P999),
			f(s.LatencyMS.Max), f(s.AcquireMS.P99)}
		for _, k := range ViolationKinds {
			row = append(row, i(k.Of(s.Violations)))
		}
		_ = c.Write(append(row, i(s.Counters.Errors), f(s.RedisCost.CommandsPerOp), f(s.Fairness.JainIndex)))
	}
	c.Flush()
	return c.Error()
}

// writeBenchstat writes one Go-benchmark line per scenario, named
// BenchmarkLock/<strategy>/<driver>/<workload>/<retry>, with the
// operation count as the iteration count and ns/op as the mean operation
// time, plus ops/s, p99-ms and violations as extra units.
func writeBenchstat(w io.Writer, r *Run) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: lockbench\n", runtime.GOOS, runtime.GOARCH)
	for _, s := range r.Scenarios {
		name := "BenchmarkLock/" + strings.Join([]string{s.Strategy, s.Driver, s.Workload, shortRetry(s.Retry)}, "/")
		n := max(s.Ops, 1)
		if _, err := fmt.Fprintf(w, "%s-%d\t%d\t%.0f ns/op\t%.2f ops/s\t%.3f p99-ms\t%d violations\n",
			name, r.Meta.GOMAXPROCS, n, s.LatencyMS.Mean*1e6, s.OpsPerSec, s.LatencyMS.P99, s.Violations.Total()); err != nil {
			return err
		}
	}
	return nil
}

// WriteHGRM writes, beside the result file out (x.json), one HdrHistogram
// percentile-distribution file per scenario, x-<i>-<strategy>-<driver>-<workload>.hgrm,
// in the format the HdrHistogram plotter reads (values in ms). Scenarios
// without an encoded histogram are skipped.
func WriteHGRM(out string, r *Run) error {
	base := strings.TrimSuffix(out, ".json")
	for i, s := range r.Scenarios {
		if s.LatencyHist == "" {
			continue
		}
		h, err := hdrhistogram.Decode([]byte(s.LatencyHist))
		if err != nil {
			return fmt.Errorf("scenario %d: %w", i+1, err)
		}
		var b bytes.Buffer
		if _, err := h.PercentilesPrint(&b, 5, 1000); err != nil { // µs -> ms
			return err
		}
		name := fmt.Sprintf("%s-%d-%s-%s-%s.hgrm", base, i+1, s.Strategy, s.Driver, s.Workload)
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
