package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
)

// unsafeScenario names the scenarios whose violations are expected: a
// strategy registered as Unsafe (naive), a constant token, or Redlock's
// unchecked extend.
func unsafeScenario(s report.Scenario) bool {
	return strategies.InfoOf(s.Strategy).Unsafe || s.Params["token"] == "constant" || s.Params["extend"] == "unchecked"
}

// checkBaseline is errInvalidBaseline naming every scenario of base that
// report.InvalidBaseline refuses (nil when there is none).
func checkBaseline(base *report.Run) error {
	var why []string
	for _, s := range base.Scenarios {
		if w := report.InvalidBaseline(s, unsafeScenario); w != "" {
			why = append(why, w)
		}
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w, nothing compared: %s (a gate that compared against it would pass a candidate as broken; give the scenario longer leases or fix the baseline build, then measure it again)",
		errInvalidBaseline, strings.Join(why, "; "))
}

// compareFlags are lockbench compare's flags.
type compareFlags struct {
	threshold, p99Threshold, costThreshold, cpuThreshold, rssThreshold, normalize, format string
	alpha                                                                                 float64
	maxInput                                                                              int64 // --max-input-size
}

// compareLong is lockbench compare's --help.
const compareLong = `compare matches the scenarios of two result files (same strategy, driver,
workload, retry, clients and parameters; a parameter one file lacks takes
its recorded default) and shows each side's ops/s and p99 as its row has
them (with --repeat, derived from all its runs pooled) and the change. As
benchstat, a change counts only when it is beyond --threshold AND
significant over the runs' samples (Mann-Whitney U test at --alpha,
golang.org/x/perf/benchmath); "~" marks no significant change. With fewer
than 4 runs on a side a change is judged on the threshold alone, with a
warning ("n<4, not tested": never called significant). Cost is gated as
speed: commands per operation beyond --cost-threshold, the client's and
the Redis servers' CPU per operation beyond --cpu-threshold, significant
by the same rule (a second table shows them); the lockbench process's
peak RSS beyond --rss-threshold (one figure per file: threshold only).
Any rise in a violation count is a regression. A baseline that shows
violations or errors in a scenario with no fault, whose strategy promises
none (all but naive, a constant token, Redlock's unchecked extend), is
"invalid baseline": nothing is compared, exit 4. It exits 1 on a
regression or when no scenario matches, 2 on bad input.
--normalize strategy/driver/workload/retry divides each scenario's figures
(row and samples) by that reference scenario's row figures in the same
file, which stays stable on noisy machines. When the two files were produced by different builds
(lockbench's version or commit, Go, a driver or lock library of
meta.deps, the Redis versions), compare prints each file's provenance and
a warning naming every difference. --format benchstat writes both files in the Go benchmark
format (one line per run, file key "run: base" or "run: new") for
'benchstat -col run'.`

func newCompareCmd() *cobra.Command {
	fl := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json",
		Short: "Compare two result files with statistics; exit 1 on a regression (for CI)",
		Long:  compareLong,
		Example: `  lockbench run --repeat 5 --out base.json; lockbench run --repeat 5 --out new.json
  lockbench compare base.json new.json --threshold 10%
  lockbench compare results/baseline.json results/regress.json --normalize atomic/rueidis/flash-sale/backoff
  lockbench compare base.json new.json --format benchstat > both.txt && benchstat -col run both.txt`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, args, fl) },
	}
	cmd.Flags().StringVar(&fl.threshold, "threshold", "5%", "largest tolerated ops/s drop or p99 rise, like 5% or 0.05")
	cmd.Flags().StringVar(&fl.p99Threshold, "p99-threshold", "", "largest tolerated p99 rise (default: --threshold); tail latency of contended runs is noisier than ops/s")
	cmd.Flags().StringVar(&fl.costThreshold, "cost-threshold", "10%", "largest tolerated rise of Redis commands per operation, like 10% or 0.1")
	cmd.Flags().StringVar(&fl.cpuThreshold, "cpu-threshold", "25%", "largest tolerated rise of the client's and the Redis servers' CPU per operation")
	cmd.Flags().StringVar(&fl.rssThreshold, "rss-threshold", "25%", "largest tolerated rise of lockbench's peak RSS (meta.max_rss_mb)")
	cmd.Flags().StringVar(&fl.normalize, "normalize", "", "compare as ratios to this scenario's row figures (ops/s, p99) in the same file (strategy/driver/workload/retry)")
	cmd.Flags().Float64Var(&fl.alpha, "alpha", 0.05, "significance level of the Mann-Whitney U test (benchstat's default)")
	cmd.Flags().StringVar(&fl.format, "format", "table", "table, or benchstat: both files in the Go benchmark format, for benchstat -col run")
	addMaxInputFlag(cmd, &fl.maxInput)
	return cmd
}

// compareThresholds are compare's thresholds, as fractions.
type compareThresholds struct{ ops, p99, cost, cpu, rss float64 }

// check reads the thresholds and checks --alpha and --format; every
// problem is returned as one usage error.
func (fl *compareFlags) check() (compareThresholds, error) {
	var errs []error
	var th compareThresholds
	var err error
	if th.ops, err = parsePercent(fl.threshold); err != nil {
		errs = append(errs, fmt.Errorf("--threshold: %w", err))
	}
	th.p99 = th.ops
	if fl.p99Threshold != "" {
		if th.p99, err = parsePercent(fl.p99Threshold); err != nil {
			errs = append(errs, fmt.Errorf("--p99-threshold: %w", err))
		}
	}
	if th.cost, err = parsePercent(fl.costThreshold); err != nil {
		errs = append(errs, fmt.Errorf("--cost-threshold: %w", err))
	}
	if th.cpu, err = parsePercent(fl.cpuThreshold); err != nil {
		errs = append(errs, fmt.Errorf("--cpu-threshold: %w", err))
	}
	if th.rss, err = parsePercent(fl.rssThreshold); err != nil {
		errs = append(errs, fmt.Errorf("--rss-threshold: %w", err))
	}
	if !(fl.alpha > 0 && fl.alpha < 1) {
		errs = append(errs, fmt.Errorf("--alpha must be above 0 and below 1, got %v", fl.alpha))
	}
	if !contains(compareFormats, fl.format) {
		errs = append(errs, fmt.Errorf("--format %q is not table or benchstat", fl.format))
	}
	if len(errs) > 0 {
		return th, usageError{errors.Join(errs...)}
	}
	return th, nil
}

// runCompare is lockbench compare: the two files read, then written in
// benchstat's format, or compared (compareRuns).
func runCompare(cmd *cobra.Command, args []string, fl *compareFlags) error {
	th, err := fl.check()
	if err != nil {
		return err
	}
	base, err := readResult(args[0], fl.maxInput)
	if err != nil {
		return err
	}
	cur, err := readResult(args[1], fl.maxInput)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if fl.format == "benchstat" {
		warnBuilds(cmd.ErrOrStderr(), cmd.ErrOrStderr(), base, cur)
	} else {
		warnBuilds(out, cmd.ErrOrStderr(), base, cur)
	}
	if fl.format == "benchstat" {
		if err := report.WriteBenchstat(out, base, "run", "base"); err != nil {
			return err
		}
		return report.WriteBenchstat(out, cur, "run", "new")
	}
	if err := checkBaseline(base); err != nil {
		return err
	}
	return compareRuns(out, cmd.ErrOrStderr(), base, cur, fl, th)
}

// compareRuns compares cur to base: the tables, the peak RSS, the notes,
// and the error of a regression (exit 1).
func compareRuns(out, stderr io.Writer, base, cur *report.Run, fl *compareFlags, th compareThresholds) error {
	deltas, missing, err := report.Compare(base, cur, report.CompareOptions{Threshold: th.ops, P99Threshold: th.p99, Normalize: fl.normalize, Alpha: fl.alpha,
		CostThreshold: th.cost, CPUThreshold: th.cpu, Unsafe: unsafeScenario})
	if err != nil {
		return usageError{err}
	}
	if err := report.CompareTable(out, deltas, fl.normalize != ""); err != nil {
		return err
	}
	if len(deltas) > 0 {
		fmt.Fprintln(out, "cost per operation (never normalized):")
		if err := report.CostTable(out, deltas); err != nil {
			return err
		}
	}
	rss, rssWorse := report.CompareRSS(base, cur, th.rss)
	if rss.NotMeasured {
		fmt.Fprintln(out, "peak RSS: n/a (a file does not record meta.max_rss_mb)")
	} else {
		v := "ok"
		if rssWorse {
			v = "REGRESSED"
		}
		fmt.Fprintf(out, "peak RSS: base %.1f MB, new %.1f MB, %+.1f%% (threshold %s only: one figure per file): %s\n", rss.Base, rss.New, 100*rss.Rel, fl.rssThreshold, v)
	}
	for _, m := range missing {
		fmt.Fprintln(out, m)
	}
	compareNotes(out, stderr, deltas)
	if len(deltas) == 0 {
		return errors.New("no scenario of the new file matches one of the base file: scenarios match on strategy, driver, workload, retry, clients and every parameter but the seed (see the \"only in\" lines above)")
	}
	if err := regressionError(deltas); err != nil {
		return err
	}
	if rssWorse {
		return fmt.Errorf("%w: peak RSS rose %+.1f%%, past the %s threshold (threshold only: one figure per file)", errRegressed, 100*rss.Rel, fl.rssThreshold)
	}
	fmt.Fprintf(out, "no regression in %d scenarios (threshold %s, cost threshold %s, alpha %v)\n", len(deltas), fl.threshold, fl.costThreshold, fl.alpha)
	return nil
}

// compareNotes prints the scenarios' notes (what was not compared) and
// warns of scenarios with too few runs for a significance test.
func compareNotes(out, stderr io.Writer, deltas []report.Delta) {
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
		fmt.Fprintf(stderr, "lockbench: warning: %d of %d scenarios have fewer than %d runs on a side: their changes were judged on the threshold alone, without a significance test (run with --repeat %d or more)\n",
			few, len(deltas), report.MinSamples, report.MinSamples)
	}
}

// regressionError is compare's error when a scenario of deltas regressed
// (nil when none did): how many, and whether the changes past threshold
// were tested for significance (a side with fewer than
// report.MinSamples runs is judged on the threshold alone).
func regressionError(deltas []report.Delta) error {
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
			for _, c := range d.Costs {
				if c.Figure == r {
					judged(c.Change)
				}
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
		how = fmt.Sprintf("(and significant, or threshold only, not tested, where a side has fewer than %d runs)", report.MinSamples)
	case untested:
		how = fmt.Sprintf("(threshold only, not tested: fewer than %d runs on a side)", report.MinSamples)
	}
	var what []string
	for _, d := range deltas {
		for _, r := range d.Regressed {
			if !slices.Contains(what, r) {
				what = append(what, r)
			}
		}
	}
	return fmt.Errorf("%w: %d of %d scenarios past their thresholds %s or with more violations (%s)", errRegressed, n, len(deltas), how, strings.Join(what, ", "))
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
