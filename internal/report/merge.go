package report

import (
	"fmt"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/metrics"
)

// Merge combines result files from several load-generator machines that
// ran the same scenarios against the same Redis at the same time: per
// scenario (matched by Key), ops, rates, counters, violations, figures and
// cost are summed, latency histograms merged and re-summarised, and the
// measured window is the longest. Files of execution segments
// (Meta.Segments > 0) match scenarios whatever their clients (each ran its
// share), and the merged file has every segment's clients. Errors: runs with no scenario in common
// with the first, or a latency histogram that does not decode.
func Merge(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("nothing to merge")
	}
	out := &Run{Schema: Schema, Meta: runs[0].Meta}
	idx := map[string]int{}
	hists := []*hdrhistogram.Histogram{}
	for ri, r := range runs {
		out.Interrupted = out.Interrupted || r.Interrupted
		matched := 0
		for _, s := range r.Scenarios {
			var h *hdrhistogram.Histogram
			if s.LatencyHist != "" {
				var err error
				if h, err = hdrhistogram.Decode([]byte(s.LatencyHist)); err != nil {
					return nil, fmt.Errorf("run %d, %s: %w", ri+1, s.Name(), err)
				}
			}
			key := mergeKey(r, s)
			i, ok := idx[key]
			if !ok {
				if ri > 0 {
					continue
				}
				idx[key] = len(out.Scenarios)
				out.Scenarios = append(out.Scenarios, s)
				hists = append(hists, h)
				matched++
				continue
			}
			matched++
			m := &out.Scenarios[i]
			m.Ops += s.Ops
			m.OpsPerSec += s.OpsPerSec
			m.Clients += s.Clients
			// Open loop: each machine (segment) ran its own arrivals.
			m.OfferedRate += s.OfferedRate
			m.Offered += s.Offered
			m.Dropped += s.Dropped
			m.Undecided += s.Undecided
			m.DurationS = max(m.DurationS, s.DurationS)
			m.Violations.Add(s.Violations)
			m.Counters.Attempts += s.Counters.Attempts
			m.Counters.Failures += s.Counters.Failures
			m.Counters.Timeouts += s.Counters.Timeouts
			m.Counters.NotOwner += s.Counters.NotOwner
			m.Counters.Rejected += s.Counters.Rejected
			m.Counters.Errors += s.Counters.Errors
			for k, v := range s.Figures {
				if m.Figures == nil {
					m.Figures = map[string]int64{}
				}
				m.Figures[k] += v
			}
			m.Timeline = mergeTimeline(m.Timeline, s.Timeline)
			if h != nil {
				if hists[i] == nil {
					hists[i] = h
				} else {
					hists[i].Merge(h)
				}
			}
		}
		if matched == 0 {
			return nil, fmt.Errorf("run %d has no scenario in common with the first", ri+1)
		}
	}
	for i, h := range hists {
		if h == nil {
			continue
		}
		out.Scenarios[i].LatencyMS = metrics.Summarize(h)
		if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			out.Scenarios[i].LatencyHist = string(enc)
		}
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
// violations.cross_overlap_possible and cross_check from history.Count.
// The merged scenario's history_file is cleared (it has one per
// process). Scenarios without histories are left as they are. Errors: a
// history file missing, unreadable or without the scenario; a scenario
// with a history in some files and not in others; what Count reports.
func CrossCheck(merged *Run, runs []*Run, dirs []string) error {
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
