// Package chart draws result files as charts with gonum.org/v1/plot — a
// latency percentile spectrum on a log "nines" axis (the HdrHistogram
// plotter's view), ops/s bars, violation bars, ops/s over time with the
// fault windows shaded and, for a sweep, the figures against clients on a
// log axis — each as PNG and SVG, and an index.html (html/
// template) that shows them above the summary table. Several result files
// overlay on one chart, each line or bar labelled with its file.
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
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
// as NAME.png and NAME.svg).
var Charts = []string{"spectrum", "ops", "violations", "timeline"}

// Size of every chart: 9 x 5.5 inches (864 x 528 px in the PNG, 96 dpi).
const (
	width  = 9 * vg.Inch
	height = 5.5 * vg.Inch
)

// series is one scenario of one file.
type series struct {
	label string
	file  string
	s     report.Scenario
}

func collect(in []Input) []series {
	var out []series
	for _, f := range in {
		for _, s := range f.Run.Scenarios {
			label := s.Name()
			if len(in) > 1 {
				label = f.Label + ": " + label
			}
			out = append(out, series{label: label, file: f.Label, s: s})
		}
	}
	return out
}

// Result is what Write drew: the charts written (name -> note), and the
// charts left out with the reason (no latency histogram, no timeline in
// older files).
type Result struct {
	Written []string
	Skipped map[string]string
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
	res := &Result{Skipped: map[string]string{}}
	draws := []struct {
		name string
		fn   func([]series) (*plot.Plot, error)
	}{{"spectrum", spectrum}, {"ops", opsBars}, {"violations", violationBars}, {"timeline", timeline}}
	for _, d := range draws {
		p, err := d.fn(ss)
		var skip errSkip
		if errors.As(err, &skip) {
			res.Skipped[d.name] = string(skip)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s chart: %w", d.name, err)
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := p.Save(width, height, filepath.Join(dir, d.name+ext)); err != nil {
				return nil, fmt.Errorf("%s chart: %w", d.name, err)
			}
		}
		res.Written = append(res.Written, d.name)
	}
	g, err := sweep(ss)
	if err != nil {
		return nil, fmt.Errorf("%s chart: %w", SweepChart, err)
	}
	if g != nil {
		for _, ext := range []string{".png", ".svg"} {
			if err := g.save(filepath.Join(dir, SweepChart+ext)); err != nil {
				return nil, fmt.Errorf("%s chart: %w", SweepChart, err)
			}
		}
		res.Written = append(res.Written, SweepChart)
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
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// lineStyle gives series i a colour and, past the palette, a dash pattern,
// so that up to 35 lines stay apart.
func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1.5), Dashes: plotutil.Dashes(i / len(plotutil.DefaultColors))}
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
func spectrum(ss []series) (*plot.Plot, error) {
	p := newPlot("Latency by percentile (whole operation)", "percentile", "latency (ms, log scale)")
	p.X.Tick.Marker = ninesTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	n := 0
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
		p.Legend.Add(s.label, l)
		n++
	}
	if n == 0 {
		return nil, errSkip("no scenario has a latency histogram (latency_hist)")
	}
	// Start the axis at a power of ten, so that it carries a label below
	// the lowest line.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lowest)))
	return p, nil
}

// names returns the distinct scenario names in order of first appearance
// and, per file, the index of each of its scenarios in that order.
func names(ss []series) (order []string, files []string) {
	seen := map[string]bool{}
	fseen := map[string]bool{}
	for _, s := range ss {
		if n := s.s.Name(); !seen[n] {
			seen[n] = true
			order = append(order, n)
		}
		if !fseen[s.file] {
			fseen[s.file] = true
			files = append(files, s.file)
		}
	}
	return order, files
}

// bars draws one horizontal bar per scenario, grouped by file, the first
// scenario on top, each bar with its value written after it.
func bars(ss []series, title, x string, value func(report.Scenario) float64, format string) (*plot.Plot, error) {
	order, files := names(ss)
	p := newPlot(title, x, "")
	p.Legend.Top, p.Legend.Left = false, false
	idx := map[string]int{}
	rows := make([]string, len(order))
	for i, n := range order {
		idx[n] = len(order) - 1 - i
		rows[len(order)-1-i] = n
	}
	// Bars of one scenario share a band; each file gets a slice of it.
	band := vg.Length(math.Min(24, 300/float64(len(order))))
	w := band / vg.Length(len(files))
	top := 0.0
	for fi, f := range files {
		vals := make(plotter.Values, len(order))
		var lxy plotter.XYs
		var ltext []string
		for _, s := range ss {
			if s.file == f {
				v := value(s.s)
				vals[idx[s.s.Name()]] = v
				top = math.Max(top, v)
				lxy = append(lxy, plotter.XY{X: v, Y: float64(idx[s.s.Name()])})
				ltext = append(ltext, fmt.Sprintf(format, v))
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		b.Horizontal = true
		b.Color = plotutil.Color(fi)
		b.LineStyle.Width = 0
		b.Offset = -band/2 + w*vg.Length(fi) + w/2
		p.Add(b)
		if len(files) > 1 {
			p.Legend.Add(f, b)
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: lxy, Labels: ltext})
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].YAlign = draw.YCenter
		}
		lb.Offset = vg.Point{X: vg.Points(3), Y: b.Offset}
		p.Add(lb)
	}
	p.NominalY(rows...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(order))-0.4
	p.X.Min = 0
	p.X.Max = math.Max(top*1.15, 1) // room for the value labels
	p.X.Tick.Marker = numTicks{}
	return p, nil
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

func opsBars(ss []series) (*plot.Plot, error) {
	return bars(ss, "Throughput", "ops/s (operations per second, measured window)", func(s report.Scenario) float64 { return s.OpsPerSec }, "%.0f")
}

func violationBars(ss []series) (*plot.Plot, error) {
	var total int64
	for _, s := range ss {
		total += s.s.Violations.Total()
	}
	title := "Safety violations (oversell + overlap + lost updates + other kinds)"
	if total == 0 {
		title = "Safety violations: none in any scenario"
	}
	p, err := bars(ss, title, "violations (count, whole scenario)", func(s report.Scenario) float64 { return float64(s.Violations.Total()) }, "%.0f")
	if err != nil {
		return nil, err
	}
	p.X.Tick.Marker = numTicks{whole: true}
	return p, nil
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

// timeline draws ops/s per second of the measured window for every
// scenario with a timeline, the fault windows shaded behind.
func timeline(ss []series) (*plot.Plot, error) {
	p := newPlot("Throughput over time", "time since the scenario's start (s)", "ops/s")
	sh := shade{color: color.NRGBA{R: 255, G: 140, B: 0, A: 90}}
	var faultNames []string
	var lines []*plotter.Line
	var labels []string
	top := 1.0
	for _, s := range ss {
		tl := s.s.Timeline
		if len(tl) < 2 {
			continue // one entry (a run under 2 s) draws a flat line, not a course over time
		}
		// The first interval starts where the measured window does, at
		// the warm-up's end.
		prev := 0.0
		if d, err := time.ParseDuration(s.s.Params["warmup"]); err == nil {
			prev = d.Seconds()
		}
		xys := plotter.XYs{}
		for _, e := range tl {
			r := e.OpsPerSec(prev)
			top = math.Max(top, r)
			xys = append(xys, plotter.XY{X: prev, Y: r}, plotter.XY{X: e.TS, Y: r}) // a step per interval
			prev = e.TS
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(len(lines))
		lines = append(lines, l)
		labels = append(labels, s.label)
		for _, f := range s.s.Faults {
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
	if len(lines) == 0 {
		return nil, errSkip("no scenario has a timeline of two seconds or more (runs under 2 s, or files written before lockbench recorded one)")
	}
	if len(sh.spans) > 0 { // behind the lines
		p.Add(sh)
	}
	for i, l := range lines {
		p.Add(l)
		p.Legend.Add(labels[i], l)
	}
	if len(sh.spans) > 0 {
		p.Legend.Add("fault window: "+strings.Join(faultNames, ", "), sh)
	}
	// Head room above the highest step for the legend (about 5 % of the
	// height per line of it).
	p.Y.Max = top * (1.1 + 0.055*float64(len(lines)+min(len(sh.spans), 1)))
	p.Y.Tick.Marker = numTicks{}
	p.X.Tick.Marker = secondTicks{}
	p.X.Min = 0
	p.Y.Min = 0
	return p, nil
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
