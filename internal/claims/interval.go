package claims

import (
	"fmt"

	"github.com/lockbench/lockbench/internal/report"
)

// Confidence is the confidence level performance rows ask for.
const Confidence = 0.95

// Interval is the median of one figure over the repeats of a performance
// experiment with a confidence interval of that median.
type Interval struct {
	// N is the number of repeats; Values the figure of each, in run order.
	N      int       `json:"n"`
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	Lo     float64   `json:"lo"`
	Hi     float64   `json:"hi"`
	// Confidence is the interval's real confidence (0..1): at least 0.95
	// for an order-statistic interval, 1 - 2^(1-n) for [min, max].
	Confidence float64 `json:"confidence"`
	// MinMax is true when n is too small for a 95 % interval (n < 6):
	// [Lo, Hi] is then the sample's [min, max], whose confidence as an
	// interval of the median is only 1 - 2^(1-n) (75 % for n = 3).
	MinMax bool `json:"min_max,omitempty"`
}

// NewInterval computes the median of values and the order-statistic
// confidence interval of the median at 95 % (report.MedianCI, as
// benchstat computes it). With fewer values than that needs (n < 6) the
// interval is [min, max] with its real confidence 1 - 2^(1-n).
func NewInterval(values []float64) Interval {
	iv := Interval{N: len(values), Values: append([]float64(nil), values...)}
	iv.Median, iv.Lo, iv.Hi, iv.Confidence = report.MedianCI(values, Confidence)
	iv.MinMax = len(values) > 0 && iv.Confidence < Confidence
	return iv
}

// Format writes the interval with f formatting each bound, as
// "4.8x [4.1x, 5.6x]"; Note gives its confidence and size.
func (iv Interval) Format(f func(float64) string) string {
	return fmt.Sprintf("%s [%s, %s]", f(iv.Median), f(iv.Lo), f(iv.Hi))
}

// Note is "(95 %, n=6)", or "(min-max, 75 %, n=3)" for a [min, max].
func (iv Interval) Note() string {
	c := pct(iv.Confidence)
	if iv.MinMax {
		return fmt.Sprintf("(min-max, %s %%, n=%d)", c, iv.N)
	}
	return fmt.Sprintf("(%s %%, n=%d)", c, iv.N)
}

// pairedRatios returns num[k] / den[k] for each repeat k: the ratio of two
// strategies measured in the same run, repeat by repeat (a zero
// denominator gives +Inf, as ratio does).
func pairedRatios(num, den []float64) []float64 {
	if len(num) != len(den) {
		panic(fmt.Sprintf("claims: %d numerators, %d denominators", len(num), len(den)))
	}
	out := make([]float64, len(num))
	for k := range num {
		out[k] = ratio(num[k], den[k])
	}
	return out
}

// tri is a three-valued test of an interval against a rule: the whole
// interval meets it (yes), none of it does (no), or it straddles the
// threshold (maybe). Several tests combine by Kleene logic.
type tri int8

const (
	no tri = iota
	maybe
	yes
)

// atLeast tests iv >= t.
func atLeast(iv Interval, t float64) tri {
	switch {
	case iv.Lo >= t:
		return yes
	case iv.Hi < t:
		return no
	}
	return maybe
}

// atMost tests iv <= t.
func atMost(iv Interval, t float64) tri {
	switch {
	case iv.Hi <= t:
		return yes
	case iv.Lo > t:
		return no
	}
	return maybe
}

// above tests iv > t.
func above(iv Interval, t float64) tri {
	switch {
	case iv.Lo > t:
		return yes
	case iv.Hi <= t:
		return no
	}
	return maybe
}

// below tests iv < t.
func below(iv Interval, t float64) tri {
	switch {
	case iv.Hi < t:
		return yes
	case iv.Lo >= t:
		return no
	}
	return maybe
}

// within tests lo <= iv <= hi.
func within(iv Interval, lo, hi float64) tri {
	switch {
	case iv.Lo >= lo && iv.Hi <= hi:
		return yes
	case iv.Hi < lo || iv.Lo > hi:
		return no
	}
	return maybe
}

// and is yes when every test is, no when any is.
func and(ts ...tri) tri {
	out := yes
	for _, t := range ts {
		out = min(out, t)
	}
	return out
}

// atLeastOf is the rule "at least k of the tests hold": yes when k are
// yes, no when fewer than k could be (yes + maybe < k).
func atLeastOf(k int, ts ...tri) tri {
	y, m := 0, 0
	for _, t := range ts {
		switch t {
		case yes:
			y++
		case maybe:
			m++
		}
	}
	switch {
	case y >= k:
		return yes
	case y+m < k:
		return no
	}
	return maybe
}

// verdict maps a test to the row's verdict.
func (t tri) verdict() Verdict {
	switch t {
	case yes:
		return Reproduced
	case no:
		return NotReproduced
	}
	return Inconclusive
}
