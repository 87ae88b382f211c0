package report

import (
	"fmt"
	"io"
	"strconv"
)

// Sweep is meta.sweep: the parameter a lockbench sweep varies and its
// values. Every cell of the matrix (strategy x driver x workload x retry)
// has one scenario per value, in the values' order.
type Sweep struct {
	// Param is the swept parameter: "clients".
	Param string `json:"param"`
	// Spec is --clients as given (1..1000, 1,10,100).
	Spec string `json:"spec"`
	// Clients are the counts, ascending.
	Clients []int `json:"clients"`
}

// CeilingMinHoldMicros is the shortest mean hold time (µs) from which the
// lock-bound ceiling is computed. Hold times are recorded in whole µs,
// truncated, and clamped up to 1 µs (the histograms' resolution), so the
// recorded mean is off by up to 1 µs; from a 10 µs mean that is at most
// 10 %. Below it (--work 0s holds for well under a microsecond) the
// ceiling would be an artefact of the resolution, billions of ops/s: it
// is left out (0), and so is the efficiency. A run without critical-section
// work (--work 0s) has no ceiling either, whatever its holds measured.
const CeilingMinHoldMicros = 10

// HasCeiling reports whether the scenario has a lock-bound ceiling (and so
// an efficiency): a lock was held, with critical-section work, for a mean
// of CeilingMinHoldMicros or more, in a scenario without reads. Threshold results on efficiency without one are "not measured".
func (s Scenario) HasCeiling() bool { return s.CeilingOpsPerSec > 0 }

// NotMeasuredNote says where a figure not measured (a threshold's
// NotMeasured) is explained: the missing ceiling (efficiency,
// acquire_p99_per_turn), or the liveness oracle's not_measured.
func NotMeasuredNote(metric string) string {
	if metric == "efficiency" || metric == "acquire_p99_per_turn" {
		return fmt.Sprintf("no lock-bound ceiling: no lock held, no critical-section work (--work 0s), a mean hold under %d µs, or reads (they may hold the lock shared)", CeilingMinHoldMicros)
	}
	return "see liveness.not_measured"
}

// CellNames are the labels of scenarios' matrix cells, one per scenario:
// its Name (strategy/driver/workload/retry policy's name), or, where two of
// the scenarios of one strategy, driver and workload have retry policies of
// one name and different specs (fixed:interval=10ms beside
// fixed:interval=50ms), strategy/driver/workload/<the whole spec>, so that
// no two cells share a label.
func CellNames(scenarios []Scenario) []string {
	specs := map[string]map[string]bool{}
	for _, s := range scenarios {
		if specs[s.Name()] == nil {
			specs[s.Name()] = map[string]bool{}
		}
		specs[s.Name()][s.Retry] = true
	}
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.Name()
		if len(specs[out[i]]) > 1 {
			out[i] = s.Strategy + "/" + s.Driver + "/" + s.Workload + "/" + s.Retry
		}
	}
	return out
}

// SweepSeries are a run's scenarios by matrix cell (CellNames), cells in
// order of first appearance, each cell's scenarios in file order (a
// sweep's: by ascending clients).
func SweepSeries(scenarios []Scenario) (names []string, cells map[string][]Scenario) {
	cells = map[string][]Scenario{}
	labels := CellNames(scenarios)
	for i, s := range scenarios {
		n := labels[i]
		if _, ok := cells[n]; !ok {
			names = append(names, n)
		}
		cells[n] = append(cells[n], s)
	}
	return names, cells
}

// SweepTable writes a sweep's table, one row per scenario grouped by
// matrix cell: clients, ops/s, the lock-bound ceiling, efficiency, Jain's
// index, the acquire wait's p99 (ms), the whole operation's p99 (ms),
// Redis commands per operation, violations (every kind not zero, by name)
// and errors ("-" for a figure
// not measured: no ceiling, no command count); then one line per cell:
// its peak ops/s and what is left of it at the largest count.
func SweepTable(w io.Writer, scenarios []Scenario) error {
	return SweepTableOf(w, scenarios, SweepColumns())
}

// peakLine is a cell's peak ops/s and its client count, and the ops/s at
// the largest count as a share of the peak; "" for fewer than two counts.
func peakLine(ss []Scenario) string {
	if len(ss) < 2 {
		return ""
	}
	peak, last := ss[0], ss[0]
	for _, s := range ss {
		if s.OpsPerSec >= peak.OpsPerSec { // a tie: the larger count
			peak = s
		}
		if s.Clients >= last.Clients {
			last = s
		}
	}
	if peak.Clients == last.Clients || peak.OpsPerSec == 0 {
		return fmt.Sprintf("ops/s highest at the largest count, %.0f at %s", last.OpsPerSec, ClientsText(last.Clients))
	}
	return fmt.Sprintf("peak %.0f ops/s at %s; at %s %.0f ops/s, %.0f %% of the peak",
		peak.OpsPerSec, ClientsText(peak.Clients), ClientsText(last.Clients), last.OpsPerSec, 100*last.OpsPerSec/peak.OpsPerSec)
}

// ClientsText is "1 client", "10 clients": a client count as the sweep
// table's peak lines and the charts' labels write it.
func ClientsText(n int) string {
	if n == 1 {
		return "1 client"
	}
	return strconv.Itoa(n) + " clients"
}
