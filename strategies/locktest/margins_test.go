package locktest

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

// Redlock's extends (extend=on) are measured by the worker from the
// lease's own validity (strategies.Validity: the acquire's or last
// extend's start + TTL - drift, less the extend's send time):
// renewal_margin counts the extends that succeeded in the window (at most
// strategy_stats extends, which also counts those of the stop's drain),
// none late with 100 ms of work in a 10 s lease, and none above TTL -
// drift (102 ms) - the work (100 ms) = 9798 ms, where a margin counted
// from the acquire's return would be about 9900 ms; with extend=off
// nothing renews and the figure is absent.
func TestRedlockExtendMargins(t *testing.T) {
	for _, mode := range []string{"on", "off"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel() // own keys (the test's name)
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "redlock", Driver: "rueidis", Workload: "lock-cycle", Retry: policy(t, "fixed:interval=20ms"),
				Clients: 2, Duration: 2 * time.Second, TTL: 10 * time.Second, AcquireTimeout: 30 * time.Second,
				Params:  workloads.Params{Work: workloads.Fixed(100 * time.Millisecond)},
				Options: registry.Values{"keys": 2, "extend": mode}, Seed: 1,
			}})
			m := res.RenewalMargin
			if mode == "off" {
				if m != nil {
					t.Fatalf("extend=off: renewal_margin %+v, want absent", m)
				}
				return
			}
			if m == nil || m.Renewals == 0 || float64(m.Renewals) > res.StrategyStats["extends"] || m.LateRenewals != 0 || m.MinMS == nil || *m.MinMS > 9798 {
				t.Fatalf("extend=on: renewal_margin %+v, extends %v; want the extends in the window, none late, min <= 9798 ms", m, res.StrategyStats["extends"])
			}
			for _, kind := range []string{report.HistMarginFirst, report.HistMarginSecond} {
				h, err := res.Raw.Hist(kind)
				if err != nil {
					t.Fatal(err)
				}
				// The histogram's 3 significant figures: up to about 8 ms over.
				if h != nil && h.TotalCount() > 0 && float64(h.Max())/1000 > 9798+10 {
					t.Fatalf("extend=on: largest margin (%s) %v ms, want <= 9808 ms (TTL - drift - work, + the histogram's precision)", kind, float64(h.Max())/1000)
				}
			}
		})
	}
}
