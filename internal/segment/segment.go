// Package segment is lockbench's execution-segment model (after k6's
// execution segments, https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#execution-segment):
// N processes, possibly on N machines, each run one segment i/N of every
// scenario — a share of its clients and of its open-loop rate — against
// the same Redis under the same run id, so that together they run exactly
// the scenario one process would. This file holds the arithmetic (Parse,
// Share, Offset, Rate); barrier.go the start and end barrier in Redis.
//
// How clients are split: scenario clients C over N segments gives every
// segment C / N (integer division), and the first C mod N segments one
// more, so the shares differ by at most one, sum to C, and segment 1 (the
// leader, which prepares the data) always has at least one client. With
// fewer clients than segments the last N - C segments have none; they
// still take part in the barrier. An open-loop rate R is split evenly:
// R / N each (floating point; the N shares sum to R up to rounding).
package segment

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCount bounds N: a barrier polls Redis for every segment, and more
// processes than this on one run is a typo.
const MaxCount = 10_000

// Segment is segment Index of Count (1-based: 1 <= Index <= Count).
// Segment 1 is the leader: it prepares the scenario's data, and checks and
// deletes it once every segment has finished.
type Segment struct {
	Index, Count int
}

// String is "i/N".
func (s Segment) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Leader reports whether s is segment 1.
func (s Segment) Leader() bool { return s.Index == 1 }

// Check returns an error unless 1 <= Index <= Count <= MaxCount.
func (s Segment) Check() error {
	switch {
	case s.Count < 1 || s.Count > MaxCount:
		return fmt.Errorf("the segment count must be from 1 to %d, got %d", MaxCount, s.Count)
	case s.Index < 1 || s.Index > s.Count:
		return fmt.Errorf("the segment must be from 1 to %d (1-based), got %d", s.Count, s.Index)
	}
	return nil
}

// Parse reads "i/N" (1-based i, as --segment and LOCKBENCH_SEGMENT take
// it). Errors: another form, numbers that do not parse, or a segment out
// of range (Check).
func Parse(v string) (Segment, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || strings.HasPrefix(a, "+") || strings.HasPrefix(b, "+") {
		return Segment{}, fmt.Errorf("%q: want i/N, segment i of N (1-based), e.g. 2/4", v)
	}
	s := Segment{Index: i, Count: n}
	if err := s.Check(); err != nil {
		return Segment{}, fmt.Errorf("%q: %w", v, err)
	}
	return s, nil
}

// FromIndex is segment index+1 of count: Kubernetes' JOB_COMPLETION_INDEX
// is 0-based. Errors: an index that does not parse or is out of range.
func FromIndex(index string, count int) (Segment, error) {
	i, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil {
		return Segment{}, fmt.Errorf("JOB_COMPLETION_INDEX %q is not a number", index)
	}
	s := Segment{Index: i + 1, Count: count}
	if err := s.Check(); err != nil {
		return Segment{}, fmt.Errorf("JOB_COMPLETION_INDEX %d (0-based) with --segment-count %d: %w", i, count, err)
	}
	return s, nil
}

// Share is how many of total clients segment s runs: total / Count, plus
// one for the first total mod Count segments. The Count shares sum to
// total. total < 0 counts as 0.
func Share(total int, s Segment) int {
	if total <= 0 || s.Count < 1 {
		return 0
	}
	n := total / s.Count
	if s.Index <= total%s.Count {
		n++
	}
	return n
}

// Offset is the number of clients the segments before s run: s's clients
// are clients Offset .. Offset+Share-1 of the whole scenario (their seeds
// and owner names), so that no two processes share one.
func Offset(total int, s Segment) int {
	if total <= 0 || s.Count < 1 {
		return 0
	}
	before := s.Index - 1
	return before*(total/s.Count) + min(before, total%s.Count)
}

// Rate is segment s's share of an open-loop rate: rate / Count.
func Rate(rate float64, s Segment) float64 {
	if s.Count < 1 {
		return rate
	}
	return rate / float64(s.Count)
}
