package cli

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/testlocks"
)

// The renewal margin end to end, in the result file, --fail-on and show:
// a lock that renews at 0.8 x TTL has every renewal in the window late
// (late_renewals = renewals = 1: the renewal of its second hold, made in
// the stop's drain, does not count) and fails --fail-on late_renewals==0; the watchdog has
// none and passes; atomic, which does not renew, has no renewal_margin,
// and a threshold on it fails as not measured.
func TestRenewalMarginFigures(t *testing.T) {
	// In-process runs with servers of their own; testlocks.Late is this
	// test's alone in this package.
	t.Parallel()
	testlocks.ResetLate() // -count=N
	dir := t.TempDir()
	// 5 s leases, 4.3 s of work in a 6 s window: the late lock renews each
	// hold once, 4 s after its grant (about 1 s left, under TTL/3): the
	// first hold's at about 4 s, in the window, the second's at about
	// 8.3 s, in the stop's drain; the watchdog twice a hold, at 1.67 s and
	// 3.33 s (about 3.3 s left).
	common := []string{"run", "-q", "--driver", "rueidis", "--workload", "lock-cycle", "--keys", "1", "--clients", "1",
		"--duration", "6s", "--work", "4300ms", "--ttl", "5s", "--fail-on", "late_renewals==0"}
	// The three runs at once (27 s one after another, 2026-12-04).
	runs := runStrategiesIn(t, dir, common, nil, testlocks.LateRenewal, "watchdog", "atomic")
	late, lateFile, err := runs[testlocks.LateRenewal].sc, runs[testlocks.LateRenewal].file, runs[testlocks.LateRenewal].err
	testlocks.Late.Lock()
	n := len(testlocks.Late.Renewals)
	testlocks.Late.Unlock()
	if m := late.RenewalMargin; err == nil || m == nil || n < 2 || m.Renewals != 1 || m.LateRenewals != 1 {
		t.Fatalf("test-late-renewal: renewal_margin %+v, renewals made %d (want 1 in the window, late, of 2 or more made); --fail-on error %v (want one)", m, n, err)
	}
	wd, err := runs["watchdog"].sc, runs["watchdog"].err
	if m := wd.RenewalMargin; err != nil || m == nil || m.Renewals == 0 || m.LateRenewals != 0 {
		t.Fatalf("watchdog: renewal_margin %+v, error %v; want renewals, none late, no error", m, err)
	}
	at, err := runs["atomic"].sc, runs["atomic"].err
	if at.RenewalMargin != nil || err == nil {
		t.Fatalf("atomic: renewal_margin %+v, error %v; want absent, and the threshold failing as not measured", at.RenewalMargin, err)
	}
	out, err := inProcess(t, "show", lateFile, "--columns", "strategy,margin_min,margin_p1,other")
	want := "1 late)"
	if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "late renew 1") || !strings.Contains(out, "margin p1 ms") {
		t.Fatalf("show: %v, want %q, the late renewals in the other cell and the margin columns:\n%s", err, want, out)
	}
	t.Logf("late_renewals: test-late-renewal %d of %d, watchdog %d of %d\n%s", late.RenewalMargin.LateRenewals, n, wd.RenewalMargin.LateRenewals, wd.RenewalMargin.Renewals, out)
}
