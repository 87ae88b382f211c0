package report

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
)

// TestCeilingAbsentWithReads: readers of rwlock hold its one lock shared,
// so 4 clients that each held it 10 ms for 1,800 operations in 1 s run
// at 18x the exclusive ceiling (1 lock / 10 ms = 100 ops/s): with reads
// counted the ceiling and efficiency are absent (the table's "-"), and
// the invariant check passes; both ways, the same figures without reads
// keep the ceiling (100 ops/s, efficiency 18, which Check refuses as ops
// above the ceiling with no overlap).
func TestCeilingAbsentWithReads(t *testing.T) {
	for _, reads := range []int64{1500, 0} {
		raw := &Raw{WindowS: 1, Runs: 1, Locks: 1, ClientOps: []int64{450, 450, 450, 450}}
		op, hold := metrics.NewHistogram(), metrics.NewHistogram()
		for range 1800 {
			metrics.Record(op, 11*time.Millisecond)
			metrics.Record(hold, 10*time.Millisecond)
		}
		raw.SetHist(HistOp, op)
		raw.SetHist(HistHold, hold)
		s := Scenario{Strategy: "rwlock", Driver: "goredis", Workload: "flash-sale", Retry: "fixed", Clients: 4, Raw: raw}
		s.Counters.Reads = reads
		if err := Derive(&s); err != nil {
			t.Fatal(err)
		}
		run := &Run{Scenarios: []Scenario{s}}
		cell := colCeiling.cell(s) + " " + colEfficiency.cell(s)
		if reads > 0 {
			if s.HasCeiling() || s.Efficiency != 0 || cell != "- -" || Check(run) != nil {
				t.Errorf("with %d reads: ceiling %v efficiency %v (cells %q), check %v; want both absent, shown as -, and no invariant broken", reads, s.CeilingOpsPerSec, s.Efficiency, cell, Check(run))
			}
			continue
		}
		if s.Ops != 1800 || s.CeilingOpsPerSec < 99 || s.CeilingOpsPerSec > 101 || s.Efficiency < 17.8 || s.Efficiency > 18.2 || Check(run) == nil {
			t.Errorf("without reads: ops %d ceiling %v efficiency %v, check %v; want 1800, 100, 18 and ops above the ceiling refused", s.Ops, s.CeilingOpsPerSec, s.Efficiency, Check(run))
		}
	}
}
