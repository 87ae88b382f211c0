package report

import "strconv"

// Figures of the transfer workload (Scenario.Figures; workloads'
// FigureBalanceDrift and FigureMultiTimeouts), raw sums that combine by
// addition as every figure does. Absent from another workload's results
// (not measured).
const (
	// FigureBalanceDrift is |Σ final balances − Σ initial balances| of each
	// end check, summed over combined runs: money a broken lock created or
	// destroyed. Absent also when a balance key was missing at the end.
	FigureBalanceDrift = "balance_drift"
	// FigureMultiTimeouts are the multi-key acquires that timed out (or
	// gave up) while they held some of their keys: with order=given, the
	// deadlocks the acquire timeout broke.
	FigureMultiTimeouts = "multi_timeouts"
)

// BalanceDrift is s's figures.balance_drift, and whether it was measured.
func (s Scenario) BalanceDrift() (int64, bool) {
	n, ok := s.Figures[FigureBalanceDrift]
	return n, ok
}

// MultiTimeouts is s's figures.multi_timeouts, and whether it was
// measured.
func (s Scenario) MultiTimeouts() (int64, bool) {
	n, ok := s.Figures[FigureMultiTimeouts]
	return n, ok
}

// transferMetrics are the --fail-on metrics of the transfer workload.
func transferMetrics() []Metric {
	of := func(get func(Scenario) (int64, bool)) (func(Scenario) float64, func(Scenario) bool) {
		return func(s Scenario) float64 { n, _ := get(s); return float64(n) },
			func(s Scenario) bool { _, ok := get(s); return ok }
	}
	drift, driftKnown := of(Scenario.BalanceDrift)
	mt, mtKnown := of(Scenario.MultiTimeouts)
	return []Metric{
		{"balance_drift", "transfer: |final − initial| sum of the accounts' balances, money a broken lock created or destroyed (figures.balance_drift; not measured for another workload, nor when a balance key was missing at the end)",
			drift, driftKnown},
		{"multi_timeouts", "transfer: multi-key acquires that timed out while holding some of their keys, the deadlocks of order=given broken by --acquire-timeout (figures.multi_timeouts; not measured for another workload)",
			mt, mtKnown},
	}
}

// colBalanceDrift is the --columns column of the transfer workload's
// balance drift: "-" when not measured.
var colBalanceDrift = col("balance_drift", "drift", "transfer: |final − initial| sum of the balances (- for another workload)", func(s Scenario) string {
	n, ok := s.BalanceDrift()
	if !ok {
		return "-"
	}
	return strconv.FormatInt(n, 10)
})
