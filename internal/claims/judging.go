package claims

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/report"
)

// judging collects the first lookup error, so a judge reads as a list of
// lookups and one rule.
type judging struct {
	r   Results
	err error
	fig map[string]float64
}

// s looks up the scenario of run with strategy (and retry policy, client
// count) that the rule reads. A scenario in which the strategy did no
// work (0 operations completed or 0 locks granted in the measured window;
// for flash-sale an operation is an order) cannot show a claim either
// way: it fails the judging (ErrNoWork), and the row's verdict is Failed,
// not a verdict on the claim.
func (j *judging) s(run, strategy, retry string, clients int) *report.Scenario {
	return j.lookup(run, strategy, retry, clients, true)
}

// acquired is s for a scenario whose every operation is expected to fail
// after its lock was granted (S10: a non-reentrant lock taken twice): it
// needs > 0 locks granted, not > 0 operations completed.
func (j *judging) acquired(run, strategy, retry string, clients int) *report.Scenario {
	return j.lookup(run, strategy, retry, clients, false)
}

// refused is s for a strategy whose safety comes from refusing locks it
// cannot vouch for (S7: wait-replicas releases every lock no replica
// acknowledged): a scenario in which it refused acquires
// (strategy_stats.not_replicated > 0) exercised it as much as one in
// which it held locks; one that made no attempt, or neither held nor
// refused a lock, did no work.
func (j *judging) refused(run, strategy string) *report.Scenario {
	s, err := j.r.Find(run, strategy, "", 0)
	if err != nil {
		j.fail(err)
		return &report.Scenario{Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	}
	if s.Counters.Attempts == 0 || s.AcquireMS.Count == 0 && s.StrategyStats["not_replicated"] == 0 {
		return j.lookup(run, strategy, "", 0, false)
	}
	return s
}

// reported is s for a scenario whose figures a row reports beside its
// rule but does not judge (P2's spin and pubsub policies): one that did
// no work is a finding in itself (0 ops/s, a collapse), not a failed
// experiment, so only a missing scenario fails the judging.
func (j *judging) reported(run, strategy, retry string, clients int) *report.Scenario {
	s, err := j.r.Find(run, strategy, retry, clients)
	if err != nil {
		j.fail(err)
		return &report.Scenario{Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	}
	return s
}

// tried is s for a scenario whose collapse to no work at all is the
// finding (P5's row lock at 2,000 clients: every client waits and none is
// granted in the window): it needs only that its clients tried
// (acquire attempts > 0), so a run that never started still fails.
func (j *judging) tried(run, strategy string, clients int) *report.Scenario {
	s, err := j.r.Find(run, strategy, "", clients)
	if err != nil {
		j.fail(err)
		return &report.Scenario{Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	}
	if s.Counters.Attempts == 0 {
		return j.lookup(run, strategy, "", clients, true)
	}
	return s
}

// cpuPerOp is s's servers' CPU time per operation, µs (its
// redis_cost.server_cpu_ms_per_1k_ops: for a Redis strategy the Redis
// servers' INFO cpu, for a baseline the server process lockbench
// started); not measured fails the judging.
func (j *judging) cpuPerOp(run string, s *report.Scenario) float64 {
	if s.Ops > 0 && s.RedisCost.ServerCPUMSPer1kOps <= 0 {
		j.fail(fmt.Errorf("claims: run %q, %s has no server CPU per operation (redis_cost.server_cpu_ms_per_1k_ops not measured)", run, describe(s)))
		return 0
	}
	return s.RedisCost.ServerCPUMSPer1kOps
}

func (j *judging) lookup(run, strategy, retry string, clients int, needOps bool) *report.Scenario {
	empty := &report.Scenario{Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	s, err := j.r.Find(run, strategy, retry, clients)
	if err != nil {
		j.fail(err)
		return empty
	}
	if acq := s.AcquireMS.Count; acq == 0 || needOps && s.Ops == 0 {
		what := "operations"
		if s.Workload == "flash-sale" {
			what = "orders"
		}
		j.fail(fmt.Errorf("%w: run %q, %s did no work (%d %s, %d locks granted in the measured window); nothing to judge",
			ErrNoWork, run, describe(s), s.Ops, what, acq))
		return empty
	}
	return s
}

// sold is a flash-sale scenario's items sold (its end check's count);
// none sold fails the judging (ErrNoWork) and gives NaN: a rule about
// what the writes did needs writes. (Orders completed can exceed items
// sold only when a failover lost acknowledged writes, which S7 is about,
// so j.s does not ask for sold > 0.)
func (j *judging) sold(run string, s *report.Scenario) float64 {
	n, ok := s.Figures["sold"]
	if !ok || n <= 0 {
		j.fail(fmt.Errorf("%w: run %q, %s sold nothing (sold %d, verify error %q); nothing to judge", ErrNoWork, run, describe(s), n, s.VerifyError))
		return math.NaN()
	}
	return float64(n)
}

// steadyRate is s's operations per second over its timeline after the
// first second: lockbench counts the operations that start and end in the
// measured window, which misses up to one operation per client at each
// end, about a second's worth when every operation waits in a fair queue
// (P5's row lock at 200 clients: 0.3-0.4 s each). Completions after the
// first second are those of operations that started in the window. A
// window shorter than 2 s has no such seconds and fails the judging.
func (j *judging) steadyRate(s *report.Scenario) float64 {
	tl := s.Timeline
	if len(tl) < 2 {
		if s.Ops > 0 { // an empty scenario already failed the lookup
			j.fail(fmt.Errorf("claims: %s has %d timeline seconds; its rate after the first second needs a window of 2 s or more", describe(s), len(tl)))
		}
		return 0
	}
	var ops int64
	for _, sec := range tl[1:] {
		ops += sec.Ops
	}
	return ratio(f64(ops), tl[len(tl)-1].TS-tl[0].TS)
}

// ErrNoWork is the judging error of a run whose strategy did no work.
var ErrNoWork = errors.New("claims: empty run")

// describe names a scenario: "atomic" or "atomic/fixed/100 clients".
func describe(s *report.Scenario) string {
	out := s.Strategy
	if pol, _, _ := strings.Cut(s.Retry, ":"); pol != "" {
		out += "/" + pol
	}
	if s.Clients > 0 {
		out += fmt.Sprintf("/%d clients", s.Clients)
	}
	return out
}

// nodes is the number of Redis masters the scenario ran on: N of its
// topology "masters:N" (Redlock's --nodes), else the number of per-node
// counts in its strategy stats (node<i>_acquired). No node count fails
// the judging: a rule stated in N must not assume one.
func (j *judging) nodes(s *report.Scenario) float64 {
	if rest, ok := strings.CutPrefix(s.Topology, "masters:"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n > 0 {
			return float64(n)
		}
	}
	n := 0
	for k := 0; ; k++ {
		if _, ok := s.StrategyStats[fmt.Sprintf("node%d_acquired", k)]; !ok {
			break
		}
		n++
	}
	if n == 0 {
		j.fail(fmt.Errorf("claims: %s scenario has no node count (topology %q, no node<i>_acquired stats)", s.Strategy, s.Topology))
		return math.NaN()
	}
	return float64(n)
}

// set records a figure the verdict used and returns it.
func (j *judging) set(name string, v float64) float64 {
	j.fig[name] = v
	return v
}

// judge wraps a rule: a missing scenario makes the verdict Failed.
func judge(f func(j *judging) (bool, string)) func(Results) Outcome {
	return judgeAs(Reproduced, f)
}

// judgeAs is judge with the verdict given when the rule holds (Reproduced
// or HardwareBound; NotReproduced otherwise).
func judgeAs(yes Verdict, f func(j *judging) (bool, string)) func(Results) Outcome {
	return func(r Results) Outcome {
		j := &judging{r: r, fig: map[string]float64{}}
		ok, measured := f(j)
		if j.err != nil {
			return Outcome{Verdict: Failed, Measured: j.err.Error()}
		}
		v := NotReproduced
		if ok {
			v = yes
		}
		return Outcome{Verdict: v, Measured: measured, Figures: j.fig}
	}
}

// fail records err as the judging's error (the first one wins).
func (j *judging) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

// perf collects a performance row's figures over its repeats: each
// figure's value in every repeat and its interval.
type perf struct {
	rs  []Results
	err error
	ivs map[string]Interval
	// figs are figures computed over all the repeats at once (not an
	// interval), by name.
	figs map[string]float64
}

// fail records err as the row's error (the first one wins).
func (p *perf) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// fig records a figure computed over all the repeats and returns it.
func (p *perf) fig(name string, v float64) float64 {
	p.figs[name] = v
	return v
}

// same returns the value iv has in every repeat (a setting of the run,
// such as its node count); repeats that disagree fail the row.
func (p *perf) same(name string, iv Interval) float64 {
	if iv.Lo != iv.Hi {
		p.fail(fmt.Errorf("claims: %s differs between repeats: %v", name, iv.Values))
	}
	return iv.Median
}

// sum is the total of iv's values over the repeats.
func sum(iv Interval) float64 {
	t := 0.0
	for _, v := range iv.Values {
		t += v
	}
	return t
}

// each computes fig on every repeat's results (its lookups go through
// j.s, so a missing scenario fails the row) and records the values'
// interval as name.
func (p *perf) each(name string, fig func(j *judging) float64) Interval {
	vals := make([]float64, len(p.rs))
	for k, r := range p.rs {
		j := &judging{r: r, fig: map[string]float64{}}
		vals[k] = fig(j)
		if j.err != nil && p.err == nil {
			p.err = j.err
		}
	}
	return p.record(name, vals)
}

// once reads a run made once for figures the row reports beside its rule
// (Run.Reported): f looks its scenarios up through j, and j.set records a
// figure, a single value rather than an interval. It returns false, and
// calls nothing, when the run was not made (--quick mode). A lookup that
// fails fails the row.
func (p *perf) once(run string, f func(j *judging)) bool {
	if len(p.rs) == 0 || p.rs[0][run] == nil {
		return false
	}
	j := &judging{r: p.rs[0], fig: p.figs}
	f(j)
	if j.err != nil {
		p.fail(j.err)
	}
	return true
}

// present reports whether every repeat's run has the scenario of
// strategy at clients (a count that only full mode makes).
func (p *perf) present(run, strategy string, clients int) bool {
	for _, r := range p.rs {
		if _, err := r.Find(run, strategy, "", clients); err != nil {
			return false
		}
	}
	return len(p.rs) > 0
}

// ratio records num/den taken repeat by repeat (pairedRatios) as name.
func (p *perf) ratio(name string, num, den Interval) Interval {
	return p.record(name, pairedRatios(num.Values, den.Values))
}

// diff records a - b taken repeat by repeat as name.
func (p *perf) diff(name string, a, b Interval) Interval {
	out := make([]float64, len(a.Values))
	for k := range out {
		out[k] = a.Values[k] - b.Values[k]
	}
	return p.record(name, out)
}

func (p *perf) record(name string, vals []float64) Interval {
	iv := NewInterval(vals)
	p.ivs[name] = iv
	return iv
}

// note is the intervals' confidence and size, "(95 %, n=6)".
func (p *perf) note() string { return NewInterval(make([]float64, len(p.rs))).Note() }

// judgePerf wraps a performance rule: the test's verdict, the medians
// (and the figures of p.fig) as Figures, every interval; a missing
// scenario, or one that did no work, in any repeat makes the verdict
// Failed.
func judgePerf(f func(p *perf) (tri, string)) func([]Results) Outcome {
	return judgePerfAs(Reproduced, f)
}

// judgePerfAs is judgePerf with the verdict given when the test holds over
// the whole interval (Reproduced, or HardwareBound for a row whose
// headline figure cannot be checked on this machine; not reproduced and
// inconclusive otherwise, as always).
func judgePerfAs(yesVerdict Verdict, f func(p *perf) (tri, string)) func([]Results) Outcome {
	return func(rs []Results) Outcome {
		p := &perf{rs: rs, ivs: map[string]Interval{}, figs: map[string]float64{}}
		t, measured := f(p)
		if p.err != nil {
			return Outcome{Verdict: Failed, Measured: p.err.Error()}
		}
		figs := map[string]float64{}
		for name, iv := range p.ivs {
			figs[name] = iv.Median
		}
		for name, v := range p.figs {
			figs[name] = v
		}
		v := t.verdict()
		if t == yes {
			v = yesVerdict
		}
		return Outcome{Verdict: v, Measured: measured, Figures: figs, Intervals: p.ivs}
	}
}

// poissonUpper is the one-sided upper confidence bound at conf of the mean
// of a Poisson count of which k were seen: the λ with P(X <= k; λ) = 1 -
// conf (for k = 0 at 95 %, -ln 0.05 = 3.0, the "rule of three"). Divided
// by the trials it bounds a small failure rate from above.
func poissonUpper(k, conf float64) float64 {
	cdf := func(lambda float64) float64 { return poissonCDF(k, lambda) }
	lo, hi := 0.0, k+10+10*math.Sqrt(k+1)
	for range 200 {
		mid := (lo + hi) / 2
		if cdf(mid) > 1-conf {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// poissonTail is P(X >= k) for X Poisson with mean lambda: how likely k or
// more failures are when the failure rate is the one claimed (1 for k <= 0).
func poissonTail(k, lambda float64) float64 {
	if k <= 0 {
		return 1
	}
	if lambda <= 0 {
		return 0
	}
	return max(0, 1-poissonCDF(k-1, lambda))
}

// poissonCDF is P(X <= k) for X Poisson with mean lambda > 0.
func poissonCDF(k, lambda float64) float64 {
	t := 0.0
	for i := 0.0; i <= k; i++ {
		lg, _ := math.Lgamma(i + 1)
		t += math.Exp(-lambda + i*math.Log(lambda) - lg)
	}
	return t
}

// scaled is iv with every bound multiplied by k (for percentages).
func scaled(iv Interval, k float64) Interval {
	iv.Median, iv.Lo, iv.Hi = k*iv.Median, k*iv.Lo, k*iv.Hi
	return iv
}

// f is a formatter for Interval.Format; fx(d) prints d decimals and "x".
func f(format string) func(float64) string {
	return func(v float64) string { return fmt.Sprintf(format, v) }
}

func fx(decimals int) func(float64) string { return f(fmt.Sprintf("%%.%dfx", decimals)) }

// lastWindow is the fault window that acted last (-1 ops if none).
func lastWindow(s *report.Scenario) report.FaultWindow {
	w := report.FaultWindow{OpsAfter: -1, StuckAfter: -1}
	for i, f := range s.Faults {
		if i == 0 || f.StartMS >= w.StartMS {
			w = f
		}
	}
	return w
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return a / b
}

func f64(n int64) float64 { return float64(n) }
