package report

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
)

// roleScenario is a scenario of two roles over a window of 1 s: readers
// (3 clients) with reads ops whose acquires took 1 ms, and writers (1)
// with writes ops whose acquires took 10 ms and overlap overlaps.
func roleScenario(reads, writes, overlap int64) Scenario {
	raw := &Raw{WindowS: 1, Runs: 1, Roles: map[string]*RoleRaw{}}
	op := metrics.NewHistogram()
	for _, r := range []struct {
		name    string
		clients int
		ops     int64
		acq     time.Duration
		overlap int64
	}{{"read", 3, reads, time.Millisecond, 0}, {"write", 1, writes, 10 * time.Millisecond, overlap}} {
		h, a := metrics.NewHistogram(), metrics.NewHistogram()
		for range r.ops {
			metrics.Record(h, 2*r.acq)
			metrics.Record(op, 2*r.acq)
			metrics.Record(a, r.acq)
		}
		raw.Roles[r.name] = &RoleRaw{Clients: r.clients, Ops: r.ops,
			Hists:      map[string]string{HistOp: EncodeHist(h), HistAcquire: EncodeHist(a)},
			Violations: map[string]int64{"overlap": r.overlap, "lost_leases": 0}}
	}
	raw.SetHist(HistOp, op)
	s := Scenario{Strategy: "rwlock", Driver: "goredis", Workload: "flash-sale", Retry: "fixed", Clients: 4, Raw: raw}
	if err := Derive(&s); err != nil {
		panic(err)
	}
	return s
}

// Each role's figures derive from its raw data, combine (segments add
// their clients, repeats keep them; counts add up, histograms merge),
// are thresholds' metrics, and are absent without roles.
func TestRolesDeriveCombine(t *testing.T) {
	a := roleScenario(30, 10, 2)
	w := a.Roles["write"]
	if w.Clients != 1 || w.Ops != 10 || w.OpsPerSec != 10 || w.AcquireMS.P50 < 9.9 || w.AcquireMS.P50 > 10.1 || w.ViolationsTotal != 2 {
		t.Fatalf("derived write role %+v", w)
	}
	if r := a.Roles["read"]; r.Ops+w.Ops != a.Ops || r.ViolationsTotal != 0 || r.AcquireMS.P99 > 1.01 {
		t.Fatalf("derived read role %+v (scenario ops %d)", r, a.Ops)
	}
	b := roleScenario(20, 5, 1)
	for _, c := range []struct {
		mode    Mode
		clients int
	}{{Concurrent, 2}, {Sequential, 1}} {
		s, err := Combine(c.mode, []Scenario{a, b})
		if err != nil {
			t.Fatal(err)
		}
		w := s.Roles["write"]
		if w.Clients != c.clients || w.Ops != 15 || w.AcquireMS.Count != 15 || w.Violations["overlap"] != 3 || s.Roles["read"].Ops != 50 {
			t.Errorf("mode %d: combined write role %+v, read %+v", c.mode, w, s.Roles["read"])
		}
		for name, want := range map[string]float64{"role_write_ops": 15, "role_write_violations": 3, "role_read_ops": 50} {
			m, _ := LookupMetric(name)
			if !m.Known(s) || m.Of(s) != want {
				t.Errorf("%s: known %v, %g; want %g", name, m.Known(s), m.Of(s), want)
			}
		}
		if m, _ := LookupMetric("role_nested_ops"); m.Known(s) {
			t.Error("role_nested_ops known without a nested role")
		}
		if a.Raw.Roles["write"].Ops != 10 {
			t.Fatal("Combine changed its input's raw roles")
		}
	}
	plain := roleScenario(1, 1, 0)
	plain.Raw.Roles = nil
	if err := Derive(&plain); err != nil || plain.Roles != nil {
		t.Fatalf("no roles, yet %v (%v)", plain.Roles, err)
	}
	if m, _ := LookupMetric("role_write_acquire_p99_ms"); m.Known(plain) {
		t.Error("role_write_acquire_p99_ms known without roles")
	}
	s, err := Combine(Concurrent, []Scenario{a, plain})
	if err != nil || s.Roles != nil {
		t.Errorf("an input without roles, yet combined roles %v (%v)", s.Roles, err)
	}
	if err := Check(&Run{Scenarios: []Scenario{a}}); err != nil {
		t.Errorf("invariants: %v", err)
	}
	broken := roleScenario(30, 10, 2)
	broken.Raw.Roles["write"].Ops++ // the roles' ops no longer sum to the scenario's
	if err := Derive(&broken); err != nil {
		t.Fatal(err)
	}
	if err := Check(&Run{Scenarios: []Scenario{broken}}); err == nil || !strings.Contains(err.Error(), "role write: ops 11, but its operation histogram has 10 values") {
		t.Errorf("broken roles: %v", err)
	}
	var out strings.Builder
	if err := RoleLines(&out, []Scenario{plain, a}); err != nil {
		t.Fatal(err)
	}
	want := "roles (rwlock/goredis/flash-sale/fixed): write 1 client 10 ops/s, acquire p50 10.0 ms p99 10.0 ms, violations 2 (overlap 2); read 3 clients 30 ops/s, acquire p50 1.00 ms p99 1.00 ms, violations 0\n"
	if out.String() != want {
		t.Errorf("RoleLines:\n%s\nwant\n%s", out.String(), want)
	}
}
