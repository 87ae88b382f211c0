package metrics

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// TestHandoverGap: a release while a client waits starts a gap that the
// next grant ends; a release nobody waits for starts none; a holder that
// never releases frees the lock at its grant plus the TTL.
func TestHandoverGap(t *testing.T) {
	h := NewHandover(1, 100*ms, false)
	h.Wait(0, 0, 0)
	h.Granted(0, 0, 1*ms)
	h.Wait(0, 1, 2*ms)
	h.Released(0, 0, 10*ms) // client 1 waits: a gap starts
	h.Granted(0, 1, 30*ms)  // 20 ms
	h.Released(0, 1, 40*ms) // nobody waits
	h.Wait(0, 0, 50*ms)
	h.Granted(0, 0, 51*ms) // no gap
	h.Wait(0, 1, 60*ms)    // client 0 never releases: its lease ends at 151 ms
	h.Granted(0, 1, 160*ms)
	f := h.Figures()
	if f.Gaps.TotalCount() != 2 || f.Idle != 29*ms || f.Grants != 4 {
		t.Fatalf("gaps %d, idle %v, grants %d; want 2, 29ms, 4", f.Gaps.TotalCount(), f.Idle, f.Grants)
	}
	if f.Gaps.Max() < 19_900 || f.Gaps.Max() > 20_100 {
		t.Errorf("max gap %d µs, want 20000", f.Gaps.Max())
	}
}

// TestHandoverFIFO: a grant to a later waiter while an earlier one waits
// is a violation; turns count the grants a waiter waited through.
func TestHandoverFIFO(t *testing.T) {
	h := NewHandover(1, 0, true)
	h.Wait(0, 0, 0)
	h.Granted(0, 0, 1*ms)
	h.Wait(0, 1, 2*ms)
	h.Wait(0, 2, 5*ms)
	h.Released(0, 0, 10*ms)
	h.Granted(0, 2, 11*ms) // LIFO: client 1 waited longer
	h.Released(0, 2, 20*ms)
	h.Granted(0, 1, 21*ms) // in order: nobody else waits
	f := h.Figures()
	if f.Violations != 1 || f.MaxTurns != 1 || f.Grants != 3 {
		t.Fatalf("violations %d, max turns %d, grants %d; want 1, 1, 3", f.Violations, f.MaxTurns, f.Grants)
	}
	h.Start(time.Hour) // nothing after counts
	h.Wait(0, 0, 30*ms)
	h.Released(0, 1, 31*ms)
	h.Granted(0, 0, 32*ms)
	if g := h.Figures().Grants; g != 3 {
		t.Errorf("grants %d after the window's start moved, want 3", g)
	}
}

// A shared (read-side) section marks the figures not measured.
func TestHandoverShared(t *testing.T) {
	h := NewHandover(1, 0, false)
	if h.Figures().Shared {
		t.Fatal("shared before any read side")
	}
	h.SharedSection()
	if !h.Figures().Shared {
		t.Error("not shared after a read side")
	}
	var none *Handover
	none.SharedSection() // a nil Handover measures nothing
}
