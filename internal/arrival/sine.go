package arrival

import (
	"errors"
	"fmt"
	"math"
)

const sineForm = "sine:mean=R,amp=A,period=P"

func init() { Register("sine", sineForm, parseSine) }

// sine is R + A*sin(2*pi*t/P), 0 <= A <= R, P > 0 (vegeta's SinePacer,
// without its start phase). It has no end.
type sine struct{ mean, amp, period float64 }

func (s sine) Rate(t float64) float64 { return s.mean + s.amp*math.Sin(2*math.Pi*t/s.period) }
func (s sine) MaxRate() float64       { return s.mean + s.amp }

func (s sine) Cum(t float64) float64 {
	w := 2 * math.Pi / s.period
	return s.mean*t + s.amp/w*(1-math.Cos(w*t))
}

// Inv inverts Cum by bisection: Cum(t) lies between mean*t and
// mean*t + amp*period/pi, which brackets t.
func (s sine) Inv(n float64) float64 {
	lo := max(0, (n-s.amp*s.period/math.Pi)/s.mean)
	hi := n / s.mean
	for i := 0; i < 200 && hi-lo > 1e-10; i++ {
		mid := (lo + hi) / 2
		if s.Cum(mid) >= n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// parseSine reads mean=R,amp=A,period=P.
func parseSine(params string) (Curve, error) {
	m, err := named(sineForm, params, "mean", "amp", "period")
	if err != nil {
		return nil, err
	}
	mean, err1 := parseRate("mean", m["mean"])
	amp, err2 := parseRate("amp", m["amp"])
	period, err3 := parseSpan("period", m["period"])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	switch {
	case mean == 0:
		return nil, fmt.Errorf("mean=%s: want a mean above 0", m["mean"])
	case amp > mean:
		return nil, fmt.Errorf("amp=%s is above mean=%s: the rate would go negative (want 0 <= amp <= mean)", m["amp"], m["mean"])
	case mean+amp > MaxRate:
		return nil, fmt.Errorf("mean + amp is above %d ops/s", MaxRate)
	}
	return sine{mean: mean, amp: amp, period: period}, nil
}
