package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/internal/report"
)

// abSide is one side of lockbench ab: the program that runs it and the
// run arguments that are its own.
type abSide struct {
	label string   // BASE or NEW as given
	exe   string   // the lockbench binary
	args  []string // run arguments of this side (before the common ones)
}

// abFigure is a figure ab decides on: how to read it from a run's
// scenario, which way is better, and its threshold.
type abFigure struct {
	name         string
	higherBetter bool
	threshold    float64
	of           func(r *report.Run, s report.Scenario) float64
	// words are the verdict's words for Better and Worse.
	better, worse string
}

// abFlags are lockbench ab's flags.
type abFlags struct {
	budget, runDuration                                                time.Duration
	minRounds, maxRounds                                               int
	threshold, p99Threshold, costThreshold, cpuThreshold, rssThreshold string
	keep                                                               string
	confidence, interim                                                float64
	seed                                                               uint64
}

// abLong is lockbench ab's --help.
const abLong = `ab runs a baseline (BASE) and a candidate (NEW) alternately, round after
round, in a random order within each round, on this machine, and decides
after every round whether NEW is faster, slower, costlier or the same as
BASE, figure by figure. A side is:
  a lockbench binary (a path to an executable: another commit or another
    library version built as lockbench, or a program calling lockbench.Main)
  a scenario file (.yaml or .yml: run -f FILE)
  self or a binary, a colon, and run flags of this side alone, in one
    argument ("self:--work 2ms --ttl 1s", "./lockbench-old:--driver goredis")
  a strategy spec: strategy[/driver[/workload[/retry]]] ("fencing/rueidis")
  self: this lockbench with no flags of its own.
Each round runs 'lockbench run -q --out FILE' once per side with the side's
own arguments and then the RUN FLAGS after --, the same for both
(--duration defaults to --run-duration unless given there or by a scenario
file). A run's scenarios are paired with the other side's in order.

Method: each round gives, per figure, the ratio NEW/BASE of two runs made
back to back, so the machine's drift between rounds cancels (the
randomised, paired design of Kalibera and Jones, "Rigorous Benchmarking in
Reasonable Time", ISMM 2013). The figure's change is the median of the
rounds' ratios with its distribution-free confidence interval from order
statistics (golang.org/x/perf/benchmath's, as benchstat; --confidence,
at least 6 rounds at 95 %). The verdict is a three-way decision with an
indifference zone of ± the figure's threshold: slower (costlier) when the
whole interval lies beyond it on the bad side, faster (cheaper) beyond it
on the good side, same when the whole interval lies within it, else
undecided, and ab runs another round. It looks at the intervals after
every round and stops early on a worse figure when its interval at
--interim-confidence (default: --confidence) lies beyond the threshold;
with --interim-confidence 0.999 that is the Haybittle-Peto boundary of
sequential trials (Haybittle, Br. J. Radiol. 1971; Peto et al., Br. J.
Cancer 1976): fewer false alarms from looking after every round, a small
change judged at --confidence when the budget or --max-rounds ends the
rounds. It stops early, too, when every figure is decided and none is
worse.

Figures: ops/s (--threshold), p99 (--p99-threshold), Redis commands per
operation (--cost-threshold), the client's and Redis's CPU per operation
(--cpu-threshold), lockbench's peak RSS (--rss-threshold). A violation in
NEW where BASE has none is a regression at once; a BASE run with
violations or errors and no fault, whose strategy promises none, is
"invalid baseline" (exit 4).

Exit: 0 same, faster or undecided (printed as such: no regression was
found); 1 a figure worse or new violations; 2 bad input; 4 invalid
baseline; 130 interrupted.`

func newABCmd() *cobra.Command {
	fl := &abFlags{}
	cmd := &cobra.Command{
		Use:   "ab BASE NEW [flags] [-- RUN FLAGS]",
		Short: "Interleaved A/B: run a baseline and a candidate alternately until a verdict (faster, slower, same) or the budget ends",
		Long:  abLong,
		Example: `  lockbench ab ./lockbench-main ./lockbench-pr -- --strategy atomic --workload lock-cycle --own-keys --clients 8 --ttl 5s
  lockbench ab self "self:--test-slowdown atomic=10%" -- --strategy atomic --workload lock-cycle --own-keys --clients 8
  lockbench ab atomic/rueidis fencing/rueidis -- --workload flash-sale --stock 1000000 --clients 20 --ttl 5s
  lockbench ab scenarios/base.yaml scenarios/candidate.yaml --budget 5m`,
		Args: func(cmd *cobra.Command, args []string) error {
			n := len(args)
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				n = dash
			}
			if n != 2 {
				return usageError{fmt.Errorf("ab takes two sides, BASE and NEW, then -- and the run flags common to both; got %d before --", n)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runAB(cmd, args, fl) },
	}
	f := cmd.Flags()
	f.DurationVar(&fl.budget, "budget", 2*time.Minute, "time budget: no round starts that would end past it (a verdict may come sooner)")
	f.DurationVar(&fl.runDuration, "run-duration", 2*time.Second, "--duration of each run, unless the run flags or a scenario file set one")
	f.IntVar(&fl.minRounds, "min-rounds", 6, "rounds before a verdict of same or better may stop ab")
	f.IntVar(&fl.maxRounds, "max-rounds", 200, "most rounds")
	f.StringVar(&fl.threshold, "threshold", "5%", "indifference zone of ops/s: a change within it is the same")
	f.StringVar(&fl.p99Threshold, "p99-threshold", "25%", "indifference zone of p99")
	f.StringVar(&fl.costThreshold, "cost-threshold", "10%", "indifference zone of Redis commands per operation")
	f.StringVar(&fl.cpuThreshold, "cpu-threshold", "25%", "indifference zone of the client's and Redis's CPU per operation")
	f.StringVar(&fl.rssThreshold, "rss-threshold", "25%", "indifference zone of lockbench's peak RSS")
	f.Float64Var(&fl.confidence, "confidence", 0.95, "confidence level of the ratios' intervals and of the final verdict")
	f.Float64Var(&fl.interim, "interim-confidence", 0, "confidence level a worse figure needs to stop ab before the budget ends (0: --confidence; 0.999, the Haybittle-Peto boundary, needs at least 11 rounds)")
	f.Uint64Var(&fl.seed, "seed", 0, "seed of the rounds' random order (0: from the clock; printed)")
	f.StringVar(&fl.keep, "keep", "", "keep every run's result file in this directory (base-NNN.json, new-NNN.json)")
	return cmd
}

// abThresholds are the figures' indifference zones, as fractions.
type abThresholds struct{ ops, p99, cost, cpu, rss float64 }

// check reads the thresholds and checks the other flags (interim 0 takes
// --confidence's value); every problem is returned.
func (fl *abFlags) check() (abThresholds, []error) {
	var errs []error
	pct := func(name, v string) float64 {
		x, err := parsePercent(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", name, err))
		}
		return x
	}
	var th abThresholds
	th.ops, th.p99 = pct("threshold", fl.threshold), pct("p99-threshold", fl.p99Threshold)
	th.cost, th.cpu, th.rss = pct("cost-threshold", fl.costThreshold), pct("cpu-threshold", fl.cpuThreshold), pct("rss-threshold", fl.rssThreshold)
	if !(fl.confidence > 0.5 && fl.confidence < 1) {
		errs = append(errs, fmt.Errorf("--confidence must be above 0.5 and below 1, got %v", fl.confidence))
	}
	if fl.interim == 0 {
		fl.interim = fl.confidence
	}
	if !(fl.interim >= fl.confidence && fl.interim < 1) {
		errs = append(errs, fmt.Errorf("--interim-confidence must be at least --confidence (%v) and below 1, got %v", fl.confidence, fl.interim))
	}
	if fl.budget <= 0 {
		errs = append(errs, fmt.Errorf("--budget must be above 0, got %v", fl.budget))
	}
	if fl.runDuration <= 0 {
		errs = append(errs, fmt.Errorf("--run-duration must be above 0, got %v", fl.runDuration))
	}
	if fl.minRounds < 2 || fl.maxRounds < fl.minRounds {
		errs = append(errs, fmt.Errorf("--min-rounds must be at least 2 and --max-rounds at least --min-rounds, got %d and %d", fl.minRounds, fl.maxRounds))
	}
	return th, errs
}

// runAB is lockbench ab: the flags and sides checked, then the rounds
// (abRun.loop) and the verdict printed.
func runAB(cmd *cobra.Command, args []string, fl *abFlags) error {
	th, errs := fl.check()
	common := []string{}
	sideArgs := args
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		sideArgs, common = args[:dash], args[dash:]
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var sides [2]abSide
	for i, a := range sideArgs {
		s, err := parseSide(a, self)
		if err != nil {
			errs = append(errs, err)
		}
		sides[i] = s
	}
	errs = append(errs, checkABCommon(common)...)
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	if !slices.ContainsFunc(common, func(a string) bool { return a == "--duration" || strings.HasPrefix(a, "--duration=") }) {
		for i := range sides {
			if !sides[i].scenarioFile() {
				sides[i].args = append(sides[i].args, "--duration", fl.runDuration.String())
			}
		}
	}
	if fl.seed == 0 {
		fl.seed = uint64(time.Now().UnixNano())
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir := fl.keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "lockbench-ab-*"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError{fmt.Errorf("--keep: %w", err)}
	}
	seed := fl.seed
	ab := &abRun{sides: sides, common: common, figs: abFigures(th), dir: dir, confidence: fl.confidence, interim: fl.interim,
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), stderr: cmd.ErrOrStderr()}
	fmt.Fprintf(cmd.ErrOrStderr(), "ab: BASE %s, NEW %s; budget %v, rounds %d to %d, confidence %v (early stop on a worse figure at %v), seed %d\n",
		sides[0].describe(), sides[1].describe(), fl.budget, fl.minRounds, fl.maxRounds, fl.confidence, fl.interim, seed)
	res, err := ab.loop(ctx, fl.budget, fl.minRounds, fl.maxRounds)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, errInvalidBaseline) {
			return errInterrupted
		}
		return err
	}
	return res.print(cmd.OutOrStdout())
}

// checkABCommon refuses the run flags after -- that ab sets itself.
func checkABCommon(common []string) []error {
	var errs []error
	for _, a := range common {
		if a == "--out" || strings.HasPrefix(a, "--out=") || a == "-o" {
			errs = append(errs, errors.New("the run flags after -- cannot set --out: ab writes each run's file itself (--keep DIR keeps them)"))
		}
		if a == "--repeat" || strings.HasPrefix(a, "--repeat=") || a == "--procs" || strings.HasPrefix(a, "--procs=") {
			errs = append(errs, fmt.Errorf("the run flags after -- cannot set %s: ab's rounds are its repeats", strings.SplitN(a, "=", 2)[0]))
		}
	}
	return errs
}

// abFigures are the figures ab decides on, with their thresholds.
func abFigures(th abThresholds) []abFigure {
	return []abFigure{
		{name: "ops/s", higherBetter: true, threshold: th.ops, better: "faster", worse: "slower",
			of: func(_ *report.Run, s report.Scenario) float64 { return s.OpsPerSec }},
		{name: "p99", threshold: th.p99, better: "faster", worse: "slower",
			of: func(_ *report.Run, s report.Scenario) float64 {
				if !report.LatencyMeasured(s.LatencyMS) {
					return 0
				}
				return s.LatencyMS.P99
			}},
		{name: "cmds/op", threshold: th.cost, better: "cheaper", worse: "costlier",
			of: func(_ *report.Run, s report.Scenario) float64 { return s.RedisCost.CommandsPerOp }},
		{name: "client_us/op", threshold: th.cpu, better: "cheaper", worse: "costlier",
			of: func(_ *report.Run, s report.Scenario) float64 { return s.ClientCPU.CPUMicrosPerOp }},
		{name: "redis_ms/1k", threshold: th.cpu, better: "cheaper", worse: "costlier",
			of: func(_ *report.Run, s report.Scenario) float64 { return s.RedisCost.ServerCPUMSPer1kOps }},
		{name: "rss_mb", threshold: th.rss, better: "cheaper", worse: "costlier",
			of: func(r *report.Run, _ report.Scenario) float64 { return r.Meta.MaxRSSMB }},
	}
}

// parseSide reads a side of ab (see its --help).
func parseSide(a, self string) (abSide, error) {
	s := abSide{label: a, exe: self}
	if exe, flags, ok := strings.Cut(a, ":"); ok && strings.HasPrefix(strings.TrimSpace(flags), "-") {
		// EXE:FLAGS
		side, err := parseSide(exe, self)
		if err != nil {
			return s, err
		}
		if len(side.args) > 0 {
			return s, fmt.Errorf("side %q: before the colon comes self or a lockbench binary, then the run flags", a)
		}
		side.label, side.args = a, strings.Fields(flags)
		return side, nil
	}
	switch {
	case a == "self":
	case strings.HasPrefix(a, "-"):
		s.args = strings.Fields(a)
	case strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml"):
		if _, err := os.Stat(a); err != nil {
			return s, fmt.Errorf("side %q: scenario file: %w", a, err)
		}
		s.args = []string{"-f", a}
	default:
		if st, err := os.Stat(a); err == nil {
			if st.IsDir() || st.Mode()&0o111 == 0 {
				return s, fmt.Errorf("side %q is a file but not an executable lockbench binary nor a .yaml scenario file", a)
			}
			p, err := filepath.Abs(a)
			if err != nil {
				return s, err
			}
			s.exe = p
			return s, nil
		}
		if strings.ContainsAny(a, " =") || strings.HasPrefix(a, ".") || strings.HasPrefix(a, "/") {
			return s, fmt.Errorf("side %q: no such file, and not a strategy spec (strategy[/driver[/workload[/retry]]])", a)
		}
		parts := strings.SplitN(a, "/", 4)
		for i, name := range []string{"--strategy", "--driver", "--workload", "--retry"} {
			if i < len(parts) && parts[i] != "" {
				s.args = append(s.args, name, parts[i])
			}
		}
	}
	return s, nil
}

func (s abSide) scenarioFile() bool { return len(s.args) > 0 && s.args[0] == "-f" }

func (s abSide) describe() string {
	exe := "this lockbench"
	if self, _ := os.Executable(); s.exe != self {
		exe = s.exe
	}
	if len(s.args) == 0 {
		return exe
	}
	return exe + " run " + strings.Join(s.args, " ")
}

type abRun struct {
	sides      [2]abSide
	common     []string
	figs       []abFigure
	dir        string
	confidence float64
	interim    float64 // confidence level of an early stop on a worse figure
	rng        *rand.Rand
	stderr     io.Writer
	// runs[side][round] is that run's result.
	runs [2][]*report.Run
}

// abResult is what ab found: per scenario pair, a Decision per figure.
type abResult struct {
	names     []string
	figs      []abFigure
	decisions [][]report.Decision // [scenario][figure]
	rounds    int
	elapsed   time.Duration
	newViol   []string // scenarios where NEW showed violations BASE did not
	stopped   string   // why ab stopped
}

func (ab *abRun) loop(ctx context.Context, budget time.Duration, minRounds, maxRounds int) (*abResult, error) {
	start := time.Now()
	var last time.Duration
	var res *abResult
	for round := 0; round < maxRounds; round++ {
		if round >= minRounds && time.Since(start)+last > budget {
			res.stopped = fmt.Sprintf("the budget (%v) ends before another round", budget)
			return res, nil
		}
		t0 := time.Now()
		order := []int{0, 1}
		if ab.rng.IntN(2) == 1 {
			order = []int{1, 0}
		}
		for _, side := range order {
			r, err := ab.runOnce(ctx, side, round)
			if err != nil {
				return nil, err
			}
			ab.runs[side] = append(ab.runs[side], r)
		}
		b, n := ab.runs[0][round], ab.runs[1][round]
		if len(b.Scenarios) != len(n.Scenarios) || len(b.Scenarios) == 0 {
			return nil, usageError{fmt.Errorf("BASE's run has %d scenarios and NEW's %d: ab pairs the scenarios of the two sides in order, so both must run the same number (at least one)", len(b.Scenarios), len(n.Scenarios))}
		}
		if err := checkBaseline(b); err != nil {
			return nil, err
		}
		last = time.Since(t0)
		res = ab.decide(round+1, ab.confidence)
		res.elapsed = time.Since(start)
		fmt.Fprintf(ab.stderr, "ab: round %d (%s first, %.1fs): %s\n", round+1, ab.sides[order[0]].labelName(order[0]), last.Seconds(), res.progress())
		if res.stopped = ab.stopEarly(res, minRounds); res.stopped != "" {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	res.stopped = fmt.Sprintf("--max-rounds (%d)", maxRounds)
	return res, nil
}

// stopEarly says why ab stops after res's rounds, before the budget or
// --max-rounds ends them, or "" to run another round: new violations; a
// figure worse at the interim confidence (the Haybittle-Peto boundary:
// res, at the final confidence, is then worse too, its interval being
// inside the stricter one); every figure decided, none worse, after
// minRounds. A figure worse at the final confidence alone runs on.
func (ab *abRun) stopEarly(res *abResult, minRounds int) string {
	if len(res.newViol) > 0 {
		return "NEW showed violations that BASE did not"
	}
	worse, decided := res.state()
	switch {
	case worse && ab.interim <= ab.confidence:
		return "a figure is worse"
	case worse:
		if strict, _ := ab.decide(res.rounds, ab.interim).state(); strict {
			return fmt.Sprintf("a figure is worse at the interim level (%v)", ab.interim)
		}
	case decided && res.rounds >= minRounds:
		return "every figure is decided"
	}
	return ""
}

func (s abSide) labelName(i int) string { return [2]string{"BASE", "NEW"}[i] }

// runOnce runs side's round-th run and reads its result.
func (ab *abRun) runOnce(ctx context.Context, side, round int) (*report.Run, error) {
	s := ab.sides[side]
	out := filepath.Join(ab.dir, fmt.Sprintf("%s-%03d.json", [2]string{"base", "new"}[side], round+1))
	args := append([]string{"run", "-q", "--force", "--out", out}, s.args...)
	args = append(args, ab.common...)
	c := exec.CommandContext(ctx, s.exe, args...)
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	c.WaitDelay = 30 * time.Second
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	code := c.ProcessState.ExitCode()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && code != exitThresholds {
		name := [2]string{"BASE", "NEW"}[side]
		msg := strings.TrimSpace(stderr.String())
		if code == exitUsage {
			return nil, usageError{fmt.Errorf("%s (%s %s) refused its arguments: %s", name, s.exe, strings.Join(args, " "), msg)}
		}
		return nil, fmt.Errorf("%s's run %d failed (exit %d): %s", name, round+1, code, msg)
	}
	return report.ReadFile(out)
}

// decide computes every figure's Decision over the rounds so far, with
// intervals at the confidence level conf.
func (ab *abRun) decide(rounds int, conf float64) *abResult {
	b0 := ab.runs[0][0]
	res := &abResult{figs: ab.figs, rounds: rounds}
	for i, s := range b0.Scenarios {
		name := s.Name()
		if n := ab.runs[1][0].Scenarios[i].Name(); n != name {
			name += " vs " + n
		}
		res.names = append(res.names, name)
		var ds []report.Decision
		for _, f := range ab.figs {
			var bs, ns []float64
			for r := range rounds {
				bs = append(bs, f.of(ab.runs[0][r], ab.runs[0][r].Scenarios[i]))
				ns = append(ns, f.of(ab.runs[1][r], ab.runs[1][r].Scenarios[i]))
			}
			ds = append(ds, report.Decide(bs, ns, f.higherBetter, f.threshold, conf))
		}
		res.decisions = append(res.decisions, ds)
		var bv, nv int64
		for r := range rounds {
			bv += ab.runs[0][r].Scenarios[i].Violations.Total()
			nv += ab.runs[1][r].Scenarios[i].Violations.Total()
		}
		if nv > 0 && bv == 0 && !unsafeScenario(ab.runs[1][0].Scenarios[i]) {
			res.newViol = append(res.newViol, fmt.Sprintf("%s: %d violations in NEW, none in BASE", name, nv))
		}
	}
	return res
}

// state: whether a figure is worse, and whether every figure measured is
// decided (same, better or worse).
func (r *abResult) state() (worse, decided bool) {
	decided = true
	for _, ds := range r.decisions {
		for _, d := range ds {
			switch d.Verdict {
			case report.Worse:
				worse = true
			case report.Undecided:
				decided = false
			}
		}
	}
	return worse, decided
}

// progress is a round's one-line summary: each scenario's ops/s ratio and
// interval, and how many figures are decided.
func (r *abResult) progress() string {
	var parts []string
	for i, ds := range r.decisions {
		n, decided := 0, 0
		for _, d := range ds {
			if d.Verdict != report.NA {
				n++
				if d.Verdict != report.Undecided {
					decided++
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s ops/s x%s %s, %d of %d figures decided", r.names[i], fmtRatio(ds[0].Ratio), fmtInterval(ds[0]), decided, n))
	}
	return strings.Join(parts, "; ")
}

func fmtRatio(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func fmtInterval(d report.Decision) string {
	if math.IsInf(d.Lo, 0) || math.IsInf(d.Hi, 0) {
		return fmt.Sprintf("[no %.0f%% interval yet]", 100*d.Confidence)
	}
	return fmt.Sprintf("[%s, %s]", fmtRatio(d.Lo), fmtRatio(d.Hi))
}

// word is a Decision's verdict in f's words.
func (f abFigure) word(v string) string {
	switch v {
	case report.Better:
		return f.better
	case report.Worse:
		return f.worse
	}
	return v
}

// print writes the table and the verdict; the error is errRegressed when
// a figure is worse or NEW showed violations.
func (r *abResult) print(w io.Writer) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("scenario", "figure", "base", "new", "new/base", fmt.Sprintf("%.0f%% interval", 100*r.decisions[0][0].Confidence), "zone", "rounds", "verdict")
	var worse, undecided, better []string
	for i, ds := range r.decisions {
		for j, d := range ds {
			f := r.figs[j]
			if d.Verdict == report.NA {
				if err := t.Append(r.names[i], f.name, "-", "-", "-", "-", "-", "0", "n/a"); err != nil {
					return err
				}
				continue
			}
			v := f.word(d.Verdict)
			what := fmt.Sprintf("%s %s x%s %s", r.names[i], f.name, fmtRatio(d.Ratio), fmtInterval(d))
			switch d.Verdict {
			case report.Worse:
				worse = append(worse, what)
			case report.Undecided:
				undecided = append(undecided, what)
			case report.Better:
				better = append(better, what)
			}
			if err := t.Append(r.names[i], f.name, fmtFigure(d.BaseMedian), fmtFigure(d.NewMedian), fmtRatio(d.Ratio), fmtInterval(d),
				fmt.Sprintf("±%.0f%%", 100*f.threshold), strconv.Itoa(d.N), v); err != nil {
				return err
			}
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d rounds in %.0fs; stopped: %s\n", r.rounds, r.elapsed.Seconds(), r.stopped)
	if len(r.newViol) > 0 {
		fmt.Fprintf(w, "verdict: REGRESSION: %s\n", strings.Join(r.newViol, "; "))
		return fmt.Errorf("%w: NEW showed violations that BASE did not", errRegressed)
	}
	if len(worse) > 0 {
		kind := "slower"
		if !slices.ContainsFunc(worse, func(s string) bool { return strings.Contains(s, " ops/s ") || strings.Contains(s, " p99 ") }) {
			kind = "costlier"
		}
		fmt.Fprintf(w, "verdict: %s: %s\n", kind, strings.Join(worse, "; "))
		return fmt.Errorf("%w: NEW is %s than BASE: %s", errRegressed, kind, strings.Join(worse, "; "))
	}
	if len(undecided) > 0 {
		fmt.Fprintf(w, "verdict: undecided (no figure is worse; undecided: %s): more rounds (--budget) would narrow the intervals\n", strings.Join(undecided, "; "))
		return nil
	}
	if slices.ContainsFunc(better, func(s string) bool { return strings.Contains(s, " ops/s ") }) {
		fmt.Fprintf(w, "verdict: faster: %s\n", strings.Join(better, "; "))
		return nil
	}
	fmt.Fprintln(w, "verdict: same (every figure within its zone)")
	return nil
}

// fmtFigure prints a median figure with 3 significant digits at least.
func fmtFigure(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case x >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}
