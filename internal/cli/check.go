package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
)

// defaultCheckFailOn are lockbench check's thresholds without --fail-on:
// Porcupine found every lock key linearizable and agrees with
// lockbench's own overlap count on every one.
const defaultCheckFailOn = "linearizable==1,oracle_disagreements==0"

func newCheckCmd() *cobra.Command {
	var failOn []string
	var lb linFlags
	cmd := &cobra.Command{
		Use:   "check A.json [B.json ...]",
		Short: "Check the critical-section histories of result files with Porcupine and lockbench's cross-process count",
		Long: `check reads the result files of one run's processes (the segments of
lockbench run --segment i/N, or one run with --history), as lockbench merge
does, and checks the critical-section histories they name (history_file,
relative to each result file) twice: lockbench's cross-process oracle
(pairs of sections of different processes that overlapped on one lock:
cross_overlap, cross_overlap_possible) and Porcupine's linearizability
check of a read-write lock model per lock key (verdict ok, illegal or
unknown), and says on how many lock keys the two disagree
(docs/distributed.md). It prints one line per scenario and writes no file
(lockbench merge writes the merged result with the same figures).

Exit 3 unless every scenario passes --fail-on, by default
` + defaultCheckFailOn + ` (a verdict not decided in
--check-budget, or a history over --check-max-sections, is not measured
and fails); exit 2 when no file has a history, or on bad input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, args, failOn, lb) },
	}
	cmd.Flags().StringArrayVar(&failOn, "fail-on", nil, "thresholds tested on the checked scenarios, as run's (exit 3 when one fails); default "+defaultCheckFailOn)
	lb.add(cmd)
	return cmd
}

// runCheck is lockbench check: the files read and merged as merge does,
// cross-checked, one line per scenario printed and the thresholds tested.
func runCheck(cmd *cobra.Command, args []string, failOn []string, lf linFlags) error {
	lb, err := lf.bounds()
	if err != nil {
		return err
	}
	if len(failOn) == 0 {
		failOn = []string{defaultCheckFailOn}
	}
	ths, errs := thresholds.ParseList(failOn)
	if len(errs) > 0 {
		return usageError{fmt.Errorf("--fail-on: %w", errors.Join(errs...))}
	}
	m, _, err := readMerged(args, "", lb, lf.maxInput)
	if err != nil {
		return err
	}
	checked := 0
	for _, s := range m.Scenarios {
		if s.Linearizability != nil {
			checked++
		}
	}
	if checked == 0 {
		return usageError{errors.New("no history to check: none of the files names a history_file (lockbench run --history, or the segments of a run, which keep one by default)")}
	}
	if err := checkTable(cmd.OutOrStdout(), m.Scenarios); err != nil {
		return err
	}
	var names []string
	for _, s := range m.Scenarios {
		names = append(names, s.Name())
	}
	if errs := thresholds.Unmatched(ths, names); len(errs) > 0 {
		return usageError{fmt.Errorf("--fail-on: %w", errors.Join(errs...))}
	}
	rs := thresholds.Evaluate(ths, m.Scenarios)
	if err := printThresholds(cmd.OutOrStdout(), cmd.ErrOrStderr(), "table", ths, rs); err != nil {
		return err
	}
	if k := thresholds.Failed(rs); k > 0 {
		return fmt.Errorf("%w: %d of %d (threshold x scenario)", errThresholds, k, len(rs))
	}
	return nil
}

// checkTable prints one line per scenario: its name, the sections
// checked, lockbench's cross-process count (certain, +possible),
// Porcupine's verdict, the lock keys it found illegal, those where the
// two disagree, and the check's time; "-" for a scenario without
// histories.
func checkTable(w io.Writer, ss []report.Scenario) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tclients\tsections\tcross-proc\tporcupine\tillegal locks\tdisagree\tchecked in")
	for _, s := range ss {
		l := s.Linearizability
		if l == nil {
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t-\t-\t-\n", s.Name(), s.Clients)
			continue
		}
		cross := "-"
		if v := s.Violations; v.CrossOverlap != nil {
			cross = strconv.FormatInt(*v.CrossOverlap, 10)
			if p := v.CrossOverlapPossible; p != nil && *p != 0 {
				cross += " (+" + strconv.FormatInt(*p, 10) + " possible)"
			}
		}
		verdict := l.Verdict
		if l.Reason != "" {
			verdict += " (" + l.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d of %d\t%d\t%.1f ms\n", s.Name(), s.Clients, l.Sections, cross, verdict,
			l.IllegalLocks, l.Locks, l.OracleDisagreements, l.ElapsedMS)
	}
	return tw.Flush()
}
