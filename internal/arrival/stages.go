package arrival

import (
	"errors"
	"fmt"
	"strings"
)

const stagesForm = "stages:[start=R0,]D1=R1,D2=R2,..."

func init() { Register("stages", stagesForm, parseStages) }

// parseStages reads [start=R0,]D1=R1,D2=R2,...: k6's ramping-arrival-rate
// stages, linear from the previous target (R0, default 0, for the first)
// to each stage's target over its duration, then the last target held.
func parseStages(params string) (Curve, error) {
	kvs, err := keyValues(stagesForm, params)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	return newLinear(pieces), nil
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
