package report

import "testing"

func TestNewSpread(t *testing.T) {
	s := NewSpread([]float64{5, 1, 3, 2, 4}, 1)
	if s.Median != 3 || s.Min != 1 || s.Max != 5 || len(s.Values) != 5 || s.Values[0] != 5 {
		t.Fatalf("%+v", s)
	}
	if s.CI95Lo < s.Min || s.CI95Hi > s.Max || s.CI95Lo > s.Median || s.CI95Hi < s.Median {
		t.Fatalf("interval [%v, %v] not around the median within the range", s.CI95Lo, s.CI95Hi)
	}
	if e := NewSpread([]float64{2, 4}, 1); e.Median != 3 {
		t.Fatalf("even median %v", e.Median)
	}
	if one := NewSpread([]float64{7}, 1); one.CI95Lo != 7 || one.CI95Hi != 7 {
		t.Fatalf("single value %+v", one)
	}
	if same := NewSpread([]float64{5, 1, 3, 2, 4}, 1); same.CI95Lo != s.CI95Lo || same.CI95Hi != s.CI95Hi {
		t.Fatal("same seed, different interval")
	}
}
