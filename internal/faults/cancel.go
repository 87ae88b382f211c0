package faults

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("cancel", "cancel the caller's context inside the critical section, for a share p of operations", NeedsNothing,
		registry.Param{Name: "p", Doc: "share of critical sections cancelled, 0..1", Default: 0.1, Check: registry.Between(0.0, 1.0)},
		span("for", "how long; 0 = until the end", 0))
}

// cancelFault arms the cancel fault of window i: until sp.For passes (or
// the scenario ends), a share sp.P of critical sections have their
// caller's context cancelled at a random point of their work (Cancels).
func (in *Injector) cancelFault(ctx context.Context, sp Spec, i int) {
	in.cancelP.Store(math.Float64bits(sp.P))
	if sp.For == 0 {
		<-ctx.Done()
	} else {
		select {
		case <-time.After(sp.For):
		case <-ctx.Done():
		}
	}
	in.cancelP.Store(0)
	in.close(i, fmt.Sprintf("%d critical sections cancelled by their caller (p=%g)", in.cancels.Load(), sp.P))
}

// Cancels implements workloads.FaultHooks: while a cancel fault acts, a
// share p of critical sections are to be cancelled, each at a uniformly
// random share of its work.
func (in *Injector) Cancels(client int) (at float64, ok bool) {
	b := in.cancelP.Load()
	if b == 0 {
		return 0, false
	}
	if p := math.Float64frombits(b); rand.Float64() >= p {
		return 0, false
	}
	in.cancels.Add(1)
	return rand.Float64(), true
}
