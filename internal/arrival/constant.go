package arrival

import "math"

// constant is a rate R that never changes: arrival n at n/R (wrk2 -R, k6
// constant-arrival-rate, vegeta's ConstantPacer). It has no name of its
// own: Parse reads a bare rate as one (Constant).
type constant float64

func (r constant) Rate(float64) float64  { return float64(r) }
func (r constant) Cum(t float64) float64 { return float64(r) * t }
func (r constant) MaxRate() float64      { return float64(r) }
func (r constant) Inv(n float64) float64 {
	if r <= 0 {
		return math.Inf(1)
	}
	return n / float64(r)
}
