package arrival

import (
	"math"
	"strings"
	"testing"
)

// step is a shape added the way a new one is: one Curve type and a
// Register call (here from the test, for step:rate=R,at=D: 0, then R from
// D on).
type step struct{ rate, at float64 }

func (s step) Rate(t float64) float64 {
	if t < s.at {
		return 0
	}
	return s.rate
}
func (s step) Cum(t float64) float64 { return s.rate * max(0, t-s.at) }
func (s step) Inv(n float64) float64 { return s.at + n/s.rate }
func (s step) MaxRate() float64      { return s.rate }

func TestRegisterShape(t *testing.T) {
	Register("step", "step:rate=R,at=D", func(params string) (Curve, error) {
		m, err := named("step:rate=R,at=D", params, "rate", "at")
		if err != nil {
			return nil, err
		}
		r, err := parseRate("rate", m["rate"])
		if err != nil {
			return nil, err
		}
		at, err := parseSpan("at", m["at"])
		if err != nil {
			return nil, err
		}
		return step{rate: r, at: at}, nil
	})
	defer delete(shapes, "step")
	sh := mustParse(t, "step:rate=100,at=2s")
	if sh.Kind() != "step" || sh.IsConstant() || sh.Length() != 0 || sh.MaxRate() != 100 {
		t.Errorf("kind %q, constant %v, length %v, max %v", sh.Kind(), sh.IsConstant(), sh.Length(), sh.MaxRate())
	}
	if sh.Due(2) != 1 || sh.Due(3) != 100 || sh.Inv(50) != 2.5 || sh.Mean(0, 4) != 50 {
		t.Errorf("Due(2) %d, Due(3) %d, Inv(50) %v, Mean(0, 4) %v", sh.Due(2), sh.Due(3), sh.Inv(50), sh.Mean(0, 4))
	}
	half := sh.Scale(0.5)
	if half.String() != "step:rate=100,at=2s x0.5" || half.Due(4) != 100 || half.Inv(50) != 3 {
		t.Errorf("scaled: %q, Due(4) %d, Inv(50) %v", half.String(), half.Due(4), half.Inv(50))
	}
	_, err := Parse("step:rate=100")
	if err == nil || err.Error() != "step: at missing: want step:rate=R,at=D" {
		t.Errorf("Parse without at: %v", err)
	}
	_, err = Parse("zigzag:a=1")
	want := `unknown shape "zigzag" (want a rate in ops/s, ramp:from=R1,to=R2,over=D, sine:mean=R,amp=A,period=P, stages:[start=R0,]D1=R1,D2=R2,... or step:rate=R,at=D)`
	if err == nil || err.Error() != want {
		t.Errorf("unknown shape: %v\nwant %s", err, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of a name did not panic")
		}
	}()
	Register("ramp", rampForm, parseRamp)
}

// The built-in shapes' kinds, their ends, and the zero Shape (a rate of 0).
func TestKinds(t *testing.T) {
	for spec, kind := range map[string]string{"50": "constant", "ramp:from=1,to=2,over=3s": "ramp",
		"sine:mean=2,amp=1,period=1s": "sine", "stages:1s=5,2s=0": "stages"} {
		sh := mustParse(t, spec)
		if sh.Kind() != kind || sh.IsConstant() != (kind == "constant") || sh.Scale(0.25).Kind() != kind {
			t.Errorf("%s: kind %q, constant %v", spec, sh.Kind(), sh.IsConstant())
		}
	}
	if got := mustParse(t, "stages:1s=5,2s=0").Scale(0.5).Length(); got != 3 {
		t.Errorf("scaled stages' length %v, want 3", got)
	}
	var zero Shape
	if zero.Rate(1) != 0 || zero.Due(5) != 1 || !math.IsInf(zero.Inv(1), 1) || zero.Length() != 0 {
		t.Errorf("zero Shape: rate %v, due %d, inv %v", zero.Rate(1), zero.Due(5), zero.Inv(1))
	}
	if _, err := Parse("-5"); err == nil || !strings.HasPrefix(err.Error(), "want a rate in ops/s, ramp:") {
		t.Errorf("Parse(-5): %v", err)
	}
}
