package metrics

import (
	"testing"
	"time"
)

// Renewals before the window count in no figure; those of its first and
// second half go to their own histogram; late ones (under TTL/3) are
// counted exactly, the minimum kept exactly (a negative one too); a
// Margins never told of a renewal, nor marked Renews, measured nothing.
func TestMargins(t *testing.T) {
	if f := NewMargins(time.Second).Figures(); f.Measured {
		t.Fatalf("untouched Margins measured %+v", f)
	}
	var nilM *Margins
	nilM.Renewed(time.Second, 0) // no panic
	if nilM.Figures().Measured {
		t.Fatal("nil Margins measured")
	}

	now := time.Now()
	m := NewMargins(3 * time.Second)
	m.Start(now.Add(time.Hour), now.Add(2*time.Hour), time.Time{}) // the window starts later
	m.Renewed(3*time.Second, time.Millisecond)
	if f := m.Figures(); f.Measured || f.Renewals != 0 {
		t.Fatalf("a renewal before the window counted: %+v", f)
	}
	m.Renews()
	if f := m.Figures(); !f.Measured || f.Renewals != 0 || f.Min != 0 {
		t.Fatalf("Renews: %+v, want measured with no renewals", f)
	}

	m = NewMargins(3 * time.Second)
	m.Start(now.Add(-time.Hour), now.Add(time.Hour), now.Add(3*time.Hour)) // in the first half
	m.Renewed(3*time.Second, 2*time.Second)
	m.Renewed(3*time.Second, time.Second-time.Microsecond) // late
	m.Renewed(3*time.Second, time.Second)                  // not late: TTL/3 exactly
	m.Extended(7, Now(), -time.Second)                     // late
	f := m.Figures()
	if f.Renewals != 4 || f.Late != 2 || f.Min != -time.Second || f.First.TotalCount() != 4 || f.Second.TotalCount() != 0 {
		t.Fatalf("first half: %+v (first %d, second %d)", f, f.First.TotalCount(), f.Second.TotalCount())
	}
	m.Start(now.Add(-2*time.Hour), now.Add(-time.Hour), time.Time{}) // now in the second half
	m.Renewed(3*time.Second, 2*time.Second)
	if f := m.Figures(); f.Second.TotalCount() != 1 || f.First.TotalCount() != 4 || f.Renewals != 5 {
		t.Fatalf("second half: %+v", f)
	}
}

// Renewals after the window's end (Start's, or End's when earlier) count
// in no figure, exactly; a window without a middle (an ops-bounded run:
// mid = from) counts every renewal in the first half; renewals recorded
// in different shards (clients, the round-robin) merge exactly.
func TestMarginsWindowEnd(t *testing.T) {
	now := time.Now()
	m := NewMargins(3 * time.Second)
	m.Start(now.Add(-time.Hour), now.Add(-time.Hour), now.Add(time.Hour)) // no middle
	for c := range 40 {
		m.Extended(c, Now(), 2*time.Second)
		m.Renewed(3*time.Second, time.Second/2) // late
	}
	m.Extended(3, Mono(now.Add(2*time.Hour)), time.Second) // after the end
	f := m.Figures()
	if f.Renewals != 80 || f.Late != 40 || f.Min != time.Second/2 || f.First.TotalCount() != 80 || f.Second.TotalCount() != 0 {
		t.Fatalf("no middle: %+v (first %d, second %d), want 80 renewals, 40 late, all in the first half", f, f.First.TotalCount(), f.Second.TotalCount())
	}
	m.End(now.Add(2 * time.Hour)) // later than Start's end: no change
	m.End(now.Add(-time.Minute))  // the run stopped a minute ago
	m.Renewed(3*time.Second, 0)
	m.Extended(1, Now(), 0)
	if g := m.Figures(); g.Renewals != 80 || g.Late != 40 {
		t.Fatalf("after End: %+v, want the 80 renewals of before", g)
	}

	m = NewMargins(3 * time.Second)
	m.Start(now.Add(-time.Hour), now.Add(time.Hour), time.Time{}) // no end yet
	m.Renewed(3*time.Second, time.Second)
	m.End(now.Add(-time.Minute))
	m.Renewed(3*time.Second, time.Second)
	if g := m.Figures(); g.Renewals != 1 {
		t.Fatalf("End without Start's end: %d renewals, want 1", g.Renewals)
	}
}
