package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report"
)

// errRegressed makes compare exit 1.
var errRegressed = errors.New("regression")

func newCompareCmd() *cobra.Command {
	var threshold, p99Threshold, normalize, format string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json",
		Short: "Compare two result files with statistics; exit 1 on a regression (for CI)",
		Long: `compare matches the scenarios of two result files (same strategy, driver,
workload, retry, clients and parameters; a parameter one file lacks takes
its recorded default) and shows each side's ops/s and p99 as its row has
them (with --repeat, derived from all its runs pooled) and the change. As
benchstat, a change counts only when it is beyond --threshold AND
significant over the runs' samples (Mann-Whitney U test at --alpha,
golang.org/x/perf/benchmath); "~" marks no significant change. With fewer
than 4 runs on a side a change is judged on the threshold alone, with a
warning. Any rise in a violation count is a regression. It exits 1 on a
regression or when no scenario matches, 2 on bad input.
--normalize strategy/driver/workload/retry divides each scenario's figures
(row and samples) by that reference scenario's row figures in the same
file, which stays stable on noisy machines. When the two files were produced by different builds
(lockbench's version or commit, Go, a driver or lock library of
meta.deps, the Redis versions), compare prints each file's provenance and
a warning naming every difference. --format benchstat writes both files in the Go benchmark
format (one line per run, file key "run: base" or "run: new") for
'benchstat -col run'.`,
		Example: `  lockbench run --repeat 5 --out base.json; lockbench run --repeat 5 --out new.json
  lockbench compare base.json new.json --threshold 10%
  lockbench compare results/baseline.json results/regress.json --normalize atomic/rueidis/flash-sale/backoff
  lockbench compare base.json new.json --format benchstat > both.txt && benchstat -col run both.txt`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			th, err := parsePercent(threshold)
			if err != nil {
				errs = append(errs, fmt.Errorf("--threshold: %w", err))
			}
			p99th := th
			if p99Threshold != "" {
				if p99th, err = parsePercent(p99Threshold); err != nil {
					errs = append(errs, fmt.Errorf("--p99-threshold: %w", err))
				}
			}
			if !(alpha > 0 && alpha < 1) {
				errs = append(errs, fmt.Errorf("--alpha must be above 0 and below 1, got %v", alpha))
			}
			if format != "table" && format != "benchstat" {
				errs = append(errs, fmt.Errorf("--format %q is not table or benchstat", format))
			}
			if len(errs) > 0 {
				return usageError{errors.Join(errs...)}
			}
			base, err := readResult(args[0])
			if err != nil {
				return err
			}
			cur, err := readResult(args[1])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "benchstat" {
				warnBuilds(cmd.ErrOrStderr(), cmd.ErrOrStderr(), base, cur)
			} else {
				warnBuilds(out, cmd.ErrOrStderr(), base, cur)
			}
			if format == "benchstat" {
				if err := report.WriteBenchstat(out, base, "run", "base"); err != nil {
					return err
				}
				return report.WriteBenchstat(out, cur, "run", "new")
			}
			deltas, missing, err := report.Compare(base, cur, report.CompareOptions{Threshold: th, P99Threshold: p99th, Normalize: normalize, Alpha: alpha})
			if err != nil {
				return usageError{err}
			}
			if err := report.CompareTable(out, deltas, normalize != ""); err != nil {
				return err
			}
			for _, m := range missing {
				fmt.Fprintln(out, m)
			}
			few := 0
			for _, d := range deltas {
				for _, n := range d.Notes {
					fmt.Fprintf(out, "note: %s: %s, not compared\n", d.Name, n)
				}
				if d.Ops.FewSamples || d.P99.FewSamples {
					few++
				}
			}
			if few > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "lockbench: warning: %d of %d scenarios have fewer than %d runs on a side: their changes were judged on the threshold alone, without a significance test (run with --repeat %d or more)\n",
					few, len(deltas), report.MinSamples, report.MinSamples)
			}
			if len(deltas) == 0 {
				return errors.New("no scenario of the new file matches one of the base file: scenarios match on strategy, driver, workload, retry, clients and every parameter but the seed (see the \"only in\" lines above)")
			}
			if err := regressionError(deltas, threshold); err != nil {
				return err
			}
			fmt.Fprintf(out, "no regression in %d scenarios (threshold %s, alpha %v)\n", len(deltas), threshold, alpha)
			return nil
		},
	}
	cmd.Flags().StringVar(&threshold, "threshold", "5%", "largest tolerated ops/s drop or p99 rise, like 5% or 0.05")
	cmd.Flags().StringVar(&p99Threshold, "p99-threshold", "", "largest tolerated p99 rise (default: --threshold); tail latency of contended runs is noisier than ops/s")
	cmd.Flags().StringVar(&normalize, "normalize", "", "compare as ratios to this scenario's row figures (ops/s, p99) in the same file (strategy/driver/workload/retry)")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test (benchstat's default)")
	cmd.Flags().StringVar(&format, "format", "table", "table, or benchstat: both files in the Go benchmark format, for benchstat -col run")
	return cmd
}

// regressionError is compare's error when a scenario of deltas regressed
// (nil when none did): how many, and whether the changes past threshold
// were tested for significance (a side with fewer than
// report.MinSamples runs is judged on the threshold alone).
func regressionError(deltas []report.Delta, threshold string) error {
	n := 0
	var tested, untested bool
	judged := func(c report.Change) {
		tested = tested || !c.FewSamples
		untested = untested || c.FewSamples
	}
	for _, d := range deltas {
		if len(d.Regressed) > 0 {
			n++
		}
		for _, r := range d.Regressed {
			switch r {
			case "ops/s":
				judged(d.Ops)
			case "p99":
				judged(d.P99)
			}
		}
	}
	if n == 0 {
		return nil
	}
	if !tested && !untested {
		// Only violations rose: say how the thresholds were judged.
		for _, d := range deltas {
			judged(d.Ops)
		}
	}
	how := "(and significant)"
	switch {
	case tested && untested:
		how = fmt.Sprintf("(and significant, or not tested for significance where a side has fewer than %d runs)", report.MinSamples)
	case untested:
		how = fmt.Sprintf("(not tested for significance: fewer than %d runs on a side)", report.MinSamples)
	}
	return fmt.Errorf("%w: %d of %d scenarios past the %s threshold %s or with more violations", errRegressed, n, len(deltas), threshold, how)
}

// warnBuilds prints, when base and cur were produced by different builds
// (report.BuildDiff), the provenance of each on out and a warning naming
// the differences on stderr.
func warnBuilds(out, stderr io.Writer, base, cur *report.Run) {
	diffs := report.BuildDiff(base.Meta, cur.Meta)
	if len(diffs) == 0 {
		return
	}
	fmt.Fprintf(out, "base: %s\nnew:  %s\n", base.Meta.Provenance(), cur.Meta.Provenance())
	fmt.Fprintf(stderr, "lockbench: warning: the two files were produced by different builds: %s\n", strings.Join(diffs, ", "))
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
