package report

import (
	"math"
	"testing"
)

// A semaphore's ceiling is its permits / the mean hold: 4 clients on one
// key of 3 permits holding 5 ms each are bounded by 3 / 5 ms = 600
// ops/s (an exclusive lock's 200), and 3 permits on 2 keys by the 4
// clients (800). Combined, permits stay 3 and max_holders is the largest
// of the parts (capacity violations add up). The invariant check takes
// the permits: 2000 holds of 1.4 ms in 1 s (2.8 s of holding) fit 3
// permits but not 1.
func TestSemaphoreCeiling(t *testing.T) {
	holds := make([]int, 100)
	for i := range holds {
		holds[i] = 5000
	}
	for _, c := range []struct {
		permits, locks int
		want           float64
	}{{0, 1, 200}, {3, 1, 600}, {3, 2, 800}} {
		s := rawScenario(t, 1, holds...)
		s.Raw.Permits, s.Raw.Locks = c.permits, c.locks
		if err := Derive(&s); err != nil {
			t.Fatal(err)
		}
		if math.Abs(s.CeilingOpsPerSec-c.want) > c.want*0.002 {
			t.Errorf("permits %d, locks %d: ceiling %.1f, want %.0f", c.permits, c.locks, s.CeilingOpsPerSec, c.want)
		}
	}
	a, b := rawScenario(t, 1, holds...), rawScenario(t, 1, holds...)
	a.Raw.Permits, b.Raw.Permits = 3, 3
	two, five := int64(2), int64(5)
	a.Violations.MaxHolders, a.Violations.CapacityViolations = &two, 0
	b.Violations.MaxHolders, b.Violations.CapacityViolations = &five, 4
	for _, mode := range []Mode{Concurrent, Sequential} {
		c, err := Combine(mode, []Scenario{a, b})
		if err != nil {
			t.Fatal(err)
		}
		if c.Raw.Permits != 3 || c.Violations.MaxHolders == nil || *c.Violations.MaxHolders != 5 || c.Violations.CapacityViolations != 4 {
			t.Errorf("mode %v: permits %d, violations %+v; want 3, max_holders 5, capacity 4", mode, c.Raw.Permits, c.Violations)
		}
	}
	if *a.Violations.MaxHolders != 2 {
		t.Fatal("Combine changed a part's max_holders")
	}
	busy := make([]int, 2000)
	for i := range busy {
		busy[i] = 1400
	}
	s := rawScenario(t, 1, busy...)
	s.Clients, s.Raw.ClientOps = 4, []int64{500, 500, 500, 500}
	r := &Run{Scenarios: []Scenario{s}}
	if err := Check(r); err == nil {
		t.Fatal("2.8 s of holding in 1 s of one exclusive lock passed the ceiling check")
	}
	r.Scenarios[0].Raw.Permits = 3
	if err := Derive(&r.Scenarios[0]); err != nil {
		t.Fatal(err)
	}
	if err := Check(r); err != nil {
		t.Fatalf("3 permits: %v", err)
	}
}
