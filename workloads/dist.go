package workloads

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Dist is a distribution of durations: the critical-section times of
// --work and the think times of --think. Where each comes from:
//
//   - fixed ("80ms"): the constant pause of a load script (k6's
//     sleep(1) between iterations) or a fixed critical section;
//   - uniform ("uniform:10ms-40ms"): k6's sleep(randomIntBetween(a, b))
//     and JMeter's Uniform Random Timer, every value in the range alike;
//   - lognormal ("lognormal:median=5ms,p99=80ms"): the long-tailed service
//     times measured of real requests (most short, a few very long),
//     given by the two figures a reader knows, the median and the p99;
//   - exponential ("exp:mean=20ms"): the think time of closed queueing
//     models and TPC-C (whose think times are drawn from a negative
//     exponential distribution, clause 5.2.5.4): memoryless, so the
//     moments at which idle clients come back form a Poisson process.
type Dist struct {
	kind     string // "fixed", "uniform", "lognormal", "exp"
	a, b     time.Duration
	mu, sigm float64 // lognormal of ns
	spec     string
}

// Fixed is the distribution that always gives d.
func Fixed(d time.Duration) Dist { return Dist{kind: "fixed", a: d, spec: d.String()} }

// ParseDist reads --work and --think: a fixed duration ("80ms"),
// "uniform:10ms-40ms", "lognormal:median=5ms,p99=80ms" (a long tail:
// median and 99th percentile given, sigma = ln(p99/median) / 2.326), or
// "exp:mean=20ms" (exponential with that mean, drawn up to 10 x the mean).
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	kind, rest, has := strings.Cut(s, ":")
	if !has {
		d, err := time.ParseDuration(s)
		if err != nil {
			return Dist{}, fmt.Errorf("%q is not a duration, uniform:MIN-MAX, lognormal:median=D,p99=D or exp:mean=D", s)
		}
		if d < 0 {
			return Dist{}, fmt.Errorf("%q is negative", s)
		}
		return Fixed(d), nil
	}
	switch kind {
	case "uniform":
		lo, hi, ok := strings.Cut(rest, "-")
		a, err1 := time.ParseDuration(lo)
		b, err2 := time.ParseDuration(hi)
		if !ok || err1 != nil || err2 != nil || a < 0 || b < a {
			return Dist{}, fmt.Errorf("%q: want uniform:MIN-MAX with 0 <= MIN <= MAX, like uniform:10ms-40ms", s)
		}
		return Dist{kind: "uniform", a: a, b: b, spec: s}, nil
	case "lognormal":
		var med, p99 time.Duration
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			d, err := time.ParseDuration(v)
			if err != nil {
				return Dist{}, fmt.Errorf("%q: %s=%q is not a duration", s, k, v)
			}
			switch k {
			case "median":
				med = d
			case "p99":
				p99 = d
			default:
				return Dist{}, fmt.Errorf("%q: unknown parameter %q (median, p99)", s, k)
			}
		}
		if med <= 0 || p99 <= 0 {
			return Dist{}, fmt.Errorf("%q: give both median=D and p99=D", s)
		}
		if p99 < med {
			return Dist{}, fmt.Errorf("%q: want median <= p99", s)
		}
		mu := math.Log(float64(med))
		return Dist{kind: "lognormal", mu: mu, sigm: (math.Log(float64(p99)) - mu) / 2.3263478740408408, spec: s, a: med, b: p99}, nil
	case "exp":
		k, v, _ := strings.Cut(rest, "=")
		if k != "mean" || strings.Contains(v, ",") {
			return Dist{}, fmt.Errorf("%q: want exp:mean=D, like exp:mean=20ms", s)
		}
		m, err := time.ParseDuration(v)
		if err != nil {
			return Dist{}, fmt.Errorf("%q: mean=%q is not a duration", s, v)
		}
		if m <= 0 {
			return Dist{}, fmt.Errorf("%q: want mean > 0, got %v", s, m)
		}
		return Dist{kind: "exp", a: m, spec: s}, nil
	}
	return Dist{}, fmt.Errorf("%q: unknown distribution %q (a duration, uniform:, lognormal:, exp:)", s, kind)
}

// ExpCap is how far an exponential draw goes, in means: a draw beyond it
// gives ExpCap x mean (one draw in e^10, about 22,000; the mean falls by
// a factor e^-10, 0.005 %).
const ExpCap = 10

// Sample draws one time. Lognormal draws are capped at 100 x p99,
// exponential ones at ExpCap x the mean. A fixed time draws nothing from
// rng.
func (d Dist) Sample(rng *rand.Rand) time.Duration {
	switch d.kind {
	case "uniform":
		if d.b == d.a {
			return d.a
		}
		return d.a + time.Duration(rng.Int64N(int64(d.b-d.a)+1))
	case "lognormal":
		v := math.Exp(d.mu + d.sigm*rng.NormFloat64())
		return time.Duration(min(v, 100*float64(d.b)))
	case "exp":
		return time.Duration(min(rng.ExpFloat64(), ExpCap) * float64(d.a))
	}
	return d.a
}

// Mean is the distribution's mean (before the caps of Sample).
func (d Dist) Mean() time.Duration {
	switch d.kind {
	case "uniform":
		return (d.a + d.b) / 2
	case "lognormal":
		return time.Duration(math.Exp(d.mu + d.sigm*d.sigm/2))
	}
	return d.a
}

// Max is the largest time the distribution gives (for lognormal and
// exponential, the cap).
func (d Dist) Max() time.Duration {
	switch d.kind {
	case "uniform":
		return d.b
	case "lognormal":
		return 100 * d.b
	case "exp":
		return ExpCap * d.a
	}
	return d.a
}

// IsZero reports whether every sample is 0.
func (d Dist) IsZero() bool { return d.Max() == 0 }

// String is the spec it was parsed from.
func (d Dist) String() string {
	if d.spec == "" {
		return "0s"
	}
	return d.spec
}
