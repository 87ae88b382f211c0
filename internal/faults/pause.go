package faults

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// pause:for=D,point=P — the next client found inside a critical section
// stops the world for D (default 2 x the TTL): its worker and its renewal
// loops wait together, like a long GC pause. point=work (default) strikes
// before its critical-section work, so a watchdog or Redlock holder can
// still learn of the loss before it writes; point=write after that check,
// right before the write (a GC pause between check and act). With role=
// (--mix), the next client of that role: role=read pauses a reader
// holding the read side.
func init() {
	Register("pause", Info{
		Desc: "stop-the-world of one lock holder and its renewal loop",
		Params: []registry.Param{
			Span("for", "pause length; 0 = 2 x the TTL", 0),
			{Name: "point", Doc: "where it strikes: work (before the critical-section work) or write (after the loss check, right before the write)",
				Default: PointWork, Check: registry.OneOf(PointWork, PointWrite)},
			roleParam("pause"),
		},
	}, func(v registry.Values) (Fault, error) {
		return pause{d: v.Duration("for"), point: v.String("point"), role: v.String("role")}, nil
	})
}

// pause is the pause fault's config.
type pause struct {
	d     time.Duration // the pause; 0 = 2 x the TTL
	point string        // PointWork or PointWrite
	role  string        // the role of the client it takes ("" any)
}

// Check refuses a role the scenario's clients do not play.
func (p pause) Check(l Layout) []error { return checkRole("pause", p.role, l) }

// Act arms the pause; its window begins and ends with the client that
// takes it.
func (p pause) Act(_ context.Context, a *Action) {
	d := p.d
	if d == 0 {
		d = 2 * a.Env().TTL
	}
	a.Arm(&pauseHook{a: a, d: d, point: p.point, role: p.role})
}

type pauseHook struct {
	a     *Action
	d     time.Duration
	point string
	role  string
	taken atomic.Bool
}

// Pause takes the first client at the pause's point: its gate closes for
// the pause and it waits there with its renewals.
func (h *pauseHook) Pause(client int, g *strategies.Gate, point string) bool {
	if point != h.point || !hasRole(h.a, client, h.role) || !h.taken.CompareAndSwap(false, true) {
		return false
	}
	h.a.Disarm(h)
	h.a.Begin()
	g.CloseFor(h.d)
	g.Wait()
	where := "inside its critical section"
	if point == PointWrite {
		where = "after its loss check, before its write"
	}
	if h.role != "" {
		where += " (role " + h.role + ")"
	}
	h.a.End(fmt.Sprintf("client %d paused %v %s", client, h.d, where))
	return true
}
