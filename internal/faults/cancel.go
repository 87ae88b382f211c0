package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// cancel:p=P,for=F — a share P (default 0.1) of critical sections have
// their caller's context cancelled at a random point of their work, for F
// (default 0: until the end): their calls fail, and with --release caller
// so does their release (see workloads.Worker.Hold).
func init() {
	Register("cancel", Info{
		Desc: "cancel the caller's context inside the critical section, for a share p of operations",
		Params: []registry.Param{
			{Name: "p", Doc: "share of critical sections cancelled, 0..1", Default: 0.1, Check: registry.Between(0.0, 1.0)},
			Span("for", "how long; 0 = until the end", 0),
		},
	}, func(v registry.Values) (Fault, error) {
		return cancel{p: v.Float("p"), d: v.Duration("for")}, nil
	})
}

// cancel is the cancel fault's config.
type cancel struct {
	p float64       // share of critical sections cancelled, 0..1
	d time.Duration // how long; 0 = until the end
}

func (cancel) Check(Layout) []error { return nil }

// Act cancels a share c.p of critical sections until c.d passes (or the
// scenario ends), then notes how many it cancelled.
func (c cancel) Act(ctx context.Context, a *Action) {
	a.Begin()
	h := &cancelHook{p: c.p}
	a.Arm(h)
	Wait(ctx, c.d)
	a.Disarm(h)
	a.End(fmt.Sprintf("%d critical sections cancelled by their caller (p=%g)", h.n.Load(), c.p))
}

type cancelHook struct {
	p float64
	n atomic.Int64 // critical sections cancelled
}

// Cancels picks a share p of critical sections, each cancelled at a
// uniformly random share of its work.
func (h *cancelHook) Cancels(int) (float64, bool) {
	if rand.Float64() >= h.p {
		return 0, false
	}
	h.n.Add(1)
	return rand.Float64(), true
}
