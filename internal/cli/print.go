package cli

// The results and thresholds printed (table, json, csv, benchstat,
// markdown) and the --columns of the tables.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
)

// columnsFlagDoc is --columns' help on run and sweep.
const columnsFlagDoc = "table and markdown: the columns to show, comma-separated, or all (default: all, or a compact set on a terminal narrower than the table; see 'lockbench show --help')"

// columnsDoc lists the --columns keys of the run table, then those of
// the sweep table.
func columnsDoc() string {
	return strings.Join(report.ColumnKeys(append(report.TableColumns(), report.TableExtras()...)), ", ") +
		"; of a sweep's table: " + strings.Join(report.ColumnKeys(append(report.SweepColumns(), report.SweepExtras()...)), ", ") + "."
}

// tableColumns are the full and the extra columns of the run table, or
// of the sweep table (sweep).
func tableColumns(sweep bool) (full, extra []report.Column) {
	if sweep {
		return report.SweepColumns(), report.SweepExtras()
	}
	return report.TableColumns(), report.TableExtras()
}

// splitColumns is --columns as a list of keys (nil for "").
func splitColumns(columns string) []string {
	if strings.TrimSpace(columns) == "" {
		return nil
	}
	return strings.Split(columns, ",")
}

// checkColumns checks --columns: given only with the table and markdown
// formats, each key a column of the table (the sweep table's for sweep).
func checkColumns(columns, format string, sweep bool) error {
	keys := splitColumns(columns)
	if keys == nil {
		return nil
	}
	if format != "table" && format != "markdown" {
		return fmt.Errorf("--columns chooses the columns of --format table or markdown, not %s (csv and json have every column)", format)
	}
	full, extra := tableColumns(sweep)
	if _, err := report.SelectColumns(full, extra, keys); err != nil {
		return fmt.Errorf("--columns: %v", err)
	}
	return nil
}

// termWidth is the width in columns of the terminal w is, or 0 when w is
// not a terminal (a pipe, a file) or does not know its size.
func termWidth(w io.Writer) int {
	if !isTerminal(w) {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(w.(*os.File).Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// printResults writes run to stdout in format, as run, sweep and show
// print it. The table and markdown formats show the columns named by
// columns (checkColumns; "" or "all": the full table). With no
// --columns, a table wider than width (the terminal's columns; 0: not a
// terminal, never narrowed) is printed with the compact columns
// (report.CompactColumns, report.SweepCompactColumns) instead, followed
// by a line that names --columns; when even that is wider than width,
// the scenario-naming columns whose value every row shares
// (report.FoldColumns) leave the table for an "every row:" line.
//
// Below the table, a scenario that ran background traffic (--background)
// has a line of its figures (report.BackgroundLines), and a scenario
// with client roles (--mix) a line of each role's (report.RoleLines); with --format
// table, a scenario with a client ramp then has its per-interval lines
// (report.WriteRampTimelines).
func printResults(stdout io.Writer, format, columns string, width int, run *report.Run) error {
	if format == "table" {
		defer report.WriteRampTimelines(stdout, run.Scenarios)
	}
	if format != "table" && format != "markdown" {
		return report.Write(stdout, format, run)
	}
	if err := printTable(stdout, format, columns, width, run); err != nil {
		return err
	}
	if err := report.BackgroundLines(stdout, run.Scenarios); err != nil {
		return err
	}
	return report.RoleLines(stdout, run.Scenarios)
}

// printTable is printResults' table.
func printTable(stdout io.Writer, format, columns string, width int, run *report.Run) error {
	sweep := run.Meta.Sweep != nil
	full, extra := tableColumns(sweep)
	cols, err := report.SelectColumns(full, extra, splitColumns(columns))
	if err != nil {
		return usageError{fmt.Errorf("--columns: %v", err)}
	}
	render := func(w io.Writer, cols []report.Column) error {
		switch {
		case format == "markdown":
			return report.Markdown(w, run, cols)
		case sweep:
			return report.SweepTableOf(w, run.Scenarios, cols)
		}
		return report.TableOf(w, run.Scenarios, cols)
	}
	if format == "markdown" || columns != "" || width <= 0 {
		return render(stdout, cols)
	}
	var b bytes.Buffer
	if err := render(&b, cols); err != nil {
		return err
	}
	if report.Width(b.Bytes()) <= width {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	compact := report.CompactColumns
	if sweep {
		compact = report.SweepCompactColumns
	}
	if cols, err = report.SelectColumns(full, extra, compact); err != nil {
		return err
	}
	b.Reset()
	if err := render(&b, cols); err != nil {
		return err
	}
	var same []string
	if report.Width(b.Bytes()) > width {
		cols, same = foldSame(cols, run.Scenarios)
		b.Reset()
		if err := render(&b, cols); err != nil {
			return err
		}
	}
	// The notes wrap at the terminal's width too.
	if len(same) > 0 {
		fmt.Fprintln(&b, wrap("every row: "+strings.Join(same, ", "), width))
	}
	fmt.Fprintln(&b, wrap(fmt.Sprintf("compact table to fit %d columns; --columns all for every column, or a,b,c", width), width))
	_, err = stdout.Write(b.Bytes())
	return err
}

// foldSame takes out of cols the columns of report.FoldColumns whose cell
// is the same in every scenario, and returns them as "key value" texts
// (the column's header and the shared cell).
func foldSame(cols []report.Column, scenarios []report.Scenario) (kept []report.Column, same []string) {
	for _, c := range cols {
		if len(scenarios) > 0 && contains(report.FoldColumns, c.Key) && allSame(c, scenarios) {
			same = append(same, c.Header+" "+c.Cell(scenarios[0]))
			continue
		}
		kept = append(kept, c)
	}
	return kept, same
}

// allSame reports whether c's cell is the same in every scenario.
func allSame(c report.Column, scenarios []report.Scenario) bool {
	for _, s := range scenarios[1:] {
		if c.Cell(s) != c.Cell(scenarios[0]) {
			return false
		}
	}
	return true
}

// isTerminal reports whether w is a terminal (a *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// printThresholds shows the thresholds' results: with --format table, a
// table of every threshold x scenario and the summary line on stdout,
// after the results table; with the machine-readable formats stdout keeps
// only the format (json carries run.thresholds), and stderr gets the
// failed rows and the summary line. Thresholds whose scope held no
// measured scenario (skipped, or not reached) are named on stderr.
func printThresholds(stdout, stderr io.Writer, format string, ts []thresholds.Threshold, rs []report.ThresholdResult) error {
	for _, t := range thresholds.Untested(ts, rs) {
		fmt.Fprintf(stderr, "lockbench: threshold %s: no scenario in its scope was measured; not tested\n", t)
	}
	if format == "table" {
		return thresholds.Table(stdout, rs)
	}
	for _, r := range rs {
		if !r.Pass {
			if r.NotMeasured {
				fmt.Fprintf(stderr, "lockbench: threshold %s failed on %s: not measured (%s)\n", r.Expr, thresholds.ScenarioLabel(rs, r), report.NotMeasuredNote(r.Metric))
			} else {
				fmt.Fprintf(stderr, "lockbench: threshold %s failed on %s: measured %g\n", r.Expr, thresholds.ScenarioLabel(rs, r), r.Measured)
			}
		}
	}
	fmt.Fprintln(stderr, thresholds.Summary(rs))
	return nil
}
