package report

import (
	"slices"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// shareScenario is a scenario whose liveness oracle saw n orphan shares,
// aged ageUS µs each (raw.hists.orphan_share_age).
func shareScenario(t *testing.T, n, ageUS int64) Scenario {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := int64(0); i < n; i++ {
		_ = h.RecordValue(ageUS)
	}
	s := Scenario{Strategy: "rwlock", Driver: "rueidis", Workload: "flash-sale", Retry: "fixed", Clients: 4, Loop: "closed",
		Liveness: &Liveness{Measured: true, Samples: 100, OrphanLocks: n, OrphanShares: n},
		Raw:      &Raw{WindowS: 4, Runs: 1, ClientOps: []int64{1, 1, 1, 1}}}
	s.Raw.SetHist(HistOrphanShareAge, h)
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The orphan shares' ages derive from the raw histogram (absent without
// a share), the counts and ages combine exactly, and they show in the
// other-violations cell, the orphan_shares column and the thresholds'
// metrics (orphan_share_max_ms 0 without a share, unknown when the
// oracle did not measure).
func TestOrphanSharesReport(t *testing.T) {
	a, b := shareScenario(t, 2, 3_000_000), shareScenario(t, 1, 5_000_000)
	if a.Liveness.OrphanShareAgeMS.Count != 2 || a.Liveness.OrphanShareAgeMS.Max < 2990 || a.Liveness.OrphanShareAgeMS.Max > 3010 {
		t.Fatalf("ages %+v, want 2 of 3000 ms", a.Liveness.OrphanShareAgeMS)
	}
	none := shareScenario(t, 0, 0)
	if LatencyMeasured(none.Liveness.OrphanShareAgeMS) {
		t.Fatalf("no share: ages %+v, want absent", none.Liveness.OrphanShareAgeMS)
	}
	sum, err := Combine(Sequential, []Scenario{a, b, none})
	if err != nil {
		t.Fatal(err)
	}
	if l := sum.Liveness; l.OrphanShares != 3 || l.OrphanShareAgeMS.Count != 3 || l.OrphanShareAgeMS.Max < 4990 || l.OrphanShareAgeMS.Max > 5010 {
		t.Fatalf("combined: %d shares, ages %+v; want 3, the oldest 5000 ms", l.OrphanShares, l.OrphanShareAgeMS)
	}
	if got := otherCellOf(sum); got != "orphans 3, orphan shares 3" {
		t.Fatalf("other cell %q", got)
	}
	cols, err := SelectColumns(TableColumns(), TableExtras(), []string{"orphan_shares"})
	if err != nil || !slices.Equal(ColumnKeys(cols), []string{"orphan_shares"}) {
		t.Fatalf("%v, %v", ColumnKeys(cols), err)
	}
	unmeasured := none
	unmeasured.Liveness = &Liveness{NotMeasured: "a constant token"}
	for _, c := range []struct {
		s     Scenario
		cell  string
		max   float64
		known bool
	}{{sum, "3 (max 5001 ms)" /* 5 s to the histogram's 3 figures */, 5000, true}, {none, "0", 0, true}, {unmeasured, "-", 0, false}} {
		if got := cols[0].Cell(c.s); got != c.cell {
			t.Errorf("orphan_shares cell %q, want %q", got, c.cell)
		}
		for _, name := range []string{"orphan_shares", "orphan_share_max_ms"} {
			m, ok := LookupMetric(name)
			if !ok || m.Known(c.s) != c.known {
				t.Fatalf("metric %s: %v, known %v, want %v", name, ok, ok && m.Known(c.s), c.known)
			}
		}
		if m, _ := LookupMetric("orphan_share_max_ms"); c.known && (m.Of(c.s) < c.max-10 || m.Of(c.s) > c.max+10) {
			t.Errorf("orphan_share_max_ms %v, want %v", m.Of(c.s), c.max)
		}
	}
}
