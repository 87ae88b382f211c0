package metrics

import (
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
// many goroutines contend; without one there usually is — the oracle is
// only as strict as the exclusion it watches.
func TestOracleUnderMutex(t *testing.T) {
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
