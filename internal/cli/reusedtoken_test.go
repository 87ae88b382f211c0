package cli

import (
	"path/filepath"
	"testing"
)

// A reentrant lock's token is its owner, the same at every acquire: its
// renewals after an earlier release of that token are the new holder's,
// not orphan renewals. One client holding 1.2 s at a time under a 3 s
// lease (a renewal each second) shows renewals and no orphan renewal, on
// a real redis-server, as the watchdog (a fresh token per acquire) does.
func TestReusedTokenRenewals(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	_, run := runAndRead(t, out, "run", "-q", "--strategy", "reentrant-watchdog,watchdog", "--driver", "goredis",
		"--workload", "lock-cycle", "--keys", "1", "--clients", "1", "--work", "1200ms", "--ttl", "3s",
		"--duration", "4s", "--out", out)
	if len(run.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(run.Scenarios))
	}
	for _, s := range run.Scenarios {
		l := s.Liveness
		if l == nil || !l.Measured {
			t.Fatalf("%s: liveness %+v, want measured", s.Name(), l)
		}
		if s.Ops < 2 || s.StrategyStats["renewals"] < 2 {
			t.Fatalf("%s: %d ops, %v renewals: want at least 2 of each (holds after an earlier release)", s.Name(), s.Ops, s.StrategyStats["renewals"])
		}
		if l.OrphanRenewals != 0 {
			t.Errorf("%s: orphan_renewals %d over %d ops and %v renewals, want 0", s.Name(), l.OrphanRenewals, s.Ops, s.StrategyStats["renewals"])
		}
	}
}
