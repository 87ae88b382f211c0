package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// script is a workload whose operations return the next outcome of a list.
type script struct {
	workloads.Workload
	outcomes []error
	i        atomic.Int64
}

func (s *script) Op(context.Context, *workloads.Worker) error {
	return s.outcomes[int(s.i.Add(1)-1)%len(s.outcomes)]
}

// The counting wrapper classifies outcomes as the worker loop does and
// counts nothing while the worker records into its warm-up recorder.
func TestCountedClassifies(t *testing.T) {
	real := metrics.NewRecorder()
	wl := &script{outcomes: []error{nil, nil, strategies.ErrAcquireTimeout, strategies.ErrNotAcquired,
		errors.New("READONLY"), workloads.ErrSkip, workloads.ErrRejected, nil}}
	c := &counted{Workload: wl, slots: make([]liveSlot, 1), real: []*metrics.Recorder{real}}
	w := &workloads.Worker{ID: 0, Rec: metrics.NewRecorder()} // warm-up recorder
	for range len(wl.outcomes) {
		_ = c.Op(context.Background(), w)
	}
	if n := c.slots[0].ops.Load() + c.slots[0].errors.Load() + c.slots[0].acqFail.Load(); n != 0 {
		t.Fatalf("counted %d outcomes during the warm-up, want 0", n)
	}
	w.Rec = real
	for range len(wl.outcomes) {
		_ = c.Op(context.Background(), w)
	}
	if got := [3]int64{c.slots[0].ops.Load(), c.slots[0].errors.Load(), c.slots[0].acqFail.Load()}; got != [3]int64{3, 1, 2} {
		t.Fatalf("ops, errors, acquire failures = %v, want [3 1 2]", got)
	}
	// A cancellation while the run stops is not an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wl.outcomes = []error{fmt.Errorf("wrapped: %w", context.Canceled)}
	_ = c.Op(ctx, w)
	if e := c.slots[0].errors.Load(); e != 1 {
		t.Fatalf("errors %d after a cancellation at stop, want still 1", e)
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
		c := &counted{Workload: &script{outcomes: []error{nil}}, slots: make([]liveSlot, workers), real: make([]*metrics.Recorder, workers)}
		var overlaps int64
		var mu sync.Mutex
		var seen []report.Second
		start := time.Now()
		s := &sampler{slots: c.slots, offset: 500 * time.Millisecond, scenarioStart: start,
			overlaps: func() int64 { mu.Lock(); defer mu.Unlock(); return overlaps },
			onSecond: func(sec report.Second) { mu.Lock(); seen = append(seen, sec); mu.Unlock() }}
		stop, done := make(chan struct{}), make(chan struct{})
		go s.run(stop, done)

		mu.Lock()
		overlaps = 7 // in the warm-up: not the window's
		mu.Unlock()
		var wg sync.WaitGroup
		for id := range workers {
			c.real[id] = metrics.NewRecorder()
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := &workloads.Worker{ID: id, Rec: c.real[id]}
				// After the warm-up, worker id completes an operation at
				// 1 + 10*id + 20*j ms into the window, j = 0..154: together
				// one every 10 ms, the last at 3,091 ms.
				time.Sleep(500*time.Millisecond + time.Millisecond + time.Duration(id)*10*time.Millisecond)
				for range 155 {
					_ = c.Op(context.Background(), w)
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
