package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"golang.org/x/perf/benchmath"
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

// MinSamples is the fewest runs per side for which Compare tests a change
// for significance; with fewer, a change is judged on the threshold
// alone, with a warning.
const MinSamples = 4

// CompareOptions configure Compare.
type CompareOptions struct {
	// Threshold is the largest tolerated ops/s drop, relative (0.05 = 5 %).
	Threshold float64
	// P99Threshold is the largest tolerated p99 rise, relative.
	P99Threshold float64
	// Normalize, when set (a Name such as "atomic/rueidis/flash-sale/fixed"),
	// divides each scenario's ops/s and p99 (its row's and its samples) by
	// that scenario's row figures in the same file, which stays stable on a
	// noisy machine.
	Normalize string
	// Alpha is the significance level of the Mann-Whitney U test. Default
	// (0): 0.05, benchstat's.
	Alpha float64
	// CostThreshold is the largest tolerated rise of a cost figure
	// (CostFigures: commands per operation, client CPU per operation,
	// Redis CPU per operation), relative; judged with the same
	// significance rule as ops/s. Cost figures are never normalized. 0:
	// any rise beyond the samples' noise (with MinSamples a side).
	CostThreshold float64
	// CPUThreshold is the largest tolerated rise of the CPU figures among
	// them (client and Redis CPU per operation), which move with the
	// machine's load more than command counts do; relative.
	CPUThreshold float64
	// Unsafe, when set, says whether a scenario's strategy is a
	// known-broken variant whose violations are what it measures (naive,
	// an unchecked extend): such a baseline is not invalid (see
	// InvalidBaseline).
	Unsafe func(Scenario) bool
}

// CostFigure is a per-operation cost that Compare gates like speed: a
// rise beyond CompareOptions.CostThreshold that is significant (or, with
// fewer than MinSamples runs a side, past the threshold alone) is a
// regression.
type CostFigure struct {
	// Name is the figure as compare prints it and as Delta.Regressed names
	// it: "cmds/op", "client_us/op", "redis_ms/1k".
	Name string
	// CPU: a CPU time, judged on CompareOptions.CPUThreshold.
	CPU    bool
	row    func(Scenario) float64
	sample func(Sample) float64
}

// CostFigures are the cost figures Compare gates, in the order it prints
// them: Redis commands per operation (redis_cost.commands_per_op), the
// client's CPU per operation (client_cpu.cpu_us_per_op, µs) and the
// servers' CPU per 1,000 operations (redis_cost.server_cpu_ms_per_1k_ops,
// ms: the Redis nodes', and for a baseline strategy its server's too). A figure either side did not measure is not compared ("n/a").
var CostFigures = []CostFigure{
	{"cmds/op", false, func(s Scenario) float64 { return s.RedisCost.CommandsPerOp }, func(x Sample) float64 { return x.CommandsPerOp }},
	{"client_us/op", true, func(s Scenario) float64 { return s.ClientCPU.CPUMicrosPerOp }, func(x Sample) float64 { return x.CPUMicrosPerOp }},
	{"redis_ms/1k", true, func(s Scenario) float64 { return s.RedisCost.ServerCPUMSPer1kOps }, func(x Sample) float64 { return x.ServerCPUMSPer1kOps }},
}

// Cost is one cost figure of a scenario compared across two runs.
type Cost struct {
	Figure string
	Change
}

// Change is one figure of a scenario in two runs: each side's figure as
// its row has it (ratios to the reference's with Normalize), their
// relative change, and whether the change is significant over the runs'
// samples.
type Change struct {
	Base, New   float64
	BaseN, NewN int     // samples on each side
	Rel         float64 // (New - Base) / Base
	// P is the Mann-Whitney U test's p-value that both samples come from
	// one distribution (golang.org/x/perf/benchmath, as benchstat); 1 when
	// it was not computed (fewer than MinSamples on a side).
	P float64
	// Significant: P <= Alpha. FewSamples: a side had fewer than
	// MinSamples, so the change was judged on the threshold alone.
	Significant, FewSamples bool
	// NotMeasured: a side did not measure the figure (a latency without
	// values): no change is computed ("n/a") and none is a regression.
	NotMeasured bool
}

// Delta is one scenario compared across two runs.
type Delta struct {
	Name              string
	Ops, P99          Change
	BaseViol, NewViol int64
	// Costs are the CostFigures compared, in their order.
	Costs []Cost
	// Regressed names what got worse beyond its threshold (and, with
	// enough samples, significantly): "ops/s", "p99", a CostFigure's name,
	// "violations".
	Regressed []string
	// Notes are parameters only one side records, which were not compared.
	Notes []string
}

// Compare matches the scenarios of base and cur (Match) and flags, per
// scenario, an ops/s drop beyond Threshold and a p99 rise beyond
// P99Threshold that are also significant at Alpha (Mann-Whitney U over
// the runs' samples; judged on the threshold alone when a side has fewer
// than MinSamples), and any rise in violations. Scenarios present in only
// one run are reported as missing. Errors: a reference scenario
// (Normalize) missing from a run or without figures.
func Compare(base, cur *Run, o CompareOptions) (deltas []Delta, missing []string, err error) {
	if o.Alpha <= 0 {
		o.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	refOf := func(r *Run, which string) (float64, float64, error) {
		if o.Normalize == "" {
			return 1, 1, nil
		}
		for _, s := range r.Scenarios {
			if s.Name() == o.Normalize {
				ops, p99 := s.OpsPerSec, s.LatencyMS.P99
				if ops == 0 || !LatencyMeasured(s.LatencyMS) {
					return 0, 0, fmt.Errorf("reference %s has no ops/s or p99 in the %s run", o.Normalize, which)
				}
				return ops, p99, nil
			}
		}
		return 0, 0, fmt.Errorf("reference scenario %s is not in the %s run", o.Normalize, which)
	}
	bOps, bP99, err := refOf(base, "base")
	if err != nil {
		return nil, nil, err
	}
	nOps, nP99, err := refOf(cur, "new")
	if err != nil {
		return nil, nil, err
	}
	pairs, missing := Match(base, cur)
	for _, p := range pairs {
		b, n := p.Base, p.New
		d := Delta{Name: n.Name(), BaseViol: b.Violations.Total(), NewViol: n.Violations.Total(), Notes: p.Notes,
			Ops: change(b.OpsPerSec/bOps, n.OpsPerSec/nOps, scaled(figures(b, opsOf), bOps), scaled(figures(n, opsOf), nOps), o.Alpha),
			P99: change(b.LatencyMS.P99/bP99, n.LatencyMS.P99/nP99, scaled(figures(b, p99Of), bP99), scaled(figures(n, p99Of), nP99), o.Alpha)}
		d.P99.NotMeasured = !LatencyMeasured(b.LatencyMS) || !LatencyMeasured(n.LatencyMS)
		if d.P99.NotMeasured {
			d.P99.Rel, d.P99.Significant = 0, false
		}
		if d.Name != o.Normalize || o.Normalize == "" {
			if d.Ops.Rel < -o.Threshold && worse(d.Ops) {
				d.Regressed = append(d.Regressed, "ops/s")
			}
			if d.P99.Rel > o.P99Threshold && worse(d.P99) {
				d.Regressed = append(d.Regressed, "p99")
			}
		}
		for _, f := range CostFigures {
			bs, ns := costSamples(b, f), costSamples(n, f)
			c := Cost{Figure: f.Name, Change: change(f.row(b), f.row(n), bs, ns, o.Alpha)}
			if c.Base == 0 || c.New == 0 {
				c.Change = Change{Base: c.Base, New: c.New, BaseN: len(bs), NewN: len(ns), P: 1, NotMeasured: true}
			}
			th := o.CostThreshold
			if f.CPU {
				th = o.CPUThreshold
			}
			if c.Rel > th && worse(c.Change) {
				d.Regressed = append(d.Regressed, f.Name)
			}
			d.Costs = append(d.Costs, c)
		}
		if d.NewViol > d.BaseViol {
			d.Regressed = append(d.Regressed, "violations")
		}
		deltas = append(deltas, d)
	}
	return deltas, missing, nil
}

// worse: a change past its threshold counts when it is significant, or
// when it could not be tested (fewer than MinSamples a side: judged on
// the threshold alone), never when a side did not measure the figure.
func worse(c Change) bool { return !c.NotMeasured && (c.Significant || c.FewSamples) }

// costSamples is cost figure f of every run of s that measured it.
func costSamples(s Scenario, f CostFigure) []float64 {
	var out []float64
	for _, x := range samplesOf(s) {
		if v := f.sample(x); v > 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 && f.row(s) > 0 && len(s.Samples) == 0 {
		// A file written before samples carried costs: the row's figure.
		out = append(out, f.row(s))
	}
	return out
}

// CompareRSS compares the peak resident memory of the two lockbench
// processes (meta.max_rss_mb; one figure per file, so judged on the
// threshold alone): a rise beyond threshold is a regression. NotMeasured
// when a file lacks it.
func CompareRSS(base, cur *Run, threshold float64) (c Change, regressed bool) {
	c = Change{Base: base.Meta.MaxRSSMB, New: cur.Meta.MaxRSSMB, BaseN: 1, NewN: 1, P: 1, FewSamples: true}
	if c.Base <= 0 || c.New <= 0 {
		c.NotMeasured = true
		return c, false
	}
	c.Rel = rel(c.Base, c.New)
	return c, c.Rel > threshold
}

// InvalidBaseline says why scenario s of a baseline cannot be compared
// against ("" when it can): it shows violations or errors although no
// fault was injected and its strategy promises none (unsafe, when set,
// names the known-broken variants). A gate that compared against it would
// pass a candidate as broken as the baseline.
func InvalidBaseline(s Scenario, unsafe func(Scenario) bool) string {
	if len(s.Faults) > 0 || (unsafe != nil && unsafe(s)) {
		return ""
	}
	v, e := s.Violations.Total(), s.Counters.Errors
	if v == 0 && e == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d violations and %d errors with no fault injected, and its strategy promises none", s.Name(), v, e)
}

func opsOf(x Sample) float64 { return x.OpsPerSec }
func p99Of(x Sample) float64 { return x.P99MS }

// figures is one figure of every run of s.
func figures(s Scenario, of func(Sample) float64) []float64 {
	xs := samplesOf(s)
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = of(x)
	}
	return out
}

func scaled(xs []float64, by float64) []float64 {
	for i := range xs {
		xs[i] /= by
	}
	return xs
}

// median is the median of xs (0 for none); xs is not changed.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m, _, _, _ := MedianCI(xs, 0.95)
	return m
}

// change compares one figure of two scenarios: their rows' figures
// (derived from each side's raw data, pooled over its repeats) and, for
// significance, the samples of their runs.
func change(baseRow, curRow float64, base, cur []float64, alpha float64) Change {
	c := Change{Base: baseRow, New: curRow, BaseN: len(base), NewN: len(cur), P: 1}
	c.Rel = rel(c.Base, c.New)
	if c.BaseN < MinSamples || c.NewN < MinSamples {
		c.FewSamples = true
		return c
	}
	th := benchmath.Thresholds{CompareAlpha: alpha}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(append([]float64(nil), base...), &th),
		benchmath.NewSample(append([]float64(nil), cur...), &th))
	c.P, c.Significant = cmp.P, cmp.P <= alpha
	return c
}

// Pair is a scenario of the base run and the same experiment in the new one.
type Pair struct {
	Base, New Scenario
	// Notes name the parameters only one side records (not compared).
	Notes []string
}

// Match pairs the scenarios of base and cur that are the same experiment:
// the same strategy, driver, workload, retry and clients, and the same
// value of every parameter but the seed and interval_s. A parameter one file records and
// the other does not is compared with its default: the one the file that
// lacks it records for its scenario's strategy or workload
// (Meta.ParamDefaults), else the other file's (a parameter added later
// with a default that keeps the earlier behaviour); when neither file
// knows a default it is noted, not a mismatch.
// missing lists the scenarios of either run that found no partner.
func Match(base, cur *Run) (pairs []Pair, missing []string) {
	used := make([]bool, len(base.Scenarios))
	for _, n := range cur.Scenarios {
		found := false
		for i, b := range base.Scenarios {
			if used[i] {
				continue
			}
			if notes, ok := same(base, b, cur, n); ok {
				used[i], found = true, true
				pairs = append(pairs, Pair{Base: b, New: n, Notes: notes})
				break
			}
		}
		if !found {
			missing = append(missing, "only in new: "+n.Key())
		}
	}
	for i, b := range base.Scenarios {
		if !used[i] {
			missing = append(missing, "only in base: "+b.Key())
		}
	}
	return pairs, missing
}

// same reports whether b (of run br) and n (of run nr) are one experiment,
// with notes on the parameters only one side records.
func same(br *Run, b Scenario, nr *Run, n Scenario) (notes []string, ok bool) {
	if b.Strategy != n.Strategy || b.Driver != n.Driver || b.Workload != n.Workload || b.Retry != n.Retry || b.Clients != n.Clients {
		return nil, false
	}
	keys := map[string]bool{}
	for k := range b.Params {
		keys[k] = true
	}
	for k := range n.Params {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		// The seed, and the timeline's interval (interval_s: how the run is
		// sampled, not what it does), do not make another experiment.
		if k != "seed" && k != "interval_s" {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		vb, inB := b.Params[k]
		vn, inN := n.Params[k]
		switch {
		case inB && inN:
			if vb != vn {
				return nil, false
			}
		case inB:
			if d, known := defaultFor(nr, n, br, b, k); known {
				if vb != d {
					return nil, false
				}
			} else {
				notes = append(notes, fmt.Sprintf("%s=%s only in the base file", k, vb))
			}
		default:
			if d, known := defaultFor(br, b, nr, n, k); known {
				if vn != d {
					return nil, false
				}
			} else {
				notes = append(notes, fmt.Sprintf("%s=%s only in the new file", k, vn))
			}
		}
	}
	return notes, true
}

// defaultFor is the value parameter key had in scenario s of run r, which
// does not record it: the default r records for s's strategy or workload,
// else the default the other run (or, os) records (a parameter added
// later, with a default that keeps the earlier behaviour).
func defaultFor(r *Run, s Scenario, or *Run, os Scenario, key string) (string, bool) {
	if d, ok := r.Meta.defaultOf(s, key); ok {
		return d, true
	}
	return or.Meta.defaultOf(os, key)
}

// defaultOf is the default the file records for parameter key of s's
// strategy or workload.
func (m Meta) defaultOf(s Scenario, key string) (string, bool) {
	for _, plugin := range []string{s.Strategy, s.Workload} {
		if d, ok := m.ParamDefaults[plugin][key]; ok {
			return d, true
		}
	}
	return "", false
}

func rel(base, cur float64) float64 {
	if base == 0 {
		return 0
	}
	return (cur - base) / base
}

// CompareTable writes the deltas as a table; normalized says whether the
// figures are ratios to a reference. A change that is not significant
// reads "~"; with too few samples it is marked "(n<4, not tested)": judged
// on the threshold only; the p-value and
// the sample counts stand beside it.
func CompareTable(w io.Writer, deltas []Delta, normalized bool) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	opsH, p99H := "ops/s", "p99 ms"
	if normalized {
		opsH, p99H = "ops/s (x ref)", "p99 (x ref)"
	}
	t.Header("scenario", opsH+" base", "new", "change", p99H+" base", "new", "change", "cmds/op base", "new", "change", "violations", "verdict")
	f := func(v float64) string {
		if normalized {
			return fmt.Sprintf("%.3f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, d := range deltas {
		p99b, p99n, p99c := f(d.P99.Base), f(d.P99.New), changeString(d.P99)
		if d.P99.NotMeasured {
			p99c = "n/a"
			if d.P99.Base == 0 {
				p99b = "-"
			}
			if d.P99.New == 0 {
				p99n = "-"
			}
		}
		verdict := "ok"
		if len(d.Regressed) > 0 {
			verdict = "REGRESSED: " + strings.Join(d.Regressed, ", ")
		}
		cb, cn, cc := "-", "-", "n/a"
		if len(d.Costs) > 0 {
			c := d.Costs[0].Change
			if c.Base > 0 {
				cb = fmt.Sprintf("%.2f", c.Base)
			}
			if c.New > 0 {
				cn = fmt.Sprintf("%.2f", c.New)
			}
			if !c.NotMeasured {
				cc = changeString(c)
			}
		}
		if err := t.Append(d.Name, f(d.Ops.Base), f(d.Ops.New), changeString(d.Ops),
			p99b, p99n, p99c, cb, cn, cc,
			fmt.Sprintf("%d -> %d", d.BaseViol, d.NewViol), verdict); err != nil {
			return err
		}
	}
	return t.Render()
}

// CostTable writes every cost figure of the deltas (CostFigures), base,
// new and change each, as CompareTable writes ops/s.
func CostTable(w io.Writer, deltas []Delta) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	head := []any{"scenario"}
	for _, f := range CostFigures {
		head = append(head, f.Name+" base", "new", "change")
	}
	t.Header(head...)
	for _, d := range deltas {
		row := []any{d.Name}
		for _, c := range d.Costs {
			b, n, ch := "-", "-", "n/a"
			if c.Base > 0 {
				b = fmt.Sprintf("%.2f", c.Base)
			}
			if c.New > 0 {
				n = fmt.Sprintf("%.2f", c.New)
			}
			if !c.NotMeasured {
				ch = changeString(c.Change)
			}
			row = append(row, b, n, ch)
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}

// changeString is a change as benchstat writes it: "~" when not
// significant, else the relative change, with the p-value and the sample
// counts; "(n<4, not tested)" when judged on the threshold alone.
func changeString(c Change) string {
	n := fmt.Sprintf("n=%d+%d", c.BaseN, c.NewN)
	if c.BaseN == c.NewN {
		n = fmt.Sprintf("n=%d", c.BaseN)
	}
	switch {
	case c.FewSamples:
		return fmt.Sprintf("%+.1f%% (n<%d, not tested)", 100*c.Rel, MinSamples)
	case !c.Significant:
		return fmt.Sprintf("~ (p=%.3f %s)", c.P, n)
	}
	return fmt.Sprintf("%+.1f%% (p=%.3f %s)", 100*c.Rel, c.P, n)
}
