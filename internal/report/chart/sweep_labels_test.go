package chart

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// sweepRun is atomic-goredis.json's scenario (its latency histogram and
// timeline, latency per interval added) run at each of counts, as a sweep
// writes it: the cell's scenarios by ascending clients, ops/s ops[i].
func sweepRun(t *testing.T, counts []int, ops []float64) *report.Run {
	t.Helper()
	base := load(t, "atomic-goredis.json").Run
	r := *base
	r.Scenarios = nil
	for i, c := range counts {
		s := base.Scenarios[0]
		s.Clients, s.OpsPerSec = c, ops[i]
		s.Timeline = slices.Clone(s.Timeline)
		for j := range s.Timeline {
			e := &s.Timeline[j]
			e.OpP50MS, e.OpP99MS, e.OpMaxMS = 1, 10, 100
			e.AcquireP50MS, e.AcquireP99MS, e.AcquireMaxMS = 0.1, 1, 10
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	r.Meta.Sweep = &report.Sweep{Param: "clients", Clients: counts}
	return &r
}

func legendTexts(f *figure) []string {
	var out []string
	for _, e := range f.legend {
		out = append(out, e.text)
	}
	return out
}

// barsOf counts d's bars: its values that are not NaN.
func barsOf(d barData) int {
	n := 0
	for _, g := range d.vals {
		for _, v := range g {
			if !math.IsNaN(v) {
				n++
			}
		}
	}
	return n
}

// A sweep of one cell at 2, 4 and 8 clients: every legend, row and
// heading that names a scenario carries its client count, the ops chart
// has one bar per count (three, each its own ops/s), and the sweep
// chart's one line is the cell, without a count (the x axis has them).
func TestSweepLabelsCarryClients(t *testing.T) {
	t.Parallel()
	const cell = "atomic/goredis/flash-sale/fixed"
	want := []string{cell + ", 2 clients", cell + ", 4 clients", cell + ", 8 clients"}
	in := []Input{{Label: "sweep", Run: sweepRun(t, []int{2, 4, 8}, []float64{1111, 2222, 4444})}}
	ss := collect(in)
	var labels []string
	for _, s := range ss {
		labels = append(labels, s.label)
	}
	if !slices.Equal(labels, want) {
		t.Fatalf("labels %q, want %q", labels, want)
	}

	sp, err := spectrum(ss)
	if err != nil {
		t.Fatal(err)
	}
	if got := legendTexts(sp); !slices.Equal(got, want) {
		t.Errorf("spectrum legend %q, want %q", got, want)
	}
	tl, err := timeline(ss)
	if err != nil {
		t.Fatal(err)
	}
	if got := legendTexts(tl); !slices.Equal(got, want) {
		t.Errorf("timeline legend %q, want %q", got, want)
	}
	if got := violationData(ss).rows; !slices.Equal(got, want) {
		t.Errorf("violations rows %q, want %q", got, want)
	}
	lat, err := latencyCharts(ss)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, l := range lat {
		titles = append(titles, l.fig.title)
	}
	if w := []string{"Latency over time: " + want[0], "Latency over time: " + want[1], "Latency over time: " + want[2]}; !slices.Equal(titles, w) {
		t.Errorf("latency chart titles %q, want %q", titles, w)
	}

	d := opsData(ss)
	if !slices.Equal(d.rows, want) || !slices.Equal(d.groups, []string{"sweep"}) {
		t.Errorf("ops rows %q groups %q, want rows %q, one group", d.rows, d.groups, want)
	}
	if n := barsOf(d); n != 3 {
		t.Errorf("ops chart has %d bars, want 3 (one per client count)", n)
	}
	if len(d.vals) == 1 && !slices.Equal(d.vals[0], []float64{1111, 2222, 4444}) {
		t.Errorf("ops bars %v, want [1111 2222 4444]", d.vals[0])
	}

	g, err := sweep(ss)
	if err != nil || g == nil {
		t.Fatalf("sweep chart: %v, %v", g, err)
	}
	if got := legendTexts(g); !slices.Equal(got, []string{cell}) {
		t.Errorf("sweep legend %q, want [%q]", got, cell)
	}

	// The files: each label once in ops.svg with its bar's value; the
	// latency charts' headings in index.html.
	dir := t.TempDir()
	res, err := Write(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	svgs := checkImages(t, dir, []string{"spectrum", "ops", "violations", "timeline"})
	for i, w := range want {
		if n := strings.Count(svgs["ops"], w+"<"); n != 1 {
			t.Errorf("ops.svg names %q %d times, want once", w, n)
		}
		if v := []string{">1111<", ">2222<", ">4444<"}[i]; strings.Count(svgs["ops"], v) != 1 {
			t.Errorf("ops.svg lacks the bar value %s", v)
		}
		for _, c := range []string{"spectrum", "timeline", "violations"} {
			if n := strings.Count(svgs[c], w+"<"); n != 1 {
				t.Errorf("%s.svg names %q %d times, want once", c, w, n)
			}
		}
	}
	if !slices.Equal(res.Written, []string{"spectrum", "ops", "violations", "timeline", "latency-1", "latency-2", "latency-3", SweepChart}) {
		t.Errorf("written %v", res.Written)
	}
	html := readIndex(t, dir)
	for _, w := range want {
		if h := "<h2>Latency over time: " + w + "</h2>"; strings.Count(html, h) != 1 {
			t.Errorf("index.html lacks the heading %q", h)
		}
	}
}

// Two sweeps overlaid (before, after): a row per client count with a bar
// per file (six bars), labels with the file and the count, and one sweep
// line per file, without a count.
func TestSweepOverlayLabels(t *testing.T) {
	const cell = "atomic/goredis/flash-sale/fixed"
	in := []Input{
		{Label: "before", Run: sweepRun(t, []int{1, 10, 100}, []float64{100, 200, 300})},
		{Label: "after", Run: sweepRun(t, []int{1, 10, 100}, []float64{110, 220, 330})},
	}
	ss := collect(in)
	var labels []string
	for _, s := range ss {
		labels = append(labels, s.label)
	}
	want := []string{
		"before: " + cell + ", 1 client", "before: " + cell + ", 10 clients", "before: " + cell + ", 100 clients",
		"after: " + cell + ", 1 client", "after: " + cell + ", 10 clients", "after: " + cell + ", 100 clients",
	}
	if !slices.Equal(labels, want) {
		t.Fatalf("labels %q, want %q", labels, want)
	}
	d := opsData(ss)
	rows := []string{cell + ", 1 client", cell + ", 10 clients", cell + ", 100 clients"}
	if !slices.Equal(d.rows, rows) || !slices.Equal(d.groups, []string{"before", "after"}) {
		t.Fatalf("ops rows %q groups %q, want rows %q, groups before, after", d.rows, d.groups, rows)
	}
	if n := barsOf(d); n != 6 {
		t.Errorf("ops chart has %d bars, want 6 (3 counts x 2 files)", n)
	}
	if !slices.Equal(d.vals[0], []float64{100, 200, 300}) || !slices.Equal(d.vals[1], []float64{110, 220, 330}) {
		t.Errorf("ops bars %v, want [[100 200 300] [110 220 330]]", d.vals)
	}
	g, err := sweep(ss)
	if err != nil || g == nil {
		t.Fatalf("sweep chart: %v, %v", g, err)
	}
	if got, w := legendTexts(g), []string{"before: " + cell, "after: " + cell}; !slices.Equal(got, w) {
		t.Errorf("sweep legend %q, want %q", got, w)
	}
}

// A run at one client count keeps its labels without a count; two retry
// specs of one policy name (CellNames gives them the whole spec) are two
// rows of the ops chart, not one row whose bar the second overwrote.
func TestOneCountLabels(t *testing.T) {
	t.Parallel()
	in := load(t, "crash-fault.json")
	ss := collect([]Input{in})
	var labels []string
	for _, s := range ss {
		labels = append(labels, s.label)
	}
	if w := []string{"naive/rueidis/flash-sale/fixed", "atomic/rueidis/flash-sale/fixed"}; !slices.Equal(labels, w) {
		t.Errorf("labels %q, want %q", labels, w)
	}
	if d := opsData(ss); len(d.rows) != 2 || barsOf(d) != 2 {
		t.Errorf("ops rows %q, %d bars, want 2 and 2", d.rows, barsOf(d))
	}

	a := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "fixed:interval=10ms", Clients: 10, OpsPerSec: 500}
	b := a
	b.Retry, b.OpsPerSec = "fixed:interval=50ms", 300
	ss = collect([]Input{{Label: "two", Run: &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{a, b}}}})
	d := opsData(ss)
	if w := []string{"atomic/rueidis/lock-cycle/fixed:interval=10ms", "atomic/rueidis/lock-cycle/fixed:interval=50ms"}; !slices.Equal(d.rows, w) {
		t.Errorf("ops rows %q, want %q", d.rows, w)
	}
	if n := barsOf(d); n != 2 || !slices.Equal(d.vals[0], []float64{500, 300}) {
		t.Errorf("ops bars %v (%d), want [500 300]", d.vals, n)
	}
	if _, err := Write(filepath.Join(t.TempDir(), "r"), []Input{{Label: "two", Run: &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{a, b}}}}); err != nil {
		t.Fatal(err)
	}
}
