package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report"
)

// errRegressed makes compare exit 1.
var errRegressed = errors.New("regression")

func newCompareCmd() *cobra.Command {
	var threshold, p99Threshold, normalize string
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json",
		Short: "Compare two result files; exit 1 on a regression (for CI)",
		Long: `compare matches the scenarios of two result files (same strategy, driver,
workload, retry, clients and parameters) and shows ops/s, p99 and violations
side by side with the change. It exits 1 when a scenario's ops/s dropped or
its p99 rose by more than --threshold, or when any violation count rose.
--normalize strategy/driver/workload/retry divides each scenario's ops/s and
p99 by that reference scenario's in the same run, which stays stable on
noisy machines.`,
		Example: `  lockbench compare results/baseline.json results/20261130T001328Z.json --threshold 10%
  lockbench compare base.json new.json --normalize atomic/rueidis/flash-sale/fixed`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			th, err := parsePercent(threshold)
			if err != nil {
				return usageError{fmt.Errorf("--threshold: %w", err)}
			}
			p99th := th
			if p99Threshold != "" {
				if p99th, err = parsePercent(p99Threshold); err != nil {
					return usageError{fmt.Errorf("--p99-threshold: %w", err)}
				}
			}
			base, err := report.ReadFile(args[0])
			if err != nil {
				return usageError{err}
			}
			cur, err := report.ReadFile(args[1])
			if err != nil {
				return usageError{err}
			}
			deltas, missing, err := report.Compare(base, cur, th, p99th, normalize)
			if err != nil {
				return usageError{err}
			}
			out := cmd.OutOrStdout()
			if err := report.CompareTable(out, deltas, normalize != ""); err != nil {
				return err
			}
			for _, m := range missing {
				fmt.Fprintln(out, m)
			}
			if len(deltas) == 0 {
				return errors.New("no scenario of the new file matches one of the base file: scenarios match on strategy, driver, workload, retry, clients and every parameter but the seed (see the \"only in\" lines above)")
			}
			n := 0
			for _, d := range deltas {
				if len(d.Regressed) > 0 {
					n++
				}
			}
			if n > 0 {
				return fmt.Errorf("%w: %d of %d scenarios past the %s threshold or with more violations", errRegressed, n, len(deltas), threshold)
			}
			fmt.Fprintf(out, "no regression in %d scenarios (threshold %s)\n", len(deltas), threshold)
			return nil
		},
	}
	cmd.Flags().StringVar(&threshold, "threshold", "5%", "largest tolerated ops/s drop or p99 rise, like 5% or 0.05")
	cmd.Flags().StringVar(&p99Threshold, "p99-threshold", "", "largest tolerated p99 rise (default: --threshold); tail latency of contended runs is noisier than ops/s")
	cmd.Flags().StringVar(&normalize, "normalize", "", "compare as ratios to this scenario of the same run (strategy/driver/workload/retry)")
	return cmd
}

// parsePercent reads "5%" or "0.05".
func parsePercent(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v < 0 || v != v {
		return 0, fmt.Errorf("%q is not a percentage like 5%% or a fraction like 0.05", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}
