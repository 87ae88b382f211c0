package claims

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

func TestTableIsComplete(t *testing.T) {
	runs := map[string]bool{}
	for _, r := range Runs() {
		if runs[r.Name] {
			t.Errorf("run %q defined twice", r.Name)
		}
		runs[r.Name] = true
	}
	ids := map[string]bool{}
	for _, c := range Table() {
		ids[c.ID] = true
		if c.Claim == "" || c.Article == "" || c.Scaling == "" || c.Rule == "" || (c.Judge == nil) == (c.Perf == nil) || len(c.Runs) == 0 {
			t.Errorf("%s: incomplete row %+v (want a Judge or a Perf)", c.ID, c)
		}
		if perf := strings.HasPrefix(c.ID, "P"); perf != c.Performance() {
			t.Errorf("%s: Performance() = %v, want the P rows judged on repeats and the S rows once", c.ID, c.Performance())
		}
		for _, r := range c.Runs {
			if !runs[r] {
				t.Errorf("%s uses unknown run %q", c.ID, r)
			}
		}
	}
	for _, id := range []string{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "S11", "S12", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"} {
		if !ids[id] {
			t.Errorf("claims table row %s has no experiment", id)
		}
	}
	if len(ids) != 20 {
		t.Errorf("%d claims, want the 20 rows of the claims table (docs/claims.md)", len(ids))
	}
}

func TestSelect(t *testing.T) {
	cs, err := Select([]string{"p1", " S2"})
	if err != nil || len(cs) != 2 || cs[0].ID != "S2" || cs[1].ID != "P1" {
		t.Fatalf("Select = %v %v, want S2, P1 in table order", cs, err)
	}
	if _, err := Select([]string{"S2", "Z1"}); err == nil || !strings.Contains(err.Error(), "unknown claim id Z1") || !strings.Contains(err.Error(), "P8") {
		t.Fatalf("Select(Z1) = %v", err)
	}
}

// sc is a scenario in which strategy did work (100 operations, 100 locks
// granted), changed by mod.
func sc(strategy string, mod func(s *report.Scenario)) report.Scenario {
	s := report.Scenario{Strategy: strategy, Retry: "fixed:interval=5ms", Ops: 100, AcquireMS: metrics.Latency{Count: 100},
		Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	if mod != nil {
		mod(&s)
	}
	return s
}

// The judges compute verdicts from the figures: a broken strategy's
// violations make S2/S3 reproduced, their absence does not.
func TestJudgesUseMeasuredValues(t *testing.T) {
	c, _ := Select([]string{"S2", "S3"})
	broken := Results{"long-task": {Scenarios: []report.Scenario{
		sc("naive", func(s *report.Scenario) { s.Violations.Overlap, s.Violations.ForeignReleases = 5, 3 }),
		sc("atomic", func(s *report.Scenario) { s.Violations.Overlap = 2 }),
	}}}
	for _, cl := range c {
		if out := cl.Judge(broken); out.Verdict != Reproduced || len(out.Figures) == 0 {
			t.Errorf("%s on violations: %+v, want reproduced with figures", cl.ID, out)
		}
	}
	clean := Results{"long-task": {Scenarios: []report.Scenario{sc("naive", nil), sc("atomic", nil)}}}
	for _, cl := range c {
		if out := cl.Judge(clean); out.Verdict != NotReproduced {
			t.Errorf("%s without violations: %+v, want not reproduced", cl.ID, out)
		}
	}
	// A scenario missing from the run is a failure, not a verdict.
	if out := c[0].Judge(Results{"long-task": {}}); out.Verdict != Failed || !strings.Contains(out.Measured, "no naive") {
		t.Errorf("missing scenario: %+v", out)
	}
}

// Execute runs each run once, shares it between claims, appends the quick
// and extra flags, marks the claims of a failed run Failed, and reports
// missing strategies as NeedsBaseline.
func TestExecute(t *testing.T) {
	cs, _ := Select([]string{"S2", "S3", "S5", "S1"})
	cs = append(cs, Claim{ID: "X1", Runs: []string{"long-task"}, Needs: []string{"no-such-strategy"}})
	var calls []string
	runner := func(_ context.Context, r Run, args []string) (*report.Run, error) {
		calls = append(calls, r.Name)
		if args[len(args)-1] != "700ms" && r.Name == "crash" || !strings.Contains(strings.Join(args, " "), "--driver goredis") {
			t.Errorf("%s args %v: want the extra and quick flags", r.Name, args)
		}
		if r.Name == "crash" {
			return nil, errors.New("boom")
		}
		return &report.Run{Scenarios: []report.Scenario{
			sc("naive", func(s *report.Scenario) { s.Violations.Overlap, s.Violations.ForeignReleases = 1, 1 }),
			sc("atomic", func(s *report.Scenario) { s.Violations.Overlap = 1 }),
			sc("watchdog", func(s *report.Scenario) { s.StrategyStats["renewals"] = 9 }),
		}}, nil
	}
	rows := Execute(context.Background(), cs, Options{Quick: true, Extra: []string{"--driver", "goredis"}}, runner)
	if strings.Join(calls, ",") != "crash,long-task" {
		t.Fatalf("runs %v, want crash then long-task once", calls)
	}
	got := map[string]Verdict{}
	for _, r := range rows {
		got[r.ID] = r.Verdict
	}
	want := map[string]Verdict{"S1": Failed, "S2": Reproduced, "S3": Reproduced, "S5": Reproduced, "X1": NeedsBaseline}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("%s: %q, want %q", id, got[id], v)
		}
	}
	var md, tbl bytes.Buffer
	rep := &Report{Meta: Meta{Mode: "quick", Driver: "goredis"}, Rows: rows}
	if err := WriteMarkdown(&md, rep); err != nil || !strings.Contains(md.String(), "| S2 |") || !strings.Contains(md.String(), "**reproduced**") {
		t.Fatalf("markdown %v:\n%s", err, md.String())
	}
	if err := WriteTable(&tbl, rows); err != nil || !strings.Contains(tbl.String(), "needs baseline") {
		t.Fatalf("table %v:\n%s", err, tbl.String())
	}
	if c := rep.Counts(); c[Reproduced] != 3 || c[Failed] != 1 || c[NeedsBaseline] != 1 {
		t.Fatalf("counts %v", c)
	}
}

// NewInterval: [min, max] with its real confidence 1 - 2^(1-n) below 6
// values, benchmath's order-statistic 95 % interval from 6 on; the values
// stay in run order.
func TestNewInterval(t *testing.T) {
	cases := []struct {
		values         []float64
		median, lo, hi float64
		conf           float64
		minMax         bool
		note           string
	}{
		{[]float64{5, 3, 4}, 4, 3, 5, 0.75, true, "(min-max, 75 %, n=3)"},
		{[]float64{5, 1, 4, 2, 3}, 3, 1, 5, 0.9375, true, "(min-max, 93.8 %, n=5)"},
		{[]float64{6, 1, 5, 2, 4, 3}, 3.5, 1, 6, 0.96875, false, "(96.9 %, n=6)"},
		// From 9 values the interval no longer reaches the extremes:
		// order statistics 2 and 8, 1 - 2 x 10/512.
		{[]float64{9, 1, 8, 2, 7, 3, 6, 4, 5}, 5, 2, 8, 1 - 20.0/512, false, "(96.1 %, n=9)"},
	}
	for _, c := range cases {
		in := slices.Clone(c.values)
		iv := NewInterval(in)
		if iv.N != len(c.values) || iv.Median != c.median || iv.Lo != c.lo || iv.Hi != c.hi ||
			math.Abs(iv.Confidence-c.conf) > 1e-12 || iv.MinMax != c.minMax || iv.Note() != c.note {
			t.Errorf("NewInterval(%v) = %+v %q, want median %v [%v, %v] at %v (min-max %v) %q",
				c.values, iv, iv.Note(), c.median, c.lo, c.hi, c.conf, c.minMax, c.note)
		}
		if !slices.Equal(in, c.values) || !slices.Equal(iv.Values, c.values) {
			t.Errorf("NewInterval(%v): input %v, values %v; want both in run order", c.values, in, iv.Values)
		}
	}
	if got := NewInterval([]float64{2, 4, 3}).Format(fx(1)); got != "3.0x [2.0x, 4.0x]" {
		t.Errorf("Format = %q", got)
	}
}

func TestPairedRatios(t *testing.T) {
	got := pairedRatios([]float64{700, 1400, 1050, 5}, []float64{100, 200, 150, 0})
	if !slices.Equal(got, []float64{7, 7, 7, math.Inf(1)}) {
		t.Fatalf("pairedRatios = %v, want 7, 7, 7, +Inf (repeat k over repeat k)", got)
	}
}

// The tests of an interval against a threshold, and their combinations.
func TestIntervalTests(t *testing.T) {
	iv := func(lo, hi float64) Interval { return Interval{Lo: lo, Hi: hi} }
	cases := []struct {
		name string
		got  tri
		want tri
	}{
		{"[6.3, 7] >= 6.2", atLeast(iv(6.3, 7), 6.2), yes},
		{"[6.2, 7] >= 6.2", atLeast(iv(6.2, 7), 6.2), yes},
		{"[5, 6.1] >= 6.2", atLeast(iv(5, 6.1), 6.2), no},
		{"[5, 7] >= 6.2", atLeast(iv(5, 7), 6.2), maybe},
		{"[0.2, 0.5] <= 0.5", atMost(iv(0.2, 0.5), 0.5), yes},
		{"[0.6, 0.9] <= 0.5", atMost(iv(0.6, 0.9), 0.5), no},
		{"[0.4, 0.9] <= 0.5", atMost(iv(0.4, 0.9), 0.5), maybe},
		{"[1, 2] > 1", above(iv(1, 2), 1), maybe},
		{"[0.5, 1] > 1", above(iv(0.5, 1), 1), no},
		{"[-0.3, -0.1] < 0", below(iv(-0.3, -0.1), 0), yes},
		{"[0, 0.1] < 0", below(iv(0, 0.1), 0), no},
		{"[4.5, 5.5] in [4, 6]", within(iv(4.5, 5.5), 4, 6), yes},
		{"[6.1, 7] in [4, 6]", within(iv(6.1, 7), 4, 6), no},
		{"[3, 5] in [4, 6]", within(iv(3, 5), 4, 6), maybe},
		{"yes and maybe", and(yes, maybe), maybe},
		{"yes and no", and(yes, maybe, no), no},
		{"2 of yes, yes, no", atLeastOf(2, yes, yes, no), yes},
		{"2 of yes, maybe, no", atLeastOf(2, yes, maybe, no), maybe},
		{"2 of yes, no, no", atLeastOf(2, yes, no, no), no},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// segmentsRepeats are the results of the P1 run, one per repeat, with the
// given ops/s of the global (atomic) and segmented locks.
func segmentsRepeats(global, segmented []float64) []Results {
	var rs []Results
	for k := range global {
		rs = append(rs, Results{"segments": {Scenarios: []report.Scenario{
			sc("atomic", func(s *report.Scenario) { s.OpsPerSec = global[k] }),
			sc("segmented", func(s *report.Scenario) { s.OpsPerSec, s.CeilingOpsPerSec = segmented[k], 3200 }),
		}}})
	}
	return rs
}

// A performance row is judged on the interval of its figure: P1's
// segmented/global ratio, taken repeat by repeat.
func TestJudgeOnIntervals(t *testing.T) {
	p1, _ := Select([]string{"P1"})
	cases := []struct {
		name              string
		global, segmented []float64
		want              Verdict
		lo, hi            float64
	}{
		// The throughput swings 2x between repeats but the ratio of
		// each repeat is 7: paired, the interval is [7, 7]. (Unpaired,
		// min over max would give 700/200 = 3.5.)
		{"whole interval >= 6.2", []float64{100, 200, 150}, []float64{700, 1400, 1050}, Reproduced, 7, 7},
		{"none of it", []float64{100, 100, 100}, []float64{300, 500, 400}, NotReproduced, 3, 5},
		{"straddles 6.2", []float64{100, 100, 100}, []float64{500, 700, 650}, Inconclusive, 5, 7},
	}
	for _, c := range cases {
		out := p1[0].Perf(segmentsRepeats(c.global, c.segmented))
		r := out.Intervals["ratio"]
		if out.Verdict != c.want || r.Lo != c.lo || r.Hi != c.hi || r.N != 3 {
			t.Errorf("%s: %s, ratio %+v; want %s on [%v, %v]", c.name, out.Verdict, r, c.want, c.lo, c.hi)
		}
		if !strings.Contains(out.Measured, fmt.Sprintf("[%.1fx, %.1fx] (min-max, 75 %%, n=3)", c.lo, c.hi)) {
			t.Errorf("%s: measured %q, want the interval and its confidence", c.name, out.Measured)
		}
		if out.Figures["ratio"] != r.Median || len(out.Intervals) != len(out.Figures) {
			t.Errorf("%s: figures %v, want the medians of the intervals", c.name, out.Figures)
		}
	}
	// A scenario missing from one repeat fails the row.
	rs := segmentsRepeats([]float64{100, 100, 100}, []float64{700, 700, 700})
	rs[1]["segments"] = &report.Run{}
	if out := p1[0].Perf(rs); out.Verdict != Failed || !strings.Contains(out.Measured, "no atomic") {
		t.Errorf("missing scenario in a repeat: %+v", out)
	}
}

// Execute makes the runs of a performance row Repeats times, each with
// its own --seed and Repeat number, and judges the row on all of them.
func TestExecuteRepeats(t *testing.T) {
	cs, _ := Select([]string{"P1", "S2"})
	var calls []string
	quick := " --duration 500ms"
	runner := func(_ context.Context, r Run, args []string) (*report.Run, error) {
		calls = append(calls, fmt.Sprintf("%s/%d", r.Name, r.Repeat))
		a := strings.Join(args, " ")
		if r.Name == "segments" && !strings.HasSuffix(a, fmt.Sprintf("--duration %s%s --seed %d", perfDuration, quick, r.Repeat)) {
			t.Errorf("repeat %d args %v: want the quick flags then its own seed", r.Repeat, args)
		}
		k := float64(r.Repeat)
		return &report.Run{Scenarios: []report.Scenario{
			sc("atomic", func(s *report.Scenario) { s.OpsPerSec, s.Violations.Overlap = 100*k, 1 }),
			sc("naive", func(s *report.Scenario) { s.Violations.Overlap = 1 }),
			sc("segmented", func(s *report.Scenario) { s.OpsPerSec = 700 * k }),
		}}, nil
	}
	rows := Execute(context.Background(), cs, Options{Quick: true}, runner)
	if strings.Join(calls, ",") != "long-task/0,segments/1,segments/2,segments/3" {
		t.Fatalf("runs %v, want long-task once and segments 3 times", calls)
	}
	if rows[0].ID != "S2" || rows[0].Repeats != 0 || rows[0].Intervals != nil {
		t.Errorf("S2: %+v, want a safety row judged once", rows[0])
	}
	p1 := rows[1]
	if p1.Verdict != Reproduced || p1.Repeats != 3 || p1.Intervals["ratio"].N != 3 || p1.Intervals["global_ops_per_s"].Lo != 100 {
		t.Errorf("P1: %+v", p1)
	}
	quick = ""
	if rows := Execute(context.Background(), cs[1:], Options{}, runner); rows[0].Repeats != FullRepeats {
		t.Errorf("full mode: %d repeats, want %d", rows[0].Repeats, FullRepeats)
	}
	var tbl, md bytes.Buffer
	if err := WriteTable(&tbl, rows); err != nil || !strings.Contains(tbl.String(), "ran 3 times") || !strings.Contains(tbl.String(), "75 % confidence only") {
		t.Errorf("table %v:\n%s", err, tbl.String())
	}
	rep := &Report{Meta: Meta{Mode: "quick"}, Rows: append(rows, Row{ID: "P9", Verdict: Inconclusive})}
	if err := WriteMarkdown(&md, rep); err != nil || !strings.Contains(md.String(), "| ratio | 7 | [7, 7] | min-max, 75 %, n=3 | 7, 7, 7 |") ||
		!strings.Contains(md.String(), "each made 3 times") || !strings.Contains(md.String(), "**inconclusive**") {
		t.Errorf("markdown %v:\n%s", err, md.String())
	}
	if c := rep.Counts(); c[Inconclusive] != 1 || !Inconclusive.Counted() {
		t.Errorf("counts %v: want inconclusive counted", c)
	}
}

// P2's spin and pubsub sweep is reported, not judged: Execute makes it
// once in full mode (no repeat seed) and not at all in quick mode, the
// row reports its figures as single values when it ran, and the progress
// lines say which claim and which run of how many.
func TestExecuteReportedRuns(t *testing.T) {
	cs, _ := Select([]string{"P2"})
	runner := func(calls *[]string) Runner {
		return func(_ context.Context, r Run, args []string) (*report.Run, error) {
			*calls = append(*calls, fmt.Sprintf("%s/%d", r.Name, r.Repeat))
			a := strings.Join(args, " ")
			// One run per client count (variant v1, v2, v3), its think
			// time scaled with the count, its flags last.
			vi := strings.LastIndex(r.Name, "-v")
			n := retryClients[int(r.Name[vi+2]-'1')]
			if r.Reported != strings.Contains(a, "--retry spin,pubsub") || r.Reported && r.Repeat != 0 ||
				!strings.HasSuffix(a, fmt.Sprintf("--clients %d --think exp:mean=%v", n, retryThink(n))) {
				t.Errorf("%s/%d args %v", r.Name, r.Repeat, args)
			}
			var ss []report.Scenario
			pols := []string{"fixed:interval=100ms", "backoff:base=1ms"}
			if r.Reported {
				pols = []string{"spin", "pubsub"}
			}
			for _, pol := range pols {
				for _, n := range []int{n} {
					ss = append(ss, sc("atomic", func(s *report.Scenario) {
						s.Retry, s.Clients, s.OpsPerSec, s.Fairness.JainIndex = pol, n, 150, 0.5
						if strings.HasPrefix(pol, "backoff") {
							s.OpsPerSec, s.Fairness.JainIndex = 200, 0.3
						}
					}))
				}
			}
			return &report.Run{Scenarios: ss}, nil
		}
	}
	for _, quick := range []bool{true, false} {
		var calls, progress []string
		rows := Execute(context.Background(), cs, Options{Quick: quick, Progress: func(m string) { progress = append(progress, m) }}, runner(&calls))
		n, reported := QuickRepeats, 0
		if !quick {
			n, reported = FullRepeats, 1
		}
		once := 0
		for _, c := range calls {
			if strings.HasPrefix(c, "retry-spin-pubsub-") {
				once++
				if !strings.HasSuffix(c, "/0") {
					t.Errorf("quick %v: %s, want a reported run made once, without a repeat", quick, c)
				}
			}
		}
		counts := len(retryClients)
		if len(calls) != (n+reported)*counts || once != reported*counts {
			t.Errorf("quick %v: runs %v, want the judged runs (one per client count) %d times and %d reported ones once", quick, calls, n, reported)
		}
		row := rows[0]
		_, hasSpin := row.Figures["ops_per_s_spin_100"]
		if row.Verdict != Reproduced || hasSpin != !quick || row.Intervals["ops_per_s_spin_100"].N != 0 {
			t.Errorf("quick %v: %s (%s), spin figure %v, intervals %v: want reproduced, spin reported in full mode only, not as an interval",
				quick, row.Verdict, row.Measured, hasSpin, row.Intervals["ops_per_s_spin_100"])
		}
		first := fmt.Sprintf("claim 1 of 1 (P2): run retry, repeat 1 of %d (--clients 10 --think exp:mean=62.5ms) (run 1 of %d)", n, len(calls))
		last := "claim 1 of 1 (P2): reproduced"
		if len(progress) != len(calls)+1 || progress[0] != first || progress[len(progress)-1] != last {
			t.Errorf("quick %v: progress %q, want %q first and %q last", quick, progress, first, last)
		}
	}
	// A reported run without its scenario fails the row (spin doing no
	// work does not: TestJudgesBothWays).
	var calls []string
	bad := runner(&calls)
	rows := Execute(context.Background(), cs, Options{}, func(ctx context.Context, r Run, args []string) (*report.Run, error) {
		res, err := bad(ctx, r, args)
		if r.Name == "retry-spin-pubsub-v3" {
			res.Scenarios = res.Scenarios[:len(res.Scenarios)-1] // no pubsub at 500 clients
		}
		return res, err
	})
	if rows[0].Verdict != Failed || !strings.Contains(rows[0].Measured, "no atomic/pubsub/500") {
		t.Errorf("reported run without pubsub: %s (%s), want failed", rows[0].Verdict, rows[0].Measured)
	}
}

// P6's etcd is reported, not judged: from the one zk-etcd run of full
// mode as a single figure, and absent in quick mode; the verdict is the
// same either way.
func TestP6EtcdReported(t *testing.T) {
	cs, _ := Select([]string{"P6"})
	mk := func(withEtcd bool) []Results {
		var rs []Results
		etcd := &report.Run{Scenarios: []report.Scenario{sc("etcd", func(s *report.Scenario) { s.OpsPerSec, s.RedisCost.ServerCPUMSPer1kOps = 4000, 150 })}}
		for k := range 3 {
			r := Results{
				"zk": {Scenarios: []report.Scenario{sc("zk", func(s *report.Scenario) {
					s.OpsPerSec, s.RedisCost.ServerCPUMSPer1kOps = 2000+float64(k), 200
				})}},
				"zk-redis": {Scenarios: []report.Scenario{sc("atomic", func(s *report.Scenario) { s.OpsPerSec, s.RedisCost.ServerCPUMSPer1kOps = 14000, 25 })}},
			}
			if withEtcd {
				r["zk-etcd"] = etcd
			}
			rs = append(rs, r)
		}
		return rs
	}
	full, quick := cs[0].Perf(mk(true)), cs[0].Perf(mk(false))
	if full.Verdict != Reproduced || quick.Verdict != Reproduced {
		t.Fatalf("full %s (%s), quick %s (%s): want reproduced", full.Verdict, full.Measured, quick.Verdict, quick.Measured)
	}
	if full.Figures["etcd_ops_per_s"] != 4000 || full.Figures["redis_over_etcd"] != 3.5 || full.Intervals["etcd_ops_per_s"].N != 0 ||
		!strings.Contains(full.Measured, "etcd 4000 cycles/s, 150 µs of server CPU per cycle (one run); redis/etcd 3.5x") {
		t.Errorf("full: %s, figures %v: want etcd as one run's figure", full.Measured, full.Figures)
	}
	if _, ok := quick.Figures["etcd_ops_per_s"]; ok || !strings.Contains(quick.Measured, "etcd not run") {
		t.Errorf("quick: %s, figures %v: want no etcd figure", quick.Measured, quick.Figures)
	}
}

// A pooled run (P5's) is made once with --repeat n, and Split gives each
// repeat its sample and its share of the timeline.
func TestExecutePooledRepeats(t *testing.T) {
	cs, _ := Select([]string{"P5"})
	cs[0].Needs = nil // sql-rowlock is a baseline this test build may lack
	var calls []string
	runner := func(_ context.Context, r Run, args []string) (*report.Run, error) {
		calls = append(calls, fmt.Sprintf("%s/%d %v", r.Name, r.Repeat, strings.Contains(strings.Join(args, " "), "--repeat 3")))
		var ss []report.Scenario
		add := func(strategy string, clients int, steady []int64) {
			ss = append(ss, sc(strategy, func(s *report.Scenario) {
				s.Clients = clients
				for k, st := range steady {
					// Each repeat's 2 s: its first second loses the queue's wait.
					s.Timeline = append(s.Timeline, report.Second{TS: float64(2*k + 1), Ops: st / 4}, report.Second{TS: float64(2*k + 2), Ops: st})
					s.Samples = append(s.Samples, report.Sample{OpsPerSec: float64(st+st/4) / 2, Ops: st + st/4})
				}
			}))
		}
		if r.Name == "sql" {
			add("sql-rowlock", 10, []int64{600, 620, 640})
			add("sql-rowlock", 500, []int64{200, 250, 300})
		} else {
			add("atomic", 500, []int64{600, 600, 600})
		}
		return &report.Run{Scenarios: ss}, nil
	}
	rows := Execute(context.Background(), cs, Options{Quick: true}, runner)
	if strings.Join(calls, ",") != "sql/0 true,sql-redis/0 true" {
		t.Fatalf("runs %v, want each made once with --repeat 3", calls)
	}
	r := rows[0]
	hi := r.Intervals["rowlock_ops_per_s_500"]
	if r.Verdict != Reproduced || hi.N != 3 || !slices.Equal(hi.Values, []float64{200, 250, 300}) {
		t.Errorf("P5: %s (%s), 500-client rates %v: want reproduced on each repeat's second second", r.Verdict, r.Measured, hi.Values)
	}
	// A result without a sample per repeat is refused.
	if _, err := Split(&report.Run{Scenarios: []report.Scenario{sc("atomic", nil)}}, 3); err == nil || !strings.Contains(err.Error(), "0 samples") {
		t.Errorf("Split without samples: %v", err)
	}
}

// Pooled repeats whose timelines differ in length (a 2,000-client repeat
// that waited for its clients to stop has more entries) split by each
// sample's count of entries, not into equal shares.
func TestSplitUnevenTimeline(t *testing.T) {
	s := sc("sql-rowlock", func(s *report.Scenario) {
		s.Clients = 2000
		for k, n := range []int{3, 2, 2} {
			for i := range n {
				s.Timeline = append(s.Timeline, report.Second{TS: float64(10*k + i + 1), Ops: int64(100*k + i)})
			}
			s.Samples = append(s.Samples, report.Sample{Ops: int64(k), TimelineEntries: n})
		}
	})
	out, err := Split(&report.Run{Scenarios: []report.Scenario{s}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range [][]int64{{0, 1, 2}, {100, 101}, {200, 201}} {
		var got []int64
		for _, sec := range out[k].Scenarios[0].Timeline {
			got = append(got, sec.Ops)
		}
		if !slices.Equal(got, want) || out[k].Scenarios[0].Ops != int64(k) {
			t.Errorf("repeat %d: timeline ops %v ops %d, want %v and %d", k+1, got, out[k].Scenarios[0].Ops, want, k)
		}
	}
}
