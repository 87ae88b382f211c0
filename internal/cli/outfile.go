package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// outFiles are a run's result files: the result JSON at path and, beside
// it, one .hgrm and one .hlog file per scenario. write puts them into place complete or
// not at all; release undoes what the reservation made.
type outFiles struct {
	path string
	// placeholder is what reserveOut wrote at path (default name), to be
	// removed when the run ends without writing its results.
	placeholder []byte
	// lock is the reservation file of an explicit --out (reserveExplicit).
	lock string
	// made are the directories reserveFiles made for path, removed by
	// release (while empty) when nothing was written.
	made []string

	mu      sync.Mutex
	written bool
}

// tmpPrefix starts the name of every temporary file or directory
// lockbench makes beside its results: .lockbench-<pid>-, so that a later
// run can tell whether its maker is gone (sweepStale).
func tmpPrefix() string { return fmt.Sprintf(".lockbench-%d-", os.Getpid()) }

// lockName is the reservation file of result file path: one name per
// path, whichever process makes it (O_EXCL), holding its maker's pid.
func lockName(path string) string {
	return filepath.Join(filepath.Dir(path), ".lockbench-lock-"+filepath.Base(path))
}

// reserveOut creates dir/<UTC timestamp>.json for a run's results, or
// <UTC timestamp>-2.json, -3, ... when another run took the name in the
// same second (O_EXCL: two processes never get one name), and returns its
// path and contents. The file holds a placeholder result, with the run's
// id, that says the run has not finished, until the run writes its own
// over it (removeUnwritten removes it when the run ends without doing
// so); a run killed with SIGKILL leaves the placeholder. Errors: the
// directory cannot be made or written.
func reserveOut(dir string, now time.Time, runID string) (string, []byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	stamp := now.Format("20060102T150405Z")
	placeholder, err := json.Marshal(report.Run{Schema: report.Schema, Meta: report.Meta{StartedAt: now.Format(time.RFC3339), RunID: runID},
		Failed: fmt.Sprintf("the run has not finished (it is still running, or was killed; pid %d)", os.Getpid()), Scenarios: []report.Scenario{}})
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

// reserveExplicit reserves the result file path the user named (--out):
// it creates path's reservation file (lockName) with O_EXCL, so that a
// second run naming the same file at once fails at its start, then
// refuses a path that exists unless force. A reservation file whose
// process is gone (SIGKILL) is taken over. The errors are the user's to
// fix (usage errors), except a directory that cannot be written.
func reserveExplicit(path string, force bool) (*outFiles, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	lock := lockName(path)
	for try := 0; ; try++ {
		fh, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			b, _ := os.ReadFile(lock)
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if try < 3 && perr == nil && pid != os.Getpid() && !topology.Alive(pid) {
				_ = os.Remove(lock) // its run was killed
				continue
			}
			if try < 3 && len(b) == 0 {
				// Just made, its pid not yet written.
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return nil, usageError{fmt.Errorf("--out %s is being written by another lockbench run (pid %s, reservation %s); wait for it or choose another --out",
				path, strings.TrimSpace(string(b)), lock)}
		}
		if err != nil {
			return nil, fmt.Errorf("--out %s: reserve: %w", path, err)
		}
		_, werr := fh.WriteString(strconv.Itoa(os.Getpid()))
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(lock)
			return nil, werr
		}
		break
	}
	if _, err := os.Lstat(path); err == nil && !force {
		_ = os.Remove(lock)
		return nil, usageError{fmt.Errorf("--out %s exists; give --force to overwrite it, or choose another --out", path)}
	}
	return &outFiles{path: path, lock: lock}, nil
}

// write writes the run's result set, the JSON and its .hgrm and .hlog
// files, into a staging directory beside path (.lockbench-<pid>-*.tmp,
// stageSet), then moves it into place with the JSON, which names the
// set's files, last (placeSet): a reader of the JSON never sees a mix of
// an old set and the new one, and no file is ever seen half written. The
// staging directory is removed whatever happens; after an error (or a
// SIGKILL: then the next run's sweepStale, or lockbench clean --stale
// --dir) the files it would have put in are taken away (unstage). Only
// the first write of a run happens (the main path and a second Ctrl-C may
// race); later ones return nil.
func (o *outFiles) write(run *report.Run) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.written {
		return nil
	}
	dir := filepath.Dir(o.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, tmpPrefix()+"*.tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	killPoint()
	if err := stageSet(tmp, filepath.Base(o.path), run); err != nil {
		return err
	}
	if err := placeSet(tmp, o.path, run.Files); err != nil {
		unstage(dir, tmp)
		return err
	}
	o.written = true
	return nil
}

// release removes the reservation: the placeholder when the run wrote
// nothing over it, the reservation file of an explicit --out. It is
// called once the run's files are written or will never be.
func (o *outFiles) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.placeholder != nil {
		removeUnwritten(o.path, o.placeholder)
		o.placeholder = nil
	}
	if o.lock != "" {
		if b, err := os.ReadFile(o.lock); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
			_ = os.Remove(o.lock)
		}
		o.lock = ""
	}
	if !o.written {
		removeEmptyDirs(o.made)
		o.made = nil
	}
}

// removeUnwritten removes the file reserveOut made when it still holds
// the placeholder: the run ended before it wrote any result.
func removeUnwritten(path string, placeholder []byte) {
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, placeholder) {
		_ = os.Remove(path)
	}
}

// sweepStale removes, in dir only, the temporary files and directories
// (.lockbench-<pid>-*) and reservation files (.lockbench-lock-*, holding
// a pid) that lockbench processes now gone left behind (SIGKILL), and
// temporary files of older versions (.lockbench-<n>.tmp, no pid) more than
// an hour old, and the files a killed writer of a result set put beside
// them (unstage). It touches nothing else, and nothing of a live process.
// It returns the names removed.
func sweepStale(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var swept []string
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, ".lockbench-")
		if !ok {
			continue
		}
		pid := -1
		switch {
		case strings.HasPrefix(rest, "lock-"):
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					pid = n
				}
			}
		default:
			head, _, dash := strings.Cut(rest, "-")
			if n, err := strconv.Atoi(head); err == nil && dash {
				pid = n
			} else if !dash && strings.HasSuffix(rest, ".tmp") {
				// An older version's temporary file: no pid in its name.
				if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
					pid = 0
				}
			}
		}
		if pid < 0 || pid == os.Getpid() || (pid > 0 && topology.Alive(pid)) {
			continue
		}
		if e.IsDir() {
			// A killed writer's staging directory: the files it put in.
			swept = append(swept, unstage(dir, filepath.Join(dir, name))...)
		}
		if os.RemoveAll(filepath.Join(dir, name)) == nil {
			swept = append(swept, name)
		}
	}
	return swept
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
			tmp, err := os.CreateTemp(dir, tmpPrefix()+"check-*")
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
