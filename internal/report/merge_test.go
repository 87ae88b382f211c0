package report

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

func encoded(ms ...int) string {
	h := metrics.NewHistogram()
	for _, v := range ms {
		metrics.Record(h, time.Duration(v)*time.Millisecond)
	}
	b, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b)
}

func TestMerge(t *testing.T) {
	sc := func(ops int64, hist string, overlap int64) Scenario {
		raw := &Raw{WindowS: 1, Runs: 1}
		if hist != "" {
			raw.Hists = map[string]string{HistOp: hist}
		}
		return Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 10,
			Ops: ops, OpsPerSec: float64(ops), DurationS: 1, LatencyHist: hist, Violations: Violations{Overlap: overlap},
			Figures: map[string]int64{"sold": ops}, Raw: raw}
	}
	a := &Run{Schema: Schema, Scenarios: []Scenario{sc(3, encoded(1, 2, 3), 0)}}
	b := &Run{Schema: Schema, Scenarios: []Scenario{sc(2, encoded(100, 200), 1)}}
	m, err := Merge([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Scenarios[0]
	if s.Ops != 5 || s.OpsPerSec != 5 || s.Clients != 20 || s.Violations.Overlap != 1 || s.Figures["sold"] != 5 {
		t.Fatalf("merged %+v", s)
	}
	if s.LatencyMS.Count != 5 || s.LatencyMS.Max < 199 || s.LatencyMS.P50 > 3.1 {
		t.Fatalf("merged latency %+v", s.LatencyMS)
	}
	// Open loop: each machine (segment) ran its own arrivals, so the
	// rates and the arrival counts add up.
	oa, ob := sc(3, "", 0), sc(2, "", 0)
	oa.Loop, oa.OfferedRate, oa.Offered, oa.Dropped, oa.Undecided = "open", 150, 300, 4, 2
	ob.Loop, ob.OfferedRate, ob.Offered, ob.Dropped, ob.Undecided = "open", 150, 298, 1, 3
	om, err := Merge([]*Run{{Schema: Schema, Scenarios: []Scenario{oa}}, {Schema: Schema, Scenarios: []Scenario{ob}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := om.Scenarios[0]; s.OfferedRate != 300 || s.Offered != 598 || s.Dropped != 5 || s.Undecided != 5 {
		t.Fatalf("merged open loop: offered_rate %v, offered %d, dropped %d, undecided %d; want 300, 598, 5, 5",
			s.OfferedRate, s.Offered, s.Dropped, s.Undecided)
	}
	other := &Run{Schema: Schema, Scenarios: []Scenario{{Strategy: "naive"}}}
	if _, err := Merge([]*Run{a, other}); err == nil {
		t.Fatal("runs with nothing in common merged")
	}
	// Files that ran different scenarios, in either order; a file
	// written before raw data; a file of pooled repeats.
	both := &Run{Schema: Schema, Scenarios: []Scenario{sc(2, "", 0), {Strategy: "naive", Raw: &Raw{Runs: 1}}}}
	for _, rs := range [][]*Run{{a, both}, {both, a}} {
		if _, err := Merge(rs); err == nil || !strings.Contains(err.Error(), "merge files that ran the same scenarios") {
			t.Errorf("files of different scenarios: %v", err)
		}
	}
	old := sc(2, "", 0)
	old.Raw = nil
	if _, err := Merge([]*Run{a, {Schema: Schema, Scenarios: []Scenario{old}}}); err == nil || !strings.Contains(err.Error(), "no raw data") {
		t.Errorf("a file without raw data: %v", err)
	}
	rep := sc(2, "", 0)
	rep.Raw.Runs = 3
	if _, err := Merge([]*Run{a, {Schema: Schema, Scenarios: []Scenario{rep}}}); err == nil || !strings.Contains(err.Error(), "pools 3 repeats") {
		t.Errorf("a file of repeats: %v", err)
	}
}

// Timelines of machines that ran together add up second by second.
func TestMergeTimeline(t *testing.T) {
	sc := func(tl ...Second) Scenario {
		return Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Timeline: tl, Raw: &Raw{WindowS: 2.5, Runs: 1}}
	}
	a := &Run{Schema: Schema, Scenarios: []Scenario{sc(Second{TS: 1, Ops: 10, Errors: 1}, Second{TS: 1.9, Ops: 5})}}
	b := &Run{Schema: Schema, Scenarios: []Scenario{sc(Second{TS: 1, Ops: 7, Violations: 2}, Second{TS: 2, Ops: 6}, Second{TS: 2.5, Ops: 3})}}
	m, err := Merge([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := []Second{{TS: 1, Ops: 17, Errors: 1, Violations: 2}, {TS: 2, Ops: 11}, {TS: 2.5, Ops: 3}}
	got := m.Scenarios[0].Timeline
	if len(got) != len(want) {
		t.Fatalf("merged timeline %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("merged timeline %+v, want %+v", got, want)
		}
	}
	if a.Scenarios[0].Timeline[0].Ops != 10 {
		t.Fatal("merge modified its input")
	}
}
