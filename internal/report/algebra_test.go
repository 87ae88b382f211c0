package report

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The recorded files are real runs of lockbench against redis-server (a
// closed-loop flash sale with --load-sample, an open-loop lock-cycle on
// watchdog), as run wrote them.
var recordedFiles = []string{"testdata/recorded-closed.json", "testdata/recorded-open.json"}

func recorded(t *testing.T) []Scenario {
	t.Helper()
	var out []Scenario
	for _, f := range recordedFiles {
		r, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, r.Scenarios...)
	}
	return out
}

// splitHist deals the values of h at random into k histograms.
func splitHist(rng *rand.Rand, h *hdrhistogram.Histogram, k int) []*hdrhistogram.Histogram {
	parts := make([]*hdrhistogram.Histogram, k)
	for i := range parts {
		parts[i] = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	}
	for _, b := range h.Distribution() {
		for n := b.Count; n > 0; {
			take := 1 + rng.Int64N(n)
			_ = parts[rng.IntN(k)].RecordValues(b.To, take)
			n -= take
		}
	}
	return parts
}

// splitCount deals n at random into k counts.
func splitCount(rng *rand.Rand, n int64, k int) []int64 {
	out := make([]int64, k)
	for n > 0 {
		take := 1 + rng.Int64N(n)
		out[rng.IntN(k)] += take
		n -= take
	}
	return out
}

// split cuts s into k parts that Combine(mode) puts back together: every
// histogram's values dealt at random; Concurrent: the clients dealt out
// (each client's count goes with it; at least one per part), one shared
// window, server cost and CPU budget (one machine); Sequential: each
// client's count, the window, the cost and the CPU budget dealt out, the
// same clients in every part. Counters, figures,
// arrivals and the liveness counts are dealt out in both.
func split(t *testing.T, rng *rand.Rand, s Scenario, mode Mode, k int) []Scenario {
	t.Helper()
	parts := make([]Scenario, k)
	for i := range parts {
		p := s
		p.Raw = &Raw{WindowS: s.Raw.WindowS, Runs: 1, Locks: s.Raw.Locks, LoadIntervalMS: s.Raw.LoadIntervalMS, Hists: map[string]string{}}
		p.Counters = Counters{ErrorsByKind: map[string]int64{}}
		p.Figures = map[string]int64{}
		p.Violations = Violations{}
		p.Samples, p.Repeats = nil, nil
		if s.Liveness != nil {
			l := Liveness{Measured: s.Liveness.Measured, GoroutinesMax: s.Liveness.GoroutinesMax}
			p.Liveness = &l
		}
		parts[i] = p
	}
	for kind := range s.Raw.Hists {
		h, err := s.Raw.Hist(kind)
		if err != nil {
			t.Fatal(err)
		}
		for i, ph := range splitHist(rng, h, k) {
			parts[i].Raw.SetHist(kind, ph)
		}
	}
	deal := func(n int64, set func(p *Scenario, v int64)) {
		for i, v := range splitCount(rng, n, k) {
			set(&parts[i], v)
		}
	}
	deal(s.Counters.Attempts, func(p *Scenario, v int64) { p.Counters.Attempts = v })
	deal(s.Counters.Errors, func(p *Scenario, v int64) { p.Counters.Errors = v })
	deal(s.Counters.Timeouts, func(p *Scenario, v int64) { p.Counters.Timeouts = v })
	deal(s.Counters.Failures, func(p *Scenario, v int64) { p.Counters.Failures = v })
	deal(s.Counters.Reads, func(p *Scenario, v int64) { p.Counters.Reads = v })
	deal(s.Raw.CostOps, func(p *Scenario, v int64) { p.Raw.CostOps = v })
	deal(s.Offered, func(p *Scenario, v int64) { p.Offered = v })
	deal(s.Dropped, func(p *Scenario, v int64) { p.Dropped = v })
	for _, key := range slices.Sorted(maps.Keys(s.Figures)) {
		deal(s.Figures[key], func(p *Scenario, v int64) { p.Figures[key] = v })
	}
	for _, kind := range ViolationKinds {
		deal(kind.Of(s.Violations), func(p *Scenario, v int64) { kind.Set(&p.Violations, v) })
	}
	if s.Liveness != nil {
		deal(s.Liveness.Samples, func(p *Scenario, v int64) { p.Liveness.Samples = v })
		deal(s.Liveness.OrphanLocks, func(p *Scenario, v int64) { p.Liveness.OrphanLocks = v })
		deal(s.Liveness.DeadlineOvershoots, func(p *Scenario, v int64) { p.Liveness.DeadlineOvershoots = v })
	}
	// CPU in µs, dealt as counts, so that the parts add up exactly.
	deal(int64(math.Round(s.Raw.ClientCPUS*1e6)), func(p *Scenario, v int64) { p.Raw.ClientCPUS = float64(v) / 1e6 })
	switch mode {
	case Concurrent:
		n := len(s.Raw.ClientOps)
		if n < k {
			t.Fatalf("%d clients cannot make %d parts", n, k)
		}
		// Cut the clients in k runs of at least one.
		cuts := rng.Perm(n - 1)[:k-1]
		for i := range cuts {
			cuts[i]++
		}
		slices.Sort(cuts)
		bounds := append(append([]int{0}, cuts...), n)
		for i := range parts {
			parts[i].Raw.ClientOps = slices.Clone(s.Raw.ClientOps[bounds[i]:bounds[i+1]])
			parts[i].Clients = bounds[i+1] - bounds[i]
			parts[i].Raw.Cost = s.Raw.Cost             // every process read the same servers
			parts[i].Raw.CPUBudgetS = s.Raw.CPUBudgetS // on one machine, whose cores they shared
			parts[i].Raw.LoadRates = nil
			parts[i].OfferedRate = s.OfferedRate / float64(k)
		}
		parts[rng.IntN(k)].Raw.LoadRates = s.Raw.LoadRates // one sampled the most
	case Sequential:
		for i := range parts {
			parts[i].Raw.ClientOps = make([]int64, len(s.Raw.ClientOps))
		}
		for c, n := range s.Raw.ClientOps {
			deal(n, func(p *Scenario, v int64) { p.Raw.ClientOps[c] = v })
		}
		deal(int64(math.Round(s.Raw.CPUBudgetS*1e6)), func(p *Scenario, v int64) { p.Raw.CPUBudgetS = float64(v) / 1e6 })
		// The window in µs, so that the parts add up exactly.
		deal(int64(math.Round(s.Raw.WindowS*1e6)), func(p *Scenario, v int64) { p.Raw.WindowS = float64(v) / 1e6 })
		for _, c := range s.Raw.Cost {
			byCmd := make([]map[string]int64, k)
			for i := range byCmd {
				byCmd[i] = map[string]int64{}
			}
			for _, name := range slices.Sorted(maps.Keys(c.ByCommand)) {
				for i, v := range splitCount(rng, c.ByCommand[name], k) {
					if v > 0 {
						byCmd[i][name] = v
					}
				}
			}
			cpu := splitCount(rng, int64(math.Round(c.CPUMS*1000)), k)
			for i := range parts {
				parts[i].Raw.Cost = append(parts[i].Raw.Cost, ServerCost{Servers: c.Servers, ByCommand: byCmd[i], CPUMS: float64(cpu[i]) / 1000})
			}
		}
		// Load samples: each part has a run of them, in order.
		rest := slices.Clone(s.Raw.LoadRates)
		for i := range parts {
			take := len(rest)
			if i < k-1 {
				take = rng.IntN(len(rest) + 1)
			}
			parts[i].Raw.LoadRates, rest = rest[:take], rest[take:]
		}
	}
	for i := range parts {
		if err := Derive(&parts[i]); err != nil {
			t.Fatal(err)
		}
	}
	return parts
}

// sameCombined compares what a combination must give back exactly: every count
// and histogram, and every figure derived from them (floating-point sums
// of s and µs within 1e-9 relative).
func sameCombined(t *testing.T, what string, got, want Scenario, mode Mode) {
	t.Helper()
	fail := func(f string, a ...any) { t.Helper(); t.Fatalf("%s: "+f, append([]any{what}, a...)...) }
	for kind := range want.Raw.Hists {
		g, _ := got.Raw.Hist(kind)
		w, _ := want.Raw.Hist(kind)
		if g == nil || !reflect.DeepEqual(g.Distribution(), w.Distribution()) || g.TotalCount() != w.TotalCount() {
			fail("histogram %s differs", kind)
		}
	}
	if len(got.Raw.Hists) != len(want.Raw.Hists) {
		fail("histograms %v, want %v", slices.Sorted(maps.Keys(got.Raw.Hists)), slices.Sorted(maps.Keys(want.Raw.Hists)))
	}
	if got.Ops != want.Ops || got.LatencyMS != want.LatencyMS || got.AcquireMS != want.AcquireMS || got.ReleaseMS != want.ReleaseMS || got.HoldMS != want.HoldMS {
		fail("ops %d latency %+v acquire %+v, want %d %+v %+v", got.Ops, got.LatencyMS, got.AcquireMS, want.Ops, want.LatencyMS, want.AcquireMS)
	}
	gotOps, wantOps := got.Raw.ClientOps, want.Raw.ClientOps
	if mode == Concurrent { // parts in another order list their clients in it
		gotOps, wantOps = slices.Sorted(slices.Values(gotOps)), slices.Sorted(slices.Values(wantOps))
	}
	if got.Clients != want.Clients || !slices.Equal(gotOps, wantOps) || got.Fairness != want.Fairness {
		fail("clients %d %v jain %+v, want %d %v %+v", got.Clients, got.Raw.ClientOps, got.Fairness, want.Clients, want.Raw.ClientOps, want.Fairness)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if !near(got.DurationS, want.DurationS) || !near(got.OpsPerSec, want.OpsPerSec) || !near(got.CeilingOpsPerSec, want.CeilingOpsPerSec) || !near(got.Efficiency, want.Efficiency) {
		fail("window %v ops/s %v ceiling %v, want %v %v %v", got.DurationS, got.OpsPerSec, got.CeilingOpsPerSec, want.DurationS, want.OpsPerSec, want.CeilingOpsPerSec)
	}
	gc, wc := got.RedisCost, want.RedisCost
	if gc.Commands != wc.Commands || gc.Ops != wc.Ops || !maps.Equal(gc.ByCommand, wc.ByCommand) || !near(gc.CommandsPerOp, wc.CommandsPerOp) || !near(gc.ServerCPUMS, wc.ServerCPUMS) {
		fail("redis cost %+v, want %+v", gc, wc)
	}
	if !near(got.ClientCPU.CPUSeconds, want.ClientCPU.CPUSeconds) || !near(got.ClientCPU.CPUMicrosPerOp, want.ClientCPU.CPUMicrosPerOp) || !near(got.ClientCPU.BudgetShare, want.ClientCPU.BudgetShare) {
		fail("client cpu %+v, want %+v", got.ClientCPU, want.ClientCPU)
	}
	if got.Counters.Attempts != want.Counters.Attempts || got.Counters.Errors != want.Counters.Errors || got.Counters.Timeouts != want.Counters.Timeouts ||
		got.Counters.Failures != want.Counters.Failures || got.Counters.Reads != want.Counters.Reads {
		fail("counters %+v, want %+v", got.Counters, want.Counters)
	}
	if got.Violations.Map() == nil || !maps.Equal(got.Violations.Map(), want.Violations.Map()) || !maps.Equal(got.Figures, want.Figures) {
		fail("violations %v figures %v, want %v %v", got.Violations.Map(), got.Figures, want.Violations.Map(), want.Figures)
	}
	if got.Offered != want.Offered || got.Dropped != want.Dropped || (mode == Concurrent && !near(got.OfferedRate, want.OfferedRate)) {
		fail("offered %d dropped %d rate %v, want %d %d %v", got.Offered, got.Dropped, got.OfferedRate, want.Offered, want.Dropped, want.OfferedRate)
	}
	if (got.ServerLoad == nil) != (want.ServerLoad == nil) || got.ServerLoad != nil && (got.ServerLoad.Samples != want.ServerLoad.Samples || !near(got.ServerLoad.MeanPerSec, want.ServerLoad.MeanPerSec) || got.ServerLoad.PeakPerSec != want.ServerLoad.PeakPerSec) {
		fail("server load %+v, want %+v", got.ServerLoad, want.ServerLoad)
	}
	if l, w := got.Liveness, want.Liveness; (l == nil) != (w == nil) || l != nil && (l.Samples != w.Samples || l.OrphanLocks != w.OrphanLocks || l.DeadlineOvershoots != w.DeadlineOvershoots || l.TimeToFreeMS != w.TimeToFreeMS) {
		fail("liveness %+v, want %+v", l, w)
	}
	if err := Check(&Run{Scenarios: []Scenario{got}}); err != nil {
		fail("%v", err)
	}
}

// Combine(split(run)) is the run, for every count, histogram and figure
// derived from them; Combine is commutative (any order of the parts) and
// associative (any grouping), in both modes, over 6 random splits of each
// recorded run.
func TestCombineAlgebra(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 5))
	for _, orig := range recorded(t) {
		// split deals the window and the CPU times in whole µs: the
		// reference has them so too.
		orig.Raw = cloneRaw(orig.Raw)
		for _, f := range []*float64{&orig.Raw.WindowS, &orig.Raw.ClientCPUS, &orig.Raw.CPUBudgetS} {
			*f = math.Round(*f*1e6) / 1e6
		}
		if err := Derive(&orig); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{Concurrent, Sequential} {
			// The reference is the run as Combine gives back one part: the
			// same raw data, derived again.
			want, err := Combine(mode, []Scenario{orig})
			if err != nil {
				t.Fatal(err)
			}
			sameCombined(t, "one part", want, orig, mode)
			for trial := range 6 {
				k := 2 + rng.IntN(3)
				parts := split(t, rng, orig, mode, k)
				name := fmt.Sprintf("%s mode %d trial %d (%d parts)", orig.Name(), mode, trial, k)
				got, err := Combine(mode, parts)
				if err != nil {
					t.Fatal(err)
				}
				sameCombined(t, name+": merge(split)", got, want, mode)
				if !slices.Equal(got.Raw.ClientOps, want.Raw.ClientOps) {
					t.Fatalf("%s: clients in order %v, want %v", name, got.Raw.ClientOps, want.Raw.ClientOps)
				}
				// Commutative: the parts in another order.
				perm := slices.Clone(parts)
				rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
				got, err = Combine(mode, perm)
				if err != nil {
					t.Fatal(err)
				}
				sameCombined(t, name+": shuffled", got, want, mode)
				// Associative: the first parts combined first, then the rest.
				cut := 1 + rng.IntN(k-1)
				head, err := Combine(mode, parts[:cut])
				if err != nil {
					t.Fatal(err)
				}
				got, err = Combine(mode, append([]Scenario{head}, parts[cut:]...))
				if err != nil {
					t.Fatal(err)
				}
				sameCombined(t, name+": grouped", got, want, mode)
			}
		}
	}
}
