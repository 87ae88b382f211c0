package engine

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

func mustShape(t *testing.T, s string) *arrival.Shape {
	t.Helper()
	sh, err := arrival.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// A ramp's count is its value rounded to the nearest whole count, halves
// up; its maximum is rounded alike; its mean over an interval integrates
// the rounded count; the next change is found within rampStep.
func TestClientsAtRounding(t *testing.T) {
	sh := mustShape(t, "ramp:from=2,to=8,over=2s") // 2 + 3t clients
	for _, c := range []struct {
		t    float64
		want int
	}{{0, 2}, {1.0/6 - 0.01, 2}, {1.0/6 + 0.01, 3}, {0.25, 3}, {1, 5}, {1.5, 7}, {1.9, 8}, {2, 8}, {30, 8}} {
		if got := ClientsAt(sh, c.t); got != c.want {
			t.Errorf("ClientsAt(%s, %v) = %d, want %d", sh, c.t, got, c.want)
		}
	}
	if m := MaxClientsOf(sh); m != 8 {
		t.Errorf("MaxClientsOf = %d, want 8", m)
	}
	if m := MaxClientsOf(mustShape(t, "stages:start=1,1s=10.4,1s=3")); m != 10 {
		t.Errorf("MaxClientsOf(stages to 10.4) = %d, want 10", m)
	}
	// Over [0, 2] the rounded count is 2..8 each for 1/3 s, but 2 and 8
	// for 1/6 s each: mean 5; then 8 held.
	if m := ClientsMeanOf(sh, 0, 2); math.Abs(m-5) > 0.01 {
		t.Errorf("ClientsMeanOf(0, 2) = %v, want 5", m)
	}
	if m := ClientsMeanOf(sh, 2, 3); math.Abs(m-8) > 1e-9 {
		t.Errorf("ClientsMeanOf(2, 3) = %v, want 8", m)
	}
	// 2 -> 3 at t = 1/6 s.
	at, ok := nextCount(sh, 0, 2)
	if !ok || at < 1.0/6 || at > 1.0/6+rampStep.Seconds()+1e-9 {
		t.Errorf("nextCount(0, 2) = %v %v, want within %v after %v", at, ok, rampStep, 1.0/6)
	}
	if _, ok := nextCount(sh, 2.5, 8); ok {
		t.Error("nextCount after the ramp's end: a change, want none")
	}
	// A ramp down: 8 -> 7 at t = 1/6 s.
	down := mustShape(t, "ramp:from=8,to=2,over=2s")
	if at, ok := nextCount(down, 0, 8); !ok || math.Abs(at-1.0/6) > 2*rampStep.Seconds() {
		t.Errorf("ramp down: nextCount(0, 8) = %v %v, want about %v", at, ok, 1.0/6)
	}
	tl := []report.Second{{TS: 0.5}, {TS: 1}, {TS: 2.5}}
	fillClients(tl, sh, 0)
	for i, want := range []int{4, 5, 8} { // 3.5 rounds up to 4
		if tl[i].Clients != want {
			t.Errorf("entry %d at %v s: clients %d, want %d", i, tl[i].TS, tl[i].Clients, want)
		}
	}
	// 1 s to 2.5 s: 5 for 1/6 s, 6 and 7 for 1/3 s each, 8 for 2/3 s.
	if m := tl[2].ClientsMean; math.Abs(m-7) > 0.01 {
		t.Errorf("entry 2 (1 s to 2.5 s): clients_mean %v, want (5/6 + 2 + 7/3 + 16/3) / 1.5 = 7", m)
	}
	if cs := clientSeconds(sh, 0, 3); math.Abs(cs-18) > 0.02 {
		t.Errorf("clientSeconds(0, 3) = %v, want 5 x 2 + 8 x 1 = 18", cs)
	}
}

// The activation: worker i runs only while the count is above i. On the
// fake clock of synctest, with the ramp 0 -> 4 over 4 s (count k from
// (k - 0.5) s), worker 2 waits until 2.5 s; the ramp then down again
// (stages) stops worker 3 at its next operation once the count is 3.
func TestClientRampActivation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sh := mustShape(t, "stages:4s=4,1s=4,2s=0")
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := newClientRamp(sh, start)
		if c.n.Load() != 0 {
			t.Fatalf("count at 0: %d, want 0", c.n.Load())
		}
		go c.run(ctx)
		o := newObserver(metrics.NewRecorder(), metrics.NewRecorder(), &liveSlot{}, nil)
		var when atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			waited, ok := c.active(ctx, 2, o)
			if !waited || !ok {
				t.Errorf("worker 2 at 0: waited %v ok %v, want true true", waited, ok)
			}
			when.Store(int64(time.Since(start)))
		}()
		<-done
		if d := time.Duration(when.Load()); d < 2500*time.Millisecond || d > 2500*time.Millisecond+2*rampStep {
			t.Errorf("worker 2 activated at %v, want 2.5 s (within %v)", d, 2*rampStep)
		}
		// At 4 s the count is 4: worker 3 runs without waiting.
		time.Sleep(4*time.Second - time.Since(start))
		if waited, ok := c.active(ctx, 3, o); waited || !ok {
			t.Errorf("worker 3 at 4 s: waited %v ok %v, want false true", waited, ok)
		}
		// From 5 s down to 0 over 2 s: the count is 3 from 5.25 s on, so
		// worker 3 waits again, and at the end (0 clients) a cancelled run
		// ends its wait.
		time.Sleep(5300*time.Millisecond - time.Since(start))
		if n := c.n.Load(); n != 3 {
			t.Fatalf("count at 5.3 s: %d, want 3", n)
		}
		go func() {
			time.Sleep(10 * time.Second)
			cancel()
		}()
		waited, ok := c.active(ctx, 3, o)
		if !waited || ok {
			t.Errorf("worker 3 after the ramp down: waited %v ok %v, want true false (waits until the run ends)", waited, ok)
		}
	})
}

// The worker loop with a ramp: a worker beyond the count makes no
// operation until the count passes it, and then runs back to back.
func TestLoopWaitsForRamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sh := mustShape(t, "ramp:from=0,to=2,over=2s") // worker 1 from 1.5 s
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		c := newClientRamp(sh, start)
		go c.run(ctx)
		var slot liveSlot
		o := newObserver(metrics.NewRecorder(), metrics.NewRecorder(), &slot, nil)
		w := &workloads.Worker{ID: 1, Env: &workloads.Env{}, Obs: o}
		wl := &timed{d: 100 * time.Millisecond, start: start}
		var streak errStreak
		loop(ctx, wl, w, o, start, func() {}, &streak, func(error) {}, nil, nil, nil, c)
		if len(wl.starts) == 0 || wl.starts[0] < 1500*time.Millisecond || wl.starts[0] > 1500*time.Millisecond+2*rampStep {
			t.Fatalf("worker 1's operations started at %v, want the first at 1.5 s", wl.starts)
		}
		if n := len(wl.starts); n < 14 || n > 16 {
			t.Errorf("worker 1 made %d operations of 100 ms in 1.5 s, want 15", n)
		}
	})
}

// timed is a workload whose operations take d, noting their starts since
// start.
type timed struct {
	workloads.Workload
	d      time.Duration
	start  time.Time
	starts []time.Duration
}

func (w *timed) Op(ctx context.Context, _ *workloads.Worker) error {
	w.starts = append(w.starts, time.Since(w.start))
	select {
	case <-time.After(w.d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
