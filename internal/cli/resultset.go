package cli

// Result sets put into place as a set: the result JSON and its .hgrm and
// .hlog files, staged in a directory beside them, then moved in with the
// JSON last. The JSON is the set's manifest (report.Run.Files): a reader
// trusts only the files it names.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/lockbench/lockbench/internal/report"
)

// setJournal is the file, in a staging directory, naming every file
// beside the result file that putting the set into place may create or
// remove (journal), so that the staging directory's remover (unstage)
// can take away what a killed writer left.
const setJournal = ".set"

// journal is setJournal's contents.
type journal struct {
	JSON  string   `json:"json"`  // the result file's base name
	Names []string `json:"names"` // the new set's files and the old set's
}

// setOps counts the writer's file operations for killPoint.
var setOps atomic.Int64

// killPoint ends the process with SIGKILL after the Nth file operation of
// writing result sets when $LOCKBENCH_TEST_KILL_AFTER is N (the tests'
// kill at any moment, TestResultSetKilled); else it does nothing.
func killPoint() {
	n, err := strconv.ParseInt(os.Getenv("LOCKBENCH_TEST_KILL_AFTER"), 10, 64)
	if err != nil || setOps.Add(1) != n {
		return
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	select {} // until the signal lands
}

// stageSet writes run's result set into the staging directory stage:
// its .hgrm and .hlog files, then the JSON (base) naming them with their
// size and SHA-256 in run.Files. Errors: a file that cannot be written,
// a histogram that does not decode, the JSON's (report.WriteFile).
func stageSet(stage, base string, run *report.Run) error {
	staged := filepath.Join(stage, base)
	if err := report.WriteHGRM(staged, run); err != nil {
		return fmt.Errorf("write .hgrm files: %w", err)
	}
	killPoint()
	if err := report.WriteHLOG(staged, run); err != nil {
		return fmt.Errorf("write .hlog files: %w", err)
	}
	killPoint()
	entries, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	run.Files = nil
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(stage, e.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		run.Files = append(run.Files, report.SetFile{Name: e.Name(), Bytes: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
	}
	err = report.WriteFile(staged, run)
	killPoint()
	return err
}

// setNames are the files of the result set whose JSON is path: the names
// in its files, or, for a JSON without them (lockbench before files), the
// .hgrm and .hlog files its scenarios have that exist. It reads only
// those two fields, so that a file later checks would refuse still counts.
// ok is false when there is no file at path.
func setNames(path string) (names []string, ok bool) {
	if _, err := os.Lstat(path); err != nil {
		return nil, false
	}
	b, err := os.ReadFile(path)
	var r struct {
		Files     []report.SetFile  `json:"files"`
		Scenarios []report.Scenario `json:"scenarios"`
	}
	if err != nil || json.Unmarshal(b, &r) != nil {
		return nil, true
	}
	if r.Files != nil {
		for _, f := range r.Files {
			// Only plain names beside it: never a path elsewhere.
			if f.Name == filepath.Base(f.Name) && !strings.HasPrefix(f.Name, ".") && f.Name != filepath.Base(path) {
				names = append(names, f.Name)
			}
		}
		return names, true
	}
	for i, s := range r.Scenarios {
		hgrm := fmt.Sprintf("%s-%d-%s-%s-%s.hgrm", filepath.Base(strings.TrimSuffix(path, ".json")), i+1, s.Strategy, s.Driver, s.Workload)
		for _, n := range []string{hgrm, filepath.Base(report.HLOGName(path, i, s))} {
			if _, err := os.Lstat(filepath.Join(filepath.Dir(path), n)); err == nil {
				names = append(names, n)
			}
		}
	}
	return names, true
}

// placeSet moves the set staged in stage (stageSet, files names) into
// path's directory so that a reader, trusting only the files the JSON at
// path names, never sees a mix of the old set and the new: it records
// the names it may touch (setJournal); when the old set has files, it
// moves the old JSON away (from then on no set is there) and removes the
// old files the new set does not have; it moves the new files in, and the
// JSON last. Killed at any point, it leaves the old set, the new set, or
// no JSON, with the staging directory, whose journal unstage reads.
func placeSet(stage, path string, files []report.SetFile) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	var newNames []string
	for _, f := range files {
		newNames = append(newNames, f.Name)
	}
	old, _ := setNames(path)
	j := journal{JSON: base, Names: append(slices.Clone(newNames), old...)}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, setJournal), b, 0o644); err != nil {
		return err
	}
	killPoint()
	if len(old) > 0 {
		if err := os.Rename(path, filepath.Join(stage, ".old.json")); err != nil {
			return err
		}
		killPoint()
		for _, n := range old {
			if slices.Contains(newNames, n) {
				continue // replaced below
			}
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			killPoint()
		}
	}
	for _, n := range newNames {
		if err := os.Rename(filepath.Join(stage, n), filepath.Join(dir, n)); err != nil {
			return err
		}
		killPoint()
	}
	if err := os.Rename(filepath.Join(stage, base), path); err != nil {
		return err
	}
	killPoint()
	return nil
}

// unstage takes away, in dir, what the writer of staging directory stage
// left when it died or failed in placeSet: every file its journal names
// that the result file there now does not name (no result file: every
// one). The caller removes stage. It returns the names removed.
func unstage(dir, stage string) []string {
	b, err := os.ReadFile(filepath.Join(stage, setJournal))
	var j journal
	if err != nil || json.Unmarshal(b, &j) != nil || j.JSON != filepath.Base(j.JSON) {
		return nil
	}
	keep, _ := setNames(filepath.Join(dir, j.JSON))
	var removed []string
	for _, n := range j.Names {
		if n != filepath.Base(n) || n == j.JSON || slices.Contains(keep, n) {
			continue
		}
		if os.Remove(filepath.Join(dir, n)) == nil {
			removed = append(removed, n)
		}
	}
	return removed
}
