package locktest

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

// Redlock's extends (extend=on) are measured by the worker (the TTL less
// the time since the grant): renewal_margin counts exactly the extends
// that succeeded (strategy_stats extends), none late with 100 ms of work
// in a 10 s lease; with extend=off nothing renews and the figure is
// absent.
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
			if m == nil || m.Renewals == 0 || float64(m.Renewals) != res.StrategyStats["extends"] || m.LateRenewals != 0 || m.MinMS == nil || *m.MinMS > 9900 {
				t.Fatalf("extend=on: renewal_margin %+v, extends %v; want every extend, none late, min <= 9900 ms", m, res.StrategyStats["extends"])
			}
		})
	}
}
