package workloads_test

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

// The engine's oracle, liveness registry and history buffer are what the
// worker's observer interfaces take.
var (
	_ workloads.Oracle   = (*metrics.Oracle)(nil)
	_ workloads.Liveness = (*liveness.Tracker)(nil)
	_ workloads.History  = (*history.Buf)(nil)
)

// The violation keys a workload may report are the end check's kinds of
// the result file, every one of them.
func TestViolationKeys(t *testing.T) {
	var want []string
	for _, k := range report.ViolationKinds {
		if k.From == report.FromEndCheck {
			want = append(want, k.Key)
		}
	}
	got := []string{workloads.Oversell, workloads.LostUpdates, workloads.LostAckedWrites}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("workloads' violation keys %v, the result file's end-check kinds %v", got, want)
	}
}

// SetLocks sizes the scenario's oracle and the lock count together.
func TestSetLocks(t *testing.T) {
	var env workloads.Env
	env.SetLocks(3)
	if env.Locks != 3 || env.Oracle == nil {
		t.Fatalf("Locks %d, Oracle %v", env.Locks, env.Oracle)
	}
	env.Oracle.Enter(2)
	if env.Oracle.Enter(2) != true || env.Oracle.Overlaps() != 1 {
		t.Fatalf("a second holder of lock 2: overlaps %d, want 1", env.Oracle.Overlaps())
	}
}
