package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/workloads"
)

// A client's observer passes every event to its recorder (the warm-up's
// until the window starts), the timeline's slot (measured outcomes only)
// and Prometheus (warm-up included), and allocates nothing per event on
// the hot path.
func TestObserverFansOut(t *testing.T) {
	real, scratch := metrics.NewRecorder(), metrics.NewRecorder()
	var slot liveSlot
	exp := export.New()
	prom := exp.For(export.Labels{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: "fixed", Clients: 1, Scenario: 1})
	o := newObserver(real, scratch, &slot, prom)
	var obs workloads.Observer = o // as the worker holds it
	op := func() {
		obs.Acquired(2, time.Millisecond)
		obs.Held(time.Millisecond)
		obs.Released(time.Millisecond, false)
		obs.AcquireFailed(1, time.Millisecond, false)
		o.outcome(outOK)
		o.completed(3*time.Millisecond, 2*time.Millisecond, true)
		o.flushIfDue()
	}
	op() // warm-up: scratch only, no timeline
	if scratch.Ops != 1 || scratch.Attempts != 3 || real.Ops != 0 || slot.ops.Load() != 0 {
		t.Fatalf("warm-up: scratch ops %d attempts %d, real ops %d, live %d; want 1, 3, 0, 0", scratch.Ops, scratch.Attempts, real.Ops, slot.ops.Load())
	}
	o.measure(time.Second, time.Second)
	if allocs := testing.AllocsPerRun(1000, op); allocs != 0 {
		t.Errorf("an operation's events allocate %.1f times, want 0", allocs)
	}
	runs := int64(1001)
	obs.LeaseLost()
	obs.ForeignRelease()
	obs.WroteAfterLoss()
	obs.WriteRejected()
	obs.Read()
	obs.Released(time.Millisecond, true)
	o.timedOut()
	o.gaveUp()
	o.errored(errors.New("READONLY You can't write against a read only replica."))
	real.Flush()
	if real.Ops != runs || real.Attempts != 3*runs || real.Op.TotalCount() != runs || real.Service.TotalCount() != runs ||
		real.Acquire.TotalCount() != runs || real.Hold.TotalCount() != runs || real.Release.TotalCount() != runs+1 {
		t.Fatalf("real: ops %d attempts %d, histogram counts op %d service %d acquire %d hold %d release %d; want %d, %d, %d (release one more)",
			real.Ops, real.Attempts, real.Op.TotalCount(), real.Service.TotalCount(), real.Acquire.TotalCount(), real.Hold.TotalCount(), real.Release.TotalCount(), runs, 3*runs, runs)
	}
	if real.LostLeases != 1 || real.ForeignReleases != 1 || real.WorkedAfterLoss != 1 || real.Rejected != 1 || real.Reads != 1 ||
		real.NotOwner != 1 || real.Timeouts != 1 || real.Failures != 1 || real.ErrorTotal() != 1 || len(real.Samples) != 1 {
		t.Fatalf("real counters %+v", real)
	}
	if slot.ops.Load() != runs {
		t.Fatalf("live ops %d, want %d", slot.ops.Load(), runs)
	}
	// Prometheus saw the warm-up's operation too.
	families, err := exp.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" {
					name += "{" + l.GetValue() + "}"
				}
			}
			switch {
			case m.GetCounter() != nil:
				got[name] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				got[name] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	all := runs + 1
	for name, want := range map[string]float64{
		"redis_lock_operations_total": float64(all), "redis_lock_acquired_total": float64(all),
		"redis_lock_attempts_total": float64(3 * all), "redis_lock_failed_total": float64(all),
		"redis_lock_wait_duration_seconds": float64(all), "redis_lock_hold_duration_seconds": float64(all),
		"redis_lock_errors_total{readonly}":              1,
		"redis_lock_violations_total{lost_leases}":       1,
		"redis_lock_violations_total{foreign_releases}":  1,
		"redis_lock_violations_total{worked_after_loss}": 1,
		"redis_lock_violations_total{false_extends}":     0,
		"redis_lock_violations_total{overlap}":           0,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
}
