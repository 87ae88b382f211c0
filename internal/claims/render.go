package claims

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/lockbench/lockbench/internal/report"
)

// Report is a `lockbench claims` result: one row per claim.
type Report struct {
	// Schema 2: performance rows carry intervals and repeats; the
	// inconclusive verdict.
	Schema int   `json:"schema"`
	Meta   Meta  `json:"meta"`
	Rows   []Row `json:"rows"`
	// Interrupted is true when Ctrl-C stopped the experiments early.
	Interrupted bool `json:"interrupted"`
}

// Meta says where and how the claims were checked.
type Meta struct {
	StartedAt    string  `json:"started_at"` // RFC 3339, UTC
	DurationS    float64 `json:"duration_s"`
	Mode         string  `json:"mode"` // "quick" or "full"
	Driver       string  `json:"driver"`
	GitCommit    string  `json:"git_commit"`
	GoVersion    string  `json:"go_version"`
	RedisVersion string  `json:"redis_version"`
	CPUs         int     `json:"cpus"`
	CPUModel     string  `json:"cpu_model,omitempty"`
	// ResultFiles are the `lockbench run` result files behind the rows,
	// by run name.
	ResultFiles map[string]string `json:"result_files,omitempty"`
}

// Counts returns how many rows have each verdict.
func (r *Report) Counts() map[Verdict]int {
	out := map[Verdict]int{}
	for _, row := range r.Rows {
		out[row.Verdict]++
	}
	return out
}

// WriteTable writes the summary table: id, claim, article figure, measured,
// verdict.
func WriteTable(w io.Writer, rows []Row) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(0, 5).Set(1, 36).Set(2, 22).Set(3, 48).Set(4, 16)))
	t.Header("id", "claim", "article", "measured", "verdict")
	for _, r := range rows {
		if err := t.Append(r.ID, r.Claim, r.Article, r.Measured, string(r.Verdict)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if note := IntervalNote(rows); note != "" {
		_, err := fmt.Fprintln(w, note)
		return err
	}
	return nil
}

// IntervalNote explains the performance rows' intervals ("" when no row
// has repeats): how many runs, and what the brackets are.
func IntervalNote(rows []Row) string {
	n := 0
	for _, r := range rows {
		n = max(n, r.Repeats)
	}
	if n == 0 {
		return ""
	}
	iv := NewInterval(make([]float64, n))
	what := fmt.Sprintf("the order-statistic %s %% confidence interval of the median (as benchstat)", pct(iv.Confidence))
	if iv.MinMax {
		what = fmt.Sprintf("[min, max] of the %d runs: too few for a 95 %% interval, it holds the median with %s %% confidence only", n, pct(iv.Confidence))
	}
	return fmt.Sprintf("Performance rows (P): each experiment ran %d times; a figure is the median [lo, hi], %s. "+
		"Verdict: reproduced if the whole interval meets the rule, not reproduced if none of it does, inconclusive otherwise.", n, what)
}

// WriteJSON writes r as indented JSON to path, atomically (directories
// created).
func WriteJSON(path string, r *Report) error {
	return report.WriteAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}

// ReadJSON reads a report written by WriteJSON.
func ReadJSON(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// WriteMarkdown writes r as a Markdown document: the machine, the summary
// table and, per claim, its scaling, rule and figures.
func WriteMarkdown(w io.Writer, r *Report) error {
	m := r.Meta
	var b strings.Builder
	fmt.Fprintf(&b, "# lockbench claims (%s mode)\n\n", m.Mode)
	fmt.Fprintf(&b, "Run %s, %.0f s, on %d CPUs (%s), Redis %s, driver %s, %s, commit %s.\n\n",
		m.StartedAt, m.DurationS, m.CPUs, orDash(m.CPUModel), orDash(m.RedisVersion), m.Driver, m.GoVersion, orDash(m.GitCommit))
	if r.Interrupted {
		b.WriteString("**Interrupted**: the rows below are the claims judged before Ctrl-C.\n\n")
	}
	b.WriteString("| id | claim | article | measured | verdict |\n|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** |\n", row.ID, md(row.Claim), md(row.Article), md(row.Measured), row.Verdict)
	}
	if note := IntervalNote(r.Rows); note != "" {
		fmt.Fprintf(&b, "\n%s\n", note)
	}
	b.WriteString("\n## Experiments\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "\n### %s: %s\n\nSeeds: %s. Scaled: %s.\n\nRule: %s.\n\nVerdict: **%s** (%s).\n",
			row.ID, row.Claim, row.Seeds, row.Scaling, row.Rule, row.Verdict, row.Measured)
		if len(row.Runs) > 0 {
			times := ""
			if row.Repeats > 0 {
				times = fmt.Sprintf(", each made %d times", row.Repeats)
			}
			fmt.Fprintf(&b, "\nRuns: %s%s.\n", strings.Join(row.Runs, ", "), times)
		}
		if len(row.Intervals) > 0 {
			names := make([]string, 0, len(row.Intervals))
			for name := range row.Intervals {
				names = append(names, name)
			}
			sort.Strings(names)
			b.WriteString("\n| figure | median | interval | confidence | values (run order) |\n|---|---|---|---|---|\n")
			for _, name := range names {
				iv := row.Intervals[name]
				vals := make([]string, len(iv.Values))
				for k, v := range iv.Values {
					vals[k] = num(v)
				}
				fmt.Fprintf(&b, "| %s | %s | [%s, %s] | %s | %s |\n", name, num(iv.Median), num(iv.Lo), num(iv.Hi),
					strings.Trim(iv.Note(), "()"), strings.Join(vals, ", "))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// num prints a figure with 4 significant digits.
func num(v float64) string { return fmt.Sprintf("%.4g", v) }

func pct(c float64) string { return strconv.FormatFloat(100*c, 'g', 3, 64) }

func md(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
