package report

import (
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/internal/metrics"
)

// ErrInvariant is wrapped by Check's errors: a result whose figures
// contradict each other (a bug in lockbench, not in the lock measured).
var ErrInvariant = errors.New("result invariant broken")

// Check tests the invariants every scenario of r must hold, whatever runs
// it combines (docs/results.md, "Invariants"):
//   - every latency with values has 0 < p50 <= p90 <= p99 <= p99.9 <= max
//     and count equal to its histogram's (raw.hists);
//   - ops equal the operation histogram's count and the sum of the
//     per-client counts (raw.client_ops);
//   - ops/s stay within the lock-bound ceiling unless an overlap (or a
//     semaphore's capacity violation) was counted: ops x mean hold <=
//     locks held at once (x permits, for a semaphore) x (window + the holds
//     that straddle the window's start, at most one longest hold per
//     combined window), within 1 % for the histograms' resolution. Not
//     tested with shared (read) holds, nor on segments merged without the
//     cross-process check (their overlaps are unknown);
//   - the background traffic's counts (raw.background) add up per
//     command kind: offered = sent + dropped, sent = done + errors, and
//     its latency histogram has one value per command done.
//   - with client roles (--mix), the roles' ops sum to ops, their
//     clients to clients, and each role's latency has one value per op.
//
// Errors wrap ErrInvariant and name the scenario and the figures.
func Check(r *Run) error {
	var errs []error
	for i := range r.Scenarios {
		if err := checkScenario(r, &r.Scenarios[i]); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s (clients %d): %v", ErrInvariant, r.Scenarios[i].Name(), r.Scenarios[i].Clients, err))
		}
	}
	return errors.Join(errs...)
}

func checkScenario(r *Run, s *Scenario) error {
	raw := s.Raw
	if raw == nil {
		return nil // a file written before raw data: its figures are as it wrote them
	}
	lats := []struct {
		name string
		l    metrics.Latency
	}{{"latency_ms", s.LatencyMS}, {"acquire_ms", s.AcquireMS}, {"release_ms", s.ReleaseMS}, {"hold_ms", s.HoldMS}}
	if s.ServiceMS != nil {
		lats = append(lats, struct {
			name string
			l    metrics.Latency
		}{"service_ms", *s.ServiceMS})
	}
	for _, x := range lats {
		if err := checkLatency(x.l); err != nil {
			return fmt.Errorf("%s: %v", x.name, err)
		}
	}
	counts := map[string]int64{HistOp: s.LatencyMS.Count, HistAcquire: s.AcquireMS.Count, HistRelease: s.ReleaseMS.Count, HistHold: s.HoldMS.Count}
	for kind, n := range counts {
		h, err := raw.Hist(kind)
		if err != nil {
			return err
		}
		var c int64
		if h != nil {
			c = h.TotalCount()
		}
		if c != n {
			return fmt.Errorf("%s has %d values and raw.hists.%s %d", map[string]string{HistOp: "latency_ms", HistAcquire: "acquire_ms", HistRelease: "release_ms", HistHold: "hold_ms"}[kind], n, kind, c)
		}
	}
	if s.Ops != s.LatencyMS.Count {
		return fmt.Errorf("ops %d, but the operation histogram has %d values", s.Ops, s.LatencyMS.Count)
	}
	if raw.ClientOps != nil {
		var sum int64
		for _, n := range raw.ClientOps {
			sum += n
		}
		if sum != s.Ops {
			return fmt.Errorf("ops %d, but the clients' counts (raw.client_ops) sum to %d", s.Ops, sum)
		}
	}
	if err := checkBackground(raw.Background); err != nil {
		return err
	}
	if err := checkRoles(s); err != nil {
		return err
	}
	if !s.HasCeiling() || s.Counters.Reads > 0 || s.Violations.Overlap > 0 || s.Violations.CapacityViolations > 0 {
		return nil
	}
	if r.Meta.Segments > 0 && s.Violations.CrossOverlap == nil && len(raw.ClientOps) != s.Clients {
		return nil
	}
	if s.Violations.CrossOverlap != nil && *s.Violations.CrossOverlap+*s.Violations.CrossOverlapPossible > 0 {
		return nil
	}
	atOnce := float64(min(s.Clients, raw.Locks*raw.PermitsOrOne())) // a semaphore: N holders per lock
	parts := float64(max(raw.Runs, 1))
	if r.Meta.Segments > 0 {
		parts++ // the segments' windows start within a barrier's skew of each other
	}
	busy := float64(s.Ops) * s.HoldMS.Mean / 1000                   // s of holding, summed
	room := atOnce * (s.DurationS + parts*s.HoldMS.Max/1000) * 1.01 // s the locks could be held
	if busy > room {
		return fmt.Errorf("ops/s %.1f above the lock-bound ceiling %.1f with no overlap counted: %d ops x mean hold %.3f ms = %.3f s of holding in %.3f s of %g lock(s)",
			s.OpsPerSec, s.CeilingOpsPerSec, s.Ops, s.HoldMS.Mean, busy, room, atOnce)
	}
	return nil
}

// checkLatency tests 0 < p50 <= p90 <= p99 <= p99.9 <= max on a latency
// with values (one without any is zero throughout).
func checkLatency(l metrics.Latency) error {
	if !LatencyMeasured(l) {
		return nil
	}
	if l.Count <= 0 {
		return fmt.Errorf("figures without values: %+v", l)
	}
	if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		return fmt.Errorf("percentiles out of order: p50 %g, p90 %g, p99 %g, p99.9 %g, max %g", l.P50, l.P90, l.P99, l.P999, l.Max)
	}
	return nil
}

// checkBackground tests the background traffic's accounting, per command
// kind: offered = sent + dropped, sent = done + errors, and as many
// latencies as commands done.
func checkBackground(b *BackgroundRaw) error {
	if b == nil {
		return nil
	}
	for name, c := range b.Commands {
		if c.Offered != c.Sent+c.Dropped || c.Sent != c.Done+c.Errors {
			return fmt.Errorf("raw.background.commands.%s: offered %d, sent %d, dropped %d, done %d, errors %d: want offered = sent + dropped and sent = done + errors",
				name, c.Offered, c.Sent, c.Dropped, c.Done, c.Errors)
		}
		h, err := c.hist()
		if err != nil {
			return fmt.Errorf("raw.background.commands.%s.hist: %w", name, err)
		}
		var n int64
		if h != nil {
			n = h.TotalCount()
		}
		if n != c.Done {
			return fmt.Errorf("raw.background.commands.%s: %d done, but its histogram has %d values", name, c.Done, n)
		}
	}
	return nil
}

// checkRoles: the client roles' ops and clients sum to the scenario's,
// and each role's latency count is its ops.
func checkRoles(s *Scenario) error {
	if len(s.Roles) == 0 {
		return nil
	}
	var ops int64
	clients := 0
	for name, r := range s.Roles {
		if r.LatencyMS.Count != r.Ops {
			return fmt.Errorf("role %s: ops %d, but its operation histogram has %d values", name, r.Ops, r.LatencyMS.Count)
		}
		ops += r.Ops
		clients += r.Clients
	}
	if ops != s.Ops || clients != s.Clients {
		return fmt.Errorf("the roles' ops sum to %d and their clients to %d; the scenario has %d ops and %d clients", ops, clients, s.Ops, s.Clients)
	}
	return nil
}
