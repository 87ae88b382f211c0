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
// Each shape is one small type, a Curve (its rate, the rate's integral,
// that integral's inverse and its highest rate), in a file of its own:
// constant.go, ramp.go, sine.go, stages.go (ramp and stages share the
// piecewise-linear curve of linear.go). A named shape's file registers
// its name, its form and its parameter parser (Register) from init; Parse
// finds it by the name before the colon. Shape wraps a Curve with what
// every shape shares: the text it was parsed from, arrivals due, mean
// rates and scaling. Adding a shape is one file: a Curve and a Register
// call.
//
// Sources: k6 ramping-arrival-rate
// (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/ramping-arrival-rate/),
// vegeta's pacers (https://github.com/tsenart/vegeta, lib/pacer.go:
// the Pacer interface, ConstantPacer, LinearPacer, SinePacer), wrk2's
// constant throughput (https://github.com/giltene/wrk2).
package arrival

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxRate is the highest rate a shape may reach, ops/s (as --rate's
// constant).
const MaxRate = 10_000_000

// Curve is one shape's arrival rate over time, t in s since the
// scenario's start. Shape calls Rate with t >= 0, Cum with t > 0 and Inv
// with n > 0. A Curve does not change once built, so its methods are safe
// for concurrent use.
type Curve interface {
	// Rate is the rate at t, ops/s (never negative).
	Rate(t float64) float64
	// Cum is the integral of Rate over [0, t]: the arrivals expected by t.
	Cum(t float64) float64
	// Inv is the inverse of Cum: the first t at which Cum(t) reaches n;
	// +Inf when it never does (the rate stays 0 from some time on).
	Inv(n float64) float64
	// MaxRate is the highest rate the curve reaches, ops/s.
	MaxRate() float64
}

// Finite is a Curve with an end, after which it holds its last rate;
// Length is how long it lasts, s. A Curve that is not Finite has no end.
type Finite interface {
	Curve
	Length() float64
}

// shape is a registered named shape.
type shape struct {
	form  string
	parse func(params string) (Curve, error)
}

var shapes = map[string]shape{}

// Register adds the shape name: Parse reads "name:params" (also "name"
// alone, params "") with parse, prefixing its errors with "name: "; form
// is the shape's syntax (name:key=V,...) as error messages show it. It
// panics on an empty name, one with a colon, or one already registered;
// call it from an init function.
func Register(name, form string, parse func(params string) (Curve, error)) {
	if name == "" || strings.Contains(name, ":") {
		panic(fmt.Sprintf("arrival: bad shape name %q", name))
	}
	if _, dup := shapes[name]; dup {
		panic(fmt.Sprintf("arrival: shape %q registered twice", name))
	}
	shapes[name] = shape{form: form, parse: parse}
}

// Shape is an arrival rate over time: a Curve with the text it was parsed
// from. Its methods are safe for concurrent use (a Shape does not change
// once parsed). The zero Shape is a rate of 0.
type Shape struct {
	spec string
	kind string // "constant" or the registered name
	c    Curve
}

// Constant returns the shape of a constant rate ops/s; its String is the
// rate as strconv.FormatFloat 'g' writes it.
func Constant(rate float64) *Shape {
	return &Shape{spec: strconv.FormatFloat(rate, 'g', -1, 64), kind: "constant", c: constant(rate)}
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
	name, params, hasParams := strings.Cut(s, ":")
	if def, ok := shapes[name]; ok {
		c, err := def.parse(params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &Shape{spec: s, kind: name, c: c}, nil
	}
	if hasParams {
		return nil, fmt.Errorf("unknown shape %q (want %s)", name, forms())
	}
	r, err := parseRate("rate", s)
	if err != nil {
		return nil, fmt.Errorf("want %s, not %q", forms(), s)
	}
	return Constant(r), nil
}

// forms is what Parse takes: "a rate in ops/s, F1, F2 or F3", the
// registered shapes' forms in the order of their names.
func forms() string {
	list := []string{"a rate in ops/s"}
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		list = append(list, shapes[name].form)
	}
	if len(list) == 1 {
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

func (sh *Shape) curve() Curve {
	if sh.c == nil {
		return constant(0)
	}
	return sh.c
}

// String is the shape as given to Parse (trimmed), or Constant's rate.
func (sh *Shape) String() string { return sh.spec }

// Kind is "constant" or the shape's registered name ("ramp", "sine",
// "stages").
func (sh *Shape) Kind() string { return sh.kind }

// IsConstant reports whether the rate never changes.
func (sh *Shape) IsConstant() bool { return sh.kind == "constant" }

// Length is how long the shape itself lasts, s: a ramp's over, the sum of
// the stages' durations; after it the last rate is held. 0 for a shape
// without an end (a constant, a sine).
func (sh *Shape) Length() float64 {
	if f, ok := sh.curve().(Finite); ok {
		return f.Length()
	}
	return 0
}

// Rate is the rate at t s, ops/s (t < 0: the rate at 0).
func (sh *Shape) Rate(t float64) float64 { return sh.curve().Rate(max(t, 0)) }

// MaxRate is the highest rate the shape reaches, ops/s.
func (sh *Shape) MaxRate() float64 { return sh.curve().MaxRate() }

// Cum is the integral of the rate over [0, t]: the arrivals expected by t
// s (0 for t <= 0).
func (sh *Shape) Cum(t float64) float64 {
	if t <= 0 {
		return 0
	}
	return sh.curve().Cum(t)
}

// Inv is the inverse of Cum: the first t >= 0 at which Cum(t) reaches n
// (0 for n <= 0), in s; +Inf when the shape never reaches n (its last
// rate is 0).
func (sh *Shape) Inv(n float64) float64 {
	if n <= 0 {
		return 0
	}
	return sh.curve().Inv(n)
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

// Scale returns the shape with every rate multiplied by f (> 0): an
// execution segment's share of the arrivals (internal/segment), so that N
// shapes scaled by 1/N offer the whole shape's arrivals between them. Its
// String is the original's, with " x<f>" after it.
func (sh *Shape) Scale(f float64) *Shape {
	return &Shape{
		spec: sh.spec + " x" + strconv.FormatFloat(f, 'g', 6, 64),
		kind: sh.kind,
		c:    scaled{c: sh.curve(), f: f},
	}
}

// scaled is a Curve with every rate multiplied by f > 0: Cum is f times
// the original's, so the n-th arrival comes where the original's Cum
// reaches n/f.
type scaled struct {
	c Curve
	f float64
}

func (s scaled) Rate(t float64) float64 { return s.f * s.c.Rate(t) }
func (s scaled) Cum(t float64) float64  { return s.f * s.c.Cum(t) }
func (s scaled) Inv(n float64) float64  { return s.c.Inv(n / s.f) }
func (s scaled) MaxRate() float64       { return s.f * s.c.MaxRate() }

func (s scaled) Length() float64 {
	if f, ok := s.c.(Finite); ok {
		return f.Length()
	}
	return 0
}
