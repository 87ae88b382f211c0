package metrics

import (
	"sync"
	"testing"
)

// A semaphore of 3 permits (SetPermits): holders up to 3 are no
// violation, the entry that makes 4 is one, a 5th inside the same episode
// is none, and after the count falls back to 3 the next 4th is another:
// exactly 2 capacity violations, at most 5 holders, no overlap, no
// report to the entrant, and the holder registry judges nothing. Readers
// take permits as writers do. The same entries on an exclusive lock
// (permits 1) are overlaps, as before.
func TestOracleCapacity(t *testing.T) {
	o := NewOracle(2)
	o.SetPermits(3)
	for i := 0; i < 3; i++ {
		if o.Enter(0) {
			t.Fatalf("entry %d reported an overlap", i+1)
		}
	}
	if o.Capacity() != 0 || o.MaxHolders() != 3 {
		t.Fatalf("3 holders of 3 permits: capacity %d, max %d; want 0, 3", o.Capacity(), o.MaxHolders())
	}
	o.EnterRead(0) // the 4th: a violation
	o.Enter(0)     // the 5th: the same episode
	if o.Capacity() != 1 || o.MaxHolders() != 5 {
		t.Fatalf("5 holders: capacity %d, max %d; want 1, 5", o.Capacity(), o.MaxHolders())
	}
	o.Leave(0)
	o.LeaveRead(0) // back to 3
	o.Enter(0)     // a 4th again: a new episode
	o.Enter(1)     // another lock: 1 holder
	if o.Capacity() != 2 || o.MaxHolders() != 5 || o.Overlaps() != 0 {
		t.Fatalf("capacity %d, max %d, overlaps %d; want 2, 5, 0", o.Capacity(), o.MaxHolders(), o.Overlaps())
	}
	if g := o.Acquired(0, 1); g != 0 || o.Acquired(0, 2) != 0 || o.Releasing(0, 1) || o.HeldByAnother(0, 1) || o.TakenSince(0, g) {
		t.Fatal("the holder registry judged a semaphore's holders")
	}

	x := NewOracle(1)
	x.SetPermits(1)
	x.Enter(0)
	if !x.Enter(0) || x.Overlaps() != 1 || x.Capacity() != 0 || x.MaxHolders() != 0 {
		t.Fatalf("exclusive lock: overlaps %d, capacity %d, max %d; want 1, 0, 0", x.Overlaps(), x.Capacity(), x.MaxHolders())
	}
}

// 16 goroutines each enter and leave one lock of 2 permits 1000 times:
// the count of episodes is not known, but max holders never exceeds the
// 16 and capacity violations never exceed the entries that found the
// lock full.
func TestOracleCapacityConcurrent(t *testing.T) {
	o := NewOracle(1)
	o.SetPermits(2)
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				o.Enter(0)
				o.Leave(0)
			}
		}()
	}
	wg.Wait()
	if o.MaxHolders() > 16 || o.MaxHolders() < 1 || o.Capacity() > 16000 || o.Overlaps() != 0 {
		t.Fatalf("max %d, capacity %d, overlaps %d", o.MaxHolders(), o.Capacity(), o.Overlaps())
	}
	if o.slot(0).holders.Load() != 0 {
		t.Fatal("holders left inside")
	}
}
