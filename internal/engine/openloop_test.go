package engine

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

func TestPacerConstant(t *testing.T) {
	start := time.Unix(1000, 0)
	p := NewPacer(start, 400, false, nil)
	for i := 0; i < 1000; i++ {
		if got, want := p.Next(), start.Add(time.Duration(i)*2500*time.Microsecond); !got.Equal(want) {
			t.Fatalf("arrival %d at %v, want %v", i, got.Sub(start), want.Sub(start))
		}
	}
}

func TestPacerPoissonMean(t *testing.T) {
	start := time.Unix(1000, 0)
	p := NewPacer(start, 1000, true, rand.New(rand.NewPCG(1, 2)))
	var last time.Time
	for i := 0; i < 100000; i++ {
		t0 := p.Next()
		if t0.Before(last) {
			t.Fatal("arrivals out of order")
		}
		last = t0
	}
	// 100,000 arrivals at 1000/s: about 100 s (the mean gap is exact in
	// expectation; 2 % is many standard deviations here).
	if d := last.Sub(start).Seconds(); d < 98 || d > 102 {
		t.Fatalf("100000 Poisson arrivals span %.1f s, want about 100", d)
	}
}

// Under a fake clock: every arrival is offered at its intended time
// exactly; with no worker to take them, each is dropped after dropAfter.
func TestScheduleExactAndDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 995*time.Millisecond)
		defer cancel()
		jobs := make(chan time.Time)
		got := make(chan []time.Duration, 1)
		go func() { // one worker taking every job at once, recording when
			var seen []time.Duration
			for {
				select {
				case at := <-jobs:
					if !time.Now().Equal(at) {
						t.Errorf("job intended at %v handed over at %v", at.Sub(start), time.Since(start))
					}
					seen = append(seen, at.Sub(start))
				case <-ctx.Done():
					got <- seen
					return
				}
			}
		}()
		offered, dropped := schedule(ctx, NewPacer(start, 100, false, nil), jobs, 5*time.Millisecond)
		seen := <-got
		if dropped != 0 || offered != 100 || len(seen) != 100 {
			t.Fatalf("offered %d dropped %d taken %d; want 100, 0, 100", offered, dropped, len(seen))
		}
		for i, d := range seen {
			if d != time.Duration(i)*10*time.Millisecond {
				t.Fatalf("job %d intended at %v", i, d)
			}
		}

		// No worker: every arrival waits dropAfter and is dropped.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 998*time.Millisecond)
		defer cancel2()
		offered, dropped = schedule(ctx2, NewPacer(time.Now(), 100, false, nil), make(chan time.Time), 5*time.Millisecond)
		if offered != 100 || dropped != 100 {
			t.Fatalf("with no worker: offered %d dropped %d, want 100 and 100", offered, dropped)
		}
	})
}

// Under a fake clock and a sustained overload (one worker that needs 47 ms
// per operation, arrivals every 10 ms): no arrival is handed over later
// than dropAfter after its intended time, every arrival due in the run is
// either taken or dropped, and the scheduler keeps pace with the intended
// times instead of falling behind them.
func TestScheduleOverloadDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const dropAfter = 100 * time.Millisecond
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 995*time.Millisecond)
		defer cancel()
		jobs := make(chan time.Time)
		got := make(chan int, 1)
		go func() {
			taken := 0
			for {
				select {
				case at := <-jobs:
					if late := time.Since(at); late > dropAfter {
						t.Errorf("job intended at %v handed over %v late, above the %v bound", at.Sub(start), late, dropAfter)
					}
					taken++
					time.Sleep(47 * time.Millisecond)
				case <-ctx.Done():
					got <- taken
					return
				}
			}
		}()
		offered, dropped := schedule(ctx, NewPacer(start, 100, false, nil), jobs, dropAfter)
		taken := <-got
		// 100 arrivals are due (0, 10, ..., 990 ms). Those due within the
		// last dropAfter of the run may still be inside their bound when it
		// ends (neither taken nor dropped); the 90 due up to 890 ms are all
		// decided. The worker takes one every 47 ms at most: 22 in 995 ms.
		if offered != int64(taken)+dropped || offered < 90 || taken < 20 || taken > 22 {
			t.Fatalf("offered %d, taken %d, dropped %d; want offered = taken + dropped >= 90, 20..22 taken", offered, taken, dropped)
		}
	})
}

func TestSummarizeLoad(t *testing.T) {
	if summarizeLoad(nil, time.Millisecond) != nil {
		t.Fatal("no samples should give nil")
	}
	l := summarizeLoad([]float64{100, 100, 100, 500}, 10*time.Millisecond)
	if l.Samples != 4 || l.MeanPerSec != 200 || l.PeakPerSec != 500 || l.PeakToMean != 2.5 || l.IntervalMS != 10 || l.P99PerSec != 500 {
		t.Fatalf("%+v", l)
	}
	// standard deviation of {100,100,100,500} is sqrt(30000) = 173.2
	if l.CV < 0.866 || l.CV > 0.8661 {
		t.Fatalf("cv %v, want 0.866", l.CV)
	}
}
