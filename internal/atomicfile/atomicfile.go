// Package atomicfile writes a file so that a reader never sees half of it.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes path with write: into a temporary file in path's
// directory (created if needed; named .lockbench-<pid>-*.tmp, so that a
// later run can sweep it when this process was killed), then renamed over
// path with mode 0644, so a reader never sees half a file. On error
// nothing is left behind; the error is write's, or the file system's.
func Write(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), fmt.Sprintf(".lockbench-%d-*.tmp", os.Getpid()))
	if err != nil {
		return err
	}
	err = write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
