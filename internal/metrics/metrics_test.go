package metrics

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
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
		l := r.limit
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
