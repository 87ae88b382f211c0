package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/internal/report"
)

// palette are the first 12 series colours: the six dark then five light
// hues of ColorBrewer's qualitative "Paired" scheme (colorbrewer2.org,
// Cynthia Brewer; gonum's palette/brewer has it), leaving out its pale
// yellow, which does not show on white, and a dark grey as the twelfth.
var palette = []color.Color{
	rgb(0x1f78b4), rgb(0x33a02c), rgb(0xe31a1c), rgb(0xff7f00), rgb(0x6a3d9a), rgb(0xb15928),
	rgb(0xa6cee3), rgb(0xb2df8a), rgb(0xfb9a99), rgb(0xfdbf6f), rgb(0xcab2d6), rgb(0x4d4d4d),
}

func rgb(v uint32) color.Color {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// seriesColor is the colour of series i (from 0): the palette's for the
// first 12, then hues a golden angle (137.5°) apart at two alternating
// lightnesses, so that no two series of a chart share a colour.
func seriesColor(i int) color.Color {
	if i < len(palette) {
		return palette[i]
	}
	k := i - len(palette)
	h := math.Mod(float64(k)*137.507764+15, 360)
	v := 0.75
	if k%2 == 1 {
		v = 0.5
	}
	return hsv(h, 0.8, v)
}

// hsv converts hue h (degrees), saturation s and value v (0 to 1) to RGB.
func hsv(h, s, v float64) color.Color {
	c := v * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := v - c
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	u := func(f float64) uint8 { return uint8(math.Round((f + m) * 255)) }
	return color.NRGBA{R: u(r), G: u(g), B: u(b), A: 255}
}

// lineStyle gives line i of a chart its own colour (seriesColor) and, past
// the palette's 12, a dash pattern as well (every 12 lines the next of
// plotutil's dash patterns), so that lines beyond the named colours stay
// apart by their dashes too.
func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.5), Dashes: plotutil.Dashes(i / len(palette))}
}

// entry is one line of a figure's legend: its text and what the thumbnail
// draws (lines, bars, a shaded band).
type entry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// figure is one chart image: an optional title, panels (rows of plots,
// their axes aligned) and the legend in a strip below the panels, so that
// it never covers a line or bar. The plots' own legends stay empty.
type figure struct {
	title  string
	panels [][]*plot.Plot
	legend []entry
	w, h   vg.Length
}

// single is a figure of one plot at the chart size.
func single(p *plot.Plot, legend []entry) *figure {
	return &figure{panels: [][]*plot.Plot{{p}}, legend: legend, w: width, h: height}
}

// Legend strip layout.
const (
	figPad    = vg.Length(6)  // around the legend strip and the figure's title, points
	legendGap = vg.Length(14) // between legend columns, points
	// A legend gets at most this share of the figure's height; more rows
	// than fit at 11 pt are set smaller, down to 7 pt.
	legendShare = 0.4
	// legendPadding is the space between two entries of a column, points.
	legendPadding = vg.Length(1)
)

// layout is where a figure's parts go on a canvas.
type layout struct {
	title  draw.Canvas   // the title's strip (zero height without a title)
	panels []draw.Canvas // one per panel, row by row (plot.Align's tiles)
	// legend is the legend strip's box: the union of its columns, below
	// the panels' area; empty when there is no legend.
	legend  vg.Rectangle
	columns []draw.Canvas // one per legend column, entries from the top
	perCol  int           // entries per column (the last may have fewer)
	style   text.Style    // the legend's text
}

// legendStyle is the legend text at size pt.
func legendStyle(pt float64) text.Style {
	sty := plot.NewLegend().TextStyle
	sty.Font.Size = vg.Points(pt)
	return sty
}

// entryHeight and entryWidth are one legend entry's size in sty, as
// plot.Legend draws it: a 20 pt thumbnail, a space, the text.
func entryHeight(sty text.Style, es []entry) vg.Length {
	var h vg.Length
	for _, e := range es {
		h = max(h, sty.Rectangle(e.text).Max.Y)
	}
	return h
}

func entryWidth(sty text.Style, e entry) vg.Length {
	return plot.NewLegend().ThumbnailWidth + sty.Rectangle(" "+e.text).Max.X
}

// columnWidths are the widths of the legend's columns when its entries
// fill rows per column, column by column.
func columnWidths(sty text.Style, es []entry, rows int) []vg.Length {
	var ws []vg.Length
	for i, e := range es {
		if i%rows == 0 {
			ws = append(ws, 0)
		}
		ws[len(ws)-1] = max(ws[len(ws)-1], entryWidth(sty, e))
	}
	return ws
}

// total is the width of columns ws side by side, legendGap apart.
func total(ws []vg.Length) vg.Length {
	t := vg.Length(len(ws)-1) * legendGap
	for _, w := range ws {
		t += w
	}
	return t
}

// layout places the title at the top, the legend strip at the bottom in
// the fewest rows whose columns fit the width (entries column by column,
// each column as wide as its widest entry, the block centred; set smaller
// when the rows would take more than legendShare of the height), and the
// panels between them.
func (f *figure) layout(c draw.Canvas) layout {
	var lo layout
	area := c
	if f.title != "" {
		sty := titleStyle()
		th := sty.Rectangle(f.title).Size().Y + 2*figPad
		lo.title = draw.Crop(c, 0, 0, c.Size().Y-th, 0)
		area = draw.Crop(c, 0, 0, 0, -th)
	}
	if n := len(f.legend); n > 0 {
		avail := area.Size().X - 2*figPad
		var sty text.Style
		var widths []vg.Length
		var enth vg.Length
		rows := 0
		for pt := 11.0; ; pt-- {
			sty = legendStyle(pt)
			enth = entryHeight(sty, f.legend) + legendPadding
			// The fewest rows whose columns fit the width.
			for rows = 1; rows < n; rows++ {
				if widths = columnWidths(sty, f.legend, rows); total(widths) <= avail {
					break
				}
			}
			widths = columnWidths(sty, f.legend, rows)
			if vg.Length(rows)*enth <= vg.Length(legendShare)*area.Size().Y || pt <= 7 {
				break
			}
		}
		// plot.Legend starts its first entry a descent below the top.
		lh := vg.Length(rows)*enth + sty.FontExtents().Descent
		x0 := area.Min.X + (area.Size().X-total(widths))/2
		y0 := area.Min.Y + figPad
		lo.legend = vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + total(widths), Y: y0 + lh}}
		x := x0
		for _, w := range widths {
			lo.columns = append(lo.columns, draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y0}, Max: vg.Point{X: x + w, Y: y0 + lh}}})
			x += w + legendGap
		}
		lo.perCol, lo.style = rows, sty
		area = draw.Crop(area, 0, 0, lh+2*figPad, 0)
	}
	rows, cols := len(f.panels), len(f.panels[0])
	if rows == 1 && cols == 1 {
		// Room at the sides and the top for the outermost labels.
		lo.panels = []draw.Canvas{draw.Crop(area, figPad, -2*figPad, 0, -figPad)}
		return lo
	}
	pad := vg.Points(12)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: pad, PadY: pad, PadTop: pad / 2, PadBottom: pad / 2, PadLeft: pad / 2, PadRight: pad}
	for _, row := range plot.Align(f.panels, tiles, area) {
		lo.panels = append(lo.panels, row...)
	}
	return lo
}

// titleStyle is a figure title's text: plot.Plot's title font, 14 pt.
func titleStyle() text.Style {
	sty := plot.New().Title.TextStyle
	sty.Font.Size = vg.Points(14)
	return sty
}

// draw draws the figure on c, on a white background.
func (f *figure) draw(c draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(color.White, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
	lo := f.layout(c)
	if f.title != "" {
		sty := titleStyle()
		sty.XAlign = draw.XCenter
		sty.YAlign = draw.YCenter
		lo.title.FillText(sty, lo.title.Center(), f.title)
	}
	i := 0
	for _, row := range f.panels {
		for _, p := range row {
			if p != nil {
				p.Draw(lo.panels[i])
			}
			i++
		}
	}
	for ci, col := range lo.columns {
		l := plot.NewLegend()
		l.TextStyle = lo.style
		l.Padding = legendPadding
		l.Top, l.Left = true, true
		for _, e := range f.legend[ci*lo.perCol : min(len(f.legend), (ci+1)*lo.perCol)] {
			l.Add(e.text, e.thumbs...)
		}
		l.Draw(col)
	}
}

// save writes the figure to path as PNG or SVG, by its extension.
func (f *figure) save(path string) error {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	c, err := draw.NewFormattedCanvas(f.w, f.h, format)
	if err != nil {
		return err
	}
	f.draw(draw.New(c))
	return report.WriteAtomic(path, func(w io.Writer) error {
		if _, err := c.WriteTo(w); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		return nil
	})
}
