package engine

import (
	"math"
	"sort"
	"time"

	"github.com/lockbench/lockbench/internal/report"
)

// summarizeLoad turns per-interval rates into a ServerLoad (nil when empty).
func summarizeLoad(rates []float64, interval time.Duration) *report.ServerLoad {
	if len(rates) == 0 {
		return nil
	}
	s := append([]float64(nil), rates...)
	sort.Float64s(s)
	var sum, sq float64
	for _, r := range s {
		sum += r
	}
	mean := sum / float64(len(s))
	for _, r := range s {
		sq += (r - mean) * (r - mean)
	}
	l := &report.ServerLoad{
		IntervalMS: float64(interval) / float64(time.Millisecond), Samples: len(s),
		MeanPerSec: mean, PeakPerSec: s[len(s)-1],
		P99PerSec: s[min(len(s)-1, int(math.Ceil(0.99*float64(len(s))))-1)],
	}
	if mean > 0 {
		l.PeakToMean = l.PeakPerSec / mean
		l.CV = math.Sqrt(sq/float64(len(s))) / mean
	}
	return l
}
