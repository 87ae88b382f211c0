// Package chart draws result files as charts with gonum.org/v1/plot — a
// latency percentile spectrum on a log "nines" axis (the HdrHistogram
// plotter's view), ops/s bars, violation bars one per kind, ops/s over
// time (offered beside achieved in open-loop runs) and, per scenario, the
// operation's and the acquire's p50/p99/max over time, both with the fault
// windows shaded, and, for a sweep, the figures against clients on a log
// axis — each as PNG and SVG, and an index.html (html/template) that shows
// them above the summary table. Several result files overlay on one chart,
// each line or bar labelled with its file. Every legend sits in a strip
// below the plotting area, and no two series of a chart share a colour.
package chart

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/internal/report"
)

// Input is one result file and the label its series carry (the file name
// without directory and .json when several files are drawn).
type Input struct {
	Label string
	Run   *report.Run
}

// Charts names the charts Write draws, without extension (each is written
// as NAME.png and NAME.svg), except "latency", which is one chart per
// scenario with latency in its timeline, written as latency-N.png and
// latency-N.svg (N from 1, in the scenarios' order, files in the order
// given).
var Charts = []string{"spectrum", "ops", "violations", "timeline", LatencyChart}

// LatencyChart is the name under which Result.Skipped gives the reason
// when no latency-over-time chart was drawn.
const LatencyChart = "latency"

// Size of every chart: 9 x 5.5 inches (864 x 528 px in the PNG, 96 dpi).
const (
	width  = 9 * vg.Inch
	height = 5.5 * vg.Inch
)

// series is one scenario of one file.
type series struct {
	// label names the series in legends, rows and headings: row, after
	// the file's label when several files are drawn.
	label string
	// row is the scenario's matrix cell (report.CellNames) and, when the
	// scenarios drawn ran a cell at two or more client counts (a sweep),
	// its client count: "atomic/rueidis/lock-cycle/spin, 10 clients". The
	// bar charts have one row per distinct row, one bar per file in it.
	row string
	// line is the label of the scenario's line in the sweep chart: its
	// cell, after the file's label when several files are drawn, without
	// the client count (the sweep chart's x axis).
	line string
	file string
	s    report.Scenario
}

// collect labels every scenario of in. When some cell (strategy, driver,
// workload and retry spec) ran at two or more client counts, in one file
// or across files, every label carries its scenario's client count:
// otherwise a sweep's scenarios of one cell would read alike in every
// legend, row and heading.
func collect(in []Input) []series {
	counts := map[string]map[int]bool{}
	for _, f := range in {
		for _, s := range f.Run.Scenarios {
			k := s.Strategy + "/" + s.Driver + "/" + s.Workload + "/" + s.Retry
			if counts[k] == nil {
				counts[k] = map[int]bool{}
			}
			counts[k][s.Clients] = true
		}
	}
	withClients := false
	for _, c := range counts {
		withClients = withClients || len(c) > 1
	}
	var out []series
	for _, f := range in {
		names := report.CellNames(f.Run.Scenarios)
		for i, s := range f.Run.Scenarios {
			row, line := names[i], names[i]
			if withClients {
				row += ", " + report.ClientsText(s.Clients)
			}
			label := row
			if len(in) > 1 {
				label = f.Label + ": " + row
				line = f.Label + ": " + line
			}
			out = append(out, series{label: label, row: row, line: line, file: f.Label, s: s})
		}
	}
	return out
}

// Result is what Write drew: the charts written, by name, in the order
// index.html shows them, and the charts left out with the reason (no
// latency histogram, no timeline in older files).
type Result struct {
	Written []string
	Skipped map[string]string
	// titles are the headings of the charts whose heading is not in the
	// titles table (the per-scenario latency charts).
	titles map[string]string
}

// Write draws every chart of in into dir (created if missing) as PNG and
// SVG and writes dir/index.html. Errors: no input, a run with no scenario,
// a latency histogram that does not decode, or a file that cannot be
// written.
func Write(dir string, in []Input) (*Result, error) {
	if len(in) == 0 {
		return nil, errors.New("no result files")
	}
	for _, f := range in {
		if len(f.Run.Scenarios) == 0 {
			return nil, fmt.Errorf("%s has no scenario to draw", f.Label)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ss := collect(in)
	res := &Result{Skipped: map[string]string{}, titles: map[string]string{}}
	save := func(name string, f *figure) error {
		for _, ext := range []string{".png", ".svg"} {
			if err := f.save(filepath.Join(dir, name+ext)); err != nil {
				return fmt.Errorf("%s chart: %w", name, err)
			}
		}
		res.Written = append(res.Written, name)
		return nil
	}
	draws := []struct {
		name string
		fn   func([]series) (*figure, error)
	}{{"spectrum", spectrum}, {"ops", opsBars}, {"violations", violationBars}, {"timeline", timeline}}
	for _, d := range draws {
		f, err := d.fn(ss)
		var skip errSkip
		if errors.As(err, &skip) {
			res.Skipped[d.name] = string(skip)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s chart: %w", d.name, err)
		}
		if err := save(d.name, f); err != nil {
			return nil, err
		}
	}
	lat, err := latencyCharts(ss)
	var skip errSkip
	switch {
	case errors.As(err, &skip):
		res.Skipped[LatencyChart] = string(skip)
	case err != nil:
		return nil, fmt.Errorf("%s chart: %w", LatencyChart, err)
	}
	for i, l := range lat {
		name := fmt.Sprintf("%s-%d", LatencyChart, i+1)
		if err := save(name, l.fig); err != nil {
			return nil, err
		}
		res.titles[name] = "Latency over time: " + l.label
	}
	g, err := sweep(ss)
	if err != nil {
		return nil, fmt.Errorf("%s chart: %w", SweepChart, err)
	}
	if g != nil {
		if err := save(SweepChart, g); err != nil {
			return nil, err
		}
	}
	if err := writeIndex(filepath.Join(dir, "index.html"), in, ss, res); err != nil {
		return nil, err
	}
	return res, nil
}

// errSkip says why a chart has nothing to draw.
type errSkip string

func (e errSkip) Error() string { return string(e) }

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// nines maps a percentile to the log "nines" axis: x = -log10(1 - q/100),
// so 90% is 1, 99% is 2, 99.9% is 3.
func nines(q float64) float64 { return -math.Log10(1 - q/100) }

// ninesTicks labels the nines axis with percentiles.
type ninesTicks struct{}

func (ninesTicks) Ticks(min, max float64) []plot.Tick {
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"}
	var ts []plot.Tick
	for i := 0; i < len(labels) && float64(i) <= max+1e-9; i++ {
		if float64(i) >= min-1e-9 {
			ts = append(ts, plot.Tick{Value: float64(i), Label: labels[i]})
		}
		// Minor ticks at 50% within the first decade, 95% etc. beyond.
		if mid := nines(100 * (1 - 0.5*math.Pow(10, -float64(i)))); mid <= max && mid >= min {
			ts = append(ts, plot.Tick{Value: mid})
		}
	}
	return ts
}

// spectrum is the latency percentile spectrum of every scenario with a
// latency histogram: latency (ms, log) at each percentile up to the last
// the sample size supports (1 - 1/count).
func spectrum(ss []series) (*figure, error) {
	p := newPlot("Latency by percentile (whole operation)", "percentile", "latency (ms, log scale)")
	p.X.Tick.Marker = ninesTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	n := 0
	var legend []entry
	lowest := math.Inf(1)
	for _, s := range ss {
		if s.s.LatencyHist == "" {
			continue
		}
		h, err := hdrhistogram.Decode([]byte(s.s.LatencyHist))
		if err != nil {
			return nil, fmt.Errorf("%s: latency_hist: %w", s.label, err)
		}
		if h.TotalCount() == 0 {
			continue
		}
		top := math.Max(nines(100*(1-1/float64(h.TotalCount()))), 1)
		var xys plotter.XYs
		for x := 0.0; x <= top+1e-9; x += 0.02 {
			q := 100 * (1 - math.Pow(10, -x))
			xys = append(xys, plotter.XY{X: x, Y: float64(max(h.ValueAtQuantile(q), 1)) / 1000})
		}
		xys = append(xys, plotter.XY{X: top, Y: float64(max(h.Max(), 1)) / 1000})
		lowest = math.Min(lowest, xys[0].Y)
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(n)
		p.Add(l)
		legend = append(legend, entry{s.label, []plot.Thumbnailer{l}})
		n++
	}
	if n == 0 {
		return nil, errSkip("no scenario has a latency histogram (latency_hist)")
	}
	// Start the axis at a power of ten, so that it carries a label below
	// the lowest line.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lowest)))
	return single(p, legend), nil
}

// names returns the distinct rows (series.row) in order of first
// appearance and the files in order of first appearance.
func names(ss []series) (order []string, files []string) {
	seen := map[string]bool{}
	fseen := map[string]bool{}
	for _, s := range ss {
		if !seen[s.row] {
			seen[s.row] = true
			order = append(order, s.row)
		}
		if !fseen[s.file] {
			fseen[s.file] = true
			files = append(files, s.file)
		}
	}
	return order, files
}

// barData is a horizontal grouped bar chart's data: one row per name in
// rows (the first on top), and in each row one bar per group (groups[g]
// coloured seriesColor(g)); vals[g][r] is group g's value in row r, NaN
// for no bar and no label.
type barData struct {
	rows, groups []string
	vals         [][]float64
}

// bars draws d as horizontal bars, each row's bars side by side in its
// band, each bar with its value (format) written after it; it returns the
// legend entries of the groups.
func bars(d barData, title, x, format string) (*plot.Plot, []entry, error) {
	p := newPlot(title, x, "")
	nr := len(d.rows)
	rows := make([]string, nr)
	for i, n := range d.rows {
		rows[nr-1-i] = n
	}
	// Bars of one row share a band; each group gets a slice of it.
	band := vg.Length(math.Min(24, 300/float64(nr)))
	w := band / vg.Length(max(len(d.groups), 1))
	top := 0.0
	var legend []entry
	for g, name := range d.groups {
		vals := make(plotter.Values, nr)
		var lxy plotter.XYs
		var ltext []string
		for r, v := range d.vals[g] {
			if math.IsNaN(v) {
				continue
			}
			vals[nr-1-r] = v
			top = math.Max(top, v)
			lxy = append(lxy, plotter.XY{X: v, Y: float64(nr - 1 - r)})
			ltext = append(ltext, fmt.Sprintf(format, v))
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, nil, err
		}
		b.Horizontal = true
		b.Color = seriesColor(g)
		b.LineStyle.Width = 0
		b.Offset = band/2 - w*vg.Length(g) - w/2 // the first group on top
		p.Add(b)
		legend = append(legend, entry{name, []plot.Thumbnailer{b}})
		if len(lxy) == 0 {
			continue
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: lxy, Labels: ltext})
		if err != nil {
			return nil, nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].YAlign = draw.YCenter
		}
		lb.Offset = vg.Point{X: vg.Points(3), Y: b.Offset}
		p.Add(lb)
	}
	p.NominalY(rows...)
	p.Y.Min, p.Y.Max = -0.6, float64(nr)-0.4
	p.X.Min = 0
	p.X.Max = math.Max(top*1.15, 1) // room for the value labels
	p.X.Tick.Marker = numTicks{}
	return p, legend, nil
}

// numTicks are plot.DefaultTicks with plain labels (500, not 500.00), and
// labels only on whole numbers when the axis counts.
type numTicks struct{ whole bool }

func (t numTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		if t.whole && ts[i].Value != math.Round(ts[i].Value) {
			ts[i].Label = ""
			continue
		}
		ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
	}
	return ts
}

// opsData is the ops chart's data: a row per distinct series.row (matrix
// cell, and client count in a sweep), a group per file, each value the
// scenario's ops/s; NaN where a file has no scenario of the row.
func opsData(ss []series) barData {
	order, files := names(ss)
	d := barData{rows: order, groups: files}
	idx := map[string]int{}
	for i, n := range order {
		idx[n] = i
	}
	fidx := map[string]int{}
	for i, f := range files {
		fidx[f] = i
		d.vals = append(d.vals, nanValues(len(order)))
	}
	for _, s := range ss {
		d.vals[fidx[s.file]][idx[s.row]] = s.s.OpsPerSec
	}
	return d
}

// opsBars are ops/s per scenario, a bar per file.
func opsBars(ss []series) (*figure, error) {
	d := opsData(ss)
	p, legend, err := bars(d, "Throughput", "ops/s (operations per second, measured window)", "%.0f")
	if err != nil {
		return nil, err
	}
	if len(d.groups) == 1 {
		legend = nil // one file: the bars need no key
	}
	return single(p, legend), nil
}

func nanValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// violationData is the violations chart's data: a row per scenario of
// each file (its label), a group per kind of report.ViolationKinds that
// some row counted (kinds zero in every row are left out), each value the
// kind's own count; kinds are never added together, since one event may
// count as several (an overlap in flash-sale is also an oversell, a lost
// update and a foreign release). A zero is NaN (no bar): a row without
// any violation has no bar at all.
func violationData(ss []series) barData {
	var d barData
	for _, s := range ss {
		d.rows = append(d.rows, s.label)
	}
	for _, k := range report.ViolationKinds {
		vals := nanValues(len(ss))
		some := false
		for r, s := range ss {
			if n := k.Of(s.s.Violations); n != 0 {
				vals[r], some = float64(n), true
			}
		}
		if some {
			d.groups = append(d.groups, k.Name)
			d.vals = append(d.vals, vals)
		}
	}
	return d
}

// violationBars are the violations of each scenario, one bar per kind,
// "none" written in the rows without any.
func violationBars(ss []series) (*figure, error) {
	d := violationData(ss)
	title := "Safety violations by kind (one event may count under several kinds)"
	if len(d.groups) == 0 {
		title = "Safety violations: none in any scenario"
	}
	p, legend, err := bars(d, title, "violations (count, whole scenario)", "%.0f")
	if err != nil {
		return nil, err
	}
	var none plotter.XYLabels
	for r := range d.rows {
		clean := true
		for g := range d.groups {
			clean = clean && math.IsNaN(d.vals[g][r])
		}
		if clean {
			none.XYs = append(none.XYs, plotter.XY{X: 0, Y: float64(len(d.rows) - 1 - r)})
			none.Labels = append(none.Labels, "none")
		}
	}
	if len(none.XYs) > 0 {
		lb, err := plotter.NewLabels(none)
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].YAlign = draw.YCenter
		}
		lb.Offset = vg.Point{X: vg.Points(3)}
		p.Add(lb)
	}
	p.X.Tick.Marker = numTicks{whole: true}
	return single(p, legend), nil
}

// shade fills the fault windows [x0, x1] (s) over the whole plot height.
type shade struct {
	spans [][2]float64
	color color.Color
}

func (sh shade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, sp := range sh.spans {
		x0, x1 := trX(sp[0]), trX(sp[1])
		x0, x1 = max(x0, c.Min.X), min(x1, c.Max.X)
		if x1-x0 < vg.Points(4) { // an instant (a crash): a thin band
			x0, x1 = x0-vg.Points(2), x0+vg.Points(2)
		}
		if x1 <= c.Min.X || x0 >= c.Max.X {
			continue
		}
		c.FillPolygon(sh.color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// Thumbnail draws the legend's swatch.
func (sh shade) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(sh.color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// faultShade is the shading of the fault windows that acted in the
// scenarios of ss (s since each scenario's start), with the legend entry
// that names the faults; ok false when none acted.
func faultShade(ss ...report.Scenario) (sh shade, e entry, ok bool) {
	sh.color = color.NRGBA{R: 255, G: 140, B: 0, A: 90}
	var faultNames []string
	for _, s := range ss {
		for _, f := range s.Faults {
			if f.StartMS < 0 {
				continue // never triggered
			}
			sh.spans = append(sh.spans, [2]float64{f.StartMS / 1000, math.Max(f.EndMS, f.StartMS) / 1000})
			name, _, _ := strings.Cut(f.Fault, ":")
			if !contains(faultNames, name) {
				faultNames = append(faultNames, name)
			}
		}
	}
	if len(sh.spans) == 0 {
		return sh, e, false
	}
	sh.spans = union(sh.spans)
	return sh, entry{"fault window: " + strings.Join(faultNames, ", "), []plot.Thumbnailer{sh}}, true
}

// union merges overlapping spans, so that scenarios sharing a fault
// window shade it once, not once per scenario ever darker.
func union(spans [][2]float64) [][2]float64 {
	slices.SortFunc(spans, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	out := spans[:1]
	for _, sp := range spans[1:] {
		if last := &out[len(out)-1]; sp[0] <= last[1] {
			last[1] = math.Max(last[1], sp[1])
		} else {
			out = append(out, sp)
		}
	}
	return out
}

// windowStart is the start of a scenario's measured window in s since its
// start: its warm-up (params.warmup), where the first interval begins.
func windowStart(s report.Scenario) float64 {
	if d, err := time.ParseDuration(s.Params["warmup"]); err == nil {
		return d.Seconds()
	}
	return 0
}

// offeredDash is the dash pattern of an offered-rate line (dotted), drawn
// in its scenario's colour beside the achieved rate.
var offeredDash = []vg.Length{vg.Points(1.5), vg.Points(2.5)}

// timeline draws ops/s per interval of the measured window for every
// scenario with a timeline and, in open-loop runs (offered in the
// timeline), the offered rate dotted in the same colour; the fault windows
// shaded behind. A scenario with a client ramp names its clients at the
// first and last intervals in its legend.
func timeline(ss []series) (*figure, error) {
	p := newPlot("Throughput over time", "time since the scenario's start (s)", "ops/s")
	var lines []plot.Plotter
	var legend []entry
	var scen []report.Scenario
	top := 1.0
	n := 0
	for _, s := range ss {
		tl := s.s.Timeline
		if len(tl) < 2 {
			continue // one entry (a run under 2 s) draws a flat line, not a course over time
		}
		prev := windowStart(s.s)
		achieved, offered := plotter.XYs{}, plotter.XYs{}
		open := false
		for _, e := range tl {
			r := e.OpsPerSec(prev)
			o := 0.0
			if e.Offered > 0 && e.TS > prev {
				o, open = float64(e.Offered)/(e.TS-prev), true
			}
			top = math.Max(top, math.Max(r, o))
			achieved = append(achieved, plotter.XY{X: prev, Y: r}, plotter.XY{X: e.TS, Y: r}) // a step per interval
			offered = append(offered, plotter.XY{X: prev, Y: o}, plotter.XY{X: e.TS, Y: o})
			prev = e.TS
		}
		l, err := plotter.NewLine(achieved)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(n)
		lines = append(lines, l)
		label := s.label
		if s.s.Ramped() {
			// A client ramp: the clients at the first and last entries'
			// ends (the plot has one axis, for ops/s).
			label += fmt.Sprintf(" (clients %d to %d)", tl[0].Clients, tl[len(tl)-1].Clients)
		}
		if open {
			label += " (achieved)"
		}
		legend = append(legend, entry{label, []plot.Thumbnailer{l}})
		if open {
			lo, err := plotter.NewLine(offered)
			if err != nil {
				return nil, err
			}
			lo.LineStyle = lineStyle(n)
			lo.LineStyle.Width = vg.Points(1.2)
			lo.LineStyle.Dashes = offeredDash
			lines = append(lines, lo)
			legend = append(legend, entry{s.label + " (offered)", []plot.Thumbnailer{lo}})
		}
		scen = append(scen, s.s)
		n++
	}
	if n == 0 {
		return nil, errSkip("no scenario has a timeline of two entries or more (runs shorter than two --interval, or files written before lockbench recorded one)")
	}
	if sh, e, ok := faultShade(scen...); ok {
		p.Add(sh) // behind the lines
		legend = append(legend, e)
	}
	p.Add(lines...)
	p.Y.Max = top * 1.05
	p.Y.Tick.Marker = numTicks{}
	p.X.Tick.Marker = secondTicks{}
	p.X.Min = 0
	p.Y.Min = 0
	return single(p, legend), nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// secondTicks labels a time axis in whole seconds, at most about 12
// labels: every 1, 2, 5, 10, 15, 30, 60, 120, 300 or 600 s.
type secondTicks struct{}

func (secondTicks) Ticks(min, max float64) []plot.Tick {
	step := 600.0
	for _, st := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		if (max-min)/st <= 12 {
			step = st
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ts
}
