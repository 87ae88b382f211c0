package engine

import (
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/workloads"
)

// observer is one client's fan-out of events: those its worker reports
// (workloads.Observer) and those its loop counts per operation. Each goes
// to the client's metrics.Recorder (the warm-up's scratch recorder until
// the measured window starts, then the real one), to the timeline's slot
// (the outcomes of measured operations), and to the Prometheus exporter
// (when set; warm-up included). The worker calls it through the
// workloads.Observer interface; it calls the recorders, the slot and the
// exporter directly: nothing is allocated, locked or looked up per event
// (an error's kind excepted).
type observer struct {
	rec  *metrics.Recorder // where figures go now: scratch, then real
	real *metrics.Recorder
	live *liveSlot
	// holds: count each measured hold in live too (a client ramp: each
	// timeline interval's own mean hold).
	holds bool
	prom  *export.Obs // nil: no Prometheus (its methods do nothing)
	// slow is Scenario.SlowdownShare as a factor of an operation's time
	// (share/(1-share)); owed is the wait not yet slept.
	slow float64
	owed time.Duration
}

var _ workloads.Observer = (*observer)(nil)

// newObserver returns a client's observer recording into warmup (nil: no
// warm-up) until measure switches it to real.
func newObserver(real, warmup *metrics.Recorder, live *liveSlot, prom *export.Obs) *observer {
	o := &observer{}
	o.init(real, warmup, live, prom)
	return o
}

func (o *observer) init(real, warmup *metrics.Recorder, live *liveSlot, prom *export.Obs) {
	*o = observer{rec: real, real: real, live: live, prom: prom}
	// Nothing buffered is of an ended operation: the sampler need not
	// wait for this client's first flush (metrics.Set.Settle).
	real.Ended()
	if warmup != nil {
		o.rec = warmup
	}
}

// measure switches to the real recorder when an operation intended at
// intended (metrics.Now) is in the measured window, which starts at warm.
func (o *observer) measure(intended, warm time.Duration) {
	if o.rec != o.real && intended >= warm {
		o.rec = o.real
	}
}

// measured reports whether the figures go to the real recorder.
func (o *observer) measured() bool { return o.rec == o.real }

// The worker's events (workloads.Observer).

func (o *observer) Acquired(attempts int, wait time.Duration) {
	o.rec.Acquired(attempts, wait)
	o.prom.Acquired(attempts, wait)
}

func (o *observer) AcquireFailed(attempts int, wait time.Duration, stopping bool) {
	o.rec.AcquireFailed(attempts, wait, stopping)
	o.prom.AcquireFailed(attempts, stopping)
}

func (o *observer) Held(d time.Duration) {
	o.rec.Held(d)
	o.prom.Hold(d)
	if o.holds && o.measured() {
		o.live.holdNS.Add(int64(d))
		o.live.holds.Add(1)
	}
}

func (o *observer) Released(d time.Duration, notOwner bool) { o.rec.Released(d, notOwner) }
func (o *observer) Overshot()                               { o.rec.Overshot() }
func (o *observer) Cancelled()                              { o.rec.Cancelled() }
func (o *observer) WriteRejected()                          { o.rec.WriteRejected() }
func (o *observer) Read()                                   { o.rec.Read() }

// The clients' violations, also exported as they happen.

func (o *observer) LeaseLost()      { o.rec.LeaseLost(); o.prom.LeaseLost() }
func (o *observer) ForeignRelease() { o.rec.ForeignRelease(); o.prom.ForeignRelease() }
func (o *observer) WroteAfterLoss() { o.rec.WroteAfterLoss(); o.prom.WroteAfterLoss() }
func (o *observer) FalseExtend()    { o.rec.FalseExtend(); o.prom.FalseExtend() }
func (o *observer) FalseAcquire()   { o.rec.FalseAcquire(); o.prom.FalseAcquire() }
func (o *observer) Overlapped()     { o.rec.Overlapped() } // the oracle's count is exported

// The loop's events.

// outcome counts a finished operation's outcome in the timeline's slot
// when it was measured.
func (o *observer) outcome(out outcome) {
	if o.measured() {
		o.live.count(out)
	}
}

// completed records a completed operation: its latency (from its intended
// start) and, in the open loop, its service time (from its actual start).
func (o *observer) completed(latency, service time.Duration, open bool) {
	o.rec.Completed(latency)
	if open {
		o.rec.Served(service)
	}
	o.prom.Op()
}

func (o *observer) timedOut() { o.rec.TimedOut() }
func (o *observer) gaveUp()   { o.rec.GaveUp() }

// errored counts an operation's error by its kind (drivers.ErrorKind).
func (o *observer) errored(err error) {
	kind := drivers.ErrorKind(err)
	o.rec.Errored(kind, err)
	o.prom.Error(kind)
}

// flushIfDue ends the operation for the recorder (Ended: its values are
// published for the timeline's sampler, which takes them should the
// client still hold them at the interval's end), flushes the recorder's
// batch when it is Due (FlushDue: at an interval's end, the values of the
// operations that ended before it), and reports whether it did (the
// caller then reads the clock afresh).
func (o *observer) flushIfDue() bool {
	o.rec.Ended()
	if !o.rec.Due() {
		return false
	}
	o.rec.FlushDue()
	return true
}

// start marks the start of an operation in the recorder (metrics.Recorder.
// Mark): its values count in the interval in which it ends.
func (o *observer) start() { o.rec.Mark() }
