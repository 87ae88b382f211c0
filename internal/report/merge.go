package report

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/lockbench/lockbench/internal/history"
)

// Merge combines result files from several load-generator machines (or
// execution segments) that ran the same scenarios against the same Redis
// at the same time: per scenario (matched by mergeKey), the scenarios are
// combined Concurrent (Combine: raw data merged first, every figure
// derived after). Files of execution segments (Meta.Segments > 0) match
// scenarios whatever their clients (each ran its share), and the merged
// file has every segment's clients; a sweep's meta lists the merged
// client counts. Errors: runs whose scenarios differ (each must have the
// same ones, once each), a scenario without raw data (written before it
// existed: it cannot be combined exactly) or that pools repeats (runs
// not made at the same time), a histogram that does not decode.
func Merge(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("nothing to merge")
	}
	out := &Run{Schema: Schema, Meta: runs[0].Meta}
	idx := map[string]int{}
	var parts [][]Scenario
	for ri, r := range runs {
		out.Interrupted = out.Interrupted || r.Interrupted
		matched := 0
		for _, s := range r.Scenarios {
			key := mergeKey(r, s)
			i, ok := idx[key]
			if !ok {
				if ri > 0 {
					continue
				}
				i = len(parts)
				idx[key] = i
				parts = append(parts, nil)
			}
			matched++
			parts[i] = append(parts[i], s)
		}
		if matched == 0 {
			return nil, fmt.Errorf("run %d has no scenario in common with the first", ri+1)
		}
		if matched != len(r.Scenarios) || (ri > 0 && matched != len(parts)) {
			return nil, fmt.Errorf("run %d has %d scenarios, %d of them among the first run's %d: merge files that ran the same scenarios", ri+1, len(r.Scenarios), matched, len(parts))
		}
	}
	for _, p := range parts {
		for _, s := range p {
			if s.Raw != nil && s.Raw.Runs > 1 {
				return nil, fmt.Errorf("%s pools %d repeats (--repeat): merge combines runs made at the same time; merge the files of one repeat, or run --procs with --repeat", s.Name(), s.Raw.Runs)
			}
		}
		m, err := Combine(Concurrent, p)
		if err != nil {
			return nil, err
		}
		if m.Raw.Segment && len(p) == runs[0].Meta.Segments {
			// Every segment of the run: the servers' cost is the run's.
			m.Raw.Segment = false
			if err := Derive(&m); err != nil {
				return nil, err
			}
			m.Samples = []Sample{SampleOf(m)}
		}
		out.Scenarios = append(out.Scenarios, m)
	}
	if out.Meta.Sweep != nil {
		sw := *out.Meta.Sweep
		sw.Clients = nil
		for _, s := range out.Scenarios {
			if !slices.Contains(sw.Clients, s.Clients) {
				sw.Clients = append(sw.Clients, s.Clients)
			}
		}
		slices.Sort(sw.Clients)
		out.Meta.Sweep = &sw
	}
	return out, nil
}

// mergeTimeline adds b's seconds to a's, entry by entry (the machines ran
// at the same time); the longer timeline's extra entries are kept as they
// are. No entry keeps its latency (percentiles do not add). a is not
// modified.
func mergeTimeline(a, b []Second) []Second {
	if len(b) > len(a) {
		a, b = b, a
	}
	out := append([]Second(nil), a...)
	for i, e := range b {
		o := &out[i]
		o.TS = max(o.TS, e.TS)
		o.Ops += e.Ops
		o.Errors += e.Errors
		o.AcquireFailures += e.AcquireFailures
		o.Violations += e.Violations
		o.Offered += e.Offered
		o.Dropped += e.Dropped
		o.Clients += e.Clients
		o.ClientsMean += e.ClientsMean
		o.Holds += e.Holds
		o.HoldMSSum += e.HoldMSSum
	}
	for i := range out { // percentiles do not add: no entry keeps its latency
		o := &out[i]
		o.OpP50MS, o.OpP99MS, o.OpMaxMS = 0, 0, 0
		o.AcquireP50MS, o.AcquireP99MS, o.AcquireMaxMS = 0, 0, 0
	}
	return out
}

// CrossCheck runs the cross-process oracle on a merge: for every
// scenario of merged (Merge's result of runs) whose files carry a
// history_file, it reads those histories (each path relative to dirs[i],
// the directory of runs[i]'s result file), takes their records of the
// scenario (matched by Key) and sets violations.cross_overlap,
// violations.cross_overlap_possible and cross_check from history.Count,
// and linearizability from Porcupine's check of the same histories
// (history.Linearize, within the default bounds: CrossCheckWithin).
// The merged scenario's history_file is cleared (it has one per
// process). Scenarios without histories are left as they are. Errors: a
// history file missing, unreadable or without the scenario; a scenario
// with a history in some files and not in others; what Count reports.
func CrossCheck(merged *Run, runs []*Run, dirs []string) error {
	return CrossCheckWithin(merged, runs, dirs, LinBounds{})
}

// CrossCheckWithin is CrossCheck with Porcupine's check of each scenario
// bounded by b (its time budget and history size; zero fields take the
// defaults, history.DefaultLinBudget and history.DefaultMaxSections).
func CrossCheckWithin(merged *Run, runs []*Run, dirs []string, b LinBounds) error {
	files := map[string]*history.File{}
	// The merged scenarios are the first run's distinct keys, in order
	// (Merge); their own Key differs (clients are summed).
	var keys []string
	seen := map[string]bool{}
	if len(runs) > 0 {
		for _, s := range runs[0].Scenarios {
			if k := mergeKey(runs[0], s); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) != len(merged.Scenarios) {
		return fmt.Errorf("cross-check: %d merged scenarios, %d in the first file", len(merged.Scenarios), len(keys))
	}
	for i := range merged.Scenarios {
		m := &merged.Scenarios[i]
		key := keys[i]
		var parts []history.Part
		without := 0
		for ri, r := range runs {
			for _, s := range r.Scenarios {
				if mergeKey(r, s) != key {
					continue
				}
				if r.Meta.Segments > 0 && s.Clients == 0 {
					continue // a segment without clients in this scenario: no sections
				}
				if s.HistoryFile == "" {
					without++
					continue
				}
				path := s.HistoryFile
				if !filepath.IsAbs(path) {
					path = filepath.Join(dirs[ri], path)
				}
				f, ok := files[path]
				if !ok {
					var err error
					if f, err = history.ReadFile(path); err != nil {
						return fmt.Errorf("run %d, %s: history_file: %w", ri+1, s.Name(), err)
					}
					files[path] = f
				}
				recs := f.Scenario(s.Key()) // the process's own key: its clients
				if len(recs) == 0 {
					return fmt.Errorf("run %d, %s: history %s has no record of this scenario", ri+1, s.Name(), path)
				}
				parts = append(parts, history.Part{Header: f.Header, Scenarios: recs})
			}
		}
		m.HistoryFile = ""
		if len(parts) == 0 {
			continue
		}
		if without > 0 {
			return fmt.Errorf("%s: %d of the files have a history_file and %d have none; run every process with --history to check them together", m.Name(), len(parts), without)
		}
		c, err := history.Count(parts)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name(), err)
		}
		certain, possible := c.Certain, c.Possible
		m.Violations.CrossOverlap, m.Violations.CrossOverlapPossible = &certain, &possible
		m.CrossCheck = c.Text()
		if m.Linearizability, err = linearize(parts, b); err != nil {
			return fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
	return nil
}

// mergeKey is the key Merge matches s of run r by: its Key, but in a file
// of an execution segment (Meta.Segments > 0) without its clients, since
// each segment ran its own share of them.
func mergeKey(r *Run, s Scenario) string {
	if r.Meta.Segments > 0 {
		s.Clients = 0
	}
	return s.Key()
}
