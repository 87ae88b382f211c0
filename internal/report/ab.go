package report

import (
	"math"

	"golang.org/x/perf/benchmath"
)

// Verdicts of an A/B figure (Decide).
const (
	Same      = "same"      // the interval lies within ±threshold of 1
	Better    = "better"    // the interval lies beyond the threshold, the good way
	Worse     = "worse"     // the interval lies beyond the threshold, the bad way
	Undecided = "undecided" // the interval straddles a threshold (or is not known yet)
	NA        = "n/a"       // a side did not measure the figure
)

// Decision is one figure of an interleaved A/B comparison: the median of
// the per-round ratios new/base with its confidence interval, and the
// verdict it supports.
type Decision struct {
	// N is the rounds whose both sides measured the figure.
	N int
	// BaseMedian and NewMedian are each side's median over those rounds.
	BaseMedian, NewMedian float64
	// Ratio is the median of the per-round ratios new/base; Lo and Hi
	// bound it at Confidence (±Inf while N is too small for an interval
	// at that level: 6 rounds at 95 %, 8 at 99 %).
	Ratio, Lo, Hi, Confidence float64
	// Verdict is Same, Better, Worse, Undecided or NA.
	Verdict string
}

// Decide compares one figure measured in rounds that ran the baseline and
// the candidate back to back, in random order: base[i] and cur[i] are
// round i's (0 or NaN: not measured, the round is left out). Each round's
// ratio cur/base pairs the two sides under the same machine state, so a
// drift of the machine's speed between rounds cancels (the randomised,
// paired design of Kalibera and Jones, "Rigorous Benchmarking in
// Reasonable Time", ISMM 2013, who report a ratio with its confidence
// interval). The interval is the distribution-free one of the median
// from order statistics (the sign test's; golang.org/x/perf/benchmath's
// AssumeNothing, as benchstat), at confidence. The verdict is a
// three-way decision with an indifference zone of ±threshold, in the
// manner of an equivalence test: Worse when the whole interval lies
// beyond the threshold on the bad side (below 1-threshold when higher is
// better, above 1+threshold otherwise), Better beyond it on the good
// side, Same when the whole interval lies within 1±threshold, else
// Undecided: more rounds narrow the interval.
func Decide(base, cur []float64, higherBetter bool, threshold, confidence float64) Decision {
	var ratios, bs, cs []float64
	for i := range min(len(base), len(cur)) {
		b, c := base[i], cur[i]
		if !(b > 0) || !(c > 0) || math.IsInf(b, 0) || math.IsInf(c, 0) {
			continue
		}
		ratios = append(ratios, c/b)
		bs, cs = append(bs, b), append(cs, c)
	}
	d := Decision{N: len(ratios), Confidence: confidence, Lo: math.Inf(-1), Hi: math.Inf(1), Verdict: NA}
	if d.N == 0 {
		return d
	}
	th := benchmath.DefaultThresholds
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(ratios, &th), confidence)
	d.Ratio, d.Lo, d.Hi = sum.Center, sum.Lo, sum.Hi
	d.BaseMedian = benchmath.AssumeNothing.Summary(benchmath.NewSample(bs, &th), confidence).Center
	d.NewMedian = benchmath.AssumeNothing.Summary(benchmath.NewSample(cs, &th), confidence).Center
	low, high := d.Hi < 1-threshold, d.Lo > 1+threshold
	switch {
	case math.IsInf(d.Lo, 0) || math.IsInf(d.Hi, 0):
		d.Verdict = Undecided
	case (low && higherBetter) || (high && !higherBetter):
		d.Verdict = Worse
	case low || high:
		d.Verdict = Better
	case d.Lo >= 1-threshold && d.Hi <= 1+threshold:
		d.Verdict = Same
	default:
		d.Verdict = Undecided
	}
	return d
}
