package report

import "testing"

func TestSummarizeLoad(t *testing.T) {
	if SummarizeLoad(nil, 1) != nil {
		t.Fatal("no samples should give nil")
	}
	l := SummarizeLoad([]float64{100, 100, 100, 500}, 10)
	if l.Samples != 4 || l.MeanPerSec != 200 || l.PeakPerSec != 500 || l.PeakToMean != 2.5 || l.IntervalMS != 10 || l.P99PerSec != 500 {
		t.Fatalf("%+v", l)
	}
	// standard deviation of {100,100,100,500} is sqrt(30000) = 173.2
	if l.CV < 0.866 || l.CV > 0.8661 {
		t.Fatalf("cv %v, want 0.866", l.CV)
	}
}
