package report

import (
	"fmt"
	"io"
	"time"
)

// Ramped reports whether s ran a client ramp (--clients ramp:..., stages:...;
// params.clients_shape): its clients ran for different times, its
// clients figure is the ramp's maximum, and its timeline entries carry
// clients, clients_mean and efficiency.
func (s Scenario) Ramped() bool { return s.Params["clients_shape"] != "" }

// HasJain reports whether s has Jain's fairness index: it made operations
// and ran no client ramp (whose clients ran for different times, so that
// their op counts measure the ramp, not fairness: Jain is absent there).
func (s Scenario) HasJain() bool { return s.Ops > 0 && !s.Ramped() }

// ClientsInForce is the clients the bounds count (the ceiling, the think
// bound, a turn): clients, or with a client ramp the clients in force on
// average over the window (raw.client_seconds / raw.window_s).
func (s Scenario) ClientsInForce() float64 {
	if r := s.Raw; r != nil && r.ClientSeconds > 0 && r.WindowS > 0 {
		return r.ClientSeconds / r.WindowS
	}
	return float64(s.Clients)
}

// WriteRampTimelines writes, for every scenario with a client ramp
// (params.clients_shape), its timeline against the client count: one line
// per interval with its end (t_s), the clients in force at its end and
// their mean over it, ops/s, the operation's p99 and the interval's
// efficiency (ops/s over min(clients_mean, locks) / mean hold; "-"
// without a ceiling).
func WriteRampTimelines(w io.Writer, scenarios []Scenario) {
	for _, s := range scenarios {
		shape := s.Params["clients_shape"]
		if shape == "" || len(s.Timeline) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: clients %s, per interval\n", s.Name(), shape)
		fmt.Fprintf(w, "%8s %7s %8s %10s %9s %6s\n", "t_s", "clients", "mean", "ops/s", "p99_ms", "eff")
		prev := 0.0
		if d, err := time.ParseDuration(s.Params["warmup"]); err == nil {
			prev = d.Seconds()
		}
		for _, e := range s.Timeline {
			eff, p99 := "-", "-"
			if e.Efficiency > 0 {
				eff = fmt.Sprintf("%.2f", e.Efficiency)
			}
			if e.OpP99MS > 0 {
				p99 = FormatMS(e.OpP99MS)
			}
			fmt.Fprintf(w, "%8.2f %7d %8.1f %10.0f %9s %6s\n", e.TS, e.Clients, e.ClientsMean, e.OpsPerSec(prev), p99, eff)
			prev = e.TS
		}
	}
}
