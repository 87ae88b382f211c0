package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// memLocker is an in-process Locker that always grants at once, with one
// reused lease: it leaves only the worker's own per-operation work (timing,
// recording, the oracle) to measure.
type memLocker struct {
	l memLease
	// recycled counts leases handed back (strategies.Recycler); early
	// counts recycles of a lease not yet released.
	recycled, early int
}

type memLease struct{ releases int }

func (m *memLocker) Recycle(l strategies.Lease) {
	if l != strategies.Lease(&m.l) {
		return
	}
	m.recycled++
	if m.l.releases != m.recycled {
		m.early++
	}
}

func (m *memLocker) TryAcquire(context.Context, string) (strategies.Lease, error) { return &m.l, nil }
func (l *memLease) Key() string                                                   { return "k" }
func (l *memLease) Token() string                                                 { return "t" }
func (l *memLease) Release(context.Context) error                                 { l.releases++; return nil }

// rec is the Recorder a test's worker reports to.
func rec(w *Worker) *metrics.Recorder { return w.Obs.(*metrics.Recorder) }

func memWorker(locks int) (*Worker, *memLocker) {
	ml := &memLocker{}
	env := &Env{Locker: ml, Oracle: metrics.NewOracle(locks), Clients: 1}
	rng := rand.New(rand.NewPCG(1, 1))
	return &Worker{ID: 0, Env: env, Rng: rng, Obs: metrics.NewRecorder()}, ml
}

// Hold's own work per operation — clock reads, the acquire, hold and
// release histograms, the oracle and the holder registry — allocates
// nothing, and records every operation exactly once.
func TestHoldAllocatesNothing(t *testing.T) {
	w, ml := memWorker(1000)
	ctx := context.Background()
	body := func(context.Context, strategies.Lease) error { w.Work(); return nil }
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i = (i + 1) % 1000
		if err := w.Hold(ctx, i, "k", false, body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Hold allocates %.1f times per operation, want 0", allocs)
	}
	runs := int64(1001) // AllocsPerRun adds one warm-up run
	rec(w).Flush()
	if got := rec(w).Acquire.TotalCount(); got != runs {
		t.Errorf("acquire histogram has %d values, want %d", got, runs)
	}
	if got := rec(w).Hold.TotalCount(); got != runs {
		t.Errorf("hold histogram has %d values, want %d", got, runs)
	}
	if got := rec(w).Release.TotalCount(); got != runs {
		t.Errorf("release histogram has %d values, want %d", got, runs)
	}
	if rec(w).Attempts != runs || ml.l.releases != int(runs) || ml.recycled != int(runs) || ml.early != 0 {
		t.Errorf("attempts %d, releases %d, leases recycled %d (%d before their release), want %d each and 0", rec(w).Attempts, ml.l.releases, ml.recycled, ml.early, runs)
	}
	if o := w.Env.Oracle.Overlaps(); o != 0 {
		t.Errorf("overlaps %d on a single client, want 0", o)
	}
}

// BenchmarkHold is the engine's per-operation cost around the lock: an
// in-process lock that costs nothing, on one of 100,000 lock keys drawn at
// random as lock-cycle does, so what is left is lockbench's own recording.
func BenchmarkHold(b *testing.B) {
	const locks = 100_000
	w, _ := memWorker(locks)
	keys := make([]string, locks)
	for i := range keys {
		keys[i] = "lockbench:bench:{cyc:" + strconv.Itoa(i) + "}:lock"
	}
	ctx := context.Background()
	body := func(context.Context, strategies.Lease) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		i := w.Rng.IntN(locks)
		if err := w.Hold(ctx, i, keys[i], false, body); err != nil {
			b.Fatal(err)
		}
	}
}

// keyLocker is an in-process Locker that grants every key at once and
// counts the acquires of each.
type keyLocker struct{ acquired map[string]int }

type keyLease struct{ key string }

func (k *keyLocker) TryAcquire(_ context.Context, key string) (strategies.Lease, error) {
	k.acquired[key]++
	return keyLease{key}, nil
}
func (l keyLease) Key() string                   { return l.key }
func (l keyLease) Token() string                 { return "t" }
func (l keyLease) Release(context.Context) error { return nil }

// With own-keys, lock-cycle gives each client one key of its own: client i
// locks only key i, whatever --keys says, and the oracle has a lock per
// client.
func TestCycleOwnKeys(t *testing.T) {
	kl := &keyLocker{acquired: map[string]int{}}
	env := &Env{Locker: kl, Clients: 3, Prefix: "p:"}
	c := &cycle{keys: 1000, own: true}
	ctx := context.Background()
	if err := c.Setup(ctx, env); err != nil {
		t.Fatal(err)
	}
	if env.Locks != 3 || len(c.LockKeys()) != 3 {
		t.Fatalf("locks %d, keys %v; want 3 (one per client)", env.Locks, c.LockKeys())
	}
	for id := range 3 {
		w := &Worker{ID: id, Env: env, Rng: rand.New(rand.NewPCG(1, uint64(id))), Obs: metrics.NewRecorder()}
		for range 5 * (id + 1) {
			if err := c.Op(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]int{"p:{cyc:0}:lock": 5, "p:{cyc:1}:lock": 10, "p:{cyc:2}:lock": 15}
	if fmt.Sprint(kl.acquired) != fmt.Sprint(want) {
		t.Fatalf("acquires by key %v, want %v", kl.acquired, want)
	}
}

// An operation's first acquire counts from the start the loop gave Begin;
// a second acquire in the same operation counts from its own start.
func TestAcquireCountsFromBegin(t *testing.T) {
	w, _ := memWorker(2)
	ctx := context.Background()
	w.Begin(metrics.Now() - 50*time.Millisecond)
	err := w.Hold(ctx, 0, "a", false, func(context.Context, strategies.Lease) error {
		return w.Hold(ctx, 1, "b", false, func(context.Context, strategies.Lease) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	rec(w).Flush()
	h := rec(w).Acquire
	if h.TotalCount() != 2 || h.Max() < 50_000 || h.Min() >= 50_000 {
		t.Fatalf("acquire times %d values, min %d µs, max %d µs; want 2, one >= 50 ms (from Begin) and one below", h.TotalCount(), h.Min(), h.Max())
	}
}

type valKey struct{}

// With Env.QuietIO the worker's Redis calls run on contexts that keep the
// run context's values but cannot be cancelled (no done channel to wait
// on); without it, attempts run on the run context and the critical
// section on a context that ends with Env.Hard.
func TestQuietIO(t *testing.T) {
	run, stop := context.WithCancel(context.WithValue(context.Background(), valKey{}, "client"))
	defer stop()
	hard, hardStop := context.WithCancel(context.Background())
	defer hardStop()
	for _, quiet := range []bool{true, false} {
		w := &Worker{Env: &Env{Hard: hard, QuietIO: quiet}}
		att, io := w.attemptCtx(run), w.IO(run)
		if att.Value(valKey{}) != "client" || io.Value(valKey{}) != "client" {
			t.Fatalf("quiet %v: the contexts lost the run's values", quiet)
		}
		if quiet && (att.Done() != nil || io.Done() != nil) {
			t.Fatalf("quiet: attempt and I/O contexts have done channels")
		}
		if !quiet && (att != run || io.Done() == nil) {
			t.Fatalf("not quiet: attempts not on the run context, or I/O context without Hard")
		}
	}
}

// extLease is a lease whose Extend reports ok.
type extLease struct {
	memLease
	ok      bool
	extends int
}

func (l *extLease) Extend(context.Context) error {
	l.extends++
	if !l.ok {
		return strategies.ErrExtendFailed
	}
	return nil
}

type extLocker struct{ l *extLease }

func (m extLocker) TryAcquire(context.Context, string) (strategies.Lease, error) { return m.l, nil }

// Work extends an Extender lease inside Hold; a successful extend after
// another client took the lock since the holder did (whether that client
// still holds it or has released it) is a false extend, a failed one, one
// on the holder's own lock, or one after the holder's own registration
// again is not; outside Hold, Work extends nothing.
func TestWorkExtends(t *testing.T) {
	for _, c := range []struct {
		ok    bool
		other string // what happened to the lock while the holder slept
		want  int64
	}{
		{true, "", 0},
		{true, "holds", 1},
		{true, "released", 1},
		{true, "own", 0},
		{false, "holds", 0},
		{false, "released", 0},
	} {
		w, _ := memWorker(1)
		l := &extLease{ok: c.ok}
		w.Env.Locker = extLocker{l}
		err := w.Hold(context.Background(), 0, "k", false, func(context.Context, strategies.Lease) error {
			o := w.Env.Oracle
			switch c.other {
			case "holds": // the lease ended while the holder slept; client 7 took the lock
				o.Acquired(0, 7)
			case "released": // ... and released it: the registry names nobody
				o.Acquired(0, 7)
				o.Releasing(0, 7)
			case "own": // the holder registered again (no other client came)
				o.Acquired(0, w.ID)
			}
			w.Work()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if l.extends != 1 || rec(w).FalseExtends != c.want {
			t.Errorf("ok %v other %q: %d extends, %d false extends; want 1 and %d", c.ok, c.other, l.extends, rec(w).FalseExtends, c.want)
		}
		w.Work() // outside Hold
		if l.extends != 1 {
			t.Errorf("Work outside Hold extended")
		}
	}
}

// With the hand-over measurement on (Env.Handover), Hold still allocates
// nothing per operation once a lock's waiter list has its room, and every
// grant is counted.
func TestHoldHandoverAllocatesNothing(t *testing.T) {
	w, _ := memWorker(1)
	w.Env.Handover = metrics.NewHandover(1, time.Second, true)
	ctx := context.Background()
	body := func(context.Context, strategies.Lease) error { return nil }
	allocs := testing.AllocsPerRun(1000, func() {
		if err := w.Hold(ctx, 0, "k", false, body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Hold with Handover allocates %.1f times per operation, want 0", allocs)
	}
	if f := w.Env.Handover.Figures(); f.Grants != 1001 || f.Violations != 0 || f.MaxTurns != 0 {
		t.Errorf("handover figures %+v, want 1001 grants in order", f)
	}
}

// With Env.Margins set, each successful extend records its margin: the
// TTL minus the time since the acquire's start, then since the last extend's start;
// a failed extend records none, but the strategy still counts as one that
// renews (measured, 0 renewals).
func TestWorkExtendMargins(t *testing.T) {
	const ttl = 10 * time.Second
	for _, ok := range []bool{true, false} {
		w, _ := memWorker(1)
		w.Env.Locker = extLocker{&extLease{ok: ok}}
		w.Env.Margins = metrics.NewMargins(ttl)
		err := w.Hold(context.Background(), 0, "k", false, func(context.Context, strategies.Lease) error {
			time.Sleep(50 * time.Millisecond)
			w.Work()
			time.Sleep(100 * time.Millisecond)
			w.Work()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		f := w.Env.Margins.Figures()
		if !f.Measured {
			t.Fatalf("ok %v: not measured", ok)
		}
		if !ok {
			if f.Renewals != 0 {
				t.Fatalf("failed extends: %d renewals recorded, want 0", f.Renewals)
			}
			continue
		}
		// The second extend came at least 100 ms after the first's start.
		if f.Renewals != 2 || f.Late != 0 || f.Min > ttl-100*time.Millisecond || f.Min <= 0 {
			t.Fatalf("renewals %d, late %d, min %v; want 2, 0, 0 < min <= %v", f.Renewals, f.Late, f.Min, ttl-100*time.Millisecond)
		}
	}
}

// validLease is an Extender that counts its own validity
// (strategies.Validity): until, fixed.
type validLease struct {
	extLease
	until time.Time
}

func (l *validLease) ValidUntil() time.Time { return l.until }

type validLocker struct{ l *validLease }

func (m validLocker) TryAcquire(context.Context, string) (strategies.Lease, error) { return m.l, nil }

// slowLocker's acquire takes delay before it returns its lease.
type slowLocker struct {
	l     *extLease
	delay time.Duration
}

func (m slowLocker) TryAcquire(context.Context, string) (strategies.Lease, error) {
	time.Sleep(m.delay)
	return m.l, nil
}

// An extend's margin is the lease's ValidUntil minus the extend's send
// time when the lease counts its validity (strategies.Validity): with
// 3 s of validity left of a 10 s TTL it is late (under TTL/3) however
// long since the grant; without Validity it counts from the acquire's
// start, not its return: after an acquire that took 300 ms, an extend
// right after the grant has at most TTL - 300 ms left.
func TestWorkExtendMarginsFrom(t *testing.T) {
	const ttl = 10 * time.Second
	w, _ := memWorker(1)
	vl := &validLease{extLease: extLease{ok: true}, until: time.Now().Add(3 * time.Second)}
	w.Env.Locker = validLocker{vl}
	w.Env.Margins = metrics.NewMargins(ttl)
	if err := w.Hold(context.Background(), 0, "k", false, func(context.Context, strategies.Lease) error {
		w.Work()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if f := w.Env.Margins.Figures(); f.Renewals != 1 || f.Late != 1 || f.Min > 3*time.Second || f.Min < 2*time.Second {
		t.Fatalf("Validity lease: renewals %d, late %d, min %v; want 1, 1, 2 s <= min <= 3 s (ValidUntil - now)", f.Renewals, f.Late, f.Min)
	}

	w, _ = memWorker(1)
	w.Env.Locker = slowLocker{l: &extLease{ok: true}, delay: 300 * time.Millisecond}
	w.Env.Margins = metrics.NewMargins(ttl)
	if err := w.Hold(context.Background(), 0, "k", false, func(context.Context, strategies.Lease) error {
		w.Work()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if f := w.Env.Margins.Figures(); f.Renewals != 1 || f.Late != 0 || f.Min > ttl-300*time.Millisecond || f.Min <= 0 {
		t.Fatalf("slow acquire: renewals %d, late %d, min %v; want 1, 0, 0 < min <= %v (from the acquire's start)", f.Renewals, f.Late, f.Min, ttl-300*time.Millisecond)
	}
}
