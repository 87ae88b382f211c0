package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
)

// A scenario without a ceiling has neither ceiling_ops_per_sec nor
// efficiency in its JSON, and '-' in both columns of the sweep table (and
// in the run table's ceiling); one with a ceiling has both.
func TestNoCeilingLeftOut(t *testing.T) {
	with := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "spin", Clients: 1, Ops: 100, OpsPerSec: 900,
		CeilingOpsPerSec: 1000, Efficiency: 0.9, LatencyMS: metrics.Latency{P99: 1.5}, AcquireMS: metrics.Latency{P99: 0.2}}
	with.RedisCost.CommandsPerOp = 4
	without := with
	without.Clients, without.CeilingOpsPerSec, without.Efficiency, without.RedisCost.CommandsPerOp = 10, 0, 0, 0
	for _, c := range []struct {
		s    Scenario
		want bool
	}{{with, true}, {without, false}} {
		raw, err := json.Marshal(c.s)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{`"ceiling_ops_per_sec"`, `"efficiency"`} {
			if got := bytes.Contains(raw, []byte(k)); got != c.want {
				t.Errorf("clients %d: %s in the JSON: %v, want %v", c.s.Clients, k, got, c.want)
			}
		}
		if c.s.HasCeiling() != c.want {
			t.Errorf("clients %d: HasCeiling %v, want %v", c.s.Clients, !c.want, c.want)
		}
	}
	var b bytes.Buffer
	if err := SweepTable(&b, []Scenario{with, without}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"│ atomic   │ rueidis │ lock-cycle │ spin  │ 1       │ 900   │ 1000    │ 0.90       │ 0.00 │ 0.20           │ 1.50   │ 4.00    │ 0          │ 0      │",
		"│ atomic   │ rueidis │ lock-cycle │ spin  │ 10      │ 900   │ -       │ -          │ 0.00 │ 0.20           │ 1.50   │ -       │ 0          │ 0      │",
		"atomic/rueidis/lock-cycle/spin: ops/s highest at the largest count, 900 at 10 clients\n",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("sweep table lacks %q:\n%s", w, b.String())
		}
	}
	without.OpsPerSec = 300
	b.Reset()
	if err := SweepTable(&b, []Scenario{with, without}); err != nil {
		t.Fatal(err)
	}
	if w := "atomic/rueidis/lock-cycle/spin: peak 900 ops/s at 1 client; at 10 clients 300 ops/s, 33 % of the peak\n"; !strings.Contains(b.String(), w) {
		t.Errorf("sweep table lacks %q:\n%s", w, b.String())
	}
	b.Reset()
	if err := Table(&b, []Scenario{without}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "│ 10      │ 300   │ -       │") {
		t.Errorf("run table's ceiling is not '-':\n%s", b.String())
	}
	m, _ := LookupMetric("efficiency")
	if m.Known == nil || m.Known(without) || !m.Known(with) {
		t.Error("the efficiency metric does not report a missing ceiling as not measured")
	}
}
