package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/report"
)

// reserveOut creates dir/<UTC timestamp>.json for a run's results, or
// <UTC timestamp>-2.json, -3, ... when another run took the name in the
// same second (O_EXCL: two processes never get one name), and returns its
// path and contents. The file holds a placeholder result that says the run
// has not finished, until the run writes its own over it (removeUnwritten
// removes it when the run ends without doing so); a run killed with
// SIGKILL leaves the placeholder. Errors: the directory cannot be made or
// written.
func reserveOut(dir string, now time.Time) (string, []byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	stamp := now.Format("20060102T150405Z")
	placeholder, err := json.Marshal(report.Run{Schema: report.Schema, Meta: report.Meta{StartedAt: now.Format(time.RFC3339)},
		Failed: "the run has not finished (it is still running, or was killed)", Scenarios: []report.Scenario{}})
	if err != nil {
		return "", nil, err
	}
	for k := 1; ; k++ {
		name := stamp + ".json"
		if k > 1 {
			name = fmt.Sprintf("%s-%d.json", stamp, k)
		}
		path := filepath.Join(dir, name)
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		_, werr := fh.Write(placeholder)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		return path, placeholder, werr
	}
}

// removeUnwritten removes the file reserveOut made when it still holds
// the placeholder: the run ended before it wrote any result.
func removeUnwritten(path string, placeholder []byte) {
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, placeholder) {
		_ = os.Remove(path)
	}
}

// checkOut checks, leaving nothing behind, that a result file can be
// written at path: a .json name that is not a directory, whose nearest
// existing ancestor directory is writable (missing directories are created
// when the file is written).
func checkOut(path string) error {
	if !strings.HasSuffix(path, ".json") {
		return errors.New("must end in .json")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			// A file created and removed at once: root passes access(2)
			// checks on read-only file systems such as /proc.
			tmp, err := os.CreateTemp(dir, ".lockbench-check-*")
			if err != nil {
				return fmt.Errorf("directory %s is not writable", dir)
			}
			tmp.Close()
			return os.Remove(tmp.Name())
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("no existing directory above %s", path)
		}
		dir = parent
	}
}
