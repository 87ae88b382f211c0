package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/perf/benchfmt"
)

// Formats lists the run output formats.
var Formats = []string{"table", "json", "csv", "benchstat", "markdown"}

// Write renders r to w in format: "table" (Table, SweepTable for a
// sweep's file), "json" (the result file), "csv" (one row per scenario,
// every parameter a column: CSVHeader), "benchstat" (Go benchmark lines
// that benchstat compares across runs) or "markdown" (the table as a
// GitHub-flavoured markdown table: Markdown). Errors: an unknown format.
func Write(w io.Writer, format string, r *Run) error {
	switch format {
	case "table", "":
		if r.Meta.Sweep != nil {
			return SweepTable(w, r.Scenarios)
		}
		return Table(w, r.Scenarios)
	case "markdown":
		return Markdown(w, r, nil)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "csv":
		return writeCSV(w, r.Scenarios)
	case "benchstat":
		return WriteBenchstat(w, r)
	}
	return fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
}

// csvParams are the parameters every scenario records, as CSV columns
// in this order after the figures; the others (driver settings, the
// strategy's and the workload's own, any added later) follow sorted by
// key.
var csvParams = []string{"ttl", "work", "acquire_timeout", "duration", "warmup", "seed", "guard", "token"}

// CSVHeader is writeCSV's header for scs: the figures' columns (strategy
// ... jain_index, in their order since the format began), then
// duration_s, stop_reason, topology, offered_rate, offered and dropped,
// then one column per parameter (csvParams, then the other keys of the
// scenarios' params, sorted), named by its key, or param_<key> where the
// key is already a column's name.
func CSVHeader(scs []Scenario) (header, params []string) {
	header = []string{"strategy", "driver", "workload", "retry", "clients", "loop", "ops", "ops_per_sec",
		"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "acquire_p99_ms"}
	for _, k := range ViolationKinds {
		header = append(header, k.Key)
	}
	header = append(header, "errors", "commands_per_op", "jain_index",
		"duration_s", "stop_reason", "topology", "offered_rate", "offered", "dropped")
	params = slices.Clone(csvParams)
	var rest []string
	for _, s := range scs {
		for k := range s.Params {
			if !slices.Contains(params, k) && !slices.Contains(rest, k) {
				rest = append(rest, k)
			}
		}
	}
	slices.Sort(rest)
	params = append(params, rest...)
	for _, k := range params {
		if slices.Contains(header, k) {
			k = "param_" + k
		}
		header = append(header, k)
	}
	return header, params
}

func writeCSV(w io.Writer, scs []Scenario) error {
	c := csv.NewWriter(w)
	header, params := CSVHeader(scs)
	_ = c.Write(header)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	// known: f(v), or "" for a figure not measured (never 0).
	known := func(ok bool, v float64) string {
		if !ok {
			return ""
		}
		return f(v)
	}
	for _, s := range scs {
		lat, acq := LatencyMeasured(s.LatencyMS), LatencyMeasured(s.AcquireMS)
		row := []string{s.Strategy, s.Driver, s.Workload, s.Retry, strconv.Itoa(s.Clients), s.Loop, i(s.Ops),
			f(s.OpsPerSec), known(lat, s.LatencyMS.P50), known(lat, s.LatencyMS.P90), known(lat, s.LatencyMS.P99), known(lat, s.LatencyMS.P999),
			known(lat, s.LatencyMS.Max), known(acq, s.AcquireMS.P99)}
		for _, k := range ViolationKinds {
			if !k.Known(s.Violations) {
				row = append(row, "")
				continue
			}
			row = append(row, i(k.Of(s.Violations)))
		}
		row = append(row, i(s.Counters.Errors), known(s.RedisCost.CommandsPerOp > 0, s.RedisCost.CommandsPerOp), known(s.HasJain(), s.Fairness.JainIndex),
			f(s.DurationS), s.StopReason, s.Topology, f(s.OfferedRate), i(s.Offered), i(s.Dropped))
		for _, k := range params {
			row = append(row, s.Params[k])
		}
		_ = c.Write(row)
	}
	c.Flush()
	return c.Error()
}

// benchUnits are the figures of a Sample in the Go benchmark format, with
// the direction benchstat should call better.
// A unit whose known reports false for a run is left out of its line
// (not measured: no operation, or no cost read), never written as 0.
var benchUnits = []struct {
	unit, better string
	of           func(Sample) float64
	known        func(Sample) bool
}{
	{"ops/s", "higher", func(x Sample) float64 { return x.OpsPerSec }, nil},
	{"p50-ms", "lower", func(x Sample) float64 { return x.P50MS }, latencyKnown},
	{"p99-ms", "lower", func(x Sample) float64 { return x.P99MS }, latencyKnown},
	{"p999-ms", "lower", func(x Sample) float64 { return x.P999MS }, latencyKnown},
	{"acquire-p99-ms", "lower", func(x Sample) float64 { return x.AcquireP99MS }, func(x Sample) bool { return x.AcquireP99MS > 0 }},
	{"violations", "lower", func(x Sample) float64 { return float64(x.Violations) }, nil},
	{"cmds/op", "lower", func(x Sample) float64 { return x.CommandsPerOp }, func(x Sample) bool { return x.CommandsPerOp > 0 }},
}

// latencyKnown: the run measured latencies (a sample of a file written
// before Sample.Ops existed counts as measured when its p50 is set).
func latencyKnown(x Sample) bool { return x.Ops > 0 || x.P50MS > 0 }

// BenchName is a scenario's benchmark name, without the Benchmark prefix:
// Lock/strategy=S/driver=D/workload=W/retry=R with R the retry policy's
// name (benchstat groups by these keys: -col /driver, -row /strategy).
func BenchName(s Scenario) string {
	return "Lock/strategy=" + s.Strategy + "/driver=" + s.Driver + "/workload=" + s.Workload + "/retry=" + shortRetry(s.Retry)
}

// benchNames are the benchmark names of scs: BenchName, with the whole
// retry spec (commas as ';', which benchstat's names keep) when two
// scenarios of one strategy, driver and workload share the policy's name
// (fixed:interval=1ms beside fixed:interval=50ms), and a /clients=N key
// when the scenarios run at more than one client count (a sweep), so that
// no two scenarios share a name and benchstat never pools them.
func benchNames(scs []Scenario) []string {
	clients := map[int]bool{}
	for _, s := range scs {
		clients[s.Clients] = true
	}
	cells := CellNames(scs)
	out := make([]string, len(scs))
	for i, s := range scs {
		name := BenchName(s)
		if cells[i] != s.Name() {
			name = "Lock/strategy=" + s.Strategy + "/driver=" + s.Driver + "/workload=" + s.Workload + "/retry=" + strings.ReplaceAll(s.Retry, ",", ";")
		}
		if len(clients) > 1 {
			name += "/clients=" + strconv.Itoa(s.Clients)
		}
		out[i] = name
	}
	return out
}

// samplesOf is every run's Sample of s: its Samples, or for a file
// written before they existed its repeats' ops/s and p99 (the other
// figures of the median run), or its own figures.
func samplesOf(s Scenario) []Sample {
	if len(s.Samples) > 0 {
		return s.Samples
	}
	if r := s.Repeats; r != nil && len(r.OpsPerSec.Values) > 0 {
		out := make([]Sample, len(r.OpsPerSec.Values))
		for i, v := range r.OpsPerSec.Values {
			out[i] = SampleOf(s)
			out[i].OpsPerSec = v
			if i < len(r.P99MS.Values) {
				out[i].P99MS = r.P99MS.Values[i]
			}
		}
		return out
	}
	return []Sample{SampleOf(s)}
}

// WriteBenchstat writes r in the Go benchmark format with
// golang.org/x/perf/benchfmt: one line per run of each scenario (every
// --repeat), named BenchmarkLock/strategy=.../driver=.../workload=.../retry=...
// (made distinct by benchNames: the whole retry spec, /clients=N)
// with GOMAXPROCS as the -N suffix, the run's operations as the
// iteration count, and ops/s, p50-ms, p99-ms, p999-ms, acquire-p99-ms,
// violations and cmds/op as its values (a figure the run did not measure
// is left out); "Unit" lines tell benchstat which direction
// is better. extra are file configuration lines (key, value pairs) put
// before the results, such as "run", "base" to tell two files apart.
func WriteBenchstat(w io.Writer, r *Run, extra ...string) error {
	bw := benchfmt.NewWriter(w)
	for _, u := range benchUnits {
		if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.unit, Key: "better"},
			OrigUnit: u.unit, Value: u.better}); err != nil {
			return err
		}
	}
	config := []benchfmt.Config{{Key: "goos", Value: []byte(runtime.GOOS), File: true},
		{Key: "goarch", Value: []byte(runtime.GOARCH), File: true}, {Key: "pkg", Value: []byte("lockbench"), File: true}}
	if r.Meta.GitCommit != "" {
		config = append(config, benchfmt.Config{Key: "commit", Value: []byte(r.Meta.GitCommit), File: true})
	}
	for i := 0; i+1 < len(extra); i += 2 {
		config = append(config, benchfmt.Config{Key: extra[i], Value: []byte(extra[i+1]), File: true})
	}
	procs := max(r.Meta.GOMAXPROCS, 1)
	names := benchNames(r.Scenarios)
	for si, s := range r.Scenarios {
		for _, x := range samplesOf(s) {
			iters := s.Ops
			if x.Ops > 0 {
				iters = x.Ops // the run's own
			}
			res := &benchfmt.Result{Config: config, Name: benchfmt.Name(fmt.Sprintf("%s-%d", names[si], procs)), Iters: int(max(iters, 1))}
			for _, u := range benchUnits {
				if u.known != nil && !u.known(x) {
					continue
				}
				res.Values = append(res.Values, benchfmt.Value{Value: u.of(x), Unit: u.unit})
			}
			if err := bw.Write(res); err != nil {
				return err
			}
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
