package chart

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// The timeline chart names a client ramp's clients at its first and last
// intervals in the scenario's legend; a scenario without a ramp keeps its
// plain label.
func TestTimelineRampLegend(t *testing.T) {
	ramped := report.Scenario{Params: map[string]string{"clients_shape": "ramp:from=1,to=8,over=2s"},
		Timeline: []report.Second{{TS: 1, Ops: 100, Clients: 5}, {TS: 2, Ops: 200, Clients: 8}}}
	plain := report.Scenario{Params: map[string]string{}, Timeline: []report.Second{{TS: 1, Ops: 100}, {TS: 2, Ops: 200}}}
	f, err := timeline([]series{{label: "ramped", s: ramped}, {label: "plain", s: plain}})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range f.legend {
		texts = append(texts, e.text)
	}
	if len(texts) != 2 || texts[0] != "ramped (clients 5 to 8)" || texts[1] != "plain" {
		t.Fatalf("legend %q: want the ramp's clients 5 to 8 on the first, the second plain", strings.Join(texts, " | "))
	}
}
