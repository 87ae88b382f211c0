package chart

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/internal/report"
)

// SweepChart is the name of the sweep chart (SweepChart.png and .svg):
// drawn when a matrix cell of some file was run at two or more client
// counts (lockbench sweep), and otherwise neither drawn nor listed as
// skipped.
const SweepChart = "sweep"

// Size of the sweep chart: 13.5 x 8 inches (1296 x 768 px in the PNG),
// six panels in two rows of three.
const (
	sweepWidth  = 13.5 * vg.Inch
	sweepHeight = 8 * vg.Inch
)

// sweepPanel is one figure of the sweep chart, against clients.
type sweepPanel struct {
	title, y string
	log      bool // log y axis (latencies)
	// of is the figure of a scenario; ok false when it was not measured
	// (no ceiling, no command count): no point is drawn.
	of func(report.Scenario) (v float64, ok bool)
}

var sweepPanels = []sweepPanel{
	{"Throughput", "ops/s", false, func(s report.Scenario) (float64, bool) { return s.OpsPerSec, true }},
	{"Efficiency (ops/s / lock-bound ceiling)", "efficiency", false,
		func(s report.Scenario) (float64, bool) { return s.Efficiency, s.HasCeiling() }},
	{"Fairness (Jain's index over clients' ops)", "Jain index", false,
		func(s report.Scenario) (float64, bool) { return s.Fairness.JainIndex, s.HasJain() }},
	{"Acquire wait p99 (retries included)", "ms, log scale", true,
		func(s report.Scenario) (float64, bool) { return s.AcquireMS.P99, s.AcquireMS.P99 > 0 }},
	{"Operation latency p99 (acquire + work + release)", "ms, log scale", true,
		func(s report.Scenario) (float64, bool) { return s.LatencyMS.P99, s.LatencyMS.P99 > 0 }},
	{"Redis commands per operation", "commands/op", false,
		func(s report.Scenario) (float64, bool) {
			return s.RedisCost.CommandsPerOp, s.RedisCost.CommandsPerOp > 0
		}},
}

// sweepLine is one matrix cell of one file: its scenarios by clients.
type sweepLine struct {
	label string
	ss    []report.Scenario
}

// sweepLines groups ss by file and matrix cell (its label: series.line,
// without the client count), in order of first appearance, each cell's
// scenarios sorted by clients; it keeps the cells run at two or more
// client counts.
func sweepLines(ss []series) []sweepLine {
	var lines []sweepLine
	idx := map[string]int{}
	for _, s := range ss {
		k := s.file + "\x00" + s.line
		i, ok := idx[k]
		if !ok {
			i = len(lines)
			idx[k] = i
			lines = append(lines, sweepLine{label: s.line})
		}
		lines[i].ss = append(lines[i].ss, s.s)
	}
	var out []sweepLine
	for _, l := range lines {
		slices.SortStableFunc(l.ss, func(a, b report.Scenario) int { return a.Clients - b.Clients })
		distinct := 0
		for i, s := range l.ss {
			if i == 0 || s.Clients != l.ss[i-1].Clients {
				distinct++
			}
		}
		if distinct >= 2 {
			out = append(out, l)
		}
	}
	return out
}

// sweep draws ops/s, efficiency, Jain's index, the acquire wait's and the
// operation's p99 and commands per operation against clients on a log
// axis, one line per matrix cell of each file, in two rows of three panels
// above one legend; nil when no cell ran at two or more client counts.
func sweep(ss []series) (*figure, error) {
	lines := sweepLines(ss)
	if len(lines) == 0 {
		return nil, nil
	}
	var counts []int
	for _, l := range lines {
		for _, s := range l.ss {
			if !slices.Contains(counts, s.Clients) {
				counts = append(counts, s.Clients)
			}
		}
	}
	slices.Sort(counts)
	grid := [][]*plot.Plot{make([]*plot.Plot, 3), make([]*plot.Plot, 3)}
	var legend []entry
	for pi, panel := range sweepPanels {
		p := newPlot(panel.title, "clients (log scale)", panel.y)
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = clientTicks(counts)
		p.X.Min, p.X.Max = float64(counts[0])/1.25, float64(counts[len(counts)-1])*1.25
		lo, hi, n, gaps := math.Inf(1), 0.0, 0, false
		for li, l := range lines {
			var xys plotter.XYs
			for _, s := range l.ss {
				if v, ok := panel.of(s); ok && (!panel.log || v > 0) {
					xys = append(xys, plotter.XY{X: float64(s.Clients), Y: v})
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				} else {
					gaps = true
				}
			}
			if len(xys) == 0 {
				continue
			}
			ln, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			ln.LineStyle = lineStyle(li)
			pts.Color = ln.LineStyle.Color
			pts.Shape = draw.CircleGlyph{}
			p.Add(ln, pts)
			if pi == 0 {
				legend = append(legend, entry{l.label, []plot.Thumbnailer{ln, pts}})
			}
			n++
		}
		if gaps && n > 0 {
			p.Title.Text += " (no point: not measured)"
		}
		switch {
		case n == 0:
			p.Title.Text += ": not measured"
			p.Y.Min, p.Y.Max = 0, 1
			if panel.log {
				p.Y.Min, p.Y.Max = 0.1, 1
			}
		case panel.log:
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = decadeTicks{}
			// Powers of ten at both ends, so that the axis has labels.
			p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
			p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*1.0001)))
		default:
			p.Y.Min = 0
			p.Y.Max = math.Max(hi*1.1, 1e-9)
			if pi == 1 || pi == 2 { // ratios: at least 0 to 1
				p.Y.Max = math.Max(p.Y.Max, 1.05)
			}
			p.Y.Tick.Marker = numTicks{}
		}
		grid[pi/3][pi%3] = p
	}
	return &figure{panels: grid, legend: legend, w: sweepWidth, h: sweepHeight}, nil
}

// clientTicks labels the clients axis: every swept count when there are
// at most 10 of them, else the powers of ten.
func clientTicks(counts []int) plot.Ticker {
	if len(counts) > 10 {
		return decadeTicks{}
	}
	ts := make(plot.ConstantTicks, len(counts))
	for i, c := range counts {
		ts[i] = plot.Tick{Value: float64(c), Label: strconv.Itoa(c)}
	}
	return ts
}

// decadeTicks label a log axis at the powers of ten (0.1, 1, 10, ...),
// with unlabelled ticks at 2 to 9 times each.
type decadeTicks struct{}

func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for k := math.Floor(math.Log10(min)); k <= math.Ceil(math.Log10(max)); k++ {
		v := math.Pow(10, k)
		if v >= min*(1-1e-9) && v <= max*(1+1e-9) {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
		for i := 2.0; i < 10; i++ {
			if m := i * v; m >= min && m <= max {
				ts = append(ts, plot.Tick{Value: m})
			}
		}
	}
	return ts
}
