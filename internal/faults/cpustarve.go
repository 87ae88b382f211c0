package faults

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// cpu-starve:for=D,every=E,procs=P,busy=B — the whole lockbench process
// is starved of CPU for D (default 2 x the TTL), once or every E until the
// end: GOMAXPROCS is lowered to P (default 1) and B goroutines (default
// 32) spin for the window, so every other goroutine of the process (the
// workers, lockbench's renewal loops, and a library's own goroutines:
// redsync's, rueidislock's renewals, a driver's readers) waits its turn
// behind them on P threads. GOMAXPROCS is restored when the window ends.
//
// Limits: Go's scheduler preempts the spinning goroutines every 10 ms and
// a goroutine woken by a timer may run next, so the others are slowed (a
// round trip takes hundreds of ms with the defaults), not stopped: a
// renewal can still land inside the window, late. Code that runs outside
// the Go scheduler (cgo, the kernel's socket buffers, the servers) is not
// starved. The window's own timer is starved too: a window can outlast
// D. No cgroup CPU limit is used (it would need a writable cgroup
// v2 hierarchy); for a full stop use proc-pause.
func init() {
	Register("cpu-starve", Info{
		Desc: "starve the whole lockbench process of CPU (GOMAXPROCS lowered, busy goroutines) for a window, once or every D",
		Params: []registry.Param{
			Span("for", "window length; 0 = 2 x the TTL", 0),
			Span("every", "repeat every D (from one window's start to the next) until the end; 0 = once", 0),
			{Name: "procs", Doc: "GOMAXPROCS during the window", Default: 1, Check: registry.AtLeast(1)},
			{Name: "busy", Doc: "goroutines that spin during the window", Default: 32, Check: registry.AtLeast(1)},
		},
	}, func(v registry.Values) (Fault, error) {
		f := cpuStarve{d: v.Duration("for"), every: v.Duration("every"), procs: v.Int("procs"), busy: v.Int("busy")}
		if f.every > 0 && f.d > f.every {
			return nil, fmt.Errorf("for=%v exceeds every=%v (the windows would overlap)", f.d, f.every)
		}
		return f, nil
	})
}

// cpuStarve is the cpu-starve fault's config.
type cpuStarve struct {
	d     time.Duration // the window; 0 = 2 x the TTL
	every time.Duration // the period; 0 = once
	procs int           // GOMAXPROCS during the window
	busy  int           // spinning goroutines
}

func (cpuStarve) Check(Layout) []error { return nil }

func (f cpuStarve) Act(ctx context.Context, a *Action) {
	d := f.d
	if d == 0 {
		d = 2 * a.Env().TTL
	}
	if f.every > 0 && d > f.every {
		d = f.every // 2 x the TTL longer than the period
	}
	a.Begin()
	n, total := 0, time.Duration(0)
	cut := false
	first := time.Now()
	for {
		began := time.Now()
		next := first.Add(time.Duration(n+1) * f.every) // no drift from late wake-ups
		cut = f.starve(ctx, d)
		total += time.Since(began)
		n++
		if cut || f.every == 0 || Wait(ctx, max(time.Until(next), time.Nanosecond)) { // Wait(0) would wait for the end
			break
		}
	}
	note := fmt.Sprintf("process starved of CPU for %v (GOMAXPROCS %d, %d busy goroutines)", total.Round(time.Millisecond), f.procs, f.busy)
	if f.every > 0 {
		note = fmt.Sprintf("process starved of CPU %d times, every %v, %v in all (GOMAXPROCS %d, %d busy goroutines)", n, f.every, total.Round(time.Millisecond), f.procs, f.busy)
	}
	if cut {
		note += " (cut short: the scenario ended)"
	}
	a.End(note)
}

// starve lowers GOMAXPROCS and spins f.busy goroutines for d or until ctx
// ends; it reports whether ctx ended first.
func (f cpuStarve) starve(ctx context.Context, d time.Duration) (ended bool) {
	starveProcs(f.procs)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range f.busy {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spin(&stop)
		}()
	}
	ended = Wait(ctx, d)
	stop.Store(true)
	unstarveProcs() // before the spinners have stopped: the others run at once
	wg.Wait()
	return ended
}

// spin burns CPU until stop is set (the scheduler preempts it).
func spin(stop *atomic.Bool) {
	x := uint64(1)
	for !stop.Load() {
		for range 1 << 12 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	spinSink.Add(x & 1)
}

var spinSink atomic.Uint64

// GOMAXPROCS is the process's: windows that overlap (two cpu-starve
// faults) share one lowering, the lowest, and the value before the first
// is restored when the last ends.
var starving struct {
	sync.Mutex
	n    int // windows open
	prev int // GOMAXPROCS before the first
}

func starveProcs(p int) {
	starving.Lock()
	defer starving.Unlock()
	cur := runtime.GOMAXPROCS(0)
	if starving.n == 0 {
		starving.prev = cur
	}
	starving.n++
	if p < cur {
		runtime.GOMAXPROCS(p)
	}
}

func unstarveProcs() {
	starving.Lock()
	defer starving.Unlock()
	starving.n--
	if starving.n == 0 {
		runtime.GOMAXPROCS(starving.prev)
	}
}
