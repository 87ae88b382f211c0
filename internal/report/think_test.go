package report

import (
	"math"
	"testing"
)

// With a think time (Raw.ThinkMS) a scenario derives what its clients can
// offer, clients / (mean think + mean hold), and keeps it when combined:
// two segments of the same scenario run at once (clients summed) offer
// twice as much, two runs one after the other the same; without think
// time there is none. The ceiling and efficiency are unchanged by it.
func TestThinkBound(t *testing.T) {
	holds := make([]int, 100)
	for i := range holds {
		holds[i] = 5000 // 5 ms
	}
	plain := rawScenario(t, 1, holds...)
	if plain.ThinkBoundOpsPerSec != 0 {
		t.Fatalf("no think time: think bound %v", plain.ThinkBoundOpsPerSec)
	}
	s := rawScenario(t, 1, holds...)
	s.Raw.ThinkMS = 45
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	want := 4 / 0.050 // 4 clients, 45 ms + 5 ms
	if math.Abs(s.ThinkBoundOpsPerSec-want) > want*0.002 {
		t.Fatalf("think bound %v, want %v", s.ThinkBoundOpsPerSec, want)
	}
	if s.CeilingOpsPerSec != plain.CeilingOpsPerSec || s.Efficiency != plain.Efficiency {
		t.Fatalf("ceiling %v efficiency %v with think time, %v %v without", s.CeilingOpsPerSec, s.Efficiency, plain.CeilingOpsPerSec, plain.Efficiency)
	}
	for mode, factor := range map[Mode]float64{Concurrent: 2, Sequential: 1} {
		c, err := Combine(mode, []Scenario{s, s})
		if err != nil {
			t.Fatal(err)
		}
		if c.Raw.ThinkMS != 45 || math.Abs(c.ThinkBoundOpsPerSec-factor*want) > want*0.002 {
			t.Errorf("mode %v: think_ms %v, think bound %v; want 45 and %v", mode, c.Raw.ThinkMS, c.ThinkBoundOpsPerSec, factor*want)
		}
	}
}
