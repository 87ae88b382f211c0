package chart

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/lockbench/lockbench/internal/report"
)

// latencyFig is the latency-over-time chart of one scenario of one file.
type latencyFig struct {
	label string
	fig   *figure
}

// latencyMetric is one line of a latency panel: a percentile of one
// timeline entry, in ms; 0 when the interval has none.
type latencyMetric struct {
	name string
	of   func(report.Second) float64
}

var latencyMetrics = []latencyMetric{
	{"p50", func(e report.Second) float64 { return e.OpP50MS }},
	{"p99", func(e report.Second) float64 { return e.OpP99MS }},
	{"max", func(e report.Second) float64 { return e.OpMaxMS }},
}

var acquireMetrics = []latencyMetric{
	{"p50", func(e report.Second) float64 { return e.AcquireP50MS }},
	{"p99", func(e report.Second) float64 { return e.AcquireP99MS }},
	{"max", func(e report.Second) float64 { return e.AcquireMaxMS }},
}

// logDecades is the span (hi / lo) above which a latency chart's y axis is
// logarithmic: more than two decades, where a linear axis would flatten
// p50 against a max.
const logDecades = 100

// steps are a metric's values over the timeline tl as step lines, one
// horizontal step per interval (from the entry before's TS, or start for
// the first, to its own TS), broken into segments where an interval has
// no value (no operation completed in it): a gap, not a zero.
func steps(tl []report.Second, start float64, of func(report.Second) float64) []plotter.XYs {
	var segs []plotter.XYs
	var cur plotter.XYs
	prev := start
	for _, e := range tl {
		if v := of(e); v > 0 {
			cur = append(cur, plotter.XY{X: prev, Y: v}, plotter.XY{X: e.TS, Y: v})
		} else if len(cur) > 0 {
			segs = append(segs, cur)
			cur = nil
		}
		prev = e.TS
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// hasLatency reports whether some entry of tl carries latency.
func hasLatency(tl []report.Second) bool {
	for _, e := range tl {
		if e.OpMaxMS > 0 || e.AcquireMaxMS > 0 {
			return true
		}
	}
	return false
}

// latencyCharts draws, for every scenario whose timeline has two or more
// entries and latency in some of them, the operation's and the acquire's
// p50, p99 and max per interval side by side on one y range (log when it
// spans more than two decades), the fault windows shaded behind, the
// legend below.
func latencyCharts(ss []series) ([]latencyFig, error) {
	var out []latencyFig
	for _, s := range ss {
		tl := s.s.Timeline
		if len(tl) < 2 || !hasLatency(tl) {
			continue
		}
		start := windowStart(s.s)
		lo, hi := math.Inf(1), 0.0
		type panelData struct {
			title string
			segs  [][]plotter.XYs // per metric
			gaps  bool
		}
		panels := []panelData{{title: "Operation (acquire + work + release)"}, {title: "Acquire wait (retries included)"}}
		for pi, ms := range [][]latencyMetric{latencyMetrics, acquireMetrics} {
			for _, m := range ms {
				segs := steps(tl, start, m.of)
				n := 0
				for _, seg := range segs {
					n += len(seg) / 2
					for _, xy := range seg {
						lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
					}
				}
				if n < len(tl) {
					panels[pi].gaps = true
				}
				panels[pi].segs = append(panels[pi].segs, segs)
			}
		}
		logY := hi/lo > logDecades
		var row []*plot.Plot
		for _, pd := range panels {
			y := "latency (ms)"
			if logY {
				y = "latency (ms, log scale)"
			}
			title := pd.title
			if pd.gaps {
				title += " (gap: none in the interval)"
			}
			p := newPlot(title, "time since the scenario's start (s)", y)
			p.Title.TextStyle.Font.Size = vg.Points(11)
			if sh, _, ok := faultShade(s.s); ok {
				p.Add(sh) // behind the lines
			}
			for mi, segs := range pd.segs {
				for _, seg := range segs {
					l, err := plotter.NewLine(seg)
					if err != nil {
						return nil, err
					}
					l.LineStyle = lineStyle(mi)
					p.Add(l)
				}
			}
			p.X.Min, p.X.Max = 0, tl[len(tl)-1].TS
			p.X.Tick.Marker = secondTicks{}
			if logY {
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = decadeTicks{}
				p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
				p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*1.0001)))
			} else {
				p.Y.Min, p.Y.Max = 0, hi*1.05
				p.Y.Tick.Marker = numTicks{}
			}
			row = append(row, p)
		}
		var legend []entry
		for mi, m := range latencyMetrics {
			legend = append(legend, entry{m.name, []plot.Thumbnailer{&plotter.Line{LineStyle: lineStyle(mi)}}})
		}
		if _, e, ok := faultShade(s.s); ok {
			legend = append(legend, e)
		}
		out = append(out, latencyFig{label: s.label, fig: &figure{
			title:  "Latency over time: " + s.label,
			panels: [][]*plot.Plot{row},
			legend: legend,
			w:      width, h: height,
		}})
	}
	if len(out) == 0 {
		return nil, errSkip("no scenario's timeline has two entries or more with latency (op_p50_ms ...): runs shorter than two --interval, or files written before lockbench recorded latency per interval")
	}
	return out, nil
}
