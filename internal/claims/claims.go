// Package claims turns the articles' claims about Redis locks (listed in
// docs/claims.md, from the seed articles 000, 002, 003 and 004) into
// experiments on real Redis and computes a verdict for each from the
// figures lockbench measures.
//
// Every experiment is data: the `lockbench run` flags of the runs it needs
// (Table), how the article's figure is scaled to this machine, and the rule
// that turns measured values into a verdict. No figure is typed in: a
// verdict comes only from the result files of the runs.
//
// A safety row (S1..S12) is judged on violation counts of one run of each
// experiment. A performance row (P1..P8) runs its experiments several times
// (FullRepeats, QuickRepeats) and is judged on a confidence interval of the
// median of the figure its rule uses (NewInterval): reproduced when the
// whole interval meets the rule, not reproduced when none of it does,
// inconclusive otherwise.
//
// No judge returns a constant, and none judges a run in which a strategy
// it reads did no work (0 operations or 0 locks granted in the measured
// window, in any repeat): such a row is Failed, since an empty run shows
// neither that a lock is safe nor that it is not.
package claims

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
)

// Verdict is the outcome of one claim.
type Verdict string

// Verdicts.
const (
	// Reproduced: the measured figures meet the claim's rule.
	Reproduced Verdict = "reproduced"
	// NotReproduced: they do not; Measured says what was seen.
	NotReproduced Verdict = "not reproduced"
	// Inconclusive: a performance row whose interval straddles the rule's
	// threshold: part of it meets the rule, part does not.
	Inconclusive Verdict = "inconclusive"
	// HardwareBound: the article's headline figure is an absolute one of
	// its machines (P7: 120,000 orders/s) and is reported, not judged;
	// what can be checked here (P7: the failure rate, Redlock's cost
	// against single-node locking) meets the rule. When it does not, the
	// row is not reproduced or inconclusive like any other.
	HardwareBound Verdict = "hardware-bound"
	// NeedsBaseline: a strategy the experiment needs (sql-rowlock, zk, etcd)
	// is not built into this lockbench; not counted as a verdict.
	NeedsBaseline Verdict = "needs baseline"
	// Failed: a run the experiment needs failed, or a strategy the judge
	// reads did no work in it (ErrNoWork); Measured holds the error.
	Failed Verdict = "failed"
)

// Counted reports whether v is a verdict on the claim (reproduced, not
// reproduced, inconclusive or hardware-bound).
func (v Verdict) Counted() bool {
	return v == Reproduced || v == NotReproduced || v == Inconclusive || v == HardwareBound
}

// Repeats of each performance experiment: 6 in full mode, the fewest for
// which the order-statistic interval of the median reaches 95 % (it is
// [min, max], 96.9 %); 3 in --quick mode, where [min, max] is only a 75 %
// interval (and says so).
const (
	FullRepeats  = 6
	QuickRepeats = 3
)

// Expected wall times of `lockbench claims` over every row (every
// baseline server installed), measured on the 2-core development machine
// with nothing else running (ExpectedNote says when), for `claims --help`;
// the limits they keep under are 150 s for --quick and 600 s in full.
const (
	ExpectedQuick = "145 s"
	ExpectedFull  = "540 s"
	ExpectedNote  = "measured 2026-12-04"
)

// Run is one `lockbench run` an experiment needs.
type Run struct {
	// Name identifies the run; several claims may share it.
	Name string
	// Args are the `lockbench run` flags of the full experiment.
	Args []string
	// Quick are flags appended in --quick mode (a later flag wins), for a
	// shorter or smaller run.
	Quick []string
	// QuickArgs, when set, replace Args in --quick mode, for a quick run
	// that changes what a later flag cannot (--fault adds a fault).
	QuickArgs []string
	// Repeat, set by Execute for the runs of performance rows, is which
	// run of the experiment this is (1..n); 0 for a run made once.
	Repeat int
	// Pooled, on a run a performance row judges, makes its repeats in one
	// `lockbench run --repeat n` (one set of servers, fresh keys each
	// repeat) instead of n runs on fresh servers: for servers whose start
	// costs more than the scenarios (MariaDB's, mostly the fsyncs of
	// mariadb-install-db: 3-6 s). Execute splits its result into one per
	// repeat (Split).
	Pooled bool
	// Sweep makes the run with `lockbench sweep` (Args give --clients a
	// list of counts): every count in one process, on one set of servers.
	Sweep bool
	// Variants, when set, make each making of the run one `lockbench
	// run` per variant, with the variant's flags appended last (after the
	// quick ones; a later flag wins), and join their scenarios into one
	// result: for a setting that a sweep cannot vary with the client
	// count (P2's think time). Execute names each variant's run
	// NAME-V<i> (from 1) for the runner, which writes a result file per
	// variant. Not with Pooled.
	Variants [][]string
	// Reported marks a run whose figures a performance row reports beside
	// its rule without judging them (P2's spin and pubsub policies): it is
	// made once, not once per repeat, and not at all in --quick mode.
	Reported bool
}

// Claim is one row of the claims table (docs/claims.md) with its experiment.
type Claim struct {
	ID string
	// Claim is the claim in a few words; Seeds the articles making it.
	Claim, Seeds string
	// Article is the article's figure or statement.
	Article string
	// Scaling says how the experiment scales the article's setting to this
	// machine (milliseconds for seconds, ...).
	Scaling string
	// Rule is the verdict rule, in words; Judge computes it.
	Rule string
	// Runs names the runs (see Table's runs) the judge reads.
	Runs []string
	// Needs are strategies the experiment needs that may be missing from
	// this build (the baselines); without them the verdict is
	// NeedsBaseline.
	Needs []string
	// Judge computes the verdict of a safety row from the runs' results.
	Judge func(r Results) Outcome
	// Perf, set instead of Judge on a performance row, computes the
	// verdict from every repeat of its runs (rs[k] are the results of
	// repeat k), on intervals.
	Perf func(rs []Results) Outcome
}

// Performance reports whether c is a performance row (judged on repeats).
func (c Claim) Performance() bool { return c.Perf != nil }

// Outcome is what a judge found.
type Outcome struct {
	Verdict Verdict
	// Measured is the measured figure(s), in a few words.
	Measured string
	// Figures are the measured values the verdict used, by name (for a
	// performance row, the medians over the repeats).
	Figures map[string]float64
	// Intervals are, for a performance row, each figure's interval over
	// the repeats, by the same names.
	Intervals map[string]Interval
}

// Results are the result files of the runs, by run name.
type Results map[string]*report.Run

// errMissing is returned by Results lookups that find no scenario.
var errMissing = errors.New("claims: no such scenario")

// Find returns the scenario of run whose strategy is strategy and, when
// given, whose retry policy name starts with retry and whose client count
// is clients (0: any).
func (r Results) Find(run, strategy, retry string, clients int) (*report.Scenario, error) {
	res := r[run]
	if res == nil {
		return nil, fmt.Errorf("%w: run %q did not complete", errMissing, run)
	}
	for i := range res.Scenarios {
		s := &res.Scenarios[i]
		if s.Strategy == strategy && strings.HasPrefix(s.Retry, retry) && (clients == 0 || s.Clients == clients) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: run %q has no %s/%s/%d scenario", errMissing, run, strategy, retry, clients)
}

// Runner executes one `lockbench run` with args and returns its result.
type Runner func(ctx context.Context, run Run, args []string) (*report.Run, error)

// Options select and size the experiments.
type Options struct {
	// Only lists claim ids to run (empty: all).
	Only []string
	// Quick appends each run's Quick flags.
	Quick bool
	// Extra flags appended to every run (for example --driver rueidis).
	Extra []string
	// Repeats is how many times the runs of performance rows are made
	// (0: FullRepeats, or QuickRepeats with Quick). Repeat k (from 0) gets
	// --seed k+1 appended after Extra.
	Repeats int
	// Progress, when set, is called before each run and after each claim,
	// with a line saying which claim ("claim 5 of 20 (P2)") and which run
	// of how many the experiments make in all.
	Progress func(msg string)
}

// Row is one claim's line in the report.
type Row struct {
	ID       string             `json:"id"`
	Claim    string             `json:"claim"`
	Seeds    string             `json:"seeds"`
	Article  string             `json:"article"`
	Scaling  string             `json:"scaling"`
	Rule     string             `json:"rule"`
	Measured string             `json:"measured"`
	Verdict  Verdict            `json:"verdict"`
	Figures  map[string]float64 `json:"figures,omitempty"`
	// Intervals, on a performance row, are its figures' intervals over
	// the repeats.
	Intervals map[string]Interval `json:"intervals,omitempty"`
	// Repeats is how many times a performance row's runs were made (0 on
	// a safety row).
	Repeats int      `json:"repeats,omitempty"`
	Runs    []string `json:"runs"`
}

// Select returns the claims named by only (all when empty), in table
// order; an unknown id is an error listing the valid ones.
func Select(only []string) ([]Claim, error) {
	all := Table()
	if len(only) == 0 {
		return all, nil
	}
	byID := map[string]Claim{}
	var ids []string
	for _, c := range all {
		byID[c.ID] = c
		ids = append(ids, c.ID)
	}
	want := map[string]bool{}
	var bad []string
	for _, id := range only {
		id = strings.ToUpper(strings.TrimSpace(id))
		if _, ok := byID[id]; !ok {
			bad = append(bad, id)
			continue
		}
		want[id] = true
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("unknown claim id %s (valid: %s)", strings.Join(bad, ", "), strings.Join(ids, ", "))
	}
	var out []Claim
	for _, c := range all {
		if want[c.ID] {
			out = append(out, c)
		}
	}
	return out, nil
}

// Execute runs the experiments of claims (each run shared between claims)
// and judges them. A run that a performance row of the Table uses is made
// o.Repeats times, each a separate `lockbench run` on fresh servers with
// its own seed; the others once. A run that fails makes its claims Failed;
// the others go on. It stops early when ctx ends, returning the rows
// judged.
func Execute(ctx context.Context, cs []Claim, o Options, run Runner) []Row {
	runs := map[string]Run{}
	for _, r := range Runs() {
		runs[r.Name] = r
	}
	times, repeated, n := makings(o)
	// processes is how many `lockbench run`s make run r: one for pooled
	// repeats.
	// makes is how many makings of r Execute runs: one for pooled
	// repeats; processes multiplies them by r's variants.
	makes := func(r Run) int {
		if r.Pooled && repeated(r) {
			return min(times(r), 1)
		}
		return times(r)
	}
	processes := func(r Run) int { return makes(r) * max(1, len(r.Variants)) }
	// total is how many runs the claims make in all (each shared run
	// once), for the progress lines.
	total, planned := 0, map[string]bool{}
	for _, c := range cs {
		if len(missingStrategies(c.Needs)) > 0 {
			continue
		}
		for _, name := range c.Runs {
			if !planned[name] {
				planned[name] = true
				total += processes(runs[name])
			}
		}
	}
	started := 0
	results := map[string][]*report.Run{}
	failed := map[string]error{}
	var rows []Row
	for ci, c := range cs {
		if ctx.Err() != nil {
			break
		}
		which := fmt.Sprintf("claim %d of %d (%s)", ci+1, len(cs), c.ID)
		row := Row{ID: c.ID, Claim: c.Claim, Seeds: c.Seeds, Article: c.Article, Scaling: c.Scaling, Rule: c.Rule, Runs: c.Runs}
		if missing := missingStrategies(c.Needs); len(missing) > 0 {
			row.Verdict = NeedsBaseline
			row.Measured = "strategies not in this build: " + strings.Join(missing, ", ")
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("%s: %s", which, row.Verdict))
			}
			rows = append(rows, row)
			continue
		}
		var runErr error
		for _, name := range c.Runs {
			if _, done := results[name]; done {
				continue
			}
			if err, done := failed[name]; done {
				runErr = err
				break
			}
			r, ok := runs[name]
			if !ok {
				runErr = fmt.Errorf("claims: %s names unknown run %q", c.ID, name)
				break
			}
			count := times(r)
			pooled := r.Pooled && repeated(r)
			reps := []*report.Run{}
			variants := r.Variants
			if len(variants) == 0 {
				variants = [][]string{nil}
			}
			for k := 0; k < makes(r); k++ {
				args := append(append([]string{}, r.args(o.Quick)...), o.Extra...)
				if o.Quick {
					args = append(args, r.Quick...)
				}
				rk, what := r, name
				switch {
				case pooled:
					args = append(args, "--repeat", fmt.Sprint(count))
					what = fmt.Sprintf("%s, repeats 1-%d in one process", name, count)
				case repeated(r):
					rk.Repeat = k + 1
					args = append(args, "--seed", fmt.Sprint(k+1))
					what = fmt.Sprintf("%s, repeat %d of %d", name, k+1, count)
				}
				var res *report.Run
				var err error
				for vi, v := range variants {
					rv, whatV := rk, what
					if len(r.Variants) > 0 {
						rv.Name = fmt.Sprintf("%s-v%d", name, vi+1)
						whatV = fmt.Sprintf("%s (%s)", what, strings.Join(v, " "))
					}
					started++
					if o.Progress != nil {
						o.Progress(fmt.Sprintf("%s: run %s (run %d of %d)", which, whatV, started, total))
					}
					all := append(append([]string{}, args...), v...)
					// A sweep of one client count (P5's Redis lock in quick
					// mode) is a lockbench run: sweep refuses one count.
					rv.Sweep = rv.Sweep && strings.Contains(lastFlags(all, nil)["--clients"], ",")
					var part *report.Run
					part, err = run(ctx, rv, all)
					if ctx.Err() != nil {
						// Ctrl-C: the claim is not judged (neither failed
						// nor counted); the rows so far are returned.
						return rows
					}
					if err == nil && part.Interrupted {
						err = errors.New("interrupted")
					}
					if err != nil {
						break
					}
					res = join(res, part)
				}
				if err == nil && pooled {
					var split []*report.Run
					if split, err = Split(res, count); err == nil {
						reps = append(reps, split...)
						continue
					}
				}
				if err != nil {
					failed[name] = fmt.Errorf("run %s: %w", what, err)
					runErr = failed[name]
					break
				}
				reps = append(reps, res)
			}
			if runErr != nil {
				break
			}
			results[name] = reps
		}
		switch {
		case runErr != nil:
			row.Verdict, row.Measured = Failed, runErr.Error()
		case c.Performance():
			// Repeat k reads repeat k of each run; a reported run made
			// once is in every repeat's results, and one not made (quick
			// mode) in none.
			rs := make([]Results, n)
			for k := range rs {
				rs[k] = Results{}
				for _, name := range c.Runs {
					if got := results[name]; len(got) > 0 {
						rs[k][name] = got[min(k, len(got)-1)]
					}
				}
			}
			out := c.Perf(rs)
			row.Verdict, row.Measured, row.Figures, row.Intervals, row.Repeats = out.Verdict, out.Measured, out.Figures, out.Intervals, n
		default:
			one := Results{}
			for _, name := range c.Runs {
				one[name] = results[name][0]
			}
			out := c.Judge(one)
			row.Verdict, row.Measured, row.Figures = out.Verdict, out.Measured, out.Figures
		}
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("%s: %s", which, row.Verdict))
		}
		rows = append(rows, row)
	}
	return rows
}

// lastFlags is every --flag's value in args, the last one given winning
// (as lockbench reads them), over defaults (which it fills; nil: none).
func lastFlags(args []string, defaults map[string]string) map[string]string {
	last := defaults
	if last == nil {
		last = map[string]string{}
	}
	for i := 0; i+1 < len(args); i++ {
		if strings.HasPrefix(args[i], "--") {
			last[args[i]] = args[i+1]
		}
	}
	return last
}

// join is acc with part's scenarios appended (part itself when acc is
// nil): the variants of one making of a run as one result.
func join(acc, part *report.Run) *report.Run {
	if acc == nil {
		return part
	}
	out := *acc
	out.Scenarios = append(append([]report.Scenario{}, acc.Scenarios...), part.Scenarios...)
	return &out
}

// makings returns how many times Execute makes each run with o: n times
// (the repeats) a run that a performance row of the Table judges, which
// is repeated; none in quick mode, else once, a reported run
// (Run.Reported); once any other.
func makings(o Options) (times func(Run) int, repeated func(Run) bool, n int) {
	n = o.Repeats
	if n <= 0 {
		n = FullRepeats
		if o.Quick {
			n = QuickRepeats
		}
	}
	perf := map[string]bool{}
	for _, c := range Table() {
		if c.Performance() {
			for _, r := range c.Runs {
				perf[r] = true
			}
		}
	}
	repeated = func(r Run) bool { return perf[r.Name] && !r.Reported }
	times = func(r Run) int {
		switch {
		case r.Reported && o.Quick:
			return 0
		case repeated(r):
			return n
		}
		return 1
	}
	return times, repeated, n
}

func missingStrategies(names []string) []string {
	var out []string
	for _, n := range names {
		if !strategies.Known(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// planned is how long the scenarios of one making of r run: (warm-up +
// duration) x the scenarios of its matrix (strategies x retry policies x
// workloads, x client counts for a sweep; one driver), from its flags (a later flag wins) with the
// quick ones appended in quick mode. Servers' start-up is not in it, and
// a flash-sale scenario that sells out ends earlier.
func (r Run) planned(quick bool) (time.Duration, error) {
	if len(r.Variants) > 0 {
		var total time.Duration
		for _, v := range r.Variants {
			one := r
			one.Variants, one.Quick = nil, append(append([]string{}, r.Quick...), v...)
			if !quick {
				one.Args = append(append([]string{}, r.Args...), v...)
			}
			d, err := one.planned(quick)
			if err != nil {
				return 0, err
			}
			total += d
		}
		return total, nil
	}
	args := append([]string{}, r.args(quick)...)
	if quick {
		args = append(args, r.Quick...)
	}
	last := lastFlags(args, map[string]string{"--warmup": "0s", "--retry": "fixed", "--workload": "flash-sale"})
	var each time.Duration
	for _, f := range []string{"--warmup", "--duration"} {
		d, err := time.ParseDuration(last[f])
		if err != nil {
			return 0, fmt.Errorf("run %s: %s %q: %w", r.Name, f, last[f], err)
		}
		each += d
	}
	n := 1
	for _, f := range []string{"--strategy", "--retry", "--workload"} {
		n *= len(strings.Split(last[f], ","))
	}
	if r.Sweep {
		n *= len(strings.Split(last["--clients"], ","))
	}
	return time.Duration(n) * each, nil
}

// Split turns the result of `lockbench run --repeat n` into one result per
// repeat: each scenario with the figures of that repeat, its sample
// (ops/s, operations) and its share of the timeline (the repeats' seconds
// follow each other). The other figures stay the pooled ones; the locks
// granted in one repeat are not recorded, so a repeat that completed no
// operation counts none (an empty repeat is then refused by the judges).
func Split(res *report.Run, n int) ([]*report.Run, error) {
	out := make([]*report.Run, n)
	for k := range out {
		r := *res
		r.Scenarios = make([]report.Scenario, len(res.Scenarios))
		out[k] = &r
	}
	for i, s := range res.Scenarios {
		// Each repeat's share of the timeline: its sample's count of
		// entries (a repeat that waited for its clients to stop has more),
		// or, in files without the counts, an equal share.
		bounds, at := make([]int, n+1), 0
		counted := len(s.Samples) == n
		for k := 0; counted && k < n; k++ {
			at += s.Samples[k].TimelineEntries
			bounds[k+1] = at
			counted = s.Samples[k].TimelineEntries > 0
		}
		if !counted || at != len(s.Timeline) {
			if len(s.Samples) != n || len(s.Timeline)%n != 0 {
				return nil, fmt.Errorf("claims: scenario %d (%s) has %d samples and %d timeline seconds, want %d repeats of each",
					i+1, describe(&s), len(s.Samples), len(s.Timeline), n)
			}
			for k := range bounds {
				bounds[k] = k * len(s.Timeline) / n
			}
		}
		for k := range out {
			sk := s
			smp := s.Samples[k]
			sk.OpsPerSec, sk.Ops, sk.Samples, sk.Repeats = smp.OpsPerSec, smp.Ops, []report.Sample{smp}, nil
			sk.Timeline = s.Timeline[bounds[k]:bounds[k+1]]
			if smp.Ops == 0 {
				sk.AcquireMS.Count = 0
			}
			out[k].Scenarios[i] = sk
		}
	}
	return out, nil
}

// args are r's flags in the mode: QuickArgs in quick mode when set, else
// Args (the Quick flags come after them).
func (r Run) args(quick bool) []string {
	if quick && r.QuickArgs != nil {
		return r.QuickArgs
	}
	return r.Args
}
