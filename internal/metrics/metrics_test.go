package metrics

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestOracleCountsOverlaps(t *testing.T) {
	o := NewOracle(2)
	if o.Enter(0) {
		t.Fatal("first holder counted as overlap")
	}
	second, third := o.Enter(0), o.Enter(0)
	if !second || !third {
		t.Fatal("second and third holders not counted")
	}
	if o.Enter(1) {
		t.Fatal("another lock counted as overlap")
	}
	o.Leave(0)
	o.Leave(0)
	o.Leave(0)
	if o.Enter(0) {
		t.Fatal("holder after everyone left counted as overlap")
	}
	if got := o.Overlaps(); got != 2 {
		t.Fatalf("overlaps = %d, want 2", got)
	}
}

// With a real mutex around Enter/Leave there is never an overlap, however
// many goroutines contend; without one, holders inside at once are counted
// — the oracle is only as strict as the exclusion it watches. The unlocked
// case forces the interleaving: in each round every goroutine enters, and
// none leaves before all have entered, so each round has exactly
// goroutines-1 overlaps.
func TestOracleUnderMutex(t *testing.T) {
	t.Run("unlocked", func(t *testing.T) {
		const goroutines, rounds = 16, 50
		o := NewOracle(1)
		var overlapped [goroutines]int
		for r := 0; r < rounds; r++ {
			var entered, done sync.WaitGroup
			entered.Add(goroutines)
			done.Add(goroutines)
			allIn := make(chan struct{})
			for g := 0; g < goroutines; g++ {
				go func() {
					defer done.Done()
					if o.Enter(0) {
						overlapped[g]++
					}
					entered.Done()
					<-allIn // no one leaves before everyone is inside
					o.Leave(0)
				}()
			}
			entered.Wait()
			close(allIn)
			done.Wait()
		}
		if want := int64((goroutines - 1) * rounds); o.Overlaps() != want {
			t.Fatalf("overlaps = %d without a mutex, want %d (%d holders inside at once, %d rounds)", o.Overlaps(), want, goroutines, rounds)
		}
		sum := 0
		for _, n := range overlapped {
			sum += n
		}
		if int64(sum) != o.Overlaps() {
			t.Fatalf("Enter reported %d overlaps, Overlaps counts %d", sum, o.Overlaps())
		}
		if o.Enter(0) { // everyone left: a lone holder is no overlap
			t.Fatal("a holder after all left counted as an overlap")
		}
	})

	o := NewOracle(1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				mu.Lock()
				o.Enter(0)
				o.Leave(0)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if o.Overlaps() != 0 {
		t.Fatalf("overlaps = %d under a mutex", o.Overlaps())
	}
}

func TestRecorderMergeAndSummary(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := 1; i <= 100; i++ {
		Record(a.Op, time.Duration(i)*time.Millisecond)
	}
	Record(b.Op, 2*time.Hour) // clamped to 60 s
	Record(b.Op, 0)           // clamped to 1 µs
	a.Ops, b.Ops = 100, 2
	a.Errors["timeout"] = 1
	b.Errors["timeout"] = 2
	b.Errors["readonly"] = 4
	a.Merge(b)
	if a.Ops != 102 || a.ErrorTotal() != 7 || a.Errors["timeout"] != 3 {
		t.Fatalf("merged counters %+v", a)
	}
	s := Summarize(a.Op)
	if s.Count != 102 {
		t.Fatalf("count %d, want 102", s.Count)
	}
	if s.Max < 59_900 || s.Max > 60_100 {
		t.Fatalf("max %.1f ms, want about 60000 (clamped)", s.Max)
	}
	if s.P50 < 49.9 || s.P50 > 51.1 {
		t.Fatalf("p50 %.2f ms, want about 50", s.P50)
	}
	if z := Summarize(NewHistogram()); z != (Latency{}) {
		t.Fatalf("empty summary %+v", z)
	}
}

func TestJain(t *testing.T) {
	cases := []struct {
		xs   []int64
		want float64
	}{
		{[]int64{5, 5, 5, 5}, 1},
		{[]int64{10, 0, 0, 0}, 0.25},
		{[]int64{1, 3}, 0.8}, // 16 / (2*10)
		{nil, 1},
		{[]int64{0, 0}, 1},
	}
	for _, c := range cases {
		if got := Jain(c.xs); got < c.want-1e-12 || got > c.want+1e-12 {
			t.Errorf("Jain(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestOracleReaders(t *testing.T) {
	o := NewOracle(1)
	r1, r2 := o.EnterRead(0), o.EnterRead(0)
	if r1 || r2 {
		t.Fatal("readers together counted as overlap")
	}
	if !o.Enter(0) {
		t.Fatal("writer among readers not counted")
	}
	o.Leave(0)
	o.LeaveRead(0)
	o.LeaveRead(0)
	if o.Enter(0) {
		t.Fatal("writer alone counted")
	}
	if !o.EnterRead(0) {
		t.Fatal("reader with a writer inside not counted")
	}
	if o.Overlaps() != 2 {
		t.Fatalf("overlaps %d, want 2", o.Overlaps())
	}
}

func TestOracleRegistry(t *testing.T) {
	o := NewOracle(1)
	o.Acquired(0, 1)
	if o.Releasing(0, 1) {
		t.Fatal("own release flagged foreign")
	}
	// 1's lease ran out; 2 took the lock; 1 releases late.
	o.Acquired(0, 1)
	o.Acquired(0, 2)
	if !o.Releasing(0, 1) {
		t.Fatal("release while 2 holds not flagged")
	}
	if o.Releasing(0, 2) {
		t.Fatal("2's own release flagged")
	}
	// Nobody registered: a late release deletes nothing of anyone's.
	if o.Releasing(0, 3) {
		t.Fatal("release of a free lock flagged")
	}
}

// The registry's generation: another client's registration bumps it, the
// registered client's own does not, a release keeps it; the client part
// (HeldByAnother, Releasing) means what it did without generations.
func TestOracleGeneration(t *testing.T) {
	o := NewOracle(2)
	if o.TakenSince(0, 0) || o.HeldByAnother(0, 1) {
		t.Fatal("a fresh lock taken or held")
	}
	g1 := o.Acquired(0, 1)
	if g1 != 1 {
		t.Fatalf("first registration's generation %d, want 1", g1)
	}
	if o.TakenSince(0, g1) || o.HeldByAnother(0, 1) {
		t.Fatal("own registration counted as another's")
	}
	if !o.HeldByAnother(0, 2) {
		t.Fatal("1's hold not another's for 2")
	}
	if g := o.Acquired(0, 1); g != g1 || o.TakenSince(0, g1) {
		t.Fatalf("1 registered again: generation %d, taken since %v; want %d, false", g, o.TakenSince(0, g1), g1)
	}
	if o.TakenSince(1, 0) || o.Acquired(1, 5) != 1 {
		t.Fatal("lock 1 shares lock 0's generation")
	}
	// 1's lease ran out; 2 took the lock.
	g2 := o.Acquired(0, 2)
	if g2 != 2 || !o.TakenSince(0, g1) || o.TakenSince(0, g2) {
		t.Fatalf("2 registered: generation %d, taken since 1's %v, since its own %v; want 2, true, false",
			g2, o.TakenSince(0, g1), o.TakenSince(0, g2))
	}
	if !o.HeldByAnother(0, 1) || o.HeldByAnother(0, 2) {
		t.Fatal("HeldByAnother after 2 took the lock")
	}
	// 2 releases: nobody is named, the generation stays.
	if o.Releasing(0, 2) {
		t.Fatal("2's own release flagged")
	}
	if o.HeldByAnother(0, 1) || o.HeldByAnother(0, 2) {
		t.Fatal("a released lock held by another")
	}
	if !o.TakenSince(0, g1) || o.TakenSince(0, g2) {
		t.Fatal("the release moved the generation")
	}
	// 1's late release of a free lock flags nothing and changes nothing.
	if o.Releasing(0, 1) || o.TakenSince(0, g2) {
		t.Fatal("late release of a free lock")
	}
	// 2 takes the lock again after its release: a new registration.
	if g := o.Acquired(0, 2); g != 3 || !o.TakenSince(0, g2) {
		t.Fatalf("2's next registration: generation %d, want 3", g)
	}
	// 1's late release while 2 holds: foreign, and 2 stays registered
	// with its generation.
	if !o.Releasing(0, 1) || !o.HeldByAnother(0, 1) || o.TakenSince(0, 3) {
		t.Fatal("a foreign release changed the registry")
	}
	// The generation wraps without touching the client part.
	top := ^uint32(0)
	o.slot(0).owner.Store(int64(uint64(top)<<32 | 3))
	if !o.HeldByAnother(0, 1) || o.HeldByAnother(0, 2) || o.TakenSince(0, top) {
		t.Fatal("client part or generation misread at the top generation")
	}
	if g := o.Acquired(0, 4); g != 0 || !o.TakenSince(0, top) || !o.HeldByAnother(0, 2) || o.HeldByAnother(0, 4) {
		t.Fatalf("wrapped generation %d, want 0", g)
	}
	if o.Releasing(0, 4) || o.HeldByAnother(0, 1) || o.TakenSince(0, 0) {
		t.Fatal("release at the wrapped generation")
	}
}

// Concurrent registrations never lose a bump: each client's registration
// after another's moves the generation by one.
func TestOracleGenerationConcurrent(t *testing.T) {
	o := NewOracle(1)
	const clients, rounds = 4, 2000
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				g := o.Acquired(0, c)
				// Whoever the registry names besides c registered after c,
				// so the generation read after it has moved.
				if o.HeldByAnother(0, c) && !o.TakenSince(0, g) {
					t.Errorf("client %d: another holds at its own generation %d", c, g)
					return
				}
				o.Releasing(0, c)
			}
		}(c)
	}
	wg.Wait()
	// Every registration found its client unnamed (each releases before
	// registering again), so each bumped the generation once.
	if g := ownerGen(o.slot(0).owner.Load()); g != clients*rounds {
		t.Fatalf("generation %d after %d registrations", g, clients*rounds)
	}
}

// Buffered recording loses and changes nothing: every value observed, in
// batches and a partial last batch, ends up in the same histogram bucket
// as recording it at once, by the next Flush or Merge; and the Service
// histogram exists only once a service time was observed.
func TestObserveMatchesRecord(t *testing.T) {
	const n = 3*pendingLen + 17
	r, want := NewRecorder(), NewRecorder()
	for i := 0; i < n; i++ {
		d := time.Duration(i*i%50_000) * time.Microsecond
		for _, k := range []Kind{Op, Acquire, Release, Hold} {
			d := d + time.Duration(k)*time.Millisecond
			r.Observe(k, d)
			Record(want.hist(k), d)
		}
	}
	r.Observe(Op, 2*time.Hour) // clamped to 60 s
	Record(want.Op, 2*time.Hour)
	var buffered int64
	for _, v := range r.pending[:r.n] {
		if Kind(v>>kindShift) == Op {
			buffered++
		}
	}
	if got := r.Op.TotalCount(); got+buffered != n+1 || buffered >= pendingLen || got < 2*pendingLen {
		t.Fatalf("before Flush: %d values in the histogram and %d buffered, want %d in all, under %d buffered", got, buffered, n+1, pendingLen)
	}
	if r.Service != nil {
		t.Fatal("Service histogram made without a service time")
	}
	total := NewRecorder()
	total.Merge(r)
	for _, k := range []Kind{Op, Acquire, Release, Hold} {
		got, exp := total.hist(k), want.hist(k)
		if got.TotalCount() != exp.TotalCount() || !got.Equals(exp) {
			t.Errorf("kind %d: %d values, want %d, equal %v", k, got.TotalCount(), exp.TotalCount(), got.Equals(exp))
		}
	}
	if total.Service != nil {
		t.Fatal("merged Service histogram made without a service time")
	}
	r.Observe(Service, 5*time.Millisecond)
	r.Flush()
	if r.Service == nil || r.Service.TotalCount() != 1 || r.Op.TotalCount() != n+1 {
		t.Fatalf("after Flush: service %v, op count %d, want 1 and %d", r.Service, r.Op.TotalCount(), n+1)
	}
}

// Observe allocates nothing.
func TestObserveAllocatesNothing(t *testing.T) {
	r := NewRecorder()
	i := 0
	if a := testing.AllocsPerRun(2000, func() {
		i++
		r.Observe(Kind(i%int(Service)), time.Duration(i)*time.Microsecond)
	}); a != 0 {
		t.Fatalf("Observe allocates %.2f times per call, want 0", a)
	}
}

// Recorders made one after another are Due for their first flush at
// different points, so that clients running in step do not all flush
// together; Observe leaves a Due batch for the caller to flush (between
// two operations), and flushes by itself only a full buffer.
func TestFirstFlushesStaggered(t *testing.T) {
	seen := map[uint32]bool{}
	for i := 0; i < 16; i++ {
		r := NewRecorder()
		l := uint32(r.limit)
		if l < 1 || l > batchLen || seen[l] {
			t.Fatalf("recorder %d: first batch of %d values (seen: %v)", i, l, seen)
		}
		seen[l] = true
		for j := uint32(1); j < l; j++ {
			r.Observe(Op, time.Millisecond)
		}
		if r.Due() {
			t.Fatalf("recorder %d Due after %d of its %d values", i, l-1, l)
		}
		r.Observe(Op, time.Millisecond)
		if !r.Due() || r.Op.TotalCount() != 0 {
			t.Fatalf("recorder %d after %d values: Due %v, %d in the histogram; want true and 0", i, l, r.Due(), r.Op.TotalCount())
		}
		r.Flush()
		if r.Op.TotalCount() != int64(l) || r.Due() || r.limit != batchLen {
			t.Fatalf("recorder %d: %d values after its first flush of %d; Due %v; next batch %d", i, r.Op.TotalCount(), l, r.Due(), r.limit)
		}
	}
	// Nobody flushes: Observe flushes the full buffer itself.
	r := NewRecorder()
	for range pendingLen - 1 {
		r.Observe(Hold, time.Microsecond)
	}
	if r.Hold.TotalCount() != 0 {
		t.Fatalf("flushed %d values before the buffer was full", r.Hold.TotalCount())
	}
	r.Observe(Hold, time.Microsecond)
	if r.Hold.TotalCount() != pendingLen || r.n != 0 {
		t.Fatalf("full buffer: %d values in the histogram, %d buffered; want %d and 0", r.Hold.TotalCount(), r.n, pendingLen)
	}
}

// BenchmarkObserve is the recording of one operation (op, acquire, release
// and hold times, and the batch's flush when Due) by one of 50 clients in
// turn, with latencies spread as a
// run at 50 clients spreads them (hundreds of µs, normal).
func BenchmarkObserve(b *testing.B) {
	recs := make([]*Recorder, 50)
	for i := range recs {
		recs[i] = NewRecorder()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([][4]time.Duration, 1<<16)
	for i := range vals {
		acq := time.Duration(400+rng.NormFloat64()*100) * time.Microsecond
		rel := time.Duration(400+rng.NormFloat64()*100) * time.Microsecond
		hold := time.Duration(1+rng.IntN(4)) * time.Microsecond
		vals[i] = [4]time.Duration{acq + hold + rel, acq, rel, hold}
	}
	i := 0
	for b.Loop() {
		r, v := recs[i%len(recs)], vals[i&(len(vals)-1)]
		r.Observe(Op, v[0])
		r.Observe(Acquire, v[1])
		r.Observe(Release, v[2])
		r.Observe(Hold, v[3])
		if r.Due() { // as the worker loop does between two operations
			r.Flush()
		}
		i++
	}
}

// sameHists fails t unless got and want hold the same values in every
// kind (counts, buckets, percentiles), nil meaning none.
func sameHists(t *testing.T, what string, got, want *Hists) {
	t.Helper()
	for k := Op; k < numKinds; k++ {
		g, w := got.get(k), want.get(k)
		if (g == nil) != (w == nil) {
			t.Fatalf("%s kind %d: histogram made %v, want %v", what, k, g != nil, w != nil)
		}
		if g == nil {
			continue
		}
		if !g.Equals(w) || g.TotalCount() != w.TotalCount() || Summarize(g) != Summarize(w) {
			t.Fatalf("%s kind %d: %d values %+v, want %d %+v", what, k, g.TotalCount(), Summarize(g), w.TotalCount(), Summarize(w))
		}
	}
}

// A Set's clients share a few shards when they are many, and each has one
// of its own when they are few; either way the total is exactly what one
// histogram of every value recorded holds (same buckets, counts and
// percentiles), the counters sum, Ops lists each client's own, and
// buffered values count once flushed by Total.
func TestSetTotalIsOneHistogram(t *testing.T) {
	for _, clients := range []int{1, 7, maxShards, 1000} {
		s := NewSet(clients)
		wantShards := clients
		if clients > max(maxShards, 4*runtime.GOMAXPROCS(0)) {
			wantShards = max(maxShards, 4*runtime.GOMAXPROCS(0))
		}
		if s.Len() != clients || s.Shards() != wantShards {
			t.Fatalf("%d clients: Len %d, %d shards; want %d, %d", clients, s.Len(), s.Shards(), clients, wantShards)
		}
		want := NewRecorder()
		rng := rand.New(rand.NewPCG(3, uint64(clients)))
		var ops, failed int64
		wantOps := make([]int64, clients)
		for i := 0; i < 20_000; i++ {
			c := rng.IntN(clients)
			r := s.Client(c)
			d := time.Duration(rng.ExpFloat64()*5000) * time.Microsecond
			r.Acquired(2, d)
			want.Acquired(2, d)
			r.Held(d / 3)
			want.Held(d / 3)
			r.Released(d/2, i%10 == 0)
			want.Released(d/2, i%10 == 0)
			r.Completed(d * 2)
			want.Completed(d * 2)
			wantOps[c]++
			ops++
			if i%7 == 0 {
				r.Served(d)
				want.Served(d)
			}
			if i%13 == 0 {
				r.AcquireFailed(1, d, i%26 == 0) // half of them the run's stop: not recorded
				want.AcquireFailed(1, d, i%26 == 0)
				if i%26 != 0 {
					failed++
				}
			}
			if i%101 == 0 {
				r.Errored("timeout", errors.New("i/o timeout"))
			}
			if r.Due() && i%3 != 0 { // some flush when Due, some wait for a full buffer
				r.Flush()
			}
		}
		want.Flush()
		total := s.Total()
		sameHists(t, fmt.Sprintf("%d clients", clients), &total.Hists, &want.Hists)
		if total.Ops != ops || total.Attempts != want.Attempts || total.NotOwner != want.NotOwner ||
			total.FailedAcquire.TotalCount() != failed || total.Errors["timeout"] != 20_000/101+1 ||
			total.Samples["timeout"] != "i/o timeout" {
			t.Fatalf("%d clients: ops %d attempts %d notOwner %d failed acquires %d errors %v; want %d %d %d %d, %d timeouts",
				clients, total.Ops, total.Attempts, total.NotOwner, total.FailedAcquire.TotalCount(), total.Errors,
				ops, want.Attempts, want.NotOwner, failed, 20_000/101+1)
		}
		if got := s.Ops(); !slices.Equal(got, wantOps) {
			t.Fatalf("%d clients: per-client ops differ", clients)
		}
		for i := 0; i < clients; i++ {
			if s.Client(i).Hists != (Hists{}) {
				t.Fatalf("%d clients: client %d has histograms of its own", clients, i)
			}
		}
	}
	if (*Set)(nil).Client(3) != nil {
		t.Fatal("a nil Set's client is not nil")
	}
}

// Clients of a Set record concurrently, each from its own goroutine, into
// shards they share (run with -race): no value is lost or counted twice.
func TestSetConcurrentClients(t *testing.T) {
	const clients, perClient = 300, 3000
	s := NewSet(clients)
	if s.Shards() >= clients {
		t.Fatalf("%d shards for %d clients: the test wants shared shards", s.Shards(), clients)
	}
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(r *Recorder, c int) {
			defer wg.Done()
			for i := 0; i < perClient; i++ {
				d := time.Duration(1+(c*perClient+i)%20_000) * time.Microsecond
				r.Acquired(1, d)
				r.Completed(d)
				if r.Due() {
					r.Flush()
				}
			}
		}(s.Client(c), c)
	}
	wg.Wait()
	want := NewHistogram()
	for c := 0; c < clients; c++ {
		for i := 0; i < perClient; i++ {
			Record(want, time.Duration(1+(c*perClient+i)%20_000)*time.Microsecond)
		}
	}
	total := s.Total()
	if total.Ops != clients*perClient || total.Attempts != clients*perClient || !total.Op.Equals(want) || !total.Acquire.Equals(want) {
		t.Fatalf("ops %d attempts %d, op values %d acquire values %d; want %d each, equal to one histogram",
			total.Ops, total.Attempts, total.Op.TotalCount(), total.Acquire.TotalCount(), clients*perClient)
	}
	for i, n := range s.Ops() {
		if n != perClient {
			t.Fatalf("client %d: %d ops, want %d", i, n, perClient)
		}
	}
}

// A Set's client Recorder allocates nothing either, flushes into its
// shared shard included, and its shared buffer staggers its first batch.
func TestSetClientAllocatesNothing(t *testing.T) {
	s := NewSet(1000)
	r := s.Client(5)
	if len(r.pending) != sharedLen || r.limit < 1 || r.limit > sharedLen-headroom {
		t.Fatalf("buffer %d, first batch %d; want %d, 1..%d", len(r.pending), r.limit, sharedLen, sharedLen-headroom)
	}
	i := 0
	if a := testing.AllocsPerRun(5000, func() {
		i++
		r.Observe(Kind(i%int(Service)), time.Duration(i)*time.Microsecond)
		if r.Due() {
			r.Flush()
		}
	}); a != 0 {
		t.Fatalf("a client's Observe and Flush allocate %.2f times per call, want 0", a)
	}
	if r.limit != sharedLen-headroom {
		t.Fatalf("batch %d after a flush, want %d", r.limit, sharedLen-headroom)
	}
}

// BenchmarkObserveSet is BenchmarkObserve for the clients of a Set: 50
// (each with a shard of its own, as in lockbench harness) and 10,000 (in
// shared shards, each flush under its shard's mutex).
func BenchmarkObserveSet(b *testing.B) {
	for _, clients := range []int{50, 10_000} {
		b.Run(strconv.Itoa(clients), func(b *testing.B) {
			s := NewSet(clients)
			rng := rand.New(rand.NewPCG(1, 2))
			vals := make([][4]time.Duration, 1<<16)
			for i := range vals {
				acq := time.Duration(400+rng.NormFloat64()*100) * time.Microsecond
				rel := time.Duration(400+rng.NormFloat64()*100) * time.Microsecond
				hold := time.Duration(1+rng.IntN(4)) * time.Microsecond
				vals[i] = [4]time.Duration{acq + hold + rel, acq, rel, hold}
			}
			i := 0
			for b.Loop() {
				r, v := s.Client(i%clients), vals[i&(len(vals)-1)]
				r.Observe(Op, v[0])
				r.Observe(Acquire, v[1])
				r.Observe(Release, v[2])
				r.Observe(Hold, v[3])
				if r.Due() {
					r.Flush()
				}
				i++
			}
		})
	}
}

// A Set that tracks intervals puts every Op and Acquire value flushed into
// its shards' interval histograms as well: with clients recording
// concurrently while a sampler ends intervals and takes them (run with
// -race), the intervals taken, merged, are exactly the Total's Op and
// Acquire histograms (same buckets and counts, so the same count and
// max), and no interval holds a value twice.
func TestSetIntervalsMergeToTotal(t *testing.T) {
	for _, clients := range []int{3, 300} {
		const perClient = 3000
		s := NewSet(clients)
		s.TrackIntervals()
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(r *Recorder, c int) {
				defer wg.Done()
				for i := 0; i < perClient; i++ {
					r.Mark() // as the worker loop does
					d := time.Duration(1+(c*perClient+i)%20_000) * time.Microsecond
					r.Acquired(1, d/2)
					r.Held(d / 3) // not an interval's kind
					r.Completed(d)
					if r.Due() {
						r.FlushDue()
					}
				}
			}(s.Client(c), c)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		var ivs [][2]*hdrhistogram.Histogram
		take := func(final bool) {
			iv := [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}
			s.TakeInterval(iv[0], iv[1], final)
			ivs = append(ivs, iv)
		}
	sample:
		for {
			select {
			case <-done:
				break sample
			default:
			}
			s.EndInterval()
			time.Sleep(time.Millisecond)
			take(false)
		}
		s.Flush() // every client stopped: what they buffered
		take(true)
		total := s.Total()
		merged := [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}
		for _, iv := range ivs {
			merged[0].Merge(iv[0])
			merged[1].Merge(iv[1])
		}
		for k, w := range []*hdrhistogram.Histogram{total.Op, total.Acquire} {
			if g := merged[k]; !g.Equals(w) || g.TotalCount() != int64(clients*perClient) || g.Max() != w.Max() {
				t.Fatalf("%d clients, kind %d: %d intervals merge to %d values (max %d), want %d (max %d)",
					clients, k, len(ivs), g.TotalCount(), g.Max(), w.TotalCount(), w.Max())
			}
		}
		if len(ivs) < 2 {
			t.Logf("%d clients: only %d intervals", clients, len(ivs))
		}
	}
}

// After EndInterval every client of the Set is Due, even with an empty
// buffer, until it flushes; its flush counts once in Flushed however
// many intervals ended since. A NewRecorder is never Due for an interval.
func TestEndIntervalMakesDue(t *testing.T) {
	s := NewSet(4)
	s.TrackIntervals()
	for i := 0; i < 4; i++ {
		if s.Client(i).Due() {
			t.Fatalf("client %d Due before any value or interval end", i)
		}
	}
	base := s.EndInterval()
	s.TakeInterval(NewHistogram(), NewHistogram(), false) // as the sampler takes each interval it ends
	s.EndInterval()
	if base != 0 {
		t.Fatalf("Flushed before the first interval end = %d, want 0", base)
	}
	s.Client(0).Completed(time.Millisecond)
	for i := 0; i < 4; i++ {
		if !s.Client(i).Due() {
			t.Fatalf("client %d not Due after EndInterval", i)
		}
	}
	s.Client(0).Flush()
	s.Client(1).Flush() // nothing buffered: still a flush of the interval
	if s.Client(0).Due() || s.Client(1).Due() || !s.Client(2).Due() {
		t.Fatal("Due after the flush, or not Due without one")
	}
	if n := s.Flushed(); n != 2 {
		t.Fatalf("Flushed = %d, want 2 (two clients, once each)", n)
	}
	op, acq := NewHistogram(), NewHistogram()
	s.TakeInterval(op, acq, false)
	if op.TotalCount() != 1 || acq.TotalCount() != 0 {
		t.Fatalf("interval took %d op and %d acquire values, want 1 and 0", op.TotalCount(), acq.TotalCount())
	}
	r := NewRecorder()
	s.EndInterval()
	if r.Due() {
		t.Fatal("a NewRecorder is Due after a Set's EndInterval")
	}
}

// FlushDue after an interval's end flushes the values observed before the
// last Mark (operations that ended before the end) and keeps those after
// it (the operation that ended after) for the next interval; without an
// interval's end it flushes everything.
func TestFlushDueKeepsOperationInProgress(t *testing.T) {
	maxOf := func(d time.Duration) int64 { h := NewHistogram(); Record(h, d); return h.Max() }
	s := NewSet(2)
	s.TrackIntervals()
	r := s.Client(0)
	r.Mark()
	r.Completed(time.Millisecond) // operation A, before the interval's end
	r.Mark()                      // operation B starts
	s.EndInterval()
	r.Acquired(1, 5*time.Millisecond)
	r.Completed(7 * time.Millisecond) // B ends after it
	if !r.Due() {
		t.Fatal("not Due after the interval's end")
	}
	r.FlushDue()
	if r.Due() || s.Flushed() != 1 {
		t.Fatalf("Due %v, Flushed %d after FlushDue; want false, 1", r.Due(), s.Flushed())
	}
	op, acq := NewHistogram(), NewHistogram()
	s.TakeInterval(op, acq, false)
	if op.TotalCount() != 1 || op.Max() != maxOf(time.Millisecond) || acq.TotalCount() != 0 {
		t.Fatalf("first interval: %d op values (max %d µs), %d acquire values; want A's 1 ms alone", op.TotalCount(), op.Max(), acq.TotalCount())
	}
	r.Mark()
	r.Completed(3 * time.Millisecond) // C, same interval as B
	r.Due()
	r.FlushDue() // no interval's end: everything
	op, acq = NewHistogram(), NewHistogram()
	s.EndInterval() // the second interval ends
	s.TakeInterval(op, acq, false)
	if op.TotalCount() != 2 || acq.TotalCount() != 1 || op.Max() != maxOf(7*time.Millisecond) {
		t.Fatalf("second interval: %d op values (max %d µs), %d acquire values; want B's and C's 2 (7 ms max) and B's acquire", op.TotalCount(), op.Max(), acq.TotalCount())
	}
	if total := s.Total(); total.Op.TotalCount() != 3 || total.Acquire.TotalCount() != 1 {
		t.Fatalf("total %d op and %d acquire values, want 3 and 1", total.Op.TotalCount(), total.Acquire.TotalCount())
	}
}

// A client that published its ended operations' values (Ended) and is in
// a long operation when an interval ends has them taken by Settle into
// that interval; it drops them when it next flushes, so that no value
// counts twice, and its operation in progress goes to the interval in
// which it ends. A client that never published is waited for until the
// deadline, and its values reach the interval it flushes in.
func TestSettleTakesEndedValues(t *testing.T) {
	maxOf := func(d time.Duration) int64 { h := NewHistogram(); Record(h, d); return h.Max() }
	s := NewSet(2)
	s.TrackIntervals()
	r, quiet := s.Client(0), s.Client(1)
	r.Ended() // as the engine does before the client's first operation
	r.Mark()
	r.Acquired(1, time.Millisecond)
	r.Completed(2 * time.Millisecond) // operation A
	r.Ended()
	if r.Due() {
		t.Fatal("Due after one operation")
	}
	r.Mark() // operation B starts, and lasts past the interval's end
	r.Acquired(1, 5*time.Millisecond)
	quiet.Mark()
	quiet.Completed(3 * time.Millisecond) // never published
	s.EndInterval()
	start := time.Now()
	if left := s.Settle(time.Now().Add(20 * time.Millisecond)); left != 1 {
		t.Fatalf("Settle left %d clients unsettled, want 1 (the one that never published)", left)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Fatal("Settle did not wait for the client that never published")
	}
	op, acq := NewHistogram(), NewHistogram()
	s.TakeInterval(op, acq, false)
	if op.TotalCount() != 1 || op.Max() != maxOf(2*time.Millisecond) || acq.TotalCount() != 1 || acq.Max() != maxOf(time.Millisecond) {
		t.Fatalf("first interval: %d op values (max %d µs), %d acquire values (max %d µs); want A's alone", op.TotalCount(), op.Max(), acq.TotalCount(), acq.Max())
	}
	if s.steals != 2 {
		t.Fatalf("Settle took %d values, want 2 (A's)", s.steals)
	}
	r.Completed(7 * time.Millisecond) // B ends
	r.Ended()
	if !r.Due() {
		t.Fatal("not Due after the interval's end")
	}
	r.FlushDue()
	quiet.Ended()
	quiet.FlushDue()
	if r.n != 0 || r.state.Load() != 1 {
		t.Fatalf("after FlushDue: %d values buffered, state %d; want 0 and 1", r.n, r.state.Load())
	}
	s.EndInterval()
	if left := s.Settle(time.Now().Add(time.Second)); left != 0 {
		t.Fatalf("Settle left %d clients unsettled, want 0 (both flushed)", left)
	}
	op, acq = NewHistogram(), NewHistogram()
	s.TakeInterval(op, acq, false)
	if op.TotalCount() != 2 || op.Max() != maxOf(7*time.Millisecond) || acq.TotalCount() != 1 || acq.Max() != maxOf(5*time.Millisecond) {
		t.Fatalf("second interval: %d op values (max %d µs), %d acquire values (max %d µs); want B's and the quiet client's, B's acquire",
			op.TotalCount(), op.Max(), acq.TotalCount(), acq.Max())
	}
	if total := s.Total(); total.Op.TotalCount() != 3 || total.Acquire.TotalCount() != 2 {
		t.Fatalf("total %d op and %d acquire values, want 3 and 2", total.Op.TotalCount(), total.Acquire.TotalCount())
	}
}

// Clients that publish their ended operations (Ended) and flush only when
// Due, some with operations longer than the sampler waits, while a
// sampler ends intervals, settles and takes them (run with -race): every
// value reaches exactly one interval, so the intervals merge to the
// Total's Op and Acquire histograms, and the values the sampler takes and
// those the clients flush add up to every one recorded.
func TestSettleConcurrent(t *testing.T) {
	for _, clients := range []int{3, 300} {
		const perClient = 2000
		s := NewSet(clients)
		s.TrackIntervals()
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(r *Recorder, c int) {
				defer wg.Done()
				r.Ended()
				for i := 0; i < perClient; i++ {
					r.Mark()
					d := time.Duration(1+(c*perClient+i)%20_000) * time.Microsecond
					r.Acquired(1, d/2)
					if i%500 == 499 && c%3 == 0 {
						time.Sleep(3 * time.Millisecond) // a long operation
					}
					r.Held(d / 3)
					r.Completed(d)
					r.Ended()
					if r.Due() {
						r.FlushDue()
					}
				}
			}(s.Client(c), c)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		var ivs [][2]*hdrhistogram.Histogram
		take := func(final bool) {
			iv := [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}
			s.TakeInterval(iv[0], iv[1], final)
			ivs = append(ivs, iv)
		}
	sample:
		for {
			select {
			case <-done:
				break sample
			default:
			}
			s.EndInterval()
			s.Settle(time.Now().Add(time.Millisecond))
			take(false)
			time.Sleep(time.Millisecond)
		}
		s.Flush()
		take(true)
		total := s.Total()
		merged := [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}
		for _, iv := range ivs {
			merged[0].Merge(iv[0])
			merged[1].Merge(iv[1])
		}
		for k, w := range []*hdrhistogram.Histogram{total.Op, total.Acquire} {
			if g := merged[k]; !g.Equals(w) || g.TotalCount() != int64(clients*perClient) || g.Max() != w.Max() {
				t.Fatalf("%d clients, kind %d: %d intervals merge to %d values (max %d), want %d (max %d)",
					clients, k, len(ivs), g.TotalCount(), g.Max(), w.TotalCount(), w.Max())
			}
		}
		if total.Hold.TotalCount() != int64(clients*perClient) {
			t.Fatalf("%d clients: %d hold values, want %d", clients, total.Hold.TotalCount(), clients*perClient)
		}
		if s.steals == 0 {
			t.Fatalf("%d clients: Settle took no value; the test does not test it", clients)
		}
		t.Logf("%d clients: %d intervals, %d values taken by Settle", clients, len(ivs), s.steals)
	}
}
