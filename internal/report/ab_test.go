package report

import (
	"math"
	"testing"
)

// Decide reaches each verdict: a ratio whose interval lies beyond the
// zone on the bad side is Worse (both directions of "better"), on the
// good side Better, within the zone Same, straddling it Undecided; too
// few rounds for an interval are Undecided, unmeasured rounds are left
// out, and none measured is NA.
func TestDecide(t *testing.T) {
	series := func(n int, base, ratio, spread float64) ([]float64, []float64) {
		var b, c []float64
		for i := range n {
			f := 1 + spread*(float64(i%5)-2)/2 // ratios spread ±spread around ratio
			b = append(b, base)
			c = append(c, base*ratio*f)
		}
		return b, c
	}
	cases := []struct {
		name         string
		n            int
		ratio        float64
		spread       float64
		higherBetter bool
		want         string
	}{
		{"ops/s -20%", 10, 0.80, 0.02, true, Worse},
		{"ops/s +20%", 10, 1.20, 0.02, true, Better},
		{"ops/s same", 10, 1.00, 0.02, true, Same},
		{"ops/s -5% straddles a 5% zone", 10, 0.95, 0.02, true, Undecided},
		{"cost +20%", 10, 1.20, 0.02, false, Worse},
		{"cost -20%", 10, 0.80, 0.02, false, Better},
		{"5 rounds: no 95% interval", 5, 0.50, 0.0, true, Undecided},
		{"noisy: wide interval", 10, 0.90, 0.30, true, Undecided},
	}
	for _, c := range cases {
		b, n := series(c.n, 1000, c.ratio, c.spread)
		d := Decide(b, n, c.higherBetter, 0.05, 0.95)
		if d.Verdict != c.want || d.N != c.n {
			t.Errorf("%s: %+v, want %s", c.name, d, c.want)
		}
		if c.n >= 6 && !(d.Lo <= d.Ratio && d.Ratio <= d.Hi) {
			t.Errorf("%s: ratio %v outside its interval [%v, %v]", c.name, d.Ratio, d.Lo, d.Hi)
		}
	}
	// Unmeasured rounds (0, NaN) are left out; none measured is NA.
	b, n := series(8, 1000, 0.8, 0.01)
	b[0], n[1] = 0, math.NaN()
	if d := Decide(b, n, true, 0.05, 0.95); d.N != 6 || d.Verdict != Worse || d.BaseMedian != 1000 {
		t.Fatalf("2 of 8 unmeasured: %+v", d)
	}
	if d := Decide([]float64{0, 0}, []float64{1, 1}, true, 0.05, 0.95); d.Verdict != NA || d.N != 0 {
		t.Fatalf("none measured: %+v", d)
	}
}
