package report

import (
	"math"
	"testing"
)

func TestNewSpread(t *testing.T) {
	s := NewSpread([]float64{5, 1, 3, 2, 4})
	if s.Median != 3 || s.Min != 1 || s.Max != 5 || len(s.Values) != 5 || s.Values[0] != 5 {
		t.Fatalf("%+v", s)
	}
	// 5 values cannot give a 95 % interval: [min, max] at 1 - 2^-4.
	if s.CI95Lo != 1 || s.CI95Hi != 5 || s.CIConfidence != 0.9375 {
		t.Fatalf("interval [%v, %v] at %v, want [1, 5] at 0.9375", s.CI95Lo, s.CI95Hi, s.CIConfidence)
	}
	if e := NewSpread([]float64{2, 4}); e.Median != 3 || e.CIConfidence != 0.5 {
		t.Fatalf("even median %+v", e)
	}
	if one := NewSpread([]float64{7}); one.CI95Lo != 7 || one.CI95Hi != 7 || one.CIConfidence != 0 {
		t.Fatalf("single value %+v", one)
	}
}

// MedianCI's interval is benchstat's order-statistic one from 6 values on:
// for n = 6 at 95 % that is [min, max] (confidence 1 - 2/64), for n = 10 it
// is [x(2), x(9)] (confidence 0.9785).
func TestMedianCI(t *testing.T) {
	for _, c := range []struct {
		xs             []float64
		med, lo, hi, c float64
	}{
		{[]float64{3, 1, 2}, 2, 1, 3, 0.75},
		{[]float64{6, 1, 5, 2, 4, 3}, 3.5, 1, 6, 0.96875},
		{[]float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 5.5, 2, 9, 0.978515625},
	} {
		med, lo, hi, conf := MedianCI(c.xs, 0.95)
		if med != c.med || lo != c.lo || hi != c.hi || math.Abs(conf-c.c) > 1e-9 {
			t.Errorf("MedianCI(%v) = %v [%v, %v] at %v, want %v [%v, %v] at %v", c.xs, med, lo, hi, conf, c.med, c.lo, c.hi, c.c)
		}
	}
	xs := []float64{3, 1, 2}
	MedianCI(xs, 0.95)
	if xs[0] != 3 {
		t.Fatal("MedianCI sorted its input")
	}
}
