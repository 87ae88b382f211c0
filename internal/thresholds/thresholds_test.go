package thresholds

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

func TestThresholdParseGood(t *testing.T) {
	cases := []struct {
		expr  string
		want  string // the canonical text
		scope string
		op    string
		value float64
	}{
		{"p99_ms<50", "p99_ms<50", "", "<", 50},
		{"p99_ms <= 50", "p99_ms<=50", "", "<=", 50},
		{"ops_per_sec>1000", "ops_per_sec>1000", "", ">", 1000},
		{" ops_per_sec >= 1e3 ", "ops_per_sec>=1000", "", ">=", 1000},
		{"overlap==0", "overlap==0", "", "==", 0},
		{"errors != 3", "errors!=3", "", "!=", 3},
		{"efficiency>0.5", "efficiency>0.5", "", ">", 0.5},
		{"jain >= -1", "jain>=-1", "", ">=", -1},
		{"atomic/*:overlap==0", "atomic/*:overlap==0", "atomic/*", "==", 0},
		{" */rueidis/*/* : acquire_p999_ms < 20 ", "*/rueidis/*/*:acquire_p999_ms<20", "*/rueidis/*/*", "<", 20},
		{"atomic:release_max_ms<=2.5", "atomic:release_max_ms<=2.5", "atomic", "<=", 2.5},
		{"violations==0", "violations==0", "", "==", 0},
		{"lost_acked_writes==0", "lost_acked_writes==0", "", "==", 0},
	}
	for _, c := range cases {
		ts, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if len(ts) != 1 {
			t.Errorf("Parse(%q): %d thresholds, want 1", c.expr, len(ts))
			continue
		}
		th := ts[0]
		if th.String() != c.want || th.Scope != c.scope || th.Op != c.op || th.Value != c.value {
			t.Errorf("Parse(%q) = %q (scope %q, op %q, value %g), want %q (scope %q, op %q, value %g)",
				c.expr, th.String(), th.Scope, th.Op, th.Value, c.want, c.scope, c.op, c.value)
		}
	}
}

func TestThresholdParseSafety(t *testing.T) {
	for _, expr := range []string{"safety", " safety ", "atomic/*:safety"} {
		ts, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		if len(ts) != len(report.ViolationKinds) {
			t.Fatalf("Parse(%q): %d thresholds, want one per violation kind (%d)", expr, len(ts), len(report.ViolationKinds))
		}
		wantScope := ""
		if strings.Contains(expr, ":") {
			wantScope = "atomic/*"
		}
		for i, k := range report.ViolationKinds {
			if th := ts[i]; th.Metric.Name != k.Key || th.Op != "==" || th.Value != 0 || th.Scope != wantScope {
				t.Errorf("Parse(%q)[%d] = %s (scope %q), want %s==0 (scope %q)", expr, i, th, th.Scope, k.Key, wantScope)
			}
		}
	}
}

func TestThresholdParseBad(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{"p99<50", []string{`unknown metric "p99"`, `did you mean "p99_ms"?`, "metrics: oversell, overlap", "commands_per_op", "or safety"}},
		{"overlaps==0", []string{`unknown metric "overlaps"`, `did you mean "overlap"?`}},
		{"opssec>1", []string{`unknown metric "opssec"`}},
		{"p99_ms=50", []string{`unknown operator "="`, `did you mean "=="?`, "valid: < <= > >= == !="}},
		{"p99_ms=<50", []string{`unknown operator "=<"`}},
		{"p99_ms<>50", []string{`unknown operator "<>"`}},
		{"p99_ms<fifty", []string{`value "fifty" is not a finite number`}},
		{"p99_ms<50ms", []string{`value "50ms" is not a finite number`}},
		{"p99_ms<NaN", []string{`value "NaN" is not a finite number`}},
		{"p99_ms<Inf", []string{`value "Inf" is not a finite number`}},
		{"p99_ms<", []string{"no value after the operator"}},
		{"<50", []string{"no metric before the operator"}},
		{"p99_ms 50", []string{"no operator"}},
		{"p99_ms", []string{"no operator"}},
		{"", []string{"empty threshold"}},
		{"   ", []string{"empty threshold"}},
		{"atomic/*:", []string{`no metric after the scope "atomic/*"`}},
		{"atomic/*:  ", []string{`no metric after the scope "atomic/*"`}},
		{":overlap==0", []string{"empty scope"}},
		{"a/b/c/d/e:overlap==0", []string{"more than 4 parts"}},
		{"atomic[/*:overlap==0", []string{"not a valid glob"}},
		{"safety==0", []string{"safety takes no operator"}},
		{"nope=5", []string{`unknown metric "nope"`, `unknown operator "="`}}, // both problems at once
	}
	for _, c := range cases {
		ts, err := Parse(c.expr)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", c.expr, ts)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%q): %q lacks %q", c.expr, err, w)
			}
		}
	}
}

func TestThresholdParseList(t *testing.T) {
	ts, errs := ParseList([]string{"p99_ms<50,ops_per_sec>1000", "safety", "atomic/*:overlap==0"})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if want := 2 + len(report.ViolationKinds) + 1; len(ts) != want {
		t.Fatalf("%d thresholds, want %d", len(ts), want)
	}
	_, errs = ParseList([]string{"p99<1,overlap=0", "ok_ms>1,,jain>0.5"})
	if len(errs) != 4 { // p99, "=", ok_ms, the empty item
		t.Fatalf("%d errors, want 4: %v", len(errs), errs)
	}
}

// The metric names are unique, and every violation kind is one.
func TestThresholdMetricTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range report.Metrics {
		if seen[m.Name] || m.Name == Safety || m.Doc == "" || m.Of == nil {
			t.Errorf("metric %q: listed twice, named safety, or without doc or accessor", m.Name)
		}
		seen[m.Name] = true
	}
	for _, k := range report.ViolationKinds {
		if !seen[k.Key] {
			t.Errorf("violation kind %q is no metric", k.Key)
		}
	}
	for _, f := range report.LivenessFigures {
		if !seen[f.Key] {
			t.Errorf("liveness figure %q is no metric", f.Key)
		}
	}
	if want := len(report.ViolationKinds) + len(report.LivenessFigures) + 3 + 6 + 2 + 4 + 4*len(report.RoleNames) + 1 + 1 + 18 + 15; len(report.Metrics) != want {
		t.Errorf("%d metrics, want %d: the %d violation kinds, the %d liveness counts, orphan_lock_ms, time_to_free_p99_ms, orphan_share_max_ms, 6 hand-over figures, linearizable and oracle_disagreements, 4 renewal-margin figures, 4 per client role, violations, max_holders, 18 latencies and 15 others (slow_releases, hung_releases, resource_rejected, balance_drift and multi_timeouts among them)",
			len(report.Metrics), want, len(report.ViolationKinds), len(report.LivenessFigures))
	}
}

func synthetic() []report.Scenario {
	a := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed:interval=1ms",
		Ops: 1000, OpsPerSec: 1500, Efficiency: 0.75, Dropped: 2}
	a.LatencyMS.P99, a.LatencyMS.Mean = 40, 3
	a.AcquireMS.P999 = 12
	a.ReleaseMS.Max = 0.5
	a.Fairness.JainIndex = 0.9
	a.Counters.Errors, a.Counters.Timeouts, a.Counters.Failures = 1, 2, 3
	a.RedisCost.CommandsPerOp = 4.5
	n := report.Scenario{Strategy: "naive", Driver: "goredis", Workload: "flash-sale", Retry: "backoff:cap=1s",
		Ops: 200, OpsPerSec: 800}
	n.LatencyMS.P99 = 60
	n.Violations.Overlap, n.Violations.Oversell, n.Violations.StuckLocks = 7, 3, 1
	return []report.Scenario{a, n}
}

func TestThresholdMetricValues(t *testing.T) {
	s := synthetic()
	want := map[string][2]float64{ // metric: atomic's, naive's
		"overlap": {0, 7}, "oversell": {0, 3}, "stuck_locks": {0, 1}, "violations": {0, 11},
		"p99_ms": {40, 60}, "mean_ms": {3, 0}, "acquire_p999_ms": {12, 0}, "release_max_ms": {0.5, 0},
		"ops": {1000, 200}, "ops_per_sec": {1500, 800}, "efficiency": {0.75, 0}, "jain": {0.9, 0},
		"errors": {1, 0}, "timeouts": {2, 0}, "failures": {3, 0}, "dropped": {2, 0}, "commands_per_op": {4.5, 0},
	}
	for name, w := range want {
		m, ok := report.LookupMetric(name)
		if !ok {
			t.Fatalf("no metric %q", name)
		}
		for i := range s {
			if got := m.Of(s[i]); got != w[i] {
				t.Errorf("%s of %s = %g, want %g", name, s[i].Name(), got, w[i])
			}
		}
	}
}

func TestThresholdEvaluate(t *testing.T) {
	s := synthetic()
	ts, errs := ParseList([]string{
		"overlap==0",                      // atomic pass, naive fail
		"p99_ms<50",                       // atomic pass, naive fail
		"p99_ms<=60",                      // both pass
		"ops_per_sec>1000",                // atomic pass, naive fail
		"atomic/*:ops>=1000",              // atomic only: pass
		"naive:violations!=0",             // naive only: pass
		"*/goredis:overlap<7",             // naive only: fail
		"*/*/flash-sale/fixed:timeouts>2", // atomic only (retry short name): fail
		"*/*/*/backoff:jain==0",           // naive only: pass
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rs := Evaluate(ts, s)
	type row struct {
		expr, scenario string
		measured       float64
		pass           bool
	}
	const A, N = "atomic/rueidis/flash-sale/fixed", "naive/goredis/flash-sale/backoff"
	want := []row{
		{"overlap==0", A, 0, true}, {"overlap==0", N, 7, false},
		{"p99_ms<50", A, 40, true}, {"p99_ms<50", N, 60, false},
		{"p99_ms<=60", A, 40, true}, {"p99_ms<=60", N, 60, true},
		{"ops_per_sec>1000", A, 1500, true}, {"ops_per_sec>1000", N, 800, false},
		{"atomic/*:ops>=1000", A, 1000, true},
		{"naive:violations!=0", N, 11, true},
		{"*/goredis:overlap<7", N, 7, false},
		{"*/*/flash-sale/fixed:timeouts>2", A, 2, false},
		{"*/*/*/backoff:jain==0", N, 0, true},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(rs), len(want), rs)
	}
	for i, w := range want {
		r := rs[i]
		if r.Expr != w.expr || r.Scenario != w.scenario || r.Measured != w.measured || r.Pass != w.pass {
			t.Errorf("result %d = %+v, want %+v", i, r, w)
		}
	}
	if f := Failed(rs); f != 5 {
		t.Errorf("Failed = %d, want 5", f)
	}
	if got := Summary(rs); got != "thresholds: 8 passed, 5 failed" {
		t.Errorf("Summary = %q", got)
	}
	r := rs[len(rs)-1]
	if r.Metric != "jain" || r.Op != "==" || r.Value != 0 {
		t.Errorf("last result %+v: want metric jain, op ==, value 0", r)
	}
}

func TestThresholdSafetyEvaluate(t *testing.T) {
	ts, _ := Parse("safety")
	rs := Evaluate(ts, synthetic())
	if len(rs) != 2*len(report.ViolationKinds) {
		t.Fatalf("%d results, want %d", len(rs), 2*len(report.ViolationKinds))
	}
	if f := Failed(rs); f != 3 { // naive's overlap, oversell and stuck_locks
		t.Fatalf("%d failed, want 3: %+v", f, rs)
	}
}

func TestThresholdScope(t *testing.T) {
	const name = "atomic/rueidis/flash-sale/fixed"
	cases := []struct {
		scope string
		want  bool
	}{
		{"", true},
		{"atomic", true},
		{"atomic/*", true},
		{"atomic/*/*/*", true},
		{"*/rueidis/*/*", true},
		{"*/rueidis", true},
		{"atom*", true},
		{"atomic/rueidis/flash-sale/fixed", true},
		{"atomic/rueidis/flash-*", true},
		{"naive", false},
		{"atomic/goredis", false},
		{"*/*/hot-key", false},
		{"*/*/*/backoff", false},
		{"atomi", false}, // a part matches whole, not as a prefix of itself
	}
	for _, c := range cases {
		if got := (Threshold{Scope: c.scope}).Matches(name); got != c.want {
			t.Errorf("scope %q on %s: %v, want %v", c.scope, name, got, c.want)
		}
	}
}

func TestThresholdUnmatched(t *testing.T) {
	ts, _ := ParseList([]string{"atomic/*:overlap==0,naive:p99_ms<1,redlock/*:safety,p99_ms<5"})
	errs := Unmatched(ts, []string{"atomic/rueidis/flash-sale/fixed", "naive/rueidis/flash-sale/fixed"})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `scope "redlock/*" matches no scenario`) {
		t.Fatalf("errors %v, want one for redlock/* (once, though safety expands to several)", errs)
	}
	rs := Evaluate(ts, nil)
	if u := Untested(ts, rs); len(u) != len(ts) {
		t.Fatalf("%d untested, want all %d", len(u), len(ts))
	}
}

func TestThresholdTable(t *testing.T) {
	ts, _ := ParseList([]string{"overlap==0"})
	var b strings.Builder
	if err := Table(&b, Evaluate(ts, synthetic())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"threshold", "measured", "overlap==0", "atomic/rueidis/flash-sale/fixed", "PASS", "FAIL",
		"naive/goredis/flash-sale/backoff", "thresholds: 1 passed, 1 failed\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
}

// docs/ci.md's metric list is Doc(), between its markers.
func TestThresholdMetricsDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- metrics: begin (generated by internal/thresholds.Doc) -->\n", "<!-- metrics: end -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/ci.md lacks the markers %q ... %q", begin, end)
	}
	if got := doc[i+len(begin) : j]; got != Doc() {
		t.Errorf("docs/ci.md's metric list is out of date; between the markers write:\n%s", Doc())
	}
	for _, m := range report.MetricNames() {
		if !strings.Contains(doc, "`"+m+"`") {
			t.Errorf("docs/ci.md does not list %s", m)
		}
	}
}

// A scenario that completed no operation measured no latency and no
// commands per operation (2,420 commands were sent): a threshold on either
// fails as not measured, whatever its bound; on a scenario that measured
// them the same thresholds pass. A follower segment's file has no end
// check: oversell fails as not measured there, overlap is judged.
func TestThresholdNotMeasured(t *testing.T) {
	empty := report.Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed",
		RedisCost: report.RedisCost{Commands: 2420}}
	done := empty
	done.Ops, done.LatencyMS, done.RedisCost.CommandsPerOp = 100, metrics.Latency{P50: 1, P90: 1, P99: 2, P999: 2, Max: 3, Mean: 1, Count: 100}, 24.2
	follower := done
	follower.Violations.EndCheck = report.EndCheckNotRun
	ts, errs := ParseList([]string{"commands_per_op<=1000", "p99_ms<50", "jain>=0", "oversell==0", "overlap==0"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rs := Evaluate(ts, []report.Scenario{empty, done, follower})
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s pass=%v not_measured=%v", r.Metric, r.Pass, r.NotMeasured))
	}
	want := []string{
		"commands_per_op pass=false not_measured=true", "commands_per_op pass=true not_measured=false", "commands_per_op pass=true not_measured=false",
		"p99_ms pass=false not_measured=true", "p99_ms pass=true not_measured=false", "p99_ms pass=true not_measured=false",
		"jain pass=false not_measured=true", "jain pass=true not_measured=false", "jain pass=true not_measured=false",
		"oversell pass=true not_measured=false", "oversell pass=true not_measured=false", "oversell pass=false not_measured=true",
		"overlap pass=true not_measured=false", "overlap pass=true not_measured=false", "overlap pass=true not_measured=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
