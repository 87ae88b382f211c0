// Package arrival describes an open loop's arrival rate over time (the
// shapes of lockbench run --rate) and places arrivals on it.
//
// A Shape is a rate r(t) in ops/s, t in s since the scenario's start
// (warm-up included: the clock of the timeline's t_s). Arrivals are placed
// by integrating it: with Cum(t) the cumulative rate (the expected
// arrivals in [0, t]), the n-th arrival (n = 0, 1, ...) is due at
// Inv(n), the first t where Cum(t) reaches n. That is wrk2's constant
// throughput (arrival n at n/R) generalised to a varying rate, as vegeta's
// LinearPacer and SinePacer and k6's ramping-arrival-rate executor place
// their hits; for Poisson arrivals the same Inv maps a unit-rate Poisson
// process onto the shape (time-rescaling: a non-homogeneous Poisson
// process of intensity r(t)).
//
// The shapes:
//
//   - a constant R: r(t) = R (wrk2 -R, k6 constant-arrival-rate);
//   - ramp:from=R1,to=R2,over=D: linear from R1 to R2 over D, then R2
//     (vegeta's LinearPacer; a k6 ramping-arrival-rate of one stage);
//   - sine:mean=R,amp=A,period=P: R + A*sin(2*pi*t/P), 0 <= A <= R, P > 0
//     (vegeta's SinePacer, without its start phase);
//   - stages:[start=R0,]D1=R1,D2=R2,...: k6's ramping-arrival-rate stages,
//     linear from the previous target (R0, default 0, for the first) to
//     each stage's target over its duration.
//
// A shape shorter than the run holds its last rate to the end: a ramp
// stays at R2, stages at their last target (0 there stops the arrivals).
//
// Sources: k6 ramping-arrival-rate
// (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/ramping-arrival-rate/),
// vegeta's pacers (https://github.com/tsenart/vegeta, lib/pacer.go:
// ConstantPacer, LinearPacer, SinePacer), wrk2's constant throughput
// (https://github.com/giltene/wrk2).
package arrival

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MaxRate is the highest rate a shape may reach, ops/s (as --rate's
// constant).
const MaxRate = 10_000_000

// Shape is an arrival rate over time; its methods are safe for concurrent
// use (a Shape does not change once parsed). The zero Shape is a rate of 0.
type Shape struct {
	spec string
	kind string // "constant", "ramp", "sine", "stages"
	// Piecewise-linear kinds (constant, ramp, stages): segs from t = 0,
	// then hold ops/s from end (Cum(end) = cEnd) on.
	segs      []seg
	end, cEnd float64
	hold      float64
	// sine
	mean, amp, period float64
}

// seg is one linear piece: from t0 for d s, the rate from r0 to r1; c0 is
// Cum(t0).
type seg struct{ t0, d, r0, r1, c0 float64 }

func (s seg) total() float64 { return (s.r0 + s.r1) / 2 * s.d }

// Constant returns the shape of a constant rate ops/s; its String is the
// rate as strconv.FormatFloat 'g' writes it.
func Constant(rate float64) *Shape {
	return &Shape{spec: strconv.FormatFloat(rate, 'g', -1, 64), kind: "constant", hold: rate}
}

// linear builds a piecewise-linear shape from consecutive pieces (d s
// from r0 to r1 each), holding the last piece's end rate.
func linear(spec, kind string, pieces []seg) *Shape {
	sh := &Shape{spec: spec, kind: kind}
	t, c := 0.0, 0.0
	for _, p := range pieces {
		p.t0, p.c0 = t, c
		sh.segs = append(sh.segs, p)
		t += p.d
		c += p.total()
		sh.hold = p.r1
	}
	sh.end, sh.cEnd = t, c
	return sh
}

// String is the shape as given to Parse (trimmed), or Constant's rate.
func (sh *Shape) String() string { return sh.spec }

// Kind is "constant", "ramp", "sine" or "stages".
func (sh *Shape) Kind() string { return sh.kind }

// IsConstant reports whether the rate never changes.
func (sh *Shape) IsConstant() bool { return sh.kind == "constant" }

// Length is how long the shape itself lasts, s: a ramp's over, the sum of
// the stages' durations; after it the last rate is held. 0 for a constant
// and a sine (which have no end).
func (sh *Shape) Length() float64 { return sh.end }

// Rate is the rate at t s, ops/s (t < 0: the rate at 0).
func (sh *Shape) Rate(t float64) float64 {
	t = max(t, 0)
	if sh.kind == "sine" {
		return sh.mean + sh.amp*math.Sin(2*math.Pi*t/sh.period)
	}
	if t >= sh.end {
		return sh.hold
	}
	p := sh.segs[sh.segAt(t)]
	return p.r0 + (p.r1-p.r0)*(t-p.t0)/p.d
}

// MaxRate is the highest rate the shape reaches, ops/s.
func (sh *Shape) MaxRate() float64 {
	if sh.kind == "sine" {
		return sh.mean + sh.amp
	}
	m := sh.hold
	for _, p := range sh.segs {
		m = max(m, p.r0, p.r1)
	}
	return m
}

// segAt is the index of the piece holding t (0 <= t < end).
func (sh *Shape) segAt(t float64) int {
	i := sort.Search(len(sh.segs), func(i int) bool { return sh.segs[i].t0+sh.segs[i].d > t })
	return min(i, len(sh.segs)-1)
}

// Cum is the integral of the rate over [0, t]: the arrivals expected by t
// s (0 for t <= 0).
func (sh *Shape) Cum(t float64) float64 {
	if t <= 0 {
		return 0
	}
	if sh.kind == "sine" {
		w := 2 * math.Pi / sh.period
		return sh.mean*t + sh.amp/w*(1-math.Cos(w*t))
	}
	if t >= sh.end {
		return sh.cEnd + sh.hold*(t-sh.end)
	}
	p := sh.segs[sh.segAt(t)]
	tau := t - p.t0
	return p.c0 + p.r0*tau + (p.r1-p.r0)/(2*p.d)*tau*tau
}

// Inv is the inverse of Cum: the first t >= 0 at which Cum(t) reaches n
// (0 for n <= 0), in s; +Inf when the shape never reaches n (its last
// rate is 0).
func (sh *Shape) Inv(n float64) float64 {
	if n <= 0 {
		return 0
	}
	if sh.kind == "sine" {
		return sh.sineInv(n)
	}
	if n > sh.cEnd {
		if sh.hold <= 0 {
			return math.Inf(1)
		}
		return sh.end + (n-sh.cEnd)/sh.hold
	}
	i := sort.Search(len(sh.segs), func(i int) bool { return sh.segs[i].c0+sh.segs[i].total() >= n })
	i = min(i, len(sh.segs)-1)
	p := sh.segs[i]
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

// sineInv inverts the sine's Cum by bisection: Cum(t) lies between
// mean*t and mean*t + amp*period/pi, which brackets t.
func (sh *Shape) sineInv(n float64) float64 {
	lo := max(0, (n-sh.amp*sh.period/math.Pi)/sh.mean)
	hi := n / sh.mean
	for i := 0; i < 200 && hi-lo > 1e-10; i++ {
		mid := (lo + hi) / 2
		if sh.Cum(mid) >= n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Due is the number of arrivals due before t s: those n = 0, 1, ... with
// Inv(n) < t, i.e. n < Cum(t), so ceil(Cum(t)) (a Cum within 1e-6 of a
// whole number counts as that number, so that float rounding does not add
// the arrival due exactly at t), and at least 1 for t > 0 (arrival 0 is
// due at 0). Due(b) - Due(a) is the arrivals due in [a, b), within one of
// the integral of the rate over it.
func (sh *Shape) Due(t float64) int64 {
	if t <= 0 {
		return 0
	}
	return max(1, int64(math.Ceil(sh.Cum(t)-1e-6)))
}

// Mean is the mean rate over [from, to] s, ops/s (the rate at from when
// to <= from).
func (sh *Shape) Mean(from, to float64) float64 {
	if to <= from {
		return sh.Rate(from)
	}
	return (sh.Cum(to) - sh.Cum(from)) / (to - from)
}

// Parse reads a shape: a constant rate (500), ramp:from=R1,to=R2,over=D,
// sine:mean=R,amp=A,period=P or stages:[start=R0,]D1=R1,D2=R2,... (see
// the package doc). Rates are ops/s, from 0 to MaxRate; durations are Go
// durations (30s, 1m30s), above 0. Errors: an unknown shape or key, a key
// missing or given twice, a value that does not parse, a negative rate,
// amp above mean, a zero period or duration, or a shape whose rate is 0
// throughout (it offers no arrival); the message shows the shape's form.
func Parse(s string) (*Shape, error) {
	s = strings.TrimSpace(s)
	name, rest, hasParams := strings.Cut(s, ":")
	switch name {
	case "ramp":
		return parseRamp(s, rest)
	case "sine":
		return parseSine(s, rest)
	case "stages":
		return parseStages(s, rest)
	}
	if hasParams {
		return nil, fmt.Errorf("unknown shape %q (want a rate in ops/s, %s, %s or %s)", name, rampForm, sineForm, stagesForm)
	}
	r, err := parseRate("rate", s)
	if err != nil {
		return nil, fmt.Errorf("want a rate in ops/s, %s, %s or %s, not %q", rampForm, sineForm, stagesForm, s)
	}
	return Constant(r), nil
}

const (
	rampForm   = "ramp:from=R1,to=R2,over=D"
	sineForm   = "sine:mean=R,amp=A,period=P"
	stagesForm = "stages:[start=R0,]D1=R1,D2=R2,..."
)

// keyValues splits "k=v,k=v" into pairs in order; errors: an item without
// "=", or an empty list.
func keyValues(form, rest string) ([][2]string, error) {
	if strings.TrimSpace(rest) == "" {
		return nil, fmt.Errorf("no parameters: want %s", form)
	}
	var out [][2]string
	for _, item := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not key=value: want %s", item, form)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

// named reads the pairs of a shape with fixed keys, each required once.
func named(form, rest string, keys ...string) (map[string]string, error) {
	kvs, err := keyValues(form, rest)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, kv := range kvs {
		known := false
		for _, k := range keys {
			known = known || k == kv[0]
		}
		if !known {
			return nil, fmt.Errorf("unknown key %q (keys: %s): want %s", kv[0], strings.Join(keys, ", "), form)
		}
		if _, dup := m[kv[0]]; dup {
			return nil, fmt.Errorf("%s is given twice: want %s", kv[0], form)
		}
		m[kv[0]] = kv[1]
	}
	var missing []string
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s missing: want %s", strings.Join(missing, " and "), form)
	}
	return m, nil
}

// parseRate reads a rate in ops/s, 0 to MaxRate.
func parseRate(key, v string) (float64, error) {
	r, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(r) || math.IsInf(r, 0):
		return 0, fmt.Errorf("%s=%s is not a rate in ops/s", key, v)
	case r < 0:
		return 0, fmt.Errorf("%s=%s: a rate cannot be negative", key, v)
	case r > MaxRate:
		return 0, fmt.Errorf("%s=%s is above %d ops/s", key, v, MaxRate)
	}
	return r, nil
}

// parseSpan reads a duration above 0, in s.
func parseSpan(key, v string) (float64, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s=%s is not a duration (like 30s or 1m)", key, v)
	case d <= 0:
		return 0, fmt.Errorf("%s=%s: want a duration above 0", key, v)
	}
	return d.Seconds(), nil
}

var errNoArrivals = errors.New("the rate is 0 throughout: no arrival would ever be offered")

func parseRamp(spec, rest string) (*Shape, error) {
	m, err := named(rampForm, rest, "from", "to", "over")
	if err != nil {
		return nil, fmt.Errorf("ramp: %w", err)
	}
	from, err1 := parseRate("from", m["from"])
	to, err2 := parseRate("to", m["to"])
	over, err3 := parseSpan("over", m["over"])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("ramp: %w", err)
	}
	if from == 0 && to == 0 {
		return nil, fmt.Errorf("ramp: %w", errNoArrivals)
	}
	return linear(spec, "ramp", []seg{{d: over, r0: from, r1: to}}), nil
}

func parseSine(spec, rest string) (*Shape, error) {
	m, err := named(sineForm, rest, "mean", "amp", "period")
	if err != nil {
		return nil, fmt.Errorf("sine: %w", err)
	}
	mean, err1 := parseRate("mean", m["mean"])
	amp, err2 := parseRate("amp", m["amp"])
	period, err3 := parseSpan("period", m["period"])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("sine: %w", err)
	}
	switch {
	case mean == 0:
		return nil, fmt.Errorf("sine: mean=%s: want a mean above 0", m["mean"])
	case amp > mean:
		return nil, fmt.Errorf("sine: amp=%s is above mean=%s: the rate would go negative (want 0 <= amp <= mean)", m["amp"], m["mean"])
	case mean+amp > MaxRate:
		return nil, fmt.Errorf("sine: mean + amp is above %d ops/s", MaxRate)
	}
	return &Shape{spec: spec, kind: "sine", mean: mean, amp: amp, period: period}, nil
}

func parseStages(spec, rest string) (*Shape, error) {
	kvs, err := keyValues(stagesForm, rest)
	if err != nil {
		return nil, fmt.Errorf("stages: %w", err)
	}
	prev := 0.0
	var pieces []seg
	var errs []error
	positive := false
	for i, kv := range kvs {
		if kv[0] == "start" {
			if i != 0 {
				errs = append(errs, errors.New("start=R0 must come first"))
				continue
			}
			r, err := parseRate("start", kv[1])
			if err != nil {
				errs = append(errs, err)
			}
			prev = r
			positive = positive || r > 0
			continue
		}
		d, err1 := parseSpan("duration", kv[0])
		if err1 != nil {
			err1 = fmt.Errorf("stage %q: %q is not a duration above 0 (each stage is DURATION=TARGET, like 30s=100)", kv[0]+"="+kv[1], kv[0])
		}
		r, err2 := parseRate("target", kv[1])
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, err)
			continue
		}
		pieces = append(pieces, seg{d: d, r0: prev, r1: r})
		prev = r
		positive = positive || r > 0
	}
	if len(errs) == 0 && len(pieces) == 0 {
		errs = append(errs, fmt.Errorf("no stage: want %s", stagesForm))
	}
	if len(errs) == 0 && !positive {
		errs = append(errs, errNoArrivals)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("stages: %w", err)
	}
	return linear(spec, "stages", pieces), nil
}

// Stage is one stage of a scenario file's stages: list (k6's {duration,
// target}): Duration as written (a Go duration), Target in ops/s as
// written.
type Stage struct{ Duration, Target string }

// StagesSpec writes stages (and a start rate, "" for none) in --rate's
// command-line form, stages:[start=R0,]D1=R1,...; Parse checks it.
func StagesSpec(start string, stages []Stage) string {
	var parts []string
	if start != "" {
		parts = append(parts, "start="+start)
	}
	for _, s := range stages {
		parts = append(parts, s.Duration+"="+s.Target)
	}
	return "stages:" + strings.Join(parts, ",")
}

// Scale returns the shape with every rate multiplied by f (> 0): an
// execution segment's share of the arrivals (internal/segment), so that N
// shapes scaled by 1/N offer the whole shape's arrivals between them. Its
// String is the original's, with " x<f>" after it.
func (sh *Shape) Scale(f float64) *Shape {
	out := *sh
	out.spec = sh.spec + " x" + strconv.FormatFloat(f, 'g', 6, 64)
	out.segs = make([]seg, len(sh.segs))
	for i, p := range sh.segs {
		p.r0, p.r1, p.c0 = p.r0*f, p.r1*f, p.c0*f
		out.segs[i] = p
	}
	out.cEnd, out.hold = sh.cEnd*f, sh.hold*f
	out.mean, out.amp = sh.mean*f, sh.amp*f
	return &out
}
