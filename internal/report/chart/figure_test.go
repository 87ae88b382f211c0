package chart

import (
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/lockbench/lockbench/internal/report"
)

// withLatency gives crash-fault.json's timelines latency per interval, as a
// run would record it (the file predates the fields; the values are made
// up): in interval i with operations, op p50 = 1 + i ms, p99 = 10 × p50,
// max = 400 ms in the interval after the fault's (it acted at 1 s) and
// 100 ms else; the acquire's a tenth of each. Intervals without operations get none: naive
// completed nothing after its crash, so its lines stop after 2 s.
func withLatency(t *testing.T) Input {
	in := load(t, "crash-fault.json")
	for si := range in.Run.Scenarios {
		tl := in.Run.Scenarios[si].Timeline
		for i := range tl {
			if tl[i].Ops == 0 {
				continue
			}
			e := &tl[i]
			e.OpP50MS = 1 + float64(i)
			e.OpP99MS = 10 * e.OpP50MS
			e.OpMaxMS = 100
			if i == 1 {
				e.OpMaxMS = 400
			}
			e.AcquireP50MS, e.AcquireP99MS, e.AcquireMaxMS = e.OpP50MS/10, e.OpP99MS/10, e.OpMaxMS/10
		}
	}
	return in
}

func decodePNG(t *testing.T, path string) (w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

// Latency over time: one chart per scenario with latency in its timeline,
// written as PNG (864 x 528) and SVG, listed in index.html under its
// scenario; the lines' span is over two decades, so the axis is log; the
// fault window is shaded and named; naive's empty intervals are a gap.
func TestLatencyChart(t *testing.T) {
	t.Parallel()
	in := withLatency(t)
	dir := t.TempDir()
	res, err := Write(dir, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Written, ",") != "spectrum,ops,violations,timeline,latency-1,latency-2" || len(res.Skipped) != 0 {
		t.Fatalf("written %v, skipped %v", res.Written, res.Skipped)
	}
	svgs := checkImages(t, dir, []string{"latency-1", "latency-2"})
	for i, s := range in.Run.Scenarios {
		svg := svgs[fmt.Sprintf("latency-%d", i+1)]
		for _, want := range []string{"Latency over time: " + s.Name(), "Operation (acquire + work + release)",
			"Acquire wait (retries included)", "latency (ms, log scale)", ">p50<", ">p99<", ">max<", "fault window: crash-after-setnx"} {
			if !strings.Contains(svg, want) {
				t.Errorf("latency-%d.svg lacks %q", i+1, want)
			}
		}
		// naive completed nothing after 2 s; atomic something in every interval.
		if gap := strings.Contains(svg, "(gap: none in the interval)"); gap != (s.Strategy == "naive") {
			t.Errorf("%s: gap note shown %v", s.Strategy, gap)
		}
	}
	html := readIndex(t, dir)
	for i, s := range in.Run.Scenarios {
		ref := fmt.Sprintf(`<h2>Latency over time: %s</h2>
<a href="latency-%d.svg"><img src="latency-%d.png"`, s.Name(), i+1, i+1)
		if !strings.Contains(html, ref) {
			t.Errorf("index.html does not show latency-%d under its scenario", i+1)
		}
	}
	// Within two decades (the acquire p50 raised to the operation's): a linear axis.
	for si := range in.Run.Scenarios {
		for i := range in.Run.Scenarios[si].Timeline {
			e := &in.Run.Scenarios[si].Timeline[i]
			if e.OpMaxMS > 0 {
				e.OpMaxMS, e.AcquireMaxMS, e.AcquireP50MS = 100, 10, e.OpP50MS // 1 to 100 ms: two decades, no more
			}
		}
	}
	dir = t.TempDir()
	if _, err := Write(dir, []Input{in}); err != nil {
		t.Fatal(err)
	}
	svg := checkImages(t, dir, []string{"latency-1"})["latency-1"]
	if strings.Contains(svg, "log scale") || !strings.Contains(svg, "latency (ms)") {
		t.Error("latency within two decades drawn on a log axis")
	}
}

// An interval without latency breaks the line: steps returns one segment
// per run of intervals with values, each interval a horizontal step from
// the entry before's TS (the window's start for the first).
func TestSteps(t *testing.T) {
	tl := []report.Second{{TS: 2, OpP99MS: 5}, {TS: 3, OpP99MS: 6}, {TS: 4}, {TS: 5}, {TS: 6, OpP99MS: 7}}
	segs := steps(tl, 1, func(e report.Second) float64 { return e.OpP99MS })
	want := []plotter.XYs{
		{{X: 1, Y: 5}, {X: 2, Y: 5}, {X: 2, Y: 6}, {X: 3, Y: 6}},
		{{X: 5, Y: 7}, {X: 6, Y: 7}},
	}
	if fmt.Sprint(segs) != fmt.Sprint(want) {
		t.Fatalf("steps = %v, want %v", segs, want)
	}
	if segs := steps([]report.Second{{TS: 1}, {TS: 2}}, 0, func(e report.Second) float64 { return e.OpP99MS }); len(segs) != 0 {
		t.Fatalf("no values: %d segments, want 0", len(segs))
	}
}

// 20 lines get 20 distinct (colour, dash) pairs, and in fact 20 distinct
// colours: the 12 of the palette, then generated ones; the lines past the
// 12th are dashed.
func TestLineStyleDistinct(t *testing.T) {
	pairs := map[string]int{}
	colours := map[color.NRGBA]int{}
	for i := range 20 {
		st := lineStyle(i)
		c := color.NRGBAModel.Convert(st.Color).(color.NRGBA)
		if c.A != 255 {
			t.Errorf("line %d: colour %v not opaque", i, c)
		}
		key := fmt.Sprint(c, st.Dashes)
		if j, ok := pairs[key]; ok {
			t.Errorf("lines %d and %d share colour and dashes %s", j, i, key)
		}
		pairs[key] = i
		if j, ok := colours[c]; ok {
			t.Errorf("lines %d and %d share colour %v", j, i, c)
		}
		colours[c] = i
		if dashed := len(st.Dashes) > 0; dashed != (i >= 12) {
			t.Errorf("line %d dashed: %v", i, dashed)
		}
	}
	if len(pairs) != 20 || len(colours) != 20 {
		t.Fatalf("%d distinct styles, %d distinct colours, want 20 each", len(pairs), len(colours))
	}
	// The first 11 are ColorBrewer's Paired, dark hues then light, without
	// its pale yellow (index 10).
	paired, err := brewer.GetPalette(brewer.TypeQualitative, "Paired", 12)
	if err != nil {
		t.Fatal(err)
	}
	pc := paired.Colors()
	for i, j := range []int{1, 3, 5, 7, 9, 11, 0, 2, 4, 6, 8} {
		got := color.NRGBAModel.Convert(seriesColor(i)).(color.NRGBA)
		want := color.NRGBAModel.Convert(pc[j]).(color.NRGBA)
		if got != want {
			t.Errorf("seriesColor(%d) = %v, want Paired[%d] %v", i, got, j, want)
		}
	}
	// Bars have no dashes: colours stay distinct far beyond a chart's needs.
	seen := map[color.NRGBA]bool{}
	for i := range 60 {
		c := color.NRGBAModel.Convert(seriesColor(i)).(color.NRGBA)
		if seen[c] {
			t.Fatalf("seriesColor(%d) = %v repeats", i, c)
		}
		seen[c] = true
	}
}

// The violations chart draws each kind's own count: a flash-sale overlap
// counted also as oversell, lost update and foreign release is four bars
// of 1, not one of 4; kinds no scenario counted are left out; a clean
// scenario has no bar.
func TestViolationData(t *testing.T) {
	t.Parallel()
	bad := report.Scenario{Strategy: "naive", Driver: "goredis", Workload: "flash-sale", Retry: "fixed"}
	bad.Violations = report.Violations{Overlap: 1, Oversell: 1, LostUpdates: 1, ForeignReleases: 1}
	stuck := report.Scenario{Strategy: "naive", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed"}
	stuck.Violations.StuckLocks = 2
	clean := report.Scenario{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: "fixed"}
	ss := collect([]Input{{Label: "x", Run: &report.Run{Scenarios: []report.Scenario{bad, stuck, clean}}}})
	d := violationData(ss)
	if want := []string{"oversell", "overlap", "lost updates", "stuck", "foreign releases"}; !slices.Equal(d.groups, want) {
		t.Fatalf("groups %v, want %v", d.groups, want)
	}
	if want := []string{bad.Name(), stuck.Name(), clean.Name()}; !slices.Equal(d.rows, want) {
		t.Fatalf("rows %v, want %v", d.rows, want)
	}
	nan := math.NaN()
	want := [][]float64{{1, nan, nan}, {1, nan, nan}, {1, nan, nan}, {nan, 2, nan}, {1, nan, nan}}
	if fmt.Sprint(d.vals) != fmt.Sprint(want) {
		t.Fatalf("values %v, want %v", d.vals, want)
	}
	dir := t.TempDir()
	res, err := Write(dir, []Input{{Label: "x", Run: &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{bad, stuck, clean}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Written, "violations") {
		t.Fatalf("written %v", res.Written)
	}
	svg := checkImages(t, dir, []string{"violations"})["violations"]
	for _, w := range append(d.groups, "Safety violations by kind", ">none<") {
		if !strings.Contains(svg, w) {
			t.Errorf("violations.svg lacks %q", w)
		}
	}
	if strings.Contains(svg, ">4<") {
		t.Error("violations.svg shows a sum of 4")
	}
	if d := violationData(ss[2:]); len(d.groups) != 0 {
		t.Fatalf("a clean scenario has groups %v", d.groups)
	}
}

// intersects reports whether rectangles a and b overlap in an area.
func intersects(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func inside(a, b vg.Rectangle) bool {
	return a.Min.X >= b.Min.X && a.Max.X <= b.Max.X && a.Min.Y >= b.Min.Y && a.Max.Y <= b.Max.Y
}

// Every chart's legend lies below its plotting areas: its box intersects
// no panel's canvas (axes included), let alone its data area, and lies
// inside the image; each column holds its entries. Checked on the charts
// of a run with 20 scenarios (the legend wraps into columns), the latency
// chart, the violations chart and the sweep.
func TestLegendOutsideData(t *testing.T) {
	var ss []report.Scenario
	for i := range 20 {
		s := report.Scenario{Strategy: fmt.Sprintf("strategy%02d", i), Driver: "rueidis", Workload: "lock-cycle", Retry: "fixed",
			Clients: 1 + i%2*9, Ops: 100, OpsPerSec: float64(100 + i), Params: map[string]string{"warmup": "0s"}}
		s.Violations.Overlap = int64(i % 3)
		s.Violations.Oversell = int64(i % 2)
		for k := 1; k <= 5; k++ {
			s.Timeline = append(s.Timeline, report.Second{TS: float64(k), Ops: int64(100 + i*k), OpP50MS: 1, OpP99MS: 3, OpMaxMS: 9,
				AcquireP50MS: 0.5, AcquireP99MS: 1, AcquireMaxMS: 2})
		}
		s.Faults = []report.FaultWindow{{Fault: "pause", StartMS: 2000, EndMS: 3000}}
		ss = append(ss, s)
	}
	in := collect([]Input{{Label: "many", Run: &report.Run{Schema: report.Schema, Scenarios: ss}}})
	figs := map[string]*figure{}
	for name, fn := range map[string]func([]series) (*figure, error){"ops": opsBars, "violations": violationBars, "timeline": timeline} {
		f, err := fn(in)
		if err != nil {
			t.Fatal(name, err)
		}
		figs[name] = f
	}
	lat, err := latencyCharts(in)
	if err != nil || len(lat) != 20 {
		t.Fatalf("latency charts: %d, %v", len(lat), err)
	}
	figs["latency-1"] = lat[0].fig
	// Pairs of strategy and clients: a sweep of 10 cells.
	for i := range ss {
		ss[i].Strategy = fmt.Sprintf("strategy%02d", i/2)
	}
	sw, err := sweep(collect([]Input{{Label: "sweep", Run: &report.Run{Schema: report.Schema, Scenarios: ss}}}))
	if err != nil || sw == nil {
		t.Fatalf("sweep: %v, %v", sw, err)
	}
	figs["sweep"] = sw
	wantEntries := map[string]int{"timeline": 21, "latency-1": 4, "violations": 2, "sweep": 10}
	for name, f := range figs {
		if n, ok := wantEntries[name]; ok && len(f.legend) != n {
			t.Errorf("%s: %d legend entries, want %d", name, len(f.legend), n)
		}
		if name == "ops" {
			if len(f.legend) != 0 {
				t.Errorf("ops of one file has a legend of %d entries", len(f.legend))
			}
			continue
		}
		c := draw.New(vgimg.New(f.w, f.h))
		lo := f.layout(c)
		if !inside(lo.legend, c.Rectangle) || lo.legend.Size().Y <= 0 {
			t.Errorf("%s: legend %v not inside the image %v", name, lo.legend, c.Rectangle)
		}
		if len(lo.columns) < 1 || lo.perCol*len(lo.columns) < len(f.legend) || lo.perCol*(len(lo.columns)-1) >= len(f.legend) {
			t.Errorf("%s: %d entries in %d columns of %d", name, len(f.legend), len(lo.columns), lo.perCol)
		}
		i := 0
		for _, row := range f.panels {
			for _, p := range row {
				pc := lo.panels[i]
				i++
				data := p.DataCanvas(pc).Rectangle
				if intersects(lo.legend, pc.Rectangle) || intersects(lo.legend, data) {
					t.Errorf("%s: legend %v intersects panel %v (data area %v)", name, lo.legend, pc.Rectangle, data)
				}
				if data.Size().Y < f.h/4 {
					t.Errorf("%s: data area %v squeezed below a quarter of the height", name, data)
				}
			}
		}
		if name == "timeline" && len(lo.columns) < 2 {
			t.Errorf("timeline: 21 entries in %d column(s), want them wrapped into columns", len(lo.columns))
		}
	}
}

// An open-loop run's timeline draws the offered rate beside the achieved.
func TestTimelineOffered(t *testing.T) {
	t.Parallel()
	in := load(t, "atomic-goredis.json")
	for si := range in.Run.Scenarios {
		for i := range in.Run.Scenarios[si].Timeline {
			in.Run.Scenarios[si].Timeline[i].Offered = 1000
		}
	}
	dir := t.TempDir()
	if _, err := Write(dir, []Input{in}); err != nil {
		t.Fatal(err)
	}
	svg := checkImages(t, dir, []string{"timeline"})["timeline"]
	name := in.Run.Scenarios[0].Name()
	for _, w := range []string{name + " (achieved)", name + " (offered)"} {
		if !strings.Contains(svg, w) {
			t.Errorf("timeline.svg lacks %q", w)
		}
	}
	if w, h := decodePNG(t, filepath.Join(dir, "timeline.png")); w != 864 || h != 528 {
		t.Errorf("timeline.png is %dx%d", w, h)
	}
}
