package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/harness"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies/ext"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

func newHarnessCmd() *cobra.Command {
	var clients, requests, rounds, handoverClients int
	var duration, work time.Duration
	var profileDir string
	cmd := &cobra.Command{
		Use:   "harness",
		Short: "Check that lockbench is not the bottleneck: lock cycles/s against redis-benchmark and a bare loop",
		Long: `harness starts one redis-server and measures the uncontended lock cycle
(SET NX PX, then EVALSHA of the compare-and-delete script, each client on a
key of its own) at the same connection count three ways: redis-benchmark
issuing the two commands (equivalent cycle rate 1 / (1/rate_set +
1/rate_evalsha)); a bare Go loop per driver that records nothing but sends
the same bytes (a fresh 128-bit token per cycle); and 'lockbench run
--strategy atomic --workload lock-cycle --own-keys' per driver. Each of
--rounds rounds runs redis-benchmark, then per driver bare loop, lockbench,
bare loop (or lockbench, bare loop, lockbench in every other round) back to
back, and compares the means of each kind within the round, so that a
machine whose speed drifts favours neither (a linear drift cancels); the
figures printed are medians over the rounds.

Each round then measures, per driver, the floor of a hand-over on one hot
key: a bare ring of --handover-clients goroutines passing one turn by
PUBLISH, each holding it for --work (no lock, queue or script: one message
through the server per hand-over), bracketed A-B-A with 'lockbench run
--strategy handoff --workload lock-cycle --keys 1' at the same clients and
work. The bare ring's efficiency (hand-overs/s x its mean hold) bounds the
efficiency of a lock whose waiters sleep until Redis tells them, on this
machine and server (waiters that poll can pass it by keeping the CPUs
awake, at the cost of their commands).

Last in each round, the external-lock protocol's cost (docs/external-locks.md)
on goredis, the driver external locks run on: atomic bracketed A-B-A with
ext-atomic (the same SET NX PX lock served by an adapter process over the
protocol), then ext-null (an adapter that grants at once, without Redis:
the protocol alone), each the uncontended lock cycle above. Read an
external lock's ops/s against ext-ratio. With the defaults a run takes
several minutes and prints nothing until its end.

It prints, last, lines per driver:
  ext-ratio goredis <ext-atomic cycles/s / atomic cycles/s>
  ext-null-ratio goredis <ext-null cycles/s / atomic cycles/s>
  harness-ratio <driver> <lockbench cycles/s / redis-benchmark cycle rate>
  harness-overhead <driver> <lockbench cycles/s / bare loop cycles/s>
  handover-bound <driver> <bare ring's efficiency>
  handover-ratio <driver> <handoff's efficiency / the bare ring's>
All figures are from this run, on this machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var bad []string
			if clients < 1 || clients > maxClients {
				bad = append(bad, fmt.Sprintf("--clients must be from 1 to %d, got %d", maxClients, clients))
			}
			if requests < 1000 {
				bad = append(bad, fmt.Sprintf("--requests must be at least 1000, got %d", requests))
			}
			if duration <= 0 {
				bad = append(bad, fmt.Sprintf("--duration must be above 0, got %v", duration))
			}
			if rounds < 1 {
				bad = append(bad, fmt.Sprintf("--rounds must be at least 1, got %d", rounds))
			}
			if handoverClients < 2 || handoverClients > maxClients {
				bad = append(bad, fmt.Sprintf("--handover-clients must be from 2 to %d, got %d", maxClients, handoverClients))
			}
			if work < 100*time.Microsecond {
				bad = append(bad, fmt.Sprintf("--work must be at least 100µs (a hand-over is measured against it), got %v", work))
			} else if duration > 0 && work > duration/10 {
				bad = append(bad, fmt.Sprintf("--work %v is more than --duration/10 (%v): each hand-over measurement needs at least 10 turns", work, duration/10))
			}
			if len(bad) > 0 {
				return usageError{errors.New(strings.Join(bad, "; "))}
			}
			return runHarness(cmd.Context(), cmd.OutOrStdout(), harnessConfig{clients: clients, requests: requests, rounds: rounds,
				d: duration, handoverClients: handoverClients, work: work, profileDir: profileDir})
		},
	}
	cmd.Flags().IntVar(&clients, "clients", 50, "connections / goroutines of the lock-cycle measurements (redis-benchmark, bare loop, lockbench), 1 to 100000")
	cmd.Flags().IntVar(&requests, "requests", 50000, "redis-benchmark requests per command and round (at least 1000)")
	cmd.Flags().DurationVar(&duration, "duration", time.Second, "time of each Go measurement (bare loop, lockbench, bare ring, handoff)")
	cmd.Flags().IntVar(&rounds, "rounds", 15, "rounds of measurements: each runs redis-benchmark, then per driver the lock-cycle and the hand-over measurements, A-B-A (medians are reported)")
	cmd.Flags().IntVar(&handoverClients, "handover-clients", 10, "clients of the hand-over measurements (bare ring and handoff on one key), 2 to 100000")
	cmd.Flags().DurationVar(&work, "work", time.Millisecond, "critical section of the hand-over measurements (each holder sleeps it), at least 100µs and at most --duration/10")
	// Hidden: pprof profiles of each Go measurement, for work on the hot path.
	cmd.Flags().StringVar(&profileDir, "profile-dir", "", "write CPU and allocation profiles of each Go measurement to this directory")
	_ = cmd.Flags().MarkHidden("profile-dir")
	return cmd
}

// harnessConfig is the harness command's flags.
type harnessConfig struct {
	clients, requests, rounds, handoverClients int
	d, work                                    time.Duration
	profileDir                                 string
}

func runHarness(parent context.Context, w io.Writer, c harnessConfig) error {
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	topo, err := topology.Start(ctx, 1)
	if err != nil {
		if ctx.Err() != nil { // Ctrl-C while the server starts
			return errInterrupted
		}
		return err
	}
	defer topo.Stop()
	pol, _ := retry.Parse("none")
	h := &harnessRun{ctx: ctx, c: c, s: topo.Servers[0], pol: pol, per: map[string]*harnessSeries{}}
	for r := 0; r < c.rounds; r++ {
		if err := h.round(r); err != nil {
			return err
		}
	}
	h.print(w)
	return nil
}

// harnessSeries are one driver's figures, one value per round.
type harnessSeries struct{ bare, bareCPU, lb, lbCPU, share, overhead, ratio, ringEff, handoffEff, handover []float64 }

// harnessRun is a harness run's server and figures so far.
type harnessRun struct {
	ctx              context.Context
	c                harnessConfig
	s                *topology.Server
	pol              *retry.Policy
	per              map[string]*harnessSeries
	sets, evals, rbs []float64 // redis-benchmark's, one per round
	// ext are the external-lock measurements, one per round: cycles/s of
	// atomic, ext-atomic and ext-null, and ext-atomic's and ext-null's
	// over atomic's.
	ext struct{ atomic, ext, null, ratio, nullRatio []float64 }
}

// cycleRound are one driver's lock-cycle measurements in a round, each
// with its client CPU per cycle (µs) and, for lockbench, its share of the
// CPU budget; n counts them, for profile names.
type cycleRound struct {
	bare, bareCPU, lb, lbCPU, share []float64
	n                               int
}

// round is round r: redis-benchmark, then each driver's measurements.
func (h *harnessRun) round(r int) error {
	if h.ctx.Err() != nil {
		return errInterrupted
	}
	set, evalsha, rb, err := harness.RedisBenchmark(h.s.Addr, h.s.Password, h.c.clients, h.c.requests)
	if err != nil {
		if h.ctx.Err() != nil { // Ctrl-C reaches redis-benchmark too
			return errInterrupted
		}
		return err
	}
	h.sets, h.evals, h.rbs = append(h.sets, set), append(h.evals, evalsha), append(h.rbs, rb)
	for _, drv := range drivers.Names() {
		if err := h.driverRound(r, drv, rb); err != nil {
			return err
		}
	}
	return h.externalRound(r)
}

// driverRound is round r's measurements on driver drv: the lock cycle,
// bare loop against lockbench, A-B-A, then the hand-over; rb is the
// round's redis-benchmark cycle rate.
func (h *harnessRun) driverRound(r int, drv string, rb float64) error {
	ctx := h.ctx
	m := &cycleRound{}
	// A-B-A: the measurement of one kind sits between two of the
	// other, and the round compares their means, so that a machine
	// whose speed drifts during the round favours neither (a linear
	// drift cancels). Even rounds bracket lockbench with bare
	// loops, odd rounds the bare loop with lockbench runs.
	bare := func() error { return h.measureBare(r, drv, m) }
	lockbench := func() error { return h.measureLockbench(r, drv, m) }
	if err := aba(ctx, bare, lockbench, r%2 == 1); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	x := h.per[drv]
	if x == nil {
		x = &harnessSeries{}
		h.per[drv] = x
	}
	lbRate := mean(m.lb)
	x.bare, x.bareCPU = append(x.bare, mean(m.bare)), append(x.bareCPU, mean(m.bareCPU))
	x.lb, x.lbCPU = append(x.lb, lbRate), append(x.lbCPU, mean(m.lbCPU))
	x.share = append(x.share, mean(m.share))
	x.overhead = append(x.overhead, lbRate/mean(m.bare)) // both > 0: checked above
	if rb > 0 {
		x.ratio = append(x.ratio, lbRate/rb)
	}
	ring, handoff, err := measureHandover(ctx, drv, h.s, h.c, uint64(r+1), r%2 == 1)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	x.ringEff, x.handoffEff = append(x.ringEff, ring), append(x.handoffEff, handoff)
	x.handover = append(x.handover, handoff/ring)
	return nil
}

// measureBare measures the bare loop once on drv (round r) into m.
func (h *harnessRun) measureBare(r int, drv string, m *cycleRound) error {
	m.n++
	s, d := h.s, h.c.d
	return profiled(h.c.profileDir, fmt.Sprintf("%s-%02d-%d-bare", drv, r+1, m.n), func() error {
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		rate, err := harness.BareLoop(h.ctx, drv, s.Addr, s.Password, h.c.clients, d)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		if err != nil {
			return fmt.Errorf("bare loop %s: %w", drv, err)
		}
		if rate <= 0 {
			return fmt.Errorf("bare loop %s: no lock cycle completed in %v", drv, d)
		}
		m.bare = append(m.bare, rate)
		m.bareCPU = append(m.bareCPU, float64(rusageCPU(after)-rusageCPU(before))/1e3/(rate*d.Seconds()))
		return nil
	})
}

// measureLockbench measures lockbench's atomic lock cycle once on drv
// (round r) into m.
func (h *harnessRun) measureLockbench(r int, drv string, m *cycleRound) error {
	rate, cpu, share, err := h.cycle(r, drv, "atomic", m)
	if err == nil {
		m.lb, m.lbCPU, m.share = append(m.lb, rate), append(m.lbCPU, cpu), append(m.share, share)
	}
	return err
}

// cycle runs strategy's uncontended lock cycle once on drv (round r):
// lock-cycle with keys of the clients' own, and returns its cycles/s,
// client CPU per cycle (µs) and share of the client CPU budget.
func (h *harnessRun) cycle(r int, drv, strategy string, m *cycleRound) (rate, cpu, share float64, err error) {
	m.n++
	ctx, s, pol, clients, d := h.ctx, h.s, h.pol, h.c.clients, h.c.d
	err = profiled(h.c.profileDir, fmt.Sprintf("%s-%02d-%d-%s", drv, r+1, m.n, strategy), func() error {
		res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
			Strategy: strategy, Driver: drv, Workload: "lock-cycle", Retry: pol, Clients: clients,
			Duration: d, TTL: time.Second, Seed: uint64(r + 1),
			Params: workloads.Params{}, Options: registry.Values{"own-keys": true},
		}}, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:harness:"+drv+":")
		if err != nil {
			return fmt.Errorf("lockbench %s %s: %w", strategy, drv, err)
		}
		if res.OpsPerSec <= 0 {
			return fmt.Errorf("lockbench %s %s: no lock cycle completed in %v", strategy, drv, d)
		}
		rate, cpu, share = res.OpsPerSec, res.ClientCPU.CPUMicrosPerOp, res.ClientCPU.BudgetShare
		return nil
	})
	return rate, cpu, share, err
}

// externalRound is round r's measurement of the external-lock protocol's
// cost on ext.DataDriver: atomic against ext-atomic (the same lock behind
// the protocol), A-B-A, then ext-null (the protocol alone) once; it
// appends the ratios of their cycles/s to atomic's.
func (h *harnessRun) externalRound(r int) error {
	drv := ext.DataDriver
	m := &cycleRound{}
	var in, out, null []float64
	run := func(strategy string, into *[]float64) func() error {
		return func() error {
			rate, _, _, err := h.cycle(r, drv, strategy, m)
			*into = append(*into, rate)
			return err
		}
	}
	if err := aba(h.ctx, run("atomic", &in), run("ext-atomic", &out), r%2 == 1); err != nil {
		return err
	}
	if err := run("ext-null", &null)(); err != nil {
		return err
	}
	h.ext.atomic, h.ext.ext, h.ext.null = append(h.ext.atomic, mean(in)), append(h.ext.ext, mean(out)), append(h.ext.null, mean(null))
	h.ext.ratio = append(h.ext.ratio, mean(out)/mean(in))
	h.ext.nullRatio = append(h.ext.nullRatio, mean(null)/mean(in))
	return nil
}

// print writes the figures: medians over the rounds per driver, then the
// summary lines.
func (h *harnessRun) print(w io.Writer) {
	c := h.c
	fmt.Fprintf(w, "redis-benchmark  SET NX PX %.0f/s, EVALSHA %.0f/s -> %.0f cycles/s (%d connections); medians of %d rounds\n",
		median(h.sets), median(h.evals), median(h.rbs), c.clients, c.rounds)
	for _, drv := range drivers.Names() {
		x := h.per[drv]
		fmt.Fprintf(w, "%-8s bare loop %.0f cycles/s (%.1f µs CPU/cycle); lockbench %.0f cycles/s (%.1f µs CPU/cycle, client CPU %.0f%% of its budget); medians of %d rounds\n",
			drv, median(x.bare), median(x.bareCPU), median(x.lb), median(x.lbCPU), 100*median(x.share), c.rounds)
		printRounds(w, drv, "lockbench / bare loop", x.overhead)
		printRounds(w, drv, "lockbench / redis-benchmark", x.ratio)
		fmt.Fprintf(w, "%-8s hand-over on one key (%d clients, %v work): bare ring efficiency %.2f, handoff %.2f; medians of %d rounds\n",
			drv, c.handoverClients, c.work, median(x.ringEff), median(x.handoffEff), c.rounds)
		printRounds(w, drv, "handoff / bare ring", x.handover)
	}
	fmt.Fprintf(w, "%-8s external lock (%d clients, lock-cycle on keys of their own): atomic %.0f cycles/s, ext-atomic %.0f, ext-null %.0f; medians of %d rounds\n",
		ext.DataDriver, c.clients, median(h.ext.atomic), median(h.ext.ext), median(h.ext.null), c.rounds)
	printRounds(w, ext.DataDriver, "ext-atomic / atomic", h.ext.ratio)
	printRounds(w, ext.DataDriver, "ext-null / atomic", h.ext.nullRatio)
	fmt.Fprintf(w, "ext-ratio %s %.2f\n", ext.DataDriver, median(h.ext.ratio))
	fmt.Fprintf(w, "ext-null-ratio %s %.2f\n", ext.DataDriver, median(h.ext.nullRatio))
	for _, drv := range drivers.Names() {
		fmt.Fprintf(w, "harness-ratio %s %.2f\n", drv, median(h.per[drv].ratio))
	}
	for _, drv := range drivers.Names() {
		fmt.Fprintf(w, "harness-overhead %s %.2f\n", drv, median(h.per[drv].overhead))
	}
	for _, drv := range drivers.Names() {
		fmt.Fprintf(w, "handover-bound %s %.2f\n", drv, median(h.per[drv].ringEff))
	}
	for _, drv := range drivers.Names() {
		fmt.Fprintf(w, "handover-ratio %s %.2f\n", drv, median(h.per[drv].handover))
	}
}

// measureHandover runs one A-B-A round of the hand-over measurement on
// driver: the bare ring (harness.BareHandover) and lockbench's handoff
// strategy on one key, each c.handoverClients clients and c.work per
// critical section for c.d; handoffFirst brackets the ring with handoff
// runs instead. It returns the means of each kind's efficiency (ops/s x
// mean hold).
func measureHandover(ctx context.Context, drv string, s *topology.Server, c harnessConfig, seed uint64, handoffFirst bool) (ring, handoff float64, err error) {
	var rings, handoffs []float64
	bare := func() error {
		rate, hold, err := harness.BareHandover(ctx, drv, s.Addr, s.Password, c.handoverClients, c.work, c.d)
		if err != nil {
			return fmt.Errorf("bare hand-over %s: %w", drv, err)
		}
		rings = append(rings, rate*hold/1e6)
		return nil
	}
	pol, _ := retry.Parse("none")
	lb := func() error {
		res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
			Strategy: "handoff", Driver: drv, Workload: "lock-cycle", Retry: pol, Clients: c.handoverClients,
			Duration: c.d, TTL: time.Second, Seed: seed,
			Params: workloads.Params{Work: workloads.Fixed(c.work)}, Options: registry.Values{"keys": 1},
		}}, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:harness:handoff:"+drv+":")
		if err != nil {
			return fmt.Errorf("lockbench handoff %s: %w", drv, err)
		}
		if res.Efficiency <= 0 {
			return fmt.Errorf("lockbench handoff %s: no efficiency (%.0f ops/s in %v)", drv, res.OpsPerSec, c.d)
		}
		handoffs = append(handoffs, res.Efficiency)
		return nil
	}
	if err := aba(ctx, bare, lb, handoffFirst); err != nil {
		return 0, 0, err
	}
	return mean(rings), mean(handoffs), nil
}

// aba runs a, b, a (flip: b, a, b), stopping at the first error. Ctrl-C:
// a measurement cut short, or failing because it was, is not a result
// (errInterrupted).
func aba(ctx context.Context, a, b func() error, flip bool) error {
	seq := []func() error{a, b, a}
	if flip {
		seq = []func() error{b, a, b}
	}
	for _, m := range seq {
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err := m(); err != nil {
			if ctx.Err() != nil {
				return errInterrupted
			}
			return err
		}
	}
	return nil
}

// printRounds prints one ratio per round on one line.
func printRounds(w io.Writer, drv, what string, xs []float64) {
	fmt.Fprintf(w, "%-8s %s by round:", drv, what)
	for _, x := range xs {
		fmt.Fprintf(w, " %.2f", x)
	}
	fmt.Fprintln(w)
}

// profiled runs f; with dir set, it writes f's CPU profile to
// dir/<name>.cpu.pprof and the allocations made so far to
// dir/<name>.allocs.pprof (compare two with go tool pprof -diff_base).
func profiled(dir, name string, f func() error) error {
	if dir == "" {
		return f()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cpu, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		return err
	}
	defer cpu.Close()
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return err
	}
	err = f()
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	mem, err := os.Create(filepath.Join(dir, name+".allocs.pprof"))
	if err != nil {
		return err
	}
	defer mem.Close()
	return pprof.Lookup("allocs").WriteTo(mem, 0)
}

// mean of xs (0 for none).
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// median of xs (0 for none); xs is left unsorted.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func rusageCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
