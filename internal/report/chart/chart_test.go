package chart

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

func load(t *testing.T, name string) Input {
	t.Helper()
	r, err := report.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Input{Label: strings.TrimSuffix(name, ".json"), Run: r}
}

// checkImages asserts that every chart exists as a PNG that decodes to the
// chart size and an SVG whose root element is <svg>, and returns the SVGs'
// text by chart name.
func checkImages(t *testing.T, dir string, charts []string) map[string]string {
	t.Helper()
	svgs := map[string]string{}
	for _, name := range charts {
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != 864 || b.Dy() != 528 {
			t.Fatalf("%s.png is %v, want 864x528", name, b)
		}
		raw, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(raw))
		var root string
		for root == "" {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%s.svg: %v", name, err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				root = se.Name.Local
			}
		}
		if root != "svg" {
			t.Fatalf("%s.svg's root element is <%s>, want <svg>", name, root)
		}
		for {
			if _, err := dec.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s.svg is not well-formed XML: %v", name, err)
				}
				break
			}
		}
		svgs[name] = string(raw)
	}
	return svgs
}

// One real run: four charts as PNG and SVG, an index.html that shows each
// and has one table row per scenario with its figures.
func TestWriteOneRun(t *testing.T) {
	t.Parallel()
	in := load(t, "crash-fault.json")
	dir := filepath.Join(t.TempDir(), "report")
	res, err := Write(dir, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	// The file predates latency per interval: no latency chart, and why.
	if strings.Join(res.Written, ",") != "spectrum,ops,violations,timeline" || len(res.Skipped) != 1 ||
		!strings.Contains(res.Skipped[LatencyChart], "latency per interval") {
		t.Fatalf("written %v skipped %v, want four charts and the latency chart skipped", res.Written, res.Skipped)
	}
	svgs := checkImages(t, dir, res.Written)
	// The legends name each scenario (one file: no file label); the
	// timeline's shows the fault window.
	for _, want := range []string{"naive/rueidis/flash-sale/fixed", "atomic/rueidis/flash-sale/fixed"} {
		for _, c := range []string{"spectrum", "timeline", "ops"} {
			if !strings.Contains(svgs[c], want) {
				t.Errorf("%s.svg lacks %q", c, want)
			}
		}
	}
	for _, want := range []string{"fault window: crash-after-setnx", "ops/s", "time since the scenario"} {
		if !strings.Contains(svgs["timeline"], want) {
			t.Errorf("timeline.svg lacks %q", want)
		}
	}
	for _, want := range []string{"99.9%", "latency (ms, log scale)", "percentile"} {
		if !strings.Contains(svgs["spectrum"], want) {
			t.Errorf("spectrum.svg lacks %q", want)
		}
	}
	html := readIndex(t, dir)
	if !strings.Contains(html, "Latency over time (fault windows shaded): not drawn: no scenario&#39;s timeline has two entries or more with latency") {
		t.Error("index.html does not say why the latency chart is missing")
	}
	for _, c := range res.Written {
		if !strings.Contains(html, `<img src="`+c+`.png"`) || !strings.Contains(html, `<a href="`+c+`.svg">`) {
			t.Errorf("index.html does not show %s.png linked to %s.svg", c, c)
		}
	}
	if n := strings.Count(html, "<tr>"); n != 1+len(in.Run.Scenarios) {
		t.Fatalf("index.html has %d table rows, want a header and %d scenarios", n, len(in.Run.Scenarios))
	}
	for _, s := range in.Run.Scenarios {
		row := `<td class="name">` + s.Strategy + `</td><td class="name">` + s.Driver + `</td>`
		if !strings.Contains(html, row) {
			t.Errorf("index.html lacks the row of %s", s.Name())
		}
	}
	// naive left one stuck lock after the crash; atomic none.
	if !strings.Contains(html, `<td class="bad">stuck 1</td>`) {
		t.Error("index.html does not show naive's stuck lock as a violation")
	}
	if strings.Contains(html, "<th>file</th>") {
		t.Error("one file, yet index.html has a file column")
	}
}

// Two files overlay on one chart, each series labelled with its file.
func TestWriteOverlay(t *testing.T) {
	t.Parallel()
	a, b := load(t, "crash-fault.json"), load(t, "atomic-goredis.json")
	dir := t.TempDir()
	res, err := Write(dir, []Input{a, b})
	if err != nil {
		t.Fatal(err)
	}
	svgs := checkImages(t, dir, res.Written)
	for _, want := range []string{"crash-fault: naive/rueidis/flash-sale/fixed", "crash-fault: atomic/rueidis/flash-sale/fixed",
		"atomic-goredis: atomic/goredis/flash-sale/fixed"} {
		for _, c := range []string{"spectrum", "timeline"} {
			if !strings.Contains(svgs[c], want) {
				t.Errorf("%s.svg lacks %q", c, want)
			}
		}
	}
	if !strings.Contains(svgs["ops"], "crash-fault") || !strings.Contains(svgs["ops"], "atomic-goredis") {
		t.Error("ops.svg's legend lacks the file names")
	}
	html := readIndex(t, dir)
	if n := strings.Count(html, "<tr>"); n != 1+len(a.Run.Scenarios)+len(b.Run.Scenarios) {
		t.Fatalf("index.html has %d rows, want %d", n, 1+len(a.Run.Scenarios)+len(b.Run.Scenarios))
	}
	if !strings.Contains(html, "<th>file</th>") || !strings.Contains(html, `<td class="name">atomic-goredis</td>`) {
		t.Error("index.html lacks the file column")
	}
}

// A file from before the timeline existed: the timeline chart is left out
// with the reason, the others are drawn; a run without histograms loses
// the spectrum too.
func TestWriteOldFiles(t *testing.T) {
	t.Parallel()
	in := load(t, "atomic-goredis.json")
	for i := range in.Run.Scenarios {
		in.Run.Scenarios[i].Timeline = nil
	}
	dir := t.TempDir()
	res, err := Write(dir, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Written, ",") != "spectrum,ops,violations" || res.Skipped["timeline"] == "" {
		t.Fatalf("written %v skipped %v", res.Written, res.Skipped)
	}
	if _, err := os.Stat(filepath.Join(dir, "timeline.png")); !os.IsNotExist(err) {
		t.Fatalf("timeline.png written for a file without timelines (stat: %v)", err)
	}
	html := readIndex(t, dir)
	if strings.Contains(html, "timeline.png") || !strings.Contains(html, "not drawn: no scenario has a timeline") {
		t.Error("index.html does not say why the timeline is missing")
	}
	for i := range in.Run.Scenarios {
		in.Run.Scenarios[i].LatencyHist = ""
	}
	res, err = Write(t.TempDir(), []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Written, ",") != "ops,violations" || res.Skipped["spectrum"] == "" {
		t.Fatalf("written %v skipped %v", res.Written, res.Skipped)
	}
}

func TestWriteBadInput(t *testing.T) {
	in := load(t, "atomic-goredis.json")
	if _, err := Write(t.TempDir(), nil); err == nil {
		t.Error("no input drew charts")
	}
	empty := Input{Label: "empty", Run: &report.Run{Schema: report.Schema}}
	if _, err := Write(t.TempDir(), []Input{empty}); err == nil || !strings.Contains(err.Error(), "empty has no scenario") {
		t.Errorf("a run without scenarios: err = %v", err)
	}
	in.Run.Scenarios[0].LatencyHist = "not a histogram"
	if _, err := Write(t.TempDir(), []Input{in}); err == nil || !strings.Contains(err.Error(), "latency_hist") {
		t.Errorf("a corrupt histogram: err = %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(filepath.Join(file, "sub"), []Input{load(t, "atomic-goredis.json")}); err == nil {
		t.Error("a directory under a regular file was written to")
	}
}

func readIndex(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run whose cells ran at several client counts gets the sweep chart
// (1296 x 768 PNG, SVG), one line per cell, its panels titled; a panel
// whose figure is missing at some counts says so; a run without such a
// cell gets no sweep chart and no note of one.
func TestSweepChart(t *testing.T) {
	t.Parallel()
	var ss []report.Scenario
	for _, retry := range []string{"spin", "backoff"} {
		for i, c := range []int{1, 10, 100} {
			s := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: retry, Clients: c,
				Ops: 1000, OpsPerSec: float64(1000 / (i + 1)), LatencyMS: metrics.Latency{P99: float64(c)}, AcquireMS: metrics.Latency{P99: float64(c) / 2}}
			s.Fairness.JainIndex = 1 / float64(i+1)
			s.RedisCost.CommandsPerOp = float64(3 * c)
			if c < 100 {
				s.CeilingOpsPerSec, s.Efficiency = 2000, s.OpsPerSec/2000
			}
			ss = append(ss, s)
		}
	}
	dir := t.TempDir()
	res, err := Write(dir, []Input{{Label: "sweep", Run: &report.Run{Schema: report.Schema, Scenarios: ss}}})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(res.Written, SweepChart) {
		t.Fatalf("written %v: no sweep chart", res.Written)
	}
	f, err := os.Open(filepath.Join(dir, "sweep.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1296 || b.Dy() != 768 {
		t.Fatalf("sweep.png is %v, want 1296x768", b)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "sweep.svg"))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(raw)
	for _, w := range []string{"atomic/rueidis/lock-cycle/spin", "atomic/rueidis/lock-cycle/backoff", "clients (log scale)",
		"Efficiency (ops/s / lock-bound ceiling) (no point: not measured)", "Throughput", "Acquire wait p99", "Redis commands per operation", ">100<"} {
		if !strings.Contains(svg, w) {
			t.Errorf("sweep.svg lacks %q", w)
		}
	}
	if strings.Contains(svg, "Throughput (no point") {
		t.Error("the throughput panel claims missing points")
	}
	// One count per cell: no sweep chart, and no note of it.
	dir2 := t.TempDir()
	res, err = Write(dir2, []Input{{Label: "one", Run: &report.Run{Schema: report.Schema, Scenarios: ss[:1]}}})
	if err != nil {
		t.Fatal(err)
	}
	if contains(res.Written, SweepChart) || res.Skipped[SweepChart] != "" {
		t.Fatalf("one count: written %v, skipped %v", res.Written, res.Skipped)
	}
	if _, err := os.Stat(filepath.Join(dir2, "sweep.png")); !os.IsNotExist(err) {
		t.Fatal("sweep.png written for a run at one client count")
	}
}
