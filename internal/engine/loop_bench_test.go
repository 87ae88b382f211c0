package engine

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// memAtomic is an in-process stand-in for the atomic strategy: a fresh
// token per acquire, reported to the token registry before the "SET" as
// atomic does, a recycled lease, and a yield where each of the two Redis
// round trips would park the client (so that 50 clients on a few cores
// take turns and evict each other's cache lines, as they do in a run).
type memAtomic struct {
	tokens strategies.TokenTracker
	free   sync.Pool
}

type memAtomicLease struct{ key, tok string }

// yield stands for a Redis round trip: the client parks and the others
// run.
func yield() { runtime.Gosched() }

func (m *memAtomic) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	l, _ := m.free.Get().(*memAtomicLease)
	if l == nil {
		l = &memAtomicLease{}
	}
	l.key, l.tok = key, strategies.NewToken()
	if m.tokens != nil {
		m.tokens.Sent(ctx, key, l.tok)
	}
	yield()
	return l, nil
}

func (m *memAtomic) Recycle(l strategies.Lease) {
	if al, ok := l.(*memAtomicLease); ok {
		m.free.Put(al)
	}
}

func (l *memAtomicLease) Key() string                   { return l.key }
func (l *memAtomicLease) Token() string                 { return l.tok }
func (l *memAtomicLease) Release(context.Context) error { yield(); return nil }

// budget is lock-cycle with a number of operations per client, after
// which the client's Op returns ErrDone.
type budget struct {
	workloads.Workload
	left []atomic.Int64
}

func (b *budget) Op(ctx context.Context, w *workloads.Worker) error {
	if b.left[w.ID].Add(-1) < 0 {
		return workloads.ErrDone
	}
	return b.Workload.Op(ctx, w)
}

// benchLoop runs the engine's worker loop (loop) for clients clients on
// lock-cycle --own-keys over memAtomic, b.N operations in all, with what
// a run records: a metrics.Set with interval histograms, the timeline's
// slots, the oracle and, with live, the liveness registry. What it
// measures is lockbench's own work per operation, without Redis.
func benchLoop(b *testing.B, clients int, live bool) {
	wl, err := workloads.New("lock-cycle", registry.Values{"own-keys": true})
	if err != nil {
		b.Fatal(err)
	}
	ml := &memAtomic{}
	env := &workloads.Env{Locker: ml, Prefix: "lockbench:bench:", Clients: clients, QuietIO: true}
	if live {
		tr := liveness.NewTracker(clients, time.Second)
		env.Live, ml.tokens = tr, tr
	}
	if err := wl.Setup(context.Background(), env); err != nil {
		b.Fatal(err)
	}
	recs := metrics.NewSet(clients)
	recs.TrackIntervals()
	slots := make([]liveSlot, clients)
	bw := &budget{Workload: wl, left: make([]atomic.Int64, clients)}
	per := (b.N + clients - 1) / clients
	for i := range bw.left {
		bw.left[i].Store(int64(per))
	}
	states := make([]*workerState, clients)
	for i := range states {
		ws := &workerState{pcg: *rand.NewPCG(1, uint64(i))}
		ws.rng = *rand.New(&ws.pcg)
		ws.obs.init(recs.Client(i), nil, &slots[i], nil)
		ws.w = workloads.Worker{ID: i, Env: env, Rng: &ws.rng, Obs: &ws.obs, Gate: &strategies.Gate{}}
		states[i] = ws
	}
	var streak errStreak
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, ws := range states {
		ctx := strategies.WithClient(context.Background(), strategies.Client{ID: i, Owner: "c" + strconv.Itoa(i), Gate: ws.w.Gate})
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx, bw, &ws.w, &ws.obs, time.Time{}, func() {}, &streak, func(error) {}, nil, nil, nil, nil)
		}()
	}
	wg.Wait()
	b.StopTimer()
	// CPU time per operation as well: on a shared machine it varies less
	// than the wall clock does.
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	b.ReportMetric(float64(rusageCPU(ru1)-rusageCPU(ru0))/float64(per*clients), "cpu-ns/op")
	recs.Flush()
	if tot := recs.Total(); tot.Ops != int64(per*clients) {
		b.Fatalf("%d operations recorded, want %d", tot.Ops, per*clients)
	}
}

// benchBare is what harness.BareLoop does around its two round trips, on
// the same stand-ins: a fresh token and two yields per cycle, a count.
func benchBare(b *testing.B, clients int) {
	per := (b.N + clients - 1) / clients
	var total atomic.Int64
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var wg sync.WaitGroup
	toks := make([]string, clients) // where each token goes, as to the driver
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			for range per {
				toks[g] = strategies.NewToken()
				yield()
				yield()
				n++
			}
			total.Add(n)
		}()
	}
	wg.Wait()
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	b.ReportMetric(float64(rusageCPU(ru1)-rusageCPU(ru0))/float64(per*clients), "cpu-ns/op")
	if total.Load() != int64(per*clients) {
		b.Fatalf("%d cycles, want %d", total.Load(), per*clients)
	}
}

// BenchmarkLoop is the engine's work per lock cycle around a lock that
// costs nothing (lockbench's side of `lockbench harness`' overhead): 1
// client, and 50 (the harness's) taking turns at each would-be round trip;
// bare is the harness's bare loop on the same stand-ins, so that the
// difference is what lockbench adds per cycle. GOMAXPROCS=1 steadies the
// figures on a shared machine.
func BenchmarkLoop(b *testing.B) {
	for _, c := range []int{1, 50} {
		b.Run("clients="+strconv.Itoa(c)+"/bare", func(b *testing.B) { benchBare(b, c) })
		for _, live := range []bool{true, false} {
			name := "clients=" + strconv.Itoa(c) + "/liveness=" + strconv.FormatBool(live)
			b.Run(name, func(b *testing.B) { benchLoop(b, c, live) })
		}
	}
}
