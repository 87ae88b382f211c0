package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
)

// bgCounts are background counts of n commands done, each taking us µs,
// with errs errors and drops dropped.
func bgCounts(n, errs, drops int64, us int) BackgroundCounts {
	h := metrics.NewHistogram()
	for i := int64(0); i < n; i++ {
		metrics.Record(h, time.Duration(us)*time.Microsecond)
	}
	c := BackgroundCounts{Offered: n + errs + drops, Sent: n + errs, Done: n, Errors: errs, Dropped: drops, Hist: EncodeHist(h)}
	if errs > 0 {
		c.ErrorSample = "i/o timeout"
	}
	return c
}

// Combine adds the background traffic up: each command kind's counts
// summed and histograms merged (so the merged latency is over every
// command of both), a kind only one side sent kept, and the figures
// derived over the combined window (Concurrent: the longest; Sequential:
// their sum). A side without background (a follower segment) adds
// nothing; a combination of scenarios without any has none. Check holds
// the counts to offered = sent + dropped and sent = done + errors.
func TestBackgroundCombine(t *testing.T) {
	a := rawScenario(t, 2, 1000, 1000)
	a.Raw.Background = &BackgroundRaw{Commands: map[string]BackgroundCounts{
		"get": bgCounts(4000, 0, 0, 500), "set": bgCounts(1000, 2, 3, 800)}}
	b := rawScenario(t, 2, 1000)
	b.Raw.Background = &BackgroundRaw{Commands: map[string]BackgroundCounts{
		"get": bgCounts(3000, 1, 4, 20000), "incr": bgCounts(100, 0, 0, 300)}}
	for _, s := range []*Scenario{&a, &b} {
		if err := Derive(s); err != nil {
			t.Fatal(err)
		}
	}
	if a.Background == nil || a.Background.Done != 5000 || a.Background.Errors != 2 || a.Background.Dropped != 3 || a.Background.Offered != 5005 ||
		math.Abs(a.Background.DonePerSec-2500) > 1e-9 || a.Background.Commands["get"].LatencyMS.P50 != 0.5 {
		t.Fatalf("derived %+v", a.Background)
	}
	if err := Check(&Run{Scenarios: []Scenario{a, b}}); err != nil {
		t.Errorf("consistent background counts: %v", err)
	}
	bad := a
	bad.Raw = cloneRaw(a.Raw)
	get := bad.Raw.Background.Commands["get"]
	get.Done--
	bad.Raw.Background.Commands["get"] = get
	if err := Check(&Run{Scenarios: []Scenario{bad}}); err == nil || !strings.Contains(err.Error(), "raw.background.commands.get: offered 4000, sent 4000, dropped 0, done 3999, errors 0") {
		t.Errorf("a command sent that neither ended nor failed: %v", err)
	}
	plain := rawScenario(t, 2, 1000)
	for mode, window := range map[Mode]float64{Concurrent: 2, Sequential: 6} { // three runs of 2 s
		c, err := Combine(mode, []Scenario{a, b, plain})
		if err != nil {
			t.Fatal(err)
		}
		get := c.Raw.Background.Commands["get"]
		if get.Offered != 7005 || get.Sent != 7001 || get.Done != 7000 || get.Errors != 1 || get.Dropped != 4 || get.ErrorSample != "i/o timeout" {
			t.Errorf("mode %v: get counts %+v", mode, get)
		}
		if set, incr := c.Raw.Background.Commands["set"], c.Raw.Background.Commands["incr"]; set.Done != 1000 || set.Errors != 2 || incr.Done != 100 {
			t.Errorf("mode %v: set %+v, incr %+v", mode, set, incr)
		}
		g := c.Background.Commands["get"]
		// 4000 at 0.5 ms and 3000 at 20 ms: the median is 0.5 ms, p99 20 ms.
		if g.LatencyMS.Count != 7000 || g.LatencyMS.P50 != 0.5 || math.Abs(g.LatencyMS.P99-20) > 0.02 || math.Abs(g.DonePerSec-7000/window) > 1e-9 {
			t.Errorf("mode %v: get figures %+v, want 7000 done over %v s", mode, g, window)
		}
		all := c.Background
		if all.Done != 8100 || all.Errors != 3 || all.Dropped != 7 || all.LatencyMS.Count != 8100 || math.Abs(all.OfferedPerSec-float64(all.Offered)/window) > 1e-9 {
			t.Errorf("mode %v: figures %+v", mode, all)
		}
		if a.Raw.Background.Commands["get"].Done != 4000 || len(a.Raw.Background.Commands) != 2 {
			t.Errorf("mode %v: Combine changed its input: %+v", mode, a.Raw.Background.Commands)
		}
	}
	c, err := Combine(Sequential, []Scenario{plain, plain})
	if err != nil {
		t.Fatal(err)
	}
	if c.Background != nil || c.Raw.Background != nil {
		t.Errorf("no background traffic, combined: %+v, raw %+v", c.Background, c.Raw.Background)
	}
	c, err = Combine(Concurrent, []Scenario{plain, a})
	if err != nil {
		t.Fatal(err)
	}
	if c.Background == nil || c.Background.Done != 5000 {
		t.Errorf("a follower without background and a leader with: %+v", c.Background)
	}
}
