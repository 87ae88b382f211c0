package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"

	"github.com/lockbench/lockbench/internal/report"
)

// ansi matches the terminal control sequences the bars draw with.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// At 80 columns, a bar with a long scenario name renders no line over 80
// runes, and keeps its figures: the name gives way first.
func TestProgressFits80Columns(t *testing.T) {
	buf := &syncBuffer{}
	refresh := make(chan any)
	lp := newLiveProgress(buf, 12, mpb.WithManualRefresh(refresh), mpb.WithWidth(80))
	name := "redlock-watchdog-fencing rueidis flash-sale-multi-sku backoff-jitter, 10000 clients"
	b := lp.scenario(10, name, 90*time.Second)
	drawn(t, buf, refresh, "s starting\n")
	b.second(report.Second{TS: 1, Ops: 123456, Errors: 12345, Violations: 678})
	drawn(t, buf, refresh, "123456 ops/s errors 12345 overlap 678\n")
	res := report.Scenario{OpsPerSec: 12345, DurationS: 90, StopReason: "duration",
		Violations: report.Violations{Overlap: 1234, Oversell: 56, LostUpdates: 78}}
	b.finishShort(scenarioSummary(res), shortSummary(res))
	drawn(t, buf, refresh, "12345 ops/s overlap 1234 oversell 56 lost upd 78 90.0s\n")
	lp.close()
	lines := strings.FieldsFunc(ansi.ReplaceAllString(buf.String(), ""), func(r rune) bool { return r == '\n' || r == '\r' })
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d runes at 80 columns: %q", n, l)
		}
	}
	if !strings.Contains(buf.String(), "[11/12] redlock") {
		t.Errorf("the bar lost its scenario number or name's start:\n%q", buf.String())
	}
}
