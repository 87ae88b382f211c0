package arrival

import "errors"

const rampForm = "ramp:from=R1,to=R2,over=D"

func init() { Register("ramp", rampForm, parseRamp) }

// parseRamp reads from=R1,to=R2,over=D: linear from R1 to R2 over D, then
// R2 (vegeta's LinearPacer; a k6 ramping-arrival-rate of one stage).
func parseRamp(params string) (Curve, error) {
	m, err := named(rampForm, params, "from", "to", "over")
	if err != nil {
		return nil, err
	}
	from, err1 := parseRate("from", m["from"])
	to, err2 := parseRate("to", m["to"])
	over, err3 := parseSpan("over", m["over"])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	if from == 0 && to == 0 {
		return nil, errNoArrivals
	}
	return newLinear([]seg{{d: over, r0: from, r1: to}}), nil
}
