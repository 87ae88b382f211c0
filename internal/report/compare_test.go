package report

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
)

func twoRuns() (*Run, *Run) {
	mk := func(strategy string, ops, p99 float64, overlap int64) Scenario {
		return Scenario{Strategy: strategy, Driver: "rueidis", Workload: "flash-sale", Retry: "fixed:interval=100ms",
			Clients: 50, Params: map[string]string{"ttl": "100ms", "seed": "1"}, OpsPerSec: ops,
			LatencyMS: latency(p99), Violations: Violations{Overlap: overlap}}
	}
	base := &Run{Schema: Schema, Scenarios: []Scenario{mk("atomic", 1000, 10, 0), mk("watchdog", 800, 20, 0), mk("naive", 900, 10, 5)}}
	cur := &Run{Schema: Schema, Scenarios: []Scenario{mk("atomic", 500, 20, 0), mk("watchdog", 300, 40, 1), mk("fair", 10, 1, 0)}}
	cur.Scenarios[1].Params = map[string]string{"ttl": "100ms", "seed": "99"} // the seed does not split scenarios
	return base, cur
}

func latency(p99 float64) metrics.Latency { return metrics.Latency{P99: p99} }

// One run per side: too few samples for a test, so changes are judged on
// the threshold alone.
func TestCompareSingleRuns(t *testing.T) {
	base, cur := twoRuns()
	o := CompareOptions{Threshold: 0.05, P99Threshold: 0.05}
	d, missing, err := Compare(base, cur, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || len(missing) != 2 {
		t.Fatalf("%d deltas, missing %v", len(d), missing)
	}
	if d[0].Name != "atomic/rueidis/flash-sale/fixed" || len(d[0].Regressed) != 2 || d[0].Ops.Rel != -0.5 || !d[0].Ops.FewSamples {
		t.Fatalf("atomic: %+v", d[0])
	}
	if len(d[1].Regressed) != 3 { // ops/s, p99, violations
		t.Fatalf("watchdog: %+v", d[1])
	}
	// Normalized to atomic: watchdog went from 0.8 to 0.6 of atomic's ops/s
	// (-25 %) and p99 from 2x to 2x (no change); atomic itself is the unit.
	o.Normalize = "atomic/rueidis/flash-sale/fixed"
	d, _, err = Compare(base, cur, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(d[0].Regressed) != 0 {
		t.Fatalf("the reference regressed against itself: %+v", d[0])
	}
	if w := d[1]; w.Ops.Base != 0.8 || w.Ops.New != 0.6 || w.P99.Rel != 0 || len(w.Regressed) != 2 {
		t.Fatalf("normalized watchdog: %+v", w)
	}
	o.Normalize, o.P99Threshold = "", 10
	if d, _, _ := Compare(base, cur, o); len(d[0].Regressed) != 1 || d[0].Regressed[0] != "ops/s" {
		t.Fatalf("with a 1000%% p99 threshold only ops/s regresses: %+v", d[0])
	}
	o.Normalize = "nope/x/y/z"
	if _, _, err := Compare(base, cur, o); err == nil {
		t.Fatal("a missing reference was accepted")
	}
}

// repeated is a one-scenario run whose n repeats draw ops/s from
// mean*(1 +- 5 %) and p99 from 10 ms (1 +- 5 %).
func repeated(rng *rand.Rand, n int, mean float64) *Run {
	s := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed:interval=100ms", Clients: 50,
		Params: map[string]string{"ttl": "100ms"}}
	var p99s []float64
	for range n {
		s.Samples = append(s.Samples, Sample{OpsPerSec: mean * (0.95 + 0.1*rng.Float64()), P99MS: 10 * (0.95 + 0.1*rng.Float64())})
		s.OpsPerSec += s.Samples[len(s.Samples)-1].OpsPerSec / float64(n) // pooled over equal windows: the mean
		p99s = append(p99s, s.Samples[len(s.Samples)-1].P99MS)
	}
	s.LatencyMS.P99, s.LatencyMS.Count = median(p99s), 1000
	return &Run{Schema: Schema, Scenarios: []Scenario{s}}
}

// With repeats, a change counts only when it is beyond the threshold and
// significant: two files drawn from one distribution compare as "~", and
// halving one side's ops/s is a regression.
func TestCompareSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	o := CompareOptions{Threshold: 0.02, P99Threshold: 0.02}
	for i := range 20 {
		d, _, err := Compare(repeated(rng, 5, 1000), repeated(rng, 5, 1000), o)
		if err != nil {
			t.Fatal(err)
		}
		// At alpha 0.05 one comparison in 20 may still come out
		// significant; what must hold is that a change within the noise
		// is never both beyond a 10 % threshold and significant.
		if d[0].Ops.FewSamples || d[0].Ops.BaseN != 5 {
			t.Fatalf("run %d: %+v", i, d[0].Ops)
		}
		wide := CompareOptions{Threshold: 0.10, P99Threshold: 0.10}
		if d2, _, _ := Compare(repeated(rng, 5, 1000), repeated(rng, 5, 1000), wide); len(d2[0].Regressed) != 0 {
			t.Fatalf("run %d: same distribution regressed: %+v", i, d2[0])
		}
	}
	halved := repeated(rng, 5, 500)
	d, _, _ := Compare(repeated(rng, 5, 1000), halved, o)
	if c := d[0].Ops; !c.Significant || c.P > 0.05 || c.Rel > -0.4 || len(d[0].Regressed) != 1 || d[0].Regressed[0] != "ops/s" {
		t.Fatalf("halved ops/s: %+v regressed %v", c, d[0].Regressed)
	}
	if s := changeString(d[0].Ops); !strings.HasPrefix(s, "-") || !strings.Contains(s, "n=5") {
		t.Fatalf("change string %q", s)
	}
	// A large but insignificant change (2 runs against 5 would be judged
	// on the threshold; 4 against 4 with overlapping values is "~").
	b, c := repeated(rng, 4, 1000), repeated(rng, 4, 1000)
	b.Scenarios[0].Samples[0].OpsPerSec = 3000 // one outlier
	b.Scenarios[0].OpsPerSec = c.Scenarios[0].OpsPerSec * 1.5
	d, _, _ = Compare(b, c, CompareOptions{Threshold: 0.01, P99Threshold: 10})
	if d[0].Ops.Significant || len(d[0].Regressed) != 0 || !strings.HasPrefix(changeString(d[0].Ops), "~") {
		t.Fatalf("one outlier: %+v %v", d[0].Ops, d[0].Regressed)
	}
}

// Files of different versions match: a parameter one file lacks takes the
// default the other file records for that plugin; without a recorded
// default it is noted, not a mismatch.
func TestMatchAcrossVersions(t *testing.T) {
	old := &Run{Scenarios: []Scenario{{Strategy: "segmented", Driver: "rueidis", Workload: "flash-sale", Retry: "none", Clients: 5,
		Params: map[string]string{"ttl": "1s", "stock": "100", "seed": "1"}}}}
	mk := func(segments string) *Run {
		return &Run{Meta: Meta{ParamDefaults: map[string]map[string]string{"segmented": {"segments": "8"}, "flash-sale": {"stock": "1000"}}},
			Scenarios: []Scenario{{Strategy: "segmented", Driver: "rueidis", Workload: "flash-sale", Retry: "none", Clients: 5,
				Params: map[string]string{"ttl": "1s", "stock": "100", "segments": segments, "token": "random", "seed": "2"}}}}
	}
	pairs, missing := Match(old, mk("8"))
	if len(pairs) != 1 || len(missing) != 0 {
		t.Fatalf("segments at its default: pairs %d, missing %v", len(pairs), missing)
	}
	if notes := pairs[0].Notes; len(notes) != 1 || notes[0] != "token=random only in the new file" {
		t.Fatalf("notes %v", notes)
	}
	if pairs, missing := Match(old, mk("4")); len(pairs) != 0 || len(missing) != 2 {
		t.Fatalf("segments 4 against an older file (default 8): pairs %d, missing %v", len(pairs), missing)
	}
	// A recorded value that differs never matches.
	other := mk("8")
	other.Scenarios[0].Params["stock"] = "200"
	if pairs, _ := Match(old, other); len(pairs) != 0 {
		t.Fatal("stock 100 matched stock 200")
	}
}

// costRun is a one-scenario run whose n repeats have cmds commands per
// operation and cpu µs of client CPU per operation (times 1 + spread*i/n).
func costRun(n int, cmds, cpu, spread float64) *Run {
	s := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "none", Clients: 4, OpsPerSec: 1000,
		Params: map[string]string{"ttl": "5s"}}
	for i := range n {
		f := 1 + spread*float64(i)/float64(n)
		s.Samples = append(s.Samples, Sample{OpsPerSec: 1000, P99MS: 1, CommandsPerOp: cmds * f, CPUMicrosPerOp: cpu * f})
	}
	s.RedisCost.CommandsPerOp, s.ClientCPU.CPUMicrosPerOp = cmds, cpu
	s.LatencyMS.P99, s.LatencyMS.Count = 1, 1000
	return &Run{Schema: Schema, Scenarios: []Scenario{s}}
}

// Cost is gated as speed: a rise of commands per operation beyond the
// cost threshold regresses (threshold only with one run a side,
// significant with 4), CPU per operation has its own threshold, a large
// but insignificant rise does not regress, and a figure a side did not
// measure is n/a, never a regression.
func TestCompareCost(t *testing.T) {
	o := CompareOptions{Threshold: 0.05, P99Threshold: 0.5, CostThreshold: 0.10, CPUThreshold: 0.25}
	regressed := func(b, n *Run) []string {
		t.Helper()
		d, _, err := Compare(b, n, o)
		if err != nil || len(d) != 1 || len(d[0].Costs) != len(CostFigures) {
			t.Fatalf("%v %+v", err, d)
		}
		return d[0].Regressed
	}
	cases := []struct {
		name string
		b, n *Run
		want string
	}{
		{"same, one run a side", costRun(1, 4, 10, 0), costRun(1, 4, 10, 0), ""},
		{"commands x10, one run a side", costRun(1, 4, 10, 0), costRun(1, 40, 10, 0), "cmds/op"},
		{"commands +20%, 4 runs a side", costRun(4, 4, 10, 0.01), costRun(4, 4.8, 10, 0.01), "cmds/op"},
		{"commands +5%, 4 runs a side", costRun(4, 4, 10, 0.01), costRun(4, 4.2, 10, 0.01), ""},
		{"client CPU +20% (CPU threshold 25%)", costRun(4, 4, 10, 0.01), costRun(4, 4, 12, 0.01), ""},
		{"client CPU +40%", costRun(4, 4, 10, 0.01), costRun(4, 4, 14, 0.01), "client_us/op"},
	}
	for _, c := range cases {
		got := strings.Join(regressed(c.b, c.n), ",")
		if got != c.want {
			t.Errorf("%s: regressed %q, want %q", c.name, got, c.want)
		}
	}
	// Large but not significant: the rows differ by 50 %, the samples
	// overlap (one outlier).
	b, n := costRun(4, 4, 10, 0.01), costRun(4, 4, 10, 0.02)
	b.Scenarios[0].Samples[0].CommandsPerOp = 100
	n.Scenarios[0].RedisCost.CommandsPerOp = 6
	d, _, _ := Compare(b, n, o)
	if c := d[0].Costs[0]; c.Figure != "cmds/op" || c.Significant || c.Rel < 0.4 || len(d[0].Regressed) != 0 {
		t.Fatalf("insignificant: %+v %v", c, d[0].Regressed)
	}
	// Not measured on one side: n/a.
	b, n = costRun(1, 4, 10, 0), costRun(1, 4, 10, 0)
	b.Scenarios[0].RedisCost.CommandsPerOp, b.Scenarios[0].Samples[0].CommandsPerOp = 0, 0
	d, _, _ = Compare(b, n, o)
	if c := d[0].Costs[0]; !c.NotMeasured || len(d[0].Regressed) != 0 {
		t.Fatalf("not measured: %+v %v", c, d[0].Regressed)
	}
	// Peak RSS: one figure a file, threshold only.
	b.Meta.MaxRSSMB, n.Meta.MaxRSSMB = 100, 120
	if c, worse := CompareRSS(b, n, 0.25); worse || c.Rel < 0.19 || c.Rel > 0.21 || !c.FewSamples {
		t.Fatalf("rss +20%%: %+v %v", c, worse)
	}
	if _, worse := CompareRSS(b, n, 0.1); !worse {
		t.Fatal("rss +20% passed a 10% threshold")
	}
	b.Meta.MaxRSSMB = 0
	if c, worse := CompareRSS(b, n, 0.1); worse || !c.NotMeasured {
		t.Fatalf("rss not measured: %+v %v", c, worse)
	}
}

// A baseline that shows violations or errors without a fault, for a
// strategy that promises none, is invalid; with a fault, or for a
// known-broken variant, it is not.
func TestInvalidBaseline(t *testing.T) {
	s := costRun(1, 4, 10, 0).Scenarios[0]
	if w := InvalidBaseline(s, nil); w != "" {
		t.Fatalf("clean: %q", w)
	}
	s.Violations.Overlap = 3
	if w := InvalidBaseline(s, nil); !strings.Contains(w, "3 violations and 0 errors") {
		t.Fatalf("violations: %q", w)
	}
	if w := InvalidBaseline(s, func(Scenario) bool { return true }); w != "" {
		t.Fatalf("unsafe strategy: %q", w)
	}
	s.Faults = []FaultWindow{{Fault: "pause"}}
	if w := InvalidBaseline(s, nil); w != "" {
		t.Fatalf("with a fault: %q", w)
	}
	s.Faults, s.Violations.Overlap, s.Counters.Errors = nil, 0, 2
	if w := InvalidBaseline(s, nil); !strings.Contains(w, "0 violations and 2 errors") {
		t.Fatalf("errors: %q", w)
	}
}
