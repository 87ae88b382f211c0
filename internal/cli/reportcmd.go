package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report/chart"
)

func newReportCmd() *cobra.Command {
	var dir string
	var maxInput int64
	cmd := &cobra.Command{
		Use:   "report RUN.json [MORE.json...] -o DIR",
		Short: "Draw result files as PNG and SVG charts with an index.html",
		Long: `report draws one or more result files into DIR: a latency percentile
spectrum (latency in ms by percentile on a log "nines" axis, from each
scenario's latency_hist), ops/s bars, violation bars (one per kind, never
summed), ops/s over time (offered beside achieved in open-loop runs) and,
per scenario, the operation's and the acquire's p50/p99/max over time
(latency-N), both with the fault windows shaded (from each scenario's
timeline), each as NAME.png and NAME.svg, and an index.html that shows them
above the summary table. Several files overlay on one chart, each series
labelled with its file name; legends sit below the plotting area. DIR
defaults to the first file's path without .json, plus "-report".`,
		Example: `  lockbench report results/20261130T012233Z.json -o report
  lockbench report before.json after.json -o compare-report`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in []chart.Input
			labels := map[string]bool{}
			for _, a := range args {
				r, err := readResult(a, maxInput)
				if err != nil {
					return err
				}
				if len(r.Scenarios) == 0 {
					return usageError{fmt.Errorf("%s: no scenario to draw", a)}
				}
				label := strings.TrimSuffix(filepath.Base(a), ".json")
				for base, k := label, 2; labels[label]; k++ {
					label = fmt.Sprintf("%s#%d", base, k)
				}
				labels[label] = true
				in = append(in, chart.Input{Label: label, Run: r})
			}
			if dir == "" {
				dir = strings.TrimSuffix(args[0], ".json") + "-report"
			}
			if err := checkDir(dir); err != nil {
				return usageError{fmt.Errorf("-o %s: %v", dir, err)}
			}
			res, err := chart.Write(dir, in)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, name := range chart.Charts {
				if why, ok := res.Skipped[name]; ok {
					fmt.Fprintf(out, "%s: not drawn: %s\n", name, why)
				}
			}
			fmt.Fprintf(out, "%d charts (PNG and SVG) and index.html written to %s\n", len(res.Written), dir)
			return nil
		},
	}
	addMaxInputFlag(cmd, &maxInput)
	cmd.Flags().StringVarP(&dir, "out", "o", "", "directory for the charts and index.html (created if missing; default <first file>-report)")
	return cmd
}
