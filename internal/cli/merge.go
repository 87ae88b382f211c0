package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
)

func newMergeCmd() *cobra.Command {
	var out string
	var failOn []string
	var lb linFlags
	cmd := &cobra.Command{
		Use:   "merge A.json B.json [...]",
		Short: "Merge result files of several load machines that ran the same scenarios together",
		Long: `merge combines result files from several load-generator machines that ran
the same scenarios against the same Redis at the same time, the way to
scale load past one machine: each scenario's raw data (every histogram,
per-client counts, the servers' cost counted once per set of servers,
client CPU) is combined first and every figure derived from it after
(ops/s over the shared window, percentiles, ceiling, Jain, commands/op;
docs/results.md); counters and violations are summed. When the
files carry history_file (run --history), the processes' critical-section
histories are compared on one clock and the sections of different
processes that overlapped on one lock are counted (violations.cross_overlap,
cross_overlap_possible, cross_check; docs/distributed.md), and Porcupine
checks the same histories (linearizability: verdict ok, illegal or
unknown, and the lock keys where it and that count disagree; within
--check-budget and --check-max-sections). It prints
the table (the sweep table for sweeps' files; compact on a narrow terminal,
as lockbench show prints it) and writes the merged file (--out).

Files of execution segments (lockbench run --segment i/N, docs/distributed.md)
must be of one run: the same run id, plan hash and run nonce, each segment
once (else exit 2). The merged meta has segments N and killed_segments, the
segments whose file is missing. --fail-on tests thresholds on the merged
result, as run does (exit 3 when one fails).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runMerge(cmd, args, out, failOn, lb) },
	}
	cmd.Flags().StringVar(&out, "out", "results/merged.json", "merged result file")
	cmd.Flags().StringArrayVar(&failOn, "fail-on", nil, "thresholds tested on the merged result, as run's (exit 3 when one fails): the way to gate a run of segments, whose followers lack the end checks")
	lb.add(cmd)
	return cmd
}

// linFlags are the bounds of Porcupine's check (merge and check).
type linFlags struct {
	budget      time.Duration
	maxSections int
	maxInput    int64 // --max-input-size
}

func (l *linFlags) add(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&l.budget, "check-budget", history.DefaultLinBudget, "the time Porcupine's check of one scenario's histories may take, every lock key together; keys not decided by then make the verdict unknown")
	addMaxInputFlag(cmd, &l.maxInput)
	cmd.Flags().IntVar(&l.maxSections, "check-max-sections", history.DefaultMaxSections, "the most critical sections (all processes) Porcupine checks in one scenario; over it the verdict is unknown (its search is exponential in the worst case)")
}

// bounds checks the flags (exit 2 unless both are positive) and returns
// them.
func (l linFlags) bounds() (report.LinBounds, error) {
	if l.budget <= 0 {
		return report.LinBounds{}, usageError{fmt.Errorf("--check-budget %s: must be positive", l.budget)}
	}
	if l.maxSections <= 0 {
		return report.LinBounds{}, usageError{fmt.Errorf("--check-max-sections %d: must be positive", l.maxSections)}
	}
	return report.LinBounds{Budget: l.budget, MaxSections: l.maxSections}, nil
}

// runMerge is lockbench merge: the files read and checked, merged,
// cross-checked, printed and written to out, with --fail-on's thresholds.
func runMerge(cmd *cobra.Command, args []string, out string, failOn []string, lf linFlags) error {
	if err := checkOut(out); err != nil {
		return usageError{fmt.Errorf("--out %q: %v", out, err)}
	}
	lb, err := lf.bounds()
	if err != nil {
		return err
	}
	ths, errs := thresholds.ParseList(failOn)
	if len(errs) > 0 {
		return usageError{fmt.Errorf("--fail-on: %w", errors.Join(errs...))}
	}
	if checkOnly(cmd.Context()) {
		return nil // CheckArgs: no file is read
	}
	m, runs, err := readMerged(args, out, lb, lf.maxInput)
	if err != nil {
		return err
	}
	// The table lockbench show prints of the merged file (a
	// sweep's for sweeps; compact on a narrow terminal).
	if err := printResults(cmd.OutOrStdout(), "table", "", termWidth(cmd.OutOrStdout()), m); err != nil {
		return err
	}
	if len(ths) > 0 {
		var names []string
		for _, s := range m.Scenarios {
			names = append(names, s.Name())
		}
		if errs := thresholds.Unmatched(ths, names); len(errs) > 0 {
			return usageError{fmt.Errorf("--fail-on: %w", errors.Join(errs...))}
		}
		m.Thresholds = thresholds.Evaluate(ths, m.Scenarios)
	}
	if err := report.WriteFile(out, m); err != nil {
		return namedPath(out, err)
	}
	if len(ths) > 0 {
		if err := printThresholds(cmd.OutOrStdout(), cmd.ErrOrStderr(), "table", ths, m.Thresholds); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "merged %d files into %s\n", len(runs), out)
	if k := thresholds.Failed(m.Thresholds); k > 0 {
		return fmt.Errorf("%w: %d of %d (threshold x scenario)", errThresholds, k, len(m.Thresholds))
	}
	return nil
}

// readMerged is what lockbench merge and lockbench check share: it reads
// the result files paths (readMergeInputs; out, when not "", must not be
// one of them), checks that their execution segments are of one run,
// each once (checkSegmentFiles), merges them (mergeSegments) and runs the
// cross-process oracle and Porcupine's check within b on the merged run
// (crossCheck). Each file is at most maxInput bytes. It returns the merged run and the runs read. Bad input
// (an unreadable or invalid file, segments of different runs, a history
// file missing) is a usageError (exit 2).
func readMerged(paths []string, out string, b report.LinBounds, maxInput int64) (*report.Run, []*report.Run, error) {
	runs, err := readMergeInputs(paths, out, maxInput)
	if err != nil {
		return nil, nil, err
	}
	missing, err := checkSegmentFiles(runs, paths)
	if err != nil {
		return nil, nil, usageError{err}
	}
	m, err := mergeSegments(runs, missing)
	if err != nil {
		return nil, nil, usageError{err}
	}
	if err := crossCheck(m, runs, paths, b); err != nil {
		return nil, nil, err
	}
	return m, runs, nil
}

// readMergeInputs reads the files to merge, each checked (report.Check)
// and at most maxInput bytes (readResult); out must not be one of them.
func readMergeInputs(args []string, out string, maxInput int64) ([]*report.Run, error) {
	var runs []*report.Run
	for _, a := range args {
		if same, err := samePath(a, out); err == nil && same {
			return nil, usageError{fmt.Errorf("--out %s is one of the files to merge: it would be replaced by the merge", out)}
		}
		r, err := readResult(a, maxInput)
		if err != nil {
			return nil, err
		}
		// Every input must hold its own invariants: a damaged or
		// hand-edited file is bad input, not a merge to write.
		if err := report.Check(r); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", a, err)}
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// samePath reports whether a and b name one file (b may not exist yet).
func samePath(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
