package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
)

func newShowCmd() *cobra.Command {
	var format, columns string
	var maxInput int64
	cmd := &cobra.Command{
		Use:   "show RUN.json",
		Short: "Print a saved result file again: as the table, CSV, JSON, benchstat or markdown",
		Long: `show prints a result file of lockbench run, sweep or merge again, in
--format table (the default: the same table the run printed, then its
--fail-on thresholds), csv (one row per scenario, every parameter a column),
json (the file itself), benchstat (Go benchmark lines) or markdown (the
table as a GitHub-flavoured markdown table).

On a terminal narrower than the full table, the table is the compact one
(strategy, driver, workload, retry, clients, ops/s, p50, p99, violations,
errors) with a line naming --columns; piped or redirected it is the full
table. --columns a,b,c chooses the columns (all: the full table) of the
table and markdown formats, by these names:
` + wrap(columnsDoc(), 76) + `

Exit codes: 0 printed; 2 bad input (a file that is missing, not a
regular file, over --max-input-size or not a lockbench result, figures a
result cannot hold such as a negative count, an unknown format or
column).`,
		Example: `  lockbench show results/20261130T012233Z.json
  lockbench show results/20261130T012233Z.json --format csv > runs.csv
  lockbench show results/20261130T012233Z.json --format markdown --columns strategy,driver,ops,p99,violations`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(report.Formats, format) {
				return usageError{fmt.Errorf("--format %q is not one of %s", format, strings.Join(report.Formats, ", "))}
			}
			r, err := readResult(args[0], maxInput)
			if err != nil {
				return err
			}
			if err := checkColumns(columns, format, r.Meta.Sweep != nil); err != nil {
				return usageError{err}
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if r.Failed != "" {
				fmt.Fprintf(stderr, "lockbench: %s: the run failed: %s\n", args[0], r.Failed)
			}
			if r.Interrupted {
				fmt.Fprintf(stderr, "lockbench: %s: the run was interrupted; its finished scenarios are shown\n", args[0])
			}
			if err := printResults(stdout, format, columns, termWidth(stdout), r); err != nil {
				return err
			}
			if format == "table" && len(r.Thresholds) > 0 {
				return thresholds.Table(stdout, r.Thresholds)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: "+strings.Join(report.Formats, ", "))
	addMaxInputFlag(cmd, &maxInput)
	cmd.Flags().StringVar(&columns, "columns", "", "table and markdown: the columns to show, comma-separated, or all (default: all, or a compact set on a terminal narrower than the table)")
	return cmd
}
