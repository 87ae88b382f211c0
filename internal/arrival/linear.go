package arrival

import (
	"math"
	"sort"
)

// linear is a piecewise-linear rate (ramp, stages): consecutive pieces
// from t = 0, then the last piece's end rate held from end on.
type linear struct {
	segs []seg
	end  float64 // the pieces' total length, s
	cEnd float64 // Cum(end)
	hold float64 // the rate from end on
}

// seg is one linear piece: from t0 for d s, the rate from r0 to r1; c0 is
// Cum(t0).
type seg struct{ t0, d, r0, r1, c0 float64 }

func (s seg) total() float64 { return (s.r0 + s.r1) / 2 * s.d }

// newLinear builds a piecewise-linear curve from consecutive pieces (d s
// from r0 to r1 each; at least one), holding the last piece's end rate.
func newLinear(pieces []seg) *linear {
	l := &linear{}
	t, c := 0.0, 0.0
	for _, p := range pieces {
		p.t0, p.c0 = t, c
		l.segs = append(l.segs, p)
		t += p.d
		c += p.total()
		l.hold = p.r1
	}
	l.end, l.cEnd = t, c
	return l
}

// Length is the pieces' total length, s.
func (l *linear) Length() float64 { return l.end }

func (l *linear) Rate(t float64) float64 {
	if t >= l.end {
		return l.hold
	}
	p := l.segs[l.segAt(t)]
	return p.r0 + (p.r1-p.r0)*(t-p.t0)/p.d
}

func (l *linear) MaxRate() float64 {
	m := l.hold
	for _, p := range l.segs {
		m = max(m, p.r0, p.r1)
	}
	return m
}

// segAt is the index of the piece holding t (0 <= t < end).
func (l *linear) segAt(t float64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].t0+l.segs[i].d > t })
	return min(i, len(l.segs)-1)
}

func (l *linear) Cum(t float64) float64 {
	if t >= l.end {
		return l.cEnd + l.hold*(t-l.end)
	}
	p := l.segs[l.segAt(t)]
	tau := t - p.t0
	return p.c0 + p.r0*tau + (p.r1-p.r0)/(2*p.d)*tau*tau
}

func (l *linear) Inv(n float64) float64 {
	if n > l.cEnd {
		if l.hold <= 0 {
			return math.Inf(1)
		}
		return l.end + (n-l.cEnd)/l.hold
	}
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].c0+l.segs[i].total() >= n })
	i = min(i, len(l.segs)-1)
	p := l.segs[i]
	// Solve a*tau^2 + b*tau = m for the smallest tau >= 0, in the form
	// stable for a of either sign (and a = 0).
	m := n - p.c0
	a, b := (p.r1-p.r0)/(2*p.d), p.r0
	den := b + math.Sqrt(max(b*b+4*a*m, 0))
	if den <= 0 {
		return p.t0
	}
	return p.t0 + min(max(2*m/den, 0), p.d)
}
