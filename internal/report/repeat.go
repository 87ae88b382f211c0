package report

import (
	"math/rand/v2"
	"sort"
)

// Spread summarises one figure over the repeats of a scenario.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CI95Lo and CI95Hi bound a 95 % bootstrap interval of the median
	// (1,000 resamples with replacement).
	CI95Lo float64 `json:"ci95_lo"`
	CI95Hi float64 `json:"ci95_hi"`
	// Values are the figure of each repeat, in run order.
	Values []float64 `json:"values"`
}

// Repeats is the spread of a scenario run --repeat times, each on fresh
// keys; the scenario's other fields are those of the run with the median
// ops/s.
type Repeats struct {
	N         int    `json:"n"`
	OpsPerSec Spread `json:"ops_per_sec"`
	P99MS     Spread `json:"p99_ms"`
}

// NewSpread computes the median, range and bootstrap interval of xs; seed
// makes the resampling repeatable.
func NewSpread(xs []float64, seed uint64) Spread {
	s := Spread{Values: append([]float64(nil), xs...)}
	if len(xs) == 0 {
		return s
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	s.Min, s.Max, s.Median = sorted[0], sorted[len(sorted)-1], median(sorted)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	meds := make([]float64, 1000)
	buf := make([]float64, len(xs))
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(len(xs))]
		}
		sort.Float64s(buf)
		meds[i] = median(buf)
	}
	sort.Float64s(meds)
	s.CI95Lo, s.CI95Hi = meds[24], meds[974]
	return s
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
