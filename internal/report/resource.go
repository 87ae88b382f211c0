package report

import "strconv"

// FigureResourceRejected is the workload figure (Scenario.Figures) of a
// run whose data lives on a separate resource (params.resource separate):
// the fence guard's reads and writes whose fencing token was below the
// highest the resource had seen, counted by the resource's own scripts
// and read at the end check. Absent without a separate resource (not
// measured); 0 when the resource refused nothing (a lock whose tokens do
// not grow, or no stale holder, or a guard that sends no token).
const FigureResourceRejected = "resource_rejected"

// ResourceRejected is s's figures.resource_rejected, and whether it was
// measured.
func (s Scenario) ResourceRejected() (int64, bool) {
	n, ok := s.Figures[FigureResourceRejected]
	return n, ok
}

// colResourceRejected is the --columns column of the separate resource's
// refusals: "-" when not measured.
var colResourceRejected = col("resource_rejected", "res rejected", "fencing tokens the separate resource refused (--resource separate; - otherwise)", func(s Scenario) string {
	n, ok := s.ResourceRejected()
	if !ok {
		return "-"
	}
	return strconv.FormatInt(n, 10)
})
