package cli

import (
	"errors"
	"fmt"
	"os"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/report"
)

// readResult reads a result file for show, compare, merge and report: a
// file that cannot be read, is not a regular file, is larger than max
// bytes (--max-input-size; 0: report.DefaultMaxInput), is not a result
// file of this schema, holds figures a result cannot (report.Validate) or
// a latency histogram that does not decode is bad input (exit 2) in every
// subcommand, and the error names the file.
func readResult(path string, max int64) (*report.Run, error) {
	r, err := report.ReadFileMax(path, max)
	if errors.Is(err, report.ErrTooLarge) {
		err = fmt.Errorf("%w (--max-input-size)", err)
	}
	if err != nil {
		return nil, usageError{err}
	}
	if err := report.Validate(r); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", path, err)}
	}
	for i, s := range r.Scenarios {
		if s.LatencyHist == "" {
			continue
		}
		if _, err := hdrhistogram.Decode([]byte(s.LatencyHist)); err != nil {
			return nil, usageError{fmt.Errorf("%s: scenario %d (%s/%s/%s/%s): latency_hist is not a histogram lockbench wrote (%v); the file is damaged: run the scenario again",
				path, i+1, s.Strategy, s.Driver, s.Workload, s.Retry, err)}
		}
	}
	return r, nil
}

// namedPath rewrites an error from writing path so that it names path,
// never the temporary file the write went through (.lockbench-*.tmp).
func namedPath(path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &pe):
		err = pe.Err
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// checkDir checks, leaving nothing behind, that dir is a directory or can
// be made as one: an existing file is refused, and the nearest existing
// ancestor must be writable (checkOut's rule).
func checkDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return errors.New("is a file, not a directory")
	}
	return checkOut(dir + "/.lockbench-check.json")
}
