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
// and Prometheus, and allocates nothing per event on the hot path.
func TestObserverFansOut(t *testing.T) {
	real, scratch := metrics.NewRecorder(), metrics.NewRecorder()
	var slot liveSlot
	prom := export.New().For("atomic", "goredis", "flash-sale")
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
}
