// Package thresholds parses and tests the pass/fail thresholds of
// lockbench run --fail-on (as k6's thresholds): [SCOPE:]METRIC OP VALUE,
// METRIC one of report.Metrics, OP one of < <= > >= == !=, SCOPE a glob
// over the scenario's name strategy/driver/workload/retry.
package thresholds

import (
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
)

// Safety is the shortcut for "every violation kind == 0".
const Safety = "safety"

// Ops are the comparison operators.
var Ops = []string{"<", "<=", ">", ">=", "==", "!="}

// Threshold is one parsed expression.
type Threshold struct {
	// Scope is the glob over report.Scenario.Name ("" = every scenario).
	Scope  string
	Metric report.Metric
	Op     string
	Value  float64
}

// String is the threshold's canonical text: [scope:]metric op value.
func (t Threshold) String() string {
	s := t.Metric.Name + t.Op + strconv.FormatFloat(t.Value, 'f', -1, 64)
	if t.Scope != "" {
		s = t.Scope + ":" + s
	}
	return s
}

// Holds reports whether measured op value is true.
func (t Threshold) Holds(measured float64) bool {
	switch t.Op {
	case "<":
		return measured < t.Value
	case "<=":
		return measured <= t.Value
	case ">":
		return measured > t.Value
	case ">=":
		return measured >= t.Value
	case "==":
		return measured == t.Value
	case "!=":
		return measured != t.Value
	}
	return false
}

// Matches reports whether the scenario called name (strategy/driver/
// workload/retry) is in the threshold's scope. A scope of fewer parts than
// the name matches its first parts: "atomic/*" is atomic on any driver,
// workload and retry.
func (t Threshold) Matches(name string) bool {
	return scopeMatches(t.Scope, name)
}

func scopeMatches(scope, name string) bool {
	if scope == "" {
		return true
	}
	n := strings.Count(scope, "/") + 1
	parts := strings.SplitN(name, "/", n+1)
	if len(parts) < n {
		return false
	}
	ok, err := path.Match(scope, strings.Join(parts[:n], "/"))
	return err == nil && ok
}

// Parse parses one expression, [SCOPE:]METRIC OP VALUE or [SCOPE:]safety
// (one threshold per violation kind, each == 0). Spaces may surround the
// scope, the metric, the operator and the value. Errors name the problem:
// an empty expression or scope, a scope that is not a glob or has more
// than 4 parts, an unknown metric (with the nearest name and every name),
// a missing or unknown operator, a value that is not a finite number.
func Parse(expr string) ([]Threshold, error) {
	bad := func(format string, a ...any) ([]Threshold, error) {
		return nil, fmt.Errorf("threshold %q: %s", expr, fmt.Sprintf(format, a...))
	}
	rest := strings.TrimSpace(expr)
	if rest == "" {
		return nil, fmt.Errorf("empty threshold (want [SCOPE:]METRIC OP VALUE, e.g. p99_ms<50)")
	}
	var scope string
	if sc, r, ok := strings.Cut(rest, ":"); ok {
		scope, rest = strings.TrimSpace(sc), strings.TrimSpace(r)
		switch {
		case scope == "":
			return bad("empty scope before ':' (want a glob over strategy/driver/workload/retry, e.g. atomic/*)")
		case strings.Count(scope, "/") > 3:
			return bad("scope %q has more than 4 parts (strategy/driver/workload/retry)", scope)
		case strings.ContainsAny(scope, " \t"):
			return bad("scope %q contains a space", scope)
		}
		if _, err := path.Match(scope, ""); err != nil {
			return bad("scope %q is not a valid glob: %v", scope, err)
		}
		if rest == "" {
			return bad("no metric after the scope %q (want %s:METRIC OP VALUE)", scope, scope)
		}
	}
	i := strings.IndexAny(rest, "<>=!")
	if i < 0 {
		name := strings.Fields(rest)[0] // "p99_ms 50": the metric, then no operator
		if rest == Safety {
			var ts []Threshold
			for _, k := range report.ViolationKinds {
				m, _ := report.LookupMetric(k.Key)
				ts = append(ts, Threshold{Scope: scope, Metric: m, Op: "==", Value: 0})
			}
			return ts, nil
		}
		if _, ok := report.LookupMetric(name); !ok {
			return bad("%s", unknownMetric(name))
		}
		return bad("no operator (want METRIC OP VALUE with OP one of %s, e.g. %s<50)", strings.Join(Ops, " "), name)
	}
	name := strings.TrimSpace(rest[:i])
	j := i
	for j < len(rest) && strings.IndexByte("<>=!", rest[j]) >= 0 {
		j++
	}
	op, val := rest[i:j], strings.TrimSpace(rest[j:])
	var errs []string
	m, ok := report.LookupMetric(name)
	switch {
	case name == "":
		errs = append(errs, "no metric before the operator")
	case name == Safety:
		errs = append(errs, "safety takes no operator or value (it means every violation kind == 0)")
	case !ok:
		errs = append(errs, unknownMetric(name))
	}
	if !contains(Ops, op) {
		hint := ""
		if op == "=" {
			hint = `; did you mean "=="?`
		}
		errs = append(errs, fmt.Sprintf("unknown operator %q%s (valid: %s)", op, hint, strings.Join(Ops, " ")))
	}
	v, err := strconv.ParseFloat(val, 64)
	switch {
	case val == "":
		errs = append(errs, "no value after the operator")
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		errs = append(errs, fmt.Sprintf("value %q is not a finite number", val))
	}
	if len(errs) > 0 {
		return bad("%s", strings.Join(errs, "; "))
	}
	return []Threshold{{Scope: scope, Metric: m, Op: op, Value: v}}, nil
}

func unknownMetric(name string) string {
	names := report.MetricNames()
	return fmt.Sprintf("unknown metric %q%s (metrics: %s, or safety)", name, registry.Suggest(name, names), strings.Join(names, ", "))
}

// ParseList parses every expression of exprs, each a comma-separated list
// of them (the values of repeated --fail-on flags), and returns the
// thresholds and every problem found.
func ParseList(exprs []string) ([]Threshold, []error) {
	var ts []Threshold
	var errs []error
	for _, list := range exprs {
		for _, e := range strings.Split(list, ",") {
			t, err := Parse(e)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ts = append(ts, t...)
		}
	}
	return ts, errs
}

// Unmatched returns an error for each scoped threshold that matches none
// of the scenario names.
func Unmatched(ts []Threshold, names []string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, t := range ts {
		if t.Scope == "" || seen[t.Scope] {
			continue
		}
		seen[t.Scope] = true
		found := false
		for _, n := range names {
			found = found || t.Matches(n)
		}
		if !found {
			errs = append(errs, fmt.Errorf("threshold scope %q matches no scenario of this run (scenarios: %s)", t.Scope, strings.Join(names, ", ")))
		}
	}
	return errs
}

// Evaluate tests every threshold on every scenario in its scope: one
// result per threshold x scenario, thresholds in their order, scenarios in
// theirs.
func Evaluate(ts []Threshold, scenarios []report.Scenario) []report.ThresholdResult {
	var rs []report.ThresholdResult
	for _, t := range ts {
		for _, s := range scenarios {
			name := s.Name()
			if !t.Matches(name) {
				continue
			}
			if t.Metric.Known != nil && !t.Metric.Known(s) {
				rs = append(rs, report.ThresholdResult{Expr: t.String(), Scenario: name, Clients: s.Clients, Metric: t.Metric.Name,
					Op: t.Op, Value: t.Value, NotMeasured: true})
				continue
			}
			v := t.Metric.Of(s)
			rs = append(rs, report.ThresholdResult{Expr: t.String(), Scenario: name, Clients: s.Clients, Metric: t.Metric.Name,
				Op: t.Op, Value: t.Value, Measured: v, Pass: t.Holds(v)})
		}
	}
	return rs
}

// Untested returns the thresholds no scenario was in the scope of (their
// scenarios were skipped or not reached).
func Untested(ts []Threshold, rs []report.ThresholdResult) []Threshold {
	tested := map[string]bool{}
	for _, r := range rs {
		tested[r.Expr] = true
	}
	var out []Threshold
	for _, t := range ts {
		if !tested[t.String()] {
			out = append(out, t)
		}
	}
	return out
}

// Failed counts the results that did not pass.
func Failed(rs []report.ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}

// Summary is the one-line verdict: "thresholds: 7 passed, 1 failed".
func Summary(rs []report.ThresholdResult) string {
	f := Failed(rs)
	return fmt.Sprintf("thresholds: %d passed, %d failed", len(rs)-f, f)
}

// Table writes one row per result (threshold, scenario, measured value,
// PASS or FAIL), then the Summary line.
func Table(w io.Writer, rs []report.ThresholdResult) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("threshold", "scenario", "measured", "result")
	for _, r := range rs {
		verdict := "PASS"
		if !r.Pass {
			verdict = "FAIL"
		}
		measured := strconv.FormatFloat(r.Measured, 'g', 6, 64)
		if r.NotMeasured {
			measured = "not measured"
		}
		if err := t.Append(r.Expr, ScenarioLabel(rs, r), measured, verdict); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, Summary(rs))
	return err
}

// ScenarioLabel is r's scenario name, with " @N clients" when another
// result of rs has the same threshold and name (a sweep's cell at another
// client count).
func ScenarioLabel(rs []report.ThresholdResult, r report.ThresholdResult) string {
	for _, o := range rs {
		if o.Expr == r.Expr && o.Scenario == r.Scenario && o.Clients != r.Clients {
			return fmt.Sprintf("%s @%d clients", r.Scenario, r.Clients)
		}
	}
	return r.Scenario
}

// Doc is the metric list as Markdown, one "- `name`: doc" line each.
func Doc() string {
	var b strings.Builder
	for _, m := range report.Metrics {
		fmt.Fprintf(&b, "- `%s`: %s\n", m.Name, m.Doc)
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
