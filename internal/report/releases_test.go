package report

import (
	"slices"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// releaseScenario is a scenario of n releases of fast µs and slow
// releases of slowUS µs, with hung hung releases and a TTL of ttl.
func releaseScenario(t *testing.T, n, fast, slow, slowUS, hung int64, ttl time.Duration) Scenario {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := int64(0); i < n; i++ {
		_ = h.RecordValue(fast)
	}
	for i := int64(0); i < slow; i++ {
		_ = h.RecordValue(slowUS)
	}
	s := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "fixed", Clients: 4,
		Params: map[string]string{"ttl": ttl.String()}, Loop: "closed",
		Counters: Counters{HungReleases: hung},
		Raw:      &Raw{WindowS: 4, Runs: 1, ClientOps: []int64{1, 1, 1, 1}}}
	s.Raw.SetHist(HistRelease, h)
	if err := Derive(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// slow_releases counts the releases over max(10 x p50, TTL/2), from the
// histogram, so that a combination counts them exactly; hung_releases
// add up; both show in the table's other cell, and the release p99 and
// max are columns of --columns.
func TestSlowAndHungReleases(t *testing.T) {
	a := releaseScenario(t, 100, 500, 3, 600_000, 2, time.Second) // 0.5 ms releases; 3 of 600 ms > 500 ms
	if a.SlowReleases != 3 || a.SlowReleaseBoundMS != 500 {
		t.Fatalf("slow %d over %v ms, want 3 over 500", a.SlowReleases, a.SlowReleaseBoundMS)
	}
	// The p50 term: with a p50 of 80 ms the bound is 800 ms, not TTL/2.
	b := releaseScenario(t, 100, 80_000, 4, 900_000, 1, time.Second)
	if b.SlowReleases != 4 || b.SlowReleaseBoundMS < 790 || b.SlowReleaseBoundMS > 810 {
		t.Fatalf("slow %d over %v ms, want 4 over 800", b.SlowReleases, b.SlowReleaseBoundMS)
	}
	// No TTL: not measured.
	if c := releaseScenario(t, 10, 500, 1, 600_000, 0, 0); c.SlowReleases != 0 || c.SlowReleaseBoundMS != 0 {
		t.Fatalf("without a TTL: slow %d over %v ms, want nothing", c.SlowReleases, c.SlowReleaseBoundMS)
	}
	x := releaseScenario(t, 100, 500, 3, 600_000, 2, time.Second)
	sum, err := Combine(Sequential, []Scenario{a, x})
	if err != nil {
		t.Fatal(err)
	}
	if sum.SlowReleases != 6 || sum.Counters.HungReleases != 4 {
		t.Fatalf("combined: slow %d, hung %d; want 6 and 4", sum.SlowReleases, sum.Counters.HungReleases)
	}
	if got := otherCell(sum.Violations, nil, sum.SlowReleases, sum.Counters.HungReleases); got != "slow rel 6, hung rel 4" {
		t.Fatalf("other cell %q", got)
	}
	cols, err := SelectColumns(TableColumns(), TableExtras(), []string{"release_p99", "release_max"})
	if err != nil || !slices.Equal(ColumnKeys(cols), []string{"release_p99", "release_max"}) {
		t.Fatalf("%v, %v", ColumnKeys(cols), err)
	}
	if p99, mx := cols[0].Cell(sum), cols[1].Cell(sum); p99 != "600" || mx != "600" {
		t.Fatalf("release p99 %q, max %q; want 600 and 600", p99, mx)
	}
	for _, name := range []string{"slow_releases", "hung_releases"} {
		m, ok := LookupMetric(name)
		if !ok || (m.Known != nil && !m.Known(sum)) {
			t.Fatalf("metric %s: %v, known %v", name, ok, m.Known != nil && m.Known(sum))
		}
	}
}
