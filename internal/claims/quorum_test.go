package claims

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// effect is what one client count of P2 or P3 shows over the repeats:
// the effect over the whole interval (yes), none of it (no: for P2 either
// half of its "and"), or an interval straddling the threshold (maybe).
type effect string

const (
	shows     effect = "yes"
	lacks     effect = "no"
	lacksJain effect = "no (fairer)" // P2 only: faster but not less fair
	straddles effect = "maybe"
)

// retryResults are the results of 3 repeats of the retry sweep, the
// client count retryClients[i] showing effects[i] for claim id (P2 or P3).
func retryResults(t *testing.T, id string, effects [3]effect) []Results {
	t.Helper()
	if len(retryClients) != len(effects) {
		t.Fatalf("retryClients %v: want 3 client counts", retryClients)
	}
	return repeats(3, func(k int) Results {
		var ss []report.Scenario
		for i, n := range retryClients {
			e := effects[i]
			// P2: backoff/fixed ops/s >= 1.1 and Jain backoff - fixed < 0.
			backoffOps, backoffJain := 180+float64(k), 0.3 // 1.20x-1.21x, -0.2
			switch e {
			case lacks:
				backoffOps = 150 + float64(k) // 1.00x-1.01x
			case lacksJain:
				backoffJain = 0.6 // +0.1
			case straddles:
				backoffOps = []float64{150, 170, 180}[k] // 1.00x, 1.13x, 1.20x
			}
			// P3: fixed / backoff p99 command rate >= 2.
			fixedP99 := 3000 + float64(k) // 3.0x
			switch e {
			case lacks:
				fixedP99 = 1200 + float64(k) // 1.2x
			case straddles:
				fixedP99 = []float64{1500, 2500, 3000}[k] // 1.5x, 2.5x, 3.0x
			}
			load := func(p99 float64) *report.ServerLoad {
				return &report.ServerLoad{IntervalMS: 10, Samples: 100, MeanPerSec: p99 / 2, P99PerSec: p99, PeakPerSec: 2 * p99, PeakToMean: 4}
			}
			for _, pol := range []string{"fixed:interval=100ms", "backoff:base=1ms"} {
				ss = append(ss, worked("atomic", "hot-key", func(s *report.Scenario) {
					s.Retry, s.Clients, s.OpsPerSec, s.Fairness.JainIndex, s.RedisCost.CommandsPerOp = pol, n, 150, 0.5, 12
					s.ServerLoad = load(1000)
					switch {
					case strings.HasPrefix(pol, "backoff"):
						s.OpsPerSec, s.Fairness.JainIndex = backoffOps, backoffJain
					case strings.HasPrefix(pol, "fixed"):
						s.ServerLoad = load(fixedP99)
					}
				}))
			}
		}
		return Results{"retry": run(ss...)}
	})
}

// P2 and P3 hold "at >= 2 of the 3 client counts": 2 of 3 counts showing
// the effect reproduce the claim, 1 of 3 does not, and taking the effect
// away from one count at a time moves the verdict across that line. A
// rule weakened to 1 of 3 (or strengthened to 3 of 3) fails here.
func TestRetryRowsNeedTwoOfThreeCounts(t *testing.T) {
	for _, id := range []string{"P2", "P3"} {
		cs, err := Select([]string{id})
		if err != nil {
			t.Fatal(err)
		}
		c := cs[0]
		if !strings.HasPrefix(c.Rule, "at >= 2 of the 3 client counts") {
			t.Errorf("%s: rule %q, want it to say 2 of the 3 client counts", id, c.Rule)
		}
		no := []effect{lacks}
		if id == "P2" {
			no = append(no, lacksJain) // either half of P2's "and" failing takes the effect away
		}
		// Every combination of counts showing the effect and not: the
		// verdict is reproduced exactly when 2 or 3 of them show it.
		for _, off := range no {
			for mask := range 8 {
				var es [3]effect
				showing := 0
				for i := range es {
					es[i] = off
					if mask&(1<<i) != 0 {
						es[i], showing = shows, showing+1
					}
				}
				want := NotReproduced
				if showing >= 2 {
					want = Reproduced
				}
				out := c.Perf(retryResults(t, id, es))
				if out.Verdict != want {
					t.Errorf("%s with %s: %s (%s), want %s (%d of 3 counts show the effect)", id, describe3(es), out.Verdict, out.Measured, want, showing)
				}
			}
		}
		// One count at a time: from 2 of 3 (reproduced), taking the effect
		// away from either showing count leaves 1 of 3 (not reproduced);
		// giving it to the third makes 3 of 3 (reproduced).
		for skip := range 3 {
			base := [3]effect{shows, shows, shows}
			base[skip] = lacks
			if out := c.Perf(retryResults(t, id, base)); out.Verdict != Reproduced {
				t.Errorf("%s with %s: %s, want reproduced", id, describe3(base), out.Verdict)
			}
			for i := range 3 {
				if i == skip {
					continue
				}
				one := base
				one[i] = lacks
				if out := c.Perf(retryResults(t, id, one)); out.Verdict != NotReproduced {
					t.Errorf("%s with %s (only %d clients show the effect): %s (%s), want not reproduced",
						id, describe3(one), retryClients[3-i-skip], out.Verdict, out.Measured)
				}
			}
		}
		// Straddling counts: reproduced needs 2 counts whose whole interval
		// shows the effect; not reproduced needs fewer than 2 that could.
		for _, m := range []struct {
			es   [3]effect
			want Verdict
		}{
			{[3]effect{shows, shows, straddles}, Reproduced},
			{[3]effect{straddles, shows, shows}, Reproduced},
			{[3]effect{shows, straddles, lacks}, Inconclusive},
			{[3]effect{lacks, shows, straddles}, Inconclusive},
			{[3]effect{straddles, lacks, shows}, Inconclusive},
			{[3]effect{straddles, straddles, lacks}, Inconclusive},
			{[3]effect{straddles, lacks, lacks}, NotReproduced},
			{[3]effect{lacks, lacks, straddles}, NotReproduced},
			{[3]effect{shows, lacks, lacks}, NotReproduced},
			{[3]effect{lacks, lacks, shows}, NotReproduced},
		} {
			if out := c.Perf(retryResults(t, id, m.es)); out.Verdict != m.want {
				t.Errorf("%s with %s: %s (%s), want %s", id, describe3(m.es), out.Verdict, out.Measured, m.want)
			}
		}
	}
}

// describe3 is "10 clients: yes, 100 clients: no, 500 clients: no".
func describe3(es [3]effect) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%d clients: %s", retryClients[i], e)
	}
	return strings.Join(parts, ", ")
}
