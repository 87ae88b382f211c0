package report

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
)

// rawScenario is a scenario of one lock (clients 4, locks 1) whose holds
// are holds (µs each) over window s, derived from its raw data.
func rawScenario(t *testing.T, window float64, holds ...int) Scenario {
	t.Helper()
	op, hold := metrics.NewHistogram(), metrics.NewHistogram()
	for _, us := range holds {
		metrics.Record(hold, time.Duration(us)*time.Microsecond)
		metrics.Record(op, time.Duration(us+200)*time.Microsecond)
	}
	s := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "none", Clients: 4,
		Raw: &Raw{WindowS: window, Runs: 1, Locks: 1, ClientOps: []int64{int64(len(holds)), 0, 0, 0}}}
	s.Raw.SetHist(HistOp, op)
	s.Raw.SetHist(HistHold, hold)
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Check both ways: a consistent result passes; percentiles out of order,
// ops that are not the clients' sum, and ops/s above the ceiling without
// an overlap each fail, naming the figure; an overlap excuses the ceiling.
func TestCheck(t *testing.T) {
	holds := make([]int, 1000)
	for i := range holds {
		holds[i] = 900 // 1000 holds of 0.9 ms in 1 s on one lock: 0.9 s of holding
	}
	ok := rawScenario(t, 1, holds...)
	if err := Check(&Run{Scenarios: []Scenario{ok}}); err != nil {
		t.Fatalf("a consistent result: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(s *Scenario)
		want string
	}{
		{"p50 above p99", func(s *Scenario) { s.LatencyMS.P50 = s.LatencyMS.P99 + 1 }, "percentiles out of order"},
		{"client counts", func(s *Scenario) { s.Raw.ClientOps[1] = 1 }, "sum to 1001"},
		{"ops not the histogram's", func(s *Scenario) { s.Ops++ }, "ops 1001, but the operation histogram has 1000"},
		// 0.9 s of holding in half the window: ops/s twice the ceiling.
		{"above the ceiling", func(s *Scenario) { s.Raw.WindowS = 0.5; _ = Derive(s) }, "above the lock-bound ceiling"},
	} {
		s := ok
		s.Raw = cloneRaw(ok.Raw)
		tc.edit(&s)
		err := Check(&Run{Scenarios: []Scenario{s}})
		if !errors.Is(err, ErrInvariant) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvariant and %q", tc.name, err, tc.want)
		}
	}
	over := ok
	over.Raw = cloneRaw(ok.Raw)
	over.Raw.WindowS = 0.5
	_ = Derive(&over)
	over.Violations.Overlap = 3
	if err := Check(&Run{Scenarios: []Scenario{over}}); err != nil {
		t.Fatalf("above the ceiling with overlaps counted: %v", err)
	}
}

// Merge sums every counter of Counters, each one set to a distinct value
// in each file (reflection: a counter added later is covered too), errors
// by kind included.
func TestMergeSumsEveryCounter(t *testing.T) {
	mk := func(base int64) Scenario {
		s := rawScenario(t, 1, 900, 900)
		c := reflect.ValueOf(&s.Counters).Elem()
		for i := 0; i < c.NumField(); i++ {
			if f := c.Field(i); f.Kind() == reflect.Int64 {
				f.SetInt(base + int64(i))
			}
		}
		s.Counters.ErrorsByKind = map[string]int64{"timeout": base, "moved": 2 * base}
		for _, k := range ViolationKinds {
			k.Set(&s.Violations, base)
		}
		s.Figures = map[string]int64{"sold": base}
		return s
	}
	m, err := Merge([]*Run{{Schema: Schema, Scenarios: []Scenario{mk(10)}}, {Schema: Schema, Scenarios: []Scenario{mk(1000)}}})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Scenarios[0]
	c := reflect.ValueOf(s.Counters)
	for i := 0; i < c.NumField(); i++ {
		if f := c.Field(i); f.Kind() == reflect.Int64 && f.Int() != 1010+2*int64(i) {
			t.Errorf("counters.%s = %d, want %d", c.Type().Field(i).Name, f.Int(), 1010+2*int64(i))
		}
	}
	if s.Counters.ErrorsByKind["timeout"] != 1010 || s.Counters.ErrorsByKind["moved"] != 2020 {
		t.Errorf("errors by kind %v", s.Counters.ErrorsByKind)
	}
	for _, k := range ViolationKinds {
		if k.Of(s.Violations) != 1010 {
			t.Errorf("violations.%s = %d, want 1010", k.Key, k.Of(s.Violations))
		}
	}
	if s.Ops != 4 || s.Figures["sold"] != 1010 || s.Clients != 8 || len(s.Raw.ClientOps) != 8 {
		t.Errorf("ops %d, sold %d, clients %d %v", s.Ops, s.Figures["sold"], s.Clients, s.Raw.ClientOps)
	}
}

// A scenario with no completed operation measured no latency and no cost
// per operation: they are absent from its JSON, "-" in the table, and
// compare prints n/a for its p99 and flags no regression.
func TestNotMeasuredIsAbsent(t *testing.T) {
	s := rawScenario(t, 1)
	s.Raw.Cost = []ServerCost{{Servers: "127.0.0.1:1", ByCommand: map[string]int64{"set": 2420}}}
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	if s.RedisCost.Commands != 2420 || s.RedisCost.CommandsPerOp != 0 || LatencyMeasured(s.LatencyMS) {
		t.Fatalf("cost %+v latency %+v", s.RedisCost, s.LatencyMS)
	}
	s.Samples = []Sample{SampleOf(s)}
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	b := string(js)
	for _, key := range []string{`"latency_ms"`, `"acquire_ms"`, `"hold_ms"`, `"commands_per_op"`, `"cpu_us_per_op"`,
		`"jain_index"`, `"longest_wait_ms"`, `"server_cpu_ms_per_1k_ops"`, `"p50_ms"`, `"p99_ms"`, `"acquire_p99_ms"`} {
		if strings.Contains(b, key) {
			t.Errorf("JSON has %s:\n%s", key, b)
		}
	}
	var tb strings.Builder
	if err := TableOf(&tb, []Scenario{s}, []Column{colP99, colCmds, colJain}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "│ -      │ -       │ -    │") {
		t.Fatalf("table:\n%s", tb.String())
	}
	good := rawScenario(t, 1, 900, 900)
	d, _, err := Compare(&Run{Scenarios: []Scenario{good}}, &Run{Scenarios: []Scenario{s}}, CompareOptions{Threshold: 0.05, P99Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if !d[0].P99.NotMeasured || d[0].P99.Rel != 0 || strings.Contains(strings.Join(d[0].Regressed, ","), "p99") {
		t.Fatalf("p99 change %+v regressed %v", d[0].P99, d[0].Regressed)
	}
	tb.Reset()
	if err := CompareTable(&tb, d, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "│ n/a ") {
		t.Fatalf("compare table:\n%s", tb.String())
	}
}

// The servers' cost of segments: each process read the same server over
// one window (every client's commands and every sampler's reads), so the
// widest delta counts once, and every process's own sampler reads come
// out of it; repeats add theirs up.
func TestCombineCost(t *testing.T) {
	part := func(set, get int64, own int64) Scenario {
		s := rawScenario(t, 1, 900, 900)
		s.Raw.CostOps = 2
		s.Raw.Cost = []ServerCost{{Servers: "127.0.0.1:1", ByCommand: map[string]int64{"set": set, "get": get}, Own: map[string]int64{"get": own}, CPUMS: 10}}
		return s
	}
	// Process A saw 10 sets and 30 gets (its sampler sent 12 of them),
	// B over a slightly shorter window 9 and 28 (its sampler 13).
	c, err := Combine(Concurrent, []Scenario{part(10, 30, 12), part(9, 28, 13)})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RedisCost; got.Commands != 10+30-12-13 || got.ByCommand["get"] != 5 || got.Ops != 4 || got.CommandsPerOp != 15.0/4 || got.ServerCPUMS != 10 {
		t.Fatalf("concurrent cost %+v: want 15 commands (get 5) over 4 ops, 10 ms of server CPU", got)
	}
	sq, err := Combine(Sequential, []Scenario{part(10, 30, 12), part(9, 28, 13)})
	if err != nil {
		t.Fatal(err)
	}
	if got := sq.RedisCost; got.Commands != 19+58-25 || got.Ops != 4 || got.ServerCPUMS != 20 {
		t.Fatalf("sequential cost %+v: want 52 commands over 4 ops, 20 ms", got)
	}
}
