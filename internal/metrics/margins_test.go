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
	m.Start(now.Add(time.Hour), now.Add(2*time.Hour)) // the window starts later
	m.Renewed(3*time.Second, time.Millisecond)
	if f := m.Figures(); f.Measured || f.Renewals != 0 {
		t.Fatalf("a renewal before the window counted: %+v", f)
	}
	m.Renews()
	if f := m.Figures(); !f.Measured || f.Renewals != 0 || f.Min != 0 {
		t.Fatalf("Renews: %+v, want measured with no renewals", f)
	}

	m = NewMargins(3 * time.Second)
	m.Start(now.Add(-time.Hour), now.Add(time.Hour)) // in the first half
	m.Renewed(3*time.Second, 2*time.Second)
	m.Renewed(3*time.Second, time.Second-time.Microsecond) // late
	m.Renewed(3*time.Second, time.Second)                  // not late: TTL/3 exactly
	m.Extended(0, 4*time.Second)                           // -1 s: late
	f := m.Figures()
	if f.Renewals != 4 || f.Late != 2 || f.Min != -time.Second || f.First.TotalCount() != 4 || f.Second.TotalCount() != 0 {
		t.Fatalf("first half: %+v (first %d, second %d)", f, f.First.TotalCount(), f.Second.TotalCount())
	}
	m.Start(now.Add(-2*time.Hour), now.Add(-time.Hour)) // now in the second half
	m.Renewed(3*time.Second, 2*time.Second)
	if f := m.Figures(); f.Second.TotalCount() != 1 || f.First.TotalCount() != 4 || f.Renewals != 5 {
		t.Fatalf("second half: %+v", f)
	}
}
