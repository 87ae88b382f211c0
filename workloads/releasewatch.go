package workloads

import "sync/atomic"

// ReleaseWatch tracks which workers are inside a release call, so that
// the engine can tell a release that has not returned by the end of the
// grace period (a hung release: one that loops or ignores its context)
// from a client still working, count it, and stop waiting for it. One slot
// per worker (Worker.ID), each on a cache line of its own.
type ReleaseWatch struct {
	slots []releaseSlot
}

type releaseSlot struct {
	state atomic.Int32 // relIdle, relIn or relHung
	_     [60]byte
}

const (
	relIdle int32 = iota
	relIn
	relHung
)

// NewReleaseWatch watches n workers (IDs 0..n-1).
func NewReleaseWatch(n int) *ReleaseWatch {
	return &ReleaseWatch{slots: make([]releaseSlot, n)}
}

func (r *ReleaseWatch) slot(id int) *releaseSlot {
	if id < 0 || id >= len(r.slots) {
		return nil
	}
	return &r.slots[id]
}

// begin: worker id starts a release call.
func (r *ReleaseWatch) begin(id int) {
	if s := r.slot(id); s != nil {
		s.state.Store(relIn)
	}
}

// end: worker id's release call returned; false when the engine had
// already given it up as hung (Abandon).
func (r *ReleaseWatch) end(id int) bool {
	s := r.slot(id)
	return s == nil || s.state.CompareAndSwap(relIn, relIdle)
}

// Abandon marks every worker inside a release call now as hung and
// returns how many there were: the engine stops waiting for them, and
// each ends (without recording anything) if its release ever returns.
func (r *ReleaseWatch) Abandon() int {
	n := 0
	for i := range r.slots {
		if r.slots[i].state.CompareAndSwap(relIn, relHung) {
			n++
		}
	}
	return n
}

// Hung reports whether worker id was given up as hung (Abandon).
func (r *ReleaseWatch) Hung(id int) bool {
	s := r.slot(id)
	return s != nil && s.state.Load() == relHung
}
