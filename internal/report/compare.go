package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Key identifies a scenario across runs: strategy, driver, workload, retry
// and every parameter but the seed.
func (s Scenario) Key() string {
	keys := make([]string, 0, len(s.Params))
	for k := range s.Params {
		if k != "seed" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := []string{s.Strategy, s.Driver, s.Workload, s.Retry, "clients=" + strconv.Itoa(s.Clients)}
	for _, k := range keys {
		parts = append(parts, k+"="+s.Params[k])
	}
	return strings.Join(parts, " ")
}

// Name is the short label of a scenario: strategy/driver/workload/retry.
func (s Scenario) Name() string {
	return s.Strategy + "/" + s.Driver + "/" + s.Workload + "/" + shortRetry(s.Retry)
}

// Delta is one scenario compared across two runs.
type Delta struct {
	Name                 string
	BaseOps, NewOps      float64 // ops/s, or ratios to the reference
	BaseP99, NewP99      float64 // ms, or ratios to the reference
	BaseViol, NewViol    int64
	OpsChange, P99Change float64 // relative: (new - base) / base
	Regressed            []string
}

// Compare matches the scenarios of base and cur by Key and flags, per
// scenario, a throughput drop beyond threshold (0.05 = 5 %), a p99 rise
// beyond p99Threshold, and any rise in violations. With normalize (a Name such as
// "atomic/rueidis/flash-sale/fixed"), each scenario's ops/s and p99 are
// first divided by that scenario's in the same run, which stays stable on
// a noisy machine. Scenarios present in only one run are reported as
// missing. Errors: a reference scenario missing from a run.
func Compare(base, cur *Run, threshold, p99Threshold float64, normalize string) (deltas []Delta, missing []string, err error) {
	refOf := func(r *Run, which string) (float64, float64, error) {
		if normalize == "" {
			return 1, 1, nil
		}
		for _, s := range r.Scenarios {
			if s.Name() == normalize {
				if s.OpsPerSec == 0 || s.LatencyMS.P99 == 0 {
					return 0, 0, fmt.Errorf("reference %s has no ops/s or p99 in the %s run", normalize, which)
				}
				return s.OpsPerSec, s.LatencyMS.P99, nil
			}
		}
		return 0, 0, fmt.Errorf("reference scenario %s is not in the %s run", normalize, which)
	}
	bOps, bP99, err := refOf(base, "base")
	if err != nil {
		return nil, nil, err
	}
	nOps, nP99, err := refOf(cur, "new")
	if err != nil {
		return nil, nil, err
	}
	byKey := map[string]Scenario{}
	for _, s := range base.Scenarios {
		byKey[s.Key()] = s
	}
	seen := map[string]bool{}
	for _, n := range cur.Scenarios {
		b, ok := byKey[n.Key()]
		if !ok {
			missing = append(missing, "only in new: "+n.Key())
			continue
		}
		seen[n.Key()] = true
		d := Delta{
			Name:    n.Name(),
			BaseOps: b.OpsPerSec / bOps, NewOps: n.OpsPerSec / nOps,
			BaseP99: b.LatencyMS.P99 / bP99, NewP99: n.LatencyMS.P99 / nP99,
			BaseViol: b.Violations.Total(), NewViol: n.Violations.Total(),
		}
		d.OpsChange = rel(d.BaseOps, d.NewOps)
		d.P99Change = rel(d.BaseP99, d.NewP99)
		if d.Name != normalize || normalize == "" {
			if d.OpsChange < -threshold {
				d.Regressed = append(d.Regressed, "ops/s")
			}
			if d.P99Change > p99Threshold {
				d.Regressed = append(d.Regressed, "p99")
			}
		}
		if d.NewViol > d.BaseViol {
			d.Regressed = append(d.Regressed, "violations")
		}
		deltas = append(deltas, d)
	}
	for _, b := range base.Scenarios {
		if !seen[b.Key()] {
			missing = append(missing, "only in base: "+b.Key())
		}
	}
	return deltas, missing, nil
}

func rel(base, cur float64) float64 {
	if base == 0 {
		return 0
	}
	return (cur - base) / base
}

// CompareTable writes the deltas as a table; normalized says whether the
// figures are ratios to a reference.
func CompareTable(w io.Writer, deltas []Delta, normalized bool) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	opsH, p99H := "ops/s", "p99 ms"
	if normalized {
		opsH, p99H = "ops/s (x ref)", "p99 (x ref)"
	}
	t.Header("scenario", opsH+" base", "new", "change", p99H+" base", "new", "change", "violations", "verdict")
	for _, d := range deltas {
		verdict := "ok"
		if len(d.Regressed) > 0 {
			verdict = "REGRESSED: " + strings.Join(d.Regressed, ", ")
		}
		f := func(v float64) string {
			if normalized {
				return fmt.Sprintf("%.3f", v)
			}
			return fmt.Sprintf("%.1f", v)
		}
		if err := t.Append(d.Name, f(d.BaseOps), f(d.NewOps), fmt.Sprintf("%+.1f%%", 100*d.OpsChange),
			f(d.BaseP99), f(d.NewP99), fmt.Sprintf("%+.1f%%", 100*d.P99Change),
			fmt.Sprintf("%d -> %d", d.BaseViol, d.NewViol), verdict); err != nil {
			return err
		}
	}
	return t.Render()
}
