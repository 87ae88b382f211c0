package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// finite is a workload whose operations return the outcomes of a list,
// then ErrDone.
type finite struct {
	workloads.Workload
	outcomes []error
	i        int
}

func (f *finite) Op(context.Context, *workloads.Worker) error {
	if f.i == len(f.outcomes) {
		return workloads.ErrDone
	}
	f.i++
	return f.outcomes[f.i-1]
}

// stopping is a workload whose one operation sees the run stop: it
// cancels the run's context and returns the cancellation.
type stopping struct {
	workloads.Workload
	cancel func()
}

func (s *stopping) Op(context.Context, *workloads.Worker) error {
	s.cancel()
	return fmt.Errorf("wrapped: %w", context.Canceled)
}

// The worker loop counts each measured operation's outcome for the
// timeline by the loop's own rule (classify), and nothing while the worker
// records into its warm-up recorder.
func TestLoopCountsMeasuredOutcomes(t *testing.T) {
	outcomes := []error{nil, nil, strategies.ErrAcquireTimeout, strategies.ErrNotAcquired,
		errors.New("READONLY"), workloads.ErrSkip, workloads.ErrRejected, nil}
	run := func(ctx context.Context, wl workloads.Workload, w *workloads.Worker, o *observer, warmEnd time.Time) {
		var streak errStreak
		loop(ctx, wl, w, o, warmEnd, func() {}, &streak, func(error) {}, nil, nil, nil, nil)
	}
	slotCounts := func(s *liveSlot) [3]int64 { return [3]int64{s.ops.Load(), s.errors.Load(), s.acqFail.Load()} }

	var slot liveSlot
	real, scratch := metrics.NewRecorder(), metrics.NewRecorder()
	o := newObserver(real, scratch, &slot, nil)
	w := &workloads.Worker{ID: 0, Env: &workloads.Env{}, Obs: o}
	run(context.Background(), &finite{outcomes: outcomes}, w, o, time.Now().Add(time.Hour))
	if got := slotCounts(&slot); got != [3]int64{} {
		t.Fatalf("counted %v during the warm-up, want nothing", got)
	}
	if scratch.Ops != 3 || real.Ops != 0 {
		t.Fatalf("warm-up ops: scratch %d, real %d, want 3 and 0", scratch.Ops, real.Ops)
	}
	run(context.Background(), &finite{outcomes: outcomes}, w, o, time.Now().Add(-time.Second))
	if got := slotCounts(&slot); got != [3]int64{3, 1, 2} {
		t.Fatalf("ops, errors, acquire failures = %v, want [3 1 2]", got)
	}
	if real.Ops != 3 || real.Timeouts != 1 || real.Failures != 1 || real.Errors["other"]+real.Errors["readonly"] != 1 {
		t.Fatalf("recorder: ops %d, timeouts %d, failures %d, errors %v; want 3, 1, 1 and one error", real.Ops, real.Timeouts, real.Failures, real.Errors)
	}
	// A cancellation while the run stops is not an error.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run(ctx, &stopping{cancel: cancel}, w, o, time.Now().Add(-time.Second))
	if got := slotCounts(&slot); got != [3]int64{3, 1, 2} {
		t.Fatalf("after a cancellation at stop: %v, want still [3 1 2]", got)
	}
}

// slowErr is a context whose Err takes d: the time the worker loop spends
// between two operations.
type slowErr struct {
	context.Context
	d time.Duration
}

func (c slowErr) Err() error {
	time.Sleep(c.d)
	return c.Context.Err()
}

// In the closed loop an operation starts when the one before it ended: the
// loop's own time between them (here a 50 ms check of the context) counts
// in the next operation, so that the operations' times add up to the
// loop's whole time. After a failed operation the clock is read afresh.
func TestLoopNextStartsAtLastEnd(t *testing.T) {
	const gap = 50 * time.Millisecond
	outcomes := []error{nil, nil, strategies.ErrNotAcquired, nil, nil}
	real := metrics.NewRecorder()
	var slot liveSlot
	o := newObserver(real, nil, &slot, nil)
	w := &workloads.Worker{ID: 0, Env: &workloads.Env{}, Obs: o}
	var streak errStreak
	ctx := slowErr{context.Background(), gap}
	loop(ctx, &finite{outcomes: outcomes}, w, o, time.Now().Add(-time.Second), func() {}, &streak, func(error) {}, nil, nil, nil, nil)
	real.Flush()
	if real.Ops != 4 || real.Op.TotalCount() != 4 {
		t.Fatalf("%d ops, %d op times; want 4 and 4", real.Ops, real.Op.TotalCount())
	}
	// Ops 2 and 5 follow a completed op: each includes one gap. Ops 1 and 4
	// (the first, and the one after the failure) start after their gap.
	var under int64
	for _, b := range real.Op.Distribution() {
		if b.From < gap.Microseconds()/2 { // the gapped ones are >= gap
			under += b.Count
		}
	}
	if under != 2 {
		t.Errorf("%d of 4 op times under the %v gap, want 2 (the first op, and the one after the failure)", under, gap)
	}
}

// The worker loop flushes a Due recorder between two operations: with
// fewer values than fill its buffer, Observe alone would have flushed
// none.
func TestLoopFlushesBetweenOps(t *testing.T) {
	const ops = 4000 // one Op value each, below the 4,096 a buffer holds
	real := metrics.NewRecorder()
	var slot liveSlot
	o := newObserver(real, nil, &slot, nil)
	w := &workloads.Worker{ID: 0, Env: &workloads.Env{}, Obs: o}
	var streak errStreak
	loop(context.Background(), &finite{outcomes: make([]error, ops)}, w, o, time.Now().Add(-time.Second), func() {}, &streak, func(error) {}, nil, nil, nil, nil)
	flushed := real.Op.TotalCount()
	if real.Ops != ops || flushed == 0 || real.Due() {
		t.Fatalf("%d ops, %d values flushed by the loop, Due %v; want %d, some, false", real.Ops, flushed, real.Due(), ops)
	}
	real.Flush()
	if real.Op.TotalCount() != ops {
		t.Fatalf("%d op times after the last flush, want %d", real.Op.TotalCount(), ops)
	}
}

// Under a fake clock: two workers completing one operation every 10 ms
// for 3.1 s after a 500 ms warm-up give 3 entries of 100 ops at 1.5, 2.5 and
// 3.6 s (the 100 ms tail folded into the last), summing to every op; the
// oracle's overlaps land in the second they happened, those of the
// warm-up nowhere; onSecond sees each whole second.
func TestSamplerFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers = 2
		slots := make([]liveSlot, workers)
		var overlaps int64
		var mu sync.Mutex
		var seen []report.Second
		start := time.Now()
		s := &sampler{slots: slots, offset: 500 * time.Millisecond, scenarioStart: start,
			overlaps: func() int64 { mu.Lock(); defer mu.Unlock(); return overlaps },
			onSecond: func(sec report.Second) { mu.Lock(); seen = append(seen, sec); mu.Unlock() }}
		stop, done := make(chan struct{}), make(chan struct{})
		go s.run(stop, done)

		mu.Lock()
		overlaps = 7 // in the warm-up: not the window's
		mu.Unlock()
		var wg sync.WaitGroup
		for id := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// After the warm-up, worker id completes an operation at
				// 1 + 10*id + 20*j ms into the window, j = 0..154: together
				// one every 10 ms, the last at 3,091 ms.
				time.Sleep(500*time.Millisecond + time.Millisecond + time.Duration(id)*10*time.Millisecond)
				for range 155 {
					slots[id].count(outOK)
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
		time.Sleep(2 * time.Second) // 1.5 s into the window
		mu.Lock()
		overlaps += 2
		mu.Unlock()
		wg.Wait()
		end := start.Add(500*time.Millisecond + 3100*time.Millisecond)
		time.Sleep(time.Until(end))
		close(stop)
		<-done
		tl := s.finish(end)

		var ts []float64
		var ops, viol int64
		for _, e := range tl {
			ts = append(ts, e.TS)
			ops += e.Ops
			viol += e.Violations
		}
		if fmt.Sprint(ts) != "[1.5 2.5 3.6]" {
			t.Fatalf("timeline t_s %v, want [1.5 2.5 3.6]", ts)
		}
		if ops != 310 {
			t.Fatalf("timeline ops sum %d, want 310", ops)
		}
		if tl[0].Ops != 100 || tl[1].Ops != 100 || tl[2].Ops != 110 {
			t.Fatalf("ops per entry %d %d %d, want 100 100 110", tl[0].Ops, tl[1].Ops, tl[2].Ops)
		}
		if viol != 2 || tl[1].Violations != 2 {
			t.Fatalf("violations %+v, want 2 in the second entry only", tl)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 3 || seen[0].TS != 1.5 || seen[2].TS != 3.5 {
			t.Fatalf("onSecond saw %+v, want the 3 whole seconds 1.5, 2.5, 3.5", seen)
		}
	})
}

// A window that ends before its first second gives one entry; one that
// never started (sold out in the warm-up) gives none.
func TestSamplerShortWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s := &sampler{slots: make([]liveSlot, 1), scenarioStart: start}
		stop, done := make(chan struct{}), make(chan struct{})
		go s.run(stop, done)
		s.slots[0].ops.Add(5)
		time.Sleep(300 * time.Millisecond)
		close(stop)
		<-done
		tl := s.finish(time.Now())
		if len(tl) != 1 || tl[0].Ops != 5 || tl[0].TS != 0.3 {
			t.Fatalf("timeline %+v, want one entry of 5 ops at 0.3 s", tl)
		}

		s = &sampler{slots: make([]liveSlot, 1), scenarioStart: time.Now(), offset: time.Second}
		stop, done = make(chan struct{}), make(chan struct{})
		go s.run(stop, done)
		time.Sleep(200 * time.Millisecond)
		close(stop)
		<-done
		if tl := s.finish(time.Now()); len(tl) != 0 {
			t.Fatalf("timeline %+v for a run that ended in its warm-up, want none", tl)
		}
	})
}

// Under a fake clock: two clients completing an operation every 10 ms for
// 3.1 s (198, 200 and 220 in the three entries, the last folding the
// 100 ms tail), whose operations (and acquires, half as long) take 2 ms
// except those ending in the second second, 40 ms (a fault window). Each
// entry's latency is that of the operations that ended in its interval:
// the values of an operation in progress at an interval's end are kept
// for the next one (Mark, FlushDue), so every entry's interval histogram
// holds exactly its ops, the spike lands in the second entry only, and
// the intervals merged are the Set's total.
func TestSamplerIntervalLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients = 2
		recs := metrics.NewSet(clients)
		recs.TrackIntervals()
		slots := make([]liveSlot, clients)
		start := time.Now()
		s := &sampler{slots: slots, recs: recs, scenarioStart: start}
		stop, done := make(chan struct{}), make(chan struct{})
		go s.run(stop, done)
		latency := func(end time.Duration) time.Duration {
			if end >= time.Second && end < 2*time.Second {
				return 40 * time.Millisecond
			}
			return 2 * time.Millisecond
		}
		var wg sync.WaitGroup
		for id := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := recs.Client(id)
				// Client id's operations end at 13 + 4*id + 10*j ms, j =
				// 0..308: never on an interval's end, the last before 3.1 s.
				time.Sleep(time.Duration(3+4*id) * time.Millisecond)
				for range 309 {
					r.Mark()
					time.Sleep(10 * time.Millisecond) // the operation
					d := latency(time.Since(start))
					r.Acquired(1, d/2)
					slots[id].count(outOK)
					r.Completed(d)
					if r.Due() {
						r.FlushDue()
					}
				}
			}()
		}
		wg.Wait()
		end := start.Add(3100 * time.Millisecond)
		time.Sleep(time.Until(end))
		close(stop)
		<-done
		tl := s.finish(end)
		ops, acqs := s.intervals()
		if len(tl) != 3 || len(ops) != 3 || len(acqs) != 3 {
			t.Fatalf("%d entries, %d and %d interval histograms; want 3 each: %+v", len(tl), len(ops), len(acqs), tl)
		}
		ms := func(d time.Duration) (p50, max float64) {
			h := metrics.NewHistogram()
			metrics.Record(h, d)
			l := metrics.Summarize(h)
			return l.P50, l.Max
		}
		fast50, fastMax := ms(2 * time.Millisecond)
		slow50, slowMax := ms(40 * time.Millisecond)
		acq50, _ := ms(20 * time.Millisecond)
		want := []struct {
			ops        int64
			p50, max   float64
			acquireP50 float64
		}{{198, fast50, fastMax, 0}, {200, slow50, slowMax, acq50}, {220, fast50, fastMax, 0}}
		merged := metrics.NewHistogram()
		for i, e := range tl {
			h, err := hdrhistogram.Decode(ops[i])
			if err != nil {
				t.Fatal(err)
			}
			merged.Merge(h)
			w := want[i]
			if e.Ops != w.ops || h.TotalCount() != w.ops || e.OpP50MS != w.p50 || e.OpP99MS != w.max || e.OpMaxMS != w.max {
				t.Fatalf("entry %d: %d ops, %d op values, p50/p99/max %v/%v/%v ms; want %d, %d, %v/%v/%v",
					i, e.Ops, h.TotalCount(), e.OpP50MS, e.OpP99MS, e.OpMaxMS, w.ops, w.ops, w.p50, w.max, w.max)
			}
			if w.acquireP50 != 0 && e.AcquireP50MS != w.acquireP50 {
				t.Fatalf("entry %d: acquire p50 %v ms, want %v", i, e.AcquireP50MS, w.acquireP50)
			}
		}
		if total := recs.Total(); !merged.Equals(total.Op) || total.Op.TotalCount() != 618 {
			t.Fatalf("intervals merge to %d values, the total has %d (want 618)", merged.TotalCount(), total.Op.TotalCount())
		}
	})
}
