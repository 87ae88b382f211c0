package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/internal/history"
)

// historyWriter returns the writer of --history path (nil without it),
// for the run runID whose result file is out. A segment of a run (sp set)
// keeps one by default, named after out (historyName), for lockbench
// merge's cross-process check. Errors (usage, exit 2):
// the result file's own name, a name without .gz, a directory, a
// directory that cannot be written, or an existing file without force.
func historyWriter(path, out, runID string, force bool, sp *segPlan) (*history.Writer, error) {
	if path == "" && sp != nil {
		path = historyName(out)
	}
	if path == "" {
		return nil, nil
	}
	bad := func(err error) error { return usageError{fmt.Errorf("--history %q: %w", path, err)} }
	if a, b := absPath(path), absPath(out); a == b {
		return nil, bad(errors.New("is the result file (--out); give another name, e.g. " + historyName(out)))
	}
	if !strings.HasSuffix(path, ".gz") {
		return nil, bad(errors.New("must end in .gz (the file is gzip'd JSON lines, e.g. run.history.jsonl.gz)"))
	}
	// checkOut's checks, on the name it takes.
	if err := checkOut(strings.TrimSuffix(path, ".gz") + ".json"); err != nil {
		return nil, bad(err)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, bad(errors.New("is a directory"))
	} else if err == nil && !force {
		return nil, bad(errors.New("exists (--force overwrites it)"))
	}
	h := history.Header{RunID: runID}
	if sp != nil {
		h.Segment, h.Segments = sp.seg.Index, sp.seg.Count
	}
	return history.NewWriter(path, h), nil
}

// historyName is the default history file of the result file out:
// out without .json, plus .history.jsonl.gz.
func historyName(out string) string {
	return strings.TrimSuffix(out, ".json") + ".history.jsonl.gz"
}

// historyRef is the history_file of a scenario whose result file is out:
// w's path relative to out's directory ("" without a history).
func historyRef(w *history.Writer, out string) string {
	if w == nil {
		return ""
	}
	rel, err := filepath.Rel(filepath.Dir(absPath(out)), absPath(w.Path()))
	if err != nil {
		return absPath(w.Path())
	}
	return rel
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
