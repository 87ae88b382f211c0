package engine

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/workloads"
)

// A workload's end check may report only the violation kinds the result
// file has keys for; any other key is named, so that the run fails
// instead of reading as safe.
func TestUnknownViolations(t *testing.T) {
	t.Parallel()
	known := map[string]int64{workloads.Oversell: 3, workloads.LostUpdates: 0, workloads.LostAckedWrites: 1}
	if bad := unknownViolations(known); bad != nil {
		t.Fatalf("the three end-check kinds: %v named unknown", bad)
	}
	if got := endCheckKinds(); !slices.Equal(got, []string{workloads.Oversell, workloads.LostUpdates, workloads.LostAckedWrites}) {
		t.Fatalf("end-check kinds %v, want oversell, lost_updates, lost_acked_writes", got)
	}
	mixed := map[string]int64{workloads.Oversell: 1, "double_booking": 5, "overlap": 0}
	if got := unknownViolations(mixed); !slices.Equal(got, []string{"double_booking", "overlap"}) {
		t.Fatalf("unknownViolations: %v, want [double_booking overlap] (overlap is the oracle's, not an end check's)", got)
	}
}
