package cli

// What run and --procs share around their results: the result file
// reserved, the results written and printed, and the run's exit.

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/thresholds"
)

// reserveFiles reserves the run's result file: a unique name when --out
// is not given (two runs started in the same second must not write one
// file), else --out itself (two runs naming one --out: the second stops
// here).
//
// The directories it makes for the file are removed again when the run
// ends without writing it (outFiles.release): a refused or failed run
// leaves no empty results/ behind.
func reserveFiles(p *plan, runID string, force bool) (*outFiles, error) {
	made, _ := mkdirNew(filepath.Dir(p.out)) // an error: reserve's own, below
	if !p.defaultOut {
		o, err := reserveExplicit(p.out, force)
		if err != nil {
			removeEmptyDirs(made)
			return nil, err
		}
		o.made = made
		return o, nil
	}
	out, placeholder, err := reserveOut(filepath.Dir(p.out), time.Now().UTC(), runID)
	if err != nil {
		removeEmptyDirs(made)
		return nil, fmt.Errorf("result file: %w", err)
	}
	return &outFiles{path: out, placeholder: placeholder, made: made}, nil
}

// testHookBeforeWrite, when a test sets it, is called by a run just
// before it writes its result files (a signal sent then arrives during
// the write).
var testHookBeforeWrite func()

// writeResults writes a finished run's result files, then prints its
// results and thresholds: the files first, since a table that cannot be
// printed (stdout closed, `| head -1`: SIGPIPE) must not lose the
// results. lockbench show prints a result file through the same call.
func writeResults(files *outFiles, run *report.Run, f *runFlags, p *plan, stdout, stderr io.Writer) error {
	if err := files.write(run); err != nil {
		return namedPath(files.path, err)
	}
	files.release()
	if err := printResults(stdout, f.format, f.columns, termWidth(stdout), run); err != nil {
		return err
	}
	if len(p.thresholds) > 0 {
		if err := printThresholds(stdout, stderr, f.format, p.thresholds, run.Thresholds); err != nil {
			return err
		}
	}
	return nil
}

// runExit is a finished run's error, hence its exit code: interrupted
// (130, 143, 129), failed (1: the failures joined), thresholds failed
// (3), or nil.
func runExit(interrupted bool, failed []string, ths []report.ThresholdResult) error {
	switch {
	case interrupted:
		return errInterrupted
	case len(failed) > 0:
		return errors.New(strings.Join(failed, "; "))
	}
	if n := thresholds.Failed(ths); n > 0 {
		return fmt.Errorf("%w: %d of %d (threshold x scenario)", errThresholds, n, len(ths))
	}
	return nil
}
