package claims

import (
	"encoding/json"
	"fmt"
	"github.com/lockbench/lockbench/internal/report"
	"io"
	"os"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Report is a `lockbench claims` result: one row per claim.
type Report struct {
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
	return t.Render()
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
	b.WriteString("\n## Experiments\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "\n### %s: %s\n\nSeeds: %s. Scaled: %s.\n\nRule: %s.\n\nVerdict: **%s** (%s).\n",
			row.ID, row.Claim, row.Seeds, row.Scaling, row.Rule, row.Verdict, row.Measured)
		if len(row.Runs) > 0 {
			fmt.Fprintf(&b, "\nRuns: %s.\n", strings.Join(row.Runs, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func md(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
