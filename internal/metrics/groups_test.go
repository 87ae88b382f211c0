package metrics

import (
	"testing"
	"time"
)

// A grouped Set keeps each group's clients in shards of their own, so
// that TotalOf(g) holds group g's values and counters alone and the
// groups add up to Total exactly, with few clients (a shard each) and
// with more clients than shards.
func TestGroupedSetTotals(t *testing.T) {
	for _, clients := range []int{5, 3 * maxShards} {
		groups := make([]int, clients)
		for i := range groups {
			if i%3 == 1 {
				groups[i] = 1 // a third in group 1
			}
		}
		s := NewGroupedSet(groups)
		for i := range clients {
			r := s.Client(i)
			for range 1 + groups[i] { // group 0: one op per client of 1 ms, group 1: two of 10 ms
				r.Acquired(1, time.Duration(1+9*groups[i])*time.Millisecond)
				r.Completed(time.Duration(1+9*groups[i]) * time.Millisecond)
			}
			if groups[i] == 1 {
				r.Overlapped()
			}
		}
		n1 := int64(0)
		for _, g := range groups {
			n1 += int64(g)
		}
		n0 := int64(clients) - n1
		g0, g1, all := s.TotalOf(0), s.TotalOf(1), s.Total()
		if g0.Ops != n0 || g1.Ops != 2*n1 || g0.Ops+g1.Ops != all.Ops || g1.Overlaps != n1 || g0.Overlaps != 0 {
			t.Errorf("%d clients: ops %d + %d of %d, overlaps %d + %d", clients, g0.Ops, g1.Ops, all.Ops, g0.Overlaps, g1.Overlaps)
		}
		if g0.Acquire.TotalCount() != n0 || g0.Acquire.Max() > 1100 || g1.Acquire.TotalCount() != 2*n1 || g1.Acquire.Min() < 9900 {
			t.Errorf("%d clients: group 0 acquires %d (max %d µs), group 1 %d (min %d µs): a shard mixes the groups", clients,
				g0.Acquire.TotalCount(), g0.Acquire.Max(), g1.Acquire.TotalCount(), g1.Acquire.Min())
		}
		// CountsOf: TotalOf's counters, without histograms.
		for g, tot := range []*Recorder{g0, g1} {
			c := s.CountsOf(g)
			if c.Ops != tot.Ops || c.Overlaps != tot.Overlaps || c.Attempts != tot.Attempts || c.Hists.Op != nil || c.Hists.Acquire != nil {
				t.Errorf("%d clients: CountsOf(%d) ops %d overlaps %d attempts %d (op hist %v), want TotalOf's %d, %d, %d and no histogram",
					clients, g, c.Ops, c.Overlaps, c.Attempts, c.Hists.Op != nil, tot.Ops, tot.Overlaps, tot.Attempts)
			}
		}
		if g0.Op.TotalCount()+g1.Op.TotalCount() != all.Op.TotalCount() {
			t.Errorf("%d clients: op values %d + %d of %d", clients, g0.Op.TotalCount(), g1.Op.TotalCount(), all.Op.TotalCount())
		}
	}
	if s := NewSet(7); s.Shards() != 7 {
		t.Errorf("NewSet(7): %d shards, want one per client", s.Shards())
	}
}
