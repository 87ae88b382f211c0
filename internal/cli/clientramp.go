package cli

// run's --clients: a count, or a client ramp inside the run (a shape of
// internal/arrival read as a client count over time), and the ramp's
// per-interval lines after the table.

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
)

// clientRampForms are the client ramps --clients takes besides a count.
const clientRampForms = "ramp:from=N1,to=N2,over=D or stages:[start=N0,]D1=N1,D2=N2,..."

// clientsValue is run's --clients (pflag.Value): a whole count
// (f.clients, f.clientShape nil), or a client ramp (parseClientShape:
// f.clientShape, f.clients its maximum). A value that is neither is
// refused as the flag is set, so a scenario file's clients: is checked
// even where the command line overrides it.
type clientsValue struct{ f *runFlags }

func (v clientsValue) String() string {
	if v.f.clientShape != nil {
		return v.f.clientShape.String()
	}
	return strconv.Itoa(v.f.clients)
}

func (v clientsValue) Type() string { return "N|ramp" }

func (v clientsValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		v.f.clients, v.f.clientShape = n, nil
		return nil
	}
	sh, err := parseClientShape(s)
	if err != nil {
		return err
	}
	v.f.clients, v.f.clientShape = engine.MaxClientsOf(sh), sh
	return nil
}

// parseClientShape reads a client ramp: ramp:from=N1,to=N2,over=D or
// stages:[start=N0,]D1=N1,... (the grammar of --rate's shapes, arrival.Parse,
// with client counts for rates). The count at each moment is the shape's
// value rounded (engine.ClientsAt); the ramp must reach 1 to maxClients
// clients.
func parseClientShape(s string) (*arrival.Shape, error) {
	name, _, _ := strings.Cut(s, ":")
	if name != "ramp" && name != "stages" {
		return nil, fmt.Errorf("want a client count (1 to %d) or a client ramp, %s", maxClients, clientRampForms)
	}
	sh, err := arrival.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("a client ramp: %w (the values are client counts: want %s)", err, clientRampForms)
	}
	if n := engine.MaxClientsOf(sh); n < 1 || n > maxClients {
		return nil, fmt.Errorf("a client ramp must reach 1 to %d clients, %s reaches %d", maxClients, s, n)
	}
	return sh, nil
}

// clientRampChecks refuses what does not go with a client ramp: --rate
// (an open loop: its arrivals decide the load; ramp them with --rate's
// own shapes instead). --procs and --segment are refused by
// parseSegment (the ramp runs in one process).
func (b *planBuilder) clientRampChecks() {
	f := b.f
	if f.clientShape == nil {
		return
	}
	if rateOpen(f) {
		// engine.Validate refuses it too, per scenario: reported once.
		b.addOnce([]error{engine.ErrRampOpenLoop})
	}
}

// printRampTimelines writes, for every scenario with a client ramp
// (params.clients_shape), its timeline against the client count: one line
// per interval with its end (t_s), the clients in force at its end and
// their mean over it, ops/s, the operation's p99 and the interval's
// efficiency (ops/s over min(clients_mean, locks) / mean hold; "-"
// without a ceiling).
func printRampTimelines(w io.Writer, scenarios []report.Scenario) {
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
				p99 = report.FormatMS(e.OpP99MS)
			}
			fmt.Fprintf(w, "%8.2f %7d %8.1f %10.0f %9s %6s\n", e.TS, e.Clients, e.ClientsMean, e.OpsPerSec(prev), p99, eff)
			prev = e.TS
		}
	}
}
