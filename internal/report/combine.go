package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Mode is how Combine adds scenarios up.
type Mode uint8

const (
	// Concurrent: the scenarios ran at the same time against the same
	// servers (the segments of one run, lockbench merge of load machines):
	// one window, the longest; clients and their counts side by side; the
	// servers' cost of one set of servers counted once (the widest delta).
	Concurrent Mode = iota
	// Sequential: the scenarios ran one after another with the same
	// clients (--repeat): windows, costs and each client's counts add up,
	// and every input's samples are kept.
	Sequential
)

// Combine adds scenarios of one matrix cell up as mode says and derives
// the result's figures (Derive): raw data first, figures after. ss[0]
// gives the identity (strategy, driver, workload, retry, params,
// topology). Every input must carry Raw (else the error says which).
//
// What each kind of data becomes:
//   - histograms: merged; counters, violations, figures, open-loop
//     arrivals, liveness counts, the background traffic's counts (its
//     histograms merged): summed;
//   - window: Concurrent the longest, Sequential the sum;
//   - clients and per-client counts: Concurrent summed and concatenated,
//     Sequential the first's count, per-client counts added client by
//     client;
//   - the servers' cost: per set of servers, Concurrent the widest delta
//     (every process read the same servers over nearly one window),
//     Sequential the sum; client CPU and its budget: summed;
//   - server load samples: Concurrent those of the input with the most
//     (each process sampled the same servers), Sequential concatenated;
//   - timeline: Concurrent added entry by entry (percentiles dropped),
//     Sequential concatenated, each run's entries after the last;
//   - samples: Concurrent one, of the result; Sequential every input's;
//   - renewal margins: counts summed, the minimum the smaller, each half's
//     histogram merged (absent unless every input measured them);
//   - strategy stats: counts summed, maxima (keys with "max") the largest;
//     quantiles of one input only (they do not combine).
func Combine(mode Mode, ss []Scenario) (Scenario, error) {
	if len(ss) == 0 {
		return Scenario{}, fmt.Errorf("combine: no scenario")
	}
	for i := range ss {
		if ss[i].Raw == nil {
			return Scenario{}, fmt.Errorf("%s: input %d has no raw data (a file written before lockbench kept it, in schema 1's raw): its figures cannot be combined exactly; run it again", ss[i].Name(), i+1)
		}
	}
	out := ss[0]
	out.Raw = cloneRaw(ss[0].Raw)
	out.Counters = cloneCounters(ss[0].Counters)
	out.Figures = maps.Clone(ss[0].Figures)
	out.Liveness = cloneLiveness(ss[0].Liveness)
	out.StrategyStats = maps.Clone(ss[0].StrategyStats)
	out.Faults = slices.Clone(ss[0].Faults)
	out.Timeline = slices.Clone(ss[0].Timeline)
	out.Intervals = nil
	if mode == Sequential {
		out.Intervals = appendIntervals(ss)
	}
	hists := map[string]*hdrhistogram.Histogram{}
	for k := range out.Raw.Hists {
		h, err := out.Raw.Hist(k)
		if err != nil {
			return Scenario{}, fmt.Errorf("%s: %w", out.Name(), err)
		}
		hists[k] = h
	}
	samples := slices.Clone(ss[0].Samples)
	if len(samples) == 0 {
		samples = []Sample{SampleOf(ss[0])}
	}
	stats := []map[string]float64{ss[0].StrategyStats}
	mostLoad := len(out.Raw.LoadRates)
	for _, s := range ss[1:] {
		r := s.Raw
		for k := range r.Hists {
			h, err := r.Hist(k)
			if err != nil {
				return Scenario{}, fmt.Errorf("%s: %w", s.Name(), err)
			}
			if hists[k] == nil {
				hists[k] = h
			} else {
				hists[k].Merge(h)
			}
		}
		o := out.Raw
		bg, err := addBackground(o.Background, r.Background)
		if err != nil {
			return Scenario{}, fmt.Errorf("%s: %w", s.Name(), err)
		}
		o.Background = bg
		o.Handover = addHandover(o.Handover, r.Handover, mode)
		o.RenewalMargin = addRenewalMargin(o.RenewalMargin, r.RenewalMargin)
		if o.Roles, err = addRoles(o.Roles, r.Roles, mode); err != nil {
			return Scenario{}, fmt.Errorf("%s: %w", s.Name(), err)
		}
		o.ThinkMS = max(o.ThinkMS, r.ThinkMS) // the same scenario's: one think time
		o.Permits = max(o.Permits, r.Permits) // the same locker's permits
		o.CostOps += r.CostOps
		o.SharedCost = o.SharedCost || r.SharedCost
		o.ClientSeconds += r.ClientSeconds
		o.ClientCPUS += r.ClientCPUS
		o.CPUBudgetS, o.Host, o.CPUBudgets = fold(addBudgets(budgetsOf(o), budgetsOf(r), mode))
		switch mode {
		case Concurrent:
			o.Locks, o.LockSpace, o.LockSpaces = fold(addSpaces(spacesOf(o), spacesOf(r)))
			o.WindowS = max(o.WindowS, r.WindowS)
			out.Clients += s.Clients
			o.ClientOps = append(o.ClientOps, r.ClientOps...)
			o.Cost = widest(o.Cost, r.Cost)
			if len(r.LoadRates) > mostLoad {
				o.LoadRates, o.LoadIntervalMS, mostLoad = slices.Clone(r.LoadRates), r.LoadIntervalMS, len(r.LoadRates)
			}
			out.OfferedRate += s.OfferedRate
			out.Timeline = mergeTimeline(out.Timeline, s.Timeline)
		case Sequential:
			o.Locks = max(o.Locks, r.Locks) // one run at a time
			o.WindowS += r.WindowS
			o.Runs += max(r.Runs, 1)
			for i, n := range r.ClientOps {
				if i < len(o.ClientOps) {
					o.ClientOps[i] += n
				} else {
					o.ClientOps = append(o.ClientOps, n)
				}
			}
			o.Cost = addCost(o.Cost, r.Cost)
			o.LoadRates = append(o.LoadRates, r.LoadRates...)
			if o.LoadIntervalMS == 0 {
				o.LoadIntervalMS = r.LoadIntervalMS
			}
			out.Timeline = appendTimeline(out.Timeline, s.Timeline)
			if len(s.Samples) > 0 {
				samples = append(samples, s.Samples...)
			} else {
				samples = append(samples, SampleOf(s))
			}
		}
		out.Offered += s.Offered
		out.Dropped += s.Dropped
		out.Undecided += s.Undecided
		out.Violations.Add(s.Violations)
		addCounters(&out.Counters, s.Counters)
		for k, v := range s.Figures {
			if out.Figures == nil {
				out.Figures = map[string]int64{}
			}
			out.Figures[k] += v
		}
		out.Liveness = addLiveness(out.Liveness, s.Liveness)
		out.Faults = append(out.Faults, s.Faults...)
		stats = append(stats, s.StrategyStats)
		out.StopReason = combineStop(out.StopReason, s.StopReason)
		if out.StopError == "" {
			out.StopError = s.StopError
		}
		if out.VerifyError == "" {
			out.VerifyError = s.VerifyError
		}
	}
	if len(ss) > 1 {
		out.StrategyStats = combineStats(stats)
	}
	out.Violations.CrossOverlap, out.Violations.CrossOverlapPossible = crossSum(ss)
	out.Linearizability = combineLin(ss)
	out.Raw.Hists = map[string]string{}
	for k, h := range hists {
		out.Raw.SetHist(k, h)
	}
	if err := Derive(&out); err != nil {
		return Scenario{}, err
	}
	switch mode {
	case Concurrent:
		out.Samples = []Sample{SampleOf(out)}
		out.Repeats = nil
	case Sequential:
		out.Samples = samples
		out.Repeats = RepeatsOf(samples)
	}
	return out, nil
}

// crossSum sums the cross-process oracle's counts of ss: nil (not
// checked) unless every input was checked.
func crossSum(ss []Scenario) (certain, possible *int64) {
	var c, p int64
	for _, s := range ss {
		v := s.Violations
		if v.CrossOverlap == nil || v.CrossOverlapPossible == nil {
			return nil, nil
		}
		c += *v.CrossOverlap
		p += *v.CrossOverlapPossible
	}
	return &c, &p
}

// RepeatsOf is the spread of ops/s and p99 over samples; nil for fewer
// than two.
func RepeatsOf(samples []Sample) *Repeats {
	if len(samples) < 2 {
		return nil
	}
	ops := make([]float64, len(samples))
	p99 := make([]float64, len(samples))
	for i, s := range samples {
		ops[i], p99[i] = s.OpsPerSec, s.P99MS
	}
	return &Repeats{N: len(samples), OpsPerSec: NewSpread(ops), P99MS: NewSpread(p99)}
}

// budgetsOf is r's CPU budget by host.
func budgetsOf(r *Raw) map[string]float64 {
	if r.CPUBudgets != nil {
		return r.CPUBudgets
	}
	return map[string]float64{r.Host: r.CPUBudgetS}
}

// addBudgets is the CPU budgets of a and b by host: Concurrent, the
// largest of each host's (its cores, shared); Sequential, their sum.
func addBudgets(a, b map[string]float64, mode Mode) map[string]float64 {
	out := maps.Clone(a)
	for h, v := range b {
		if mode == Concurrent {
			out[h] = max(out[h], v)
		} else {
			out[h] += v
		}
	}
	return out
}

// spacesOf is r's locks by lock space.
func spacesOf(r *Raw) map[string]int {
	if r.LockSpaces != nil {
		return r.LockSpaces
	}
	if r.Locks == 0 && r.LockSpace == "" {
		return nil
	}
	return map[string]int{r.LockSpace: r.Locks}
}

// addSpaces is the locks of a and b: per lock space, the most either has
// (segments of one run share theirs).
func addSpaces(a, b map[string]int) map[string]int {
	if a == nil && b == nil {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int{}
	}
	for k, n := range b {
		out[k] = max(out[k], n)
	}
	return out
}

func cloneRaw(r *Raw) *Raw {
	c := *r
	c.LockSpaces = maps.Clone(r.LockSpaces)
	c.CPUBudgets = maps.Clone(r.CPUBudgets)
	c.Hists = maps.Clone(r.Hists)
	c.ClientOps = slices.Clone(r.ClientOps)
	c.Cost = make([]ServerCost, len(r.Cost))
	for i, sc := range r.Cost {
		c.Cost[i] = ServerCost{Servers: sc.Servers, ByCommand: maps.Clone(sc.ByCommand), Own: maps.Clone(sc.Own), CPUMS: sc.CPUMS}
	}
	if len(c.Cost) == 0 {
		c.Cost = nil
	}
	c.LoadRates = slices.Clone(r.LoadRates)
	c.Background = cloneBackground(r.Background)
	c.Roles = cloneRoles(r.Roles)
	if r.Handover != nil {
		h := *r.Handover
		c.Handover = &h
	}
	if r.RenewalMargin != nil {
		m := *r.RenewalMargin
		c.RenewalMargin = &m
	}
	if c.Runs == 0 {
		c.Runs = 1
	}
	return &c
}

func (c ServerCost) commands() int64 {
	var n int64
	for _, v := range c.ByCommand {
		n += v
	}
	return n
}

// wider reports whether c is a wider delta of the same servers than x:
// more commands, or for entries without command counts (a baseline
// server's process CPU) more CPU.
func (c ServerCost) wider(x ServerCost) bool {
	if c.ByCommand == nil && x.ByCommand == nil {
		return c.CPUMS > x.CPUMS
	}
	return c.commands() > x.commands()
}

// widest keeps, per set of servers, the widest delta (a delta of the same
// servers read by another process over nearly the same window: the most
// commands, or without command counts the most CPU); sets only one side
// has are kept.
func widest(a, b []ServerCost) []ServerCost {
	for _, y := range b {
		i := slices.IndexFunc(a, func(x ServerCost) bool { return x.Servers == y.Servers })
		switch {
		case i < 0:
			a = append(a, y)
		case y.wider(a[i]):
			own := addCounts(a[i].Own, y.Own)
			a[i] = y
			a[i].Own = own
		default:
			a[i].Own = addCounts(a[i].Own, y.Own)
		}
	}
	return a
}

// addCounts is a copy of a with b's counts added.
func addCounts(a, b map[string]int64) map[string]int64 {
	if a == nil && b == nil {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int64{}
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// addCost adds b's deltas to a's, per set of servers.
func addCost(a, b []ServerCost) []ServerCost {
	for _, y := range b {
		i := slices.IndexFunc(a, func(x ServerCost) bool { return x.Servers == y.Servers })
		if i < 0 {
			a = append(a, ServerCost{Servers: y.Servers, ByCommand: maps.Clone(y.ByCommand), Own: maps.Clone(y.Own), CPUMS: y.CPUMS})
			continue
		}
		a[i].ByCommand = addCounts(a[i].ByCommand, y.ByCommand)
		a[i].Own = addCounts(a[i].Own, y.Own)
		a[i].CPUMS += y.CPUMS
	}
	return a
}

func cloneCounters(c Counters) Counters {
	c.ErrorsByKind = maps.Clone(c.ErrorsByKind)
	c.ErrorSamples = maps.Clone(c.ErrorSamples)
	return c
}

// addCounters adds every count of o to c (error samples: the first per
// kind).
func addCounters(c *Counters, o Counters) {
	c.Attempts += o.Attempts
	c.Failures += o.Failures
	c.Timeouts += o.Timeouts
	c.NotOwner += o.NotOwner
	c.Rejected += o.Rejected
	c.Reads += o.Reads
	c.Cancelled += o.Cancelled
	c.HungReleases += o.HungReleases
	c.Errors += o.Errors
	for k, v := range o.ErrorsByKind {
		if c.ErrorsByKind == nil {
			c.ErrorsByKind = map[string]int64{}
		}
		c.ErrorsByKind[k] += v
	}
	for k, v := range o.ErrorSamples {
		if c.ErrorSamples == nil {
			c.ErrorSamples = map[string]string{}
		}
		if _, ok := c.ErrorSamples[k]; !ok {
			c.ErrorSamples[k] = v
		}
	}
}

func cloneLiveness(l *Liveness) *Liveness {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// addLiveness adds b's liveness counts to a (nil: not kept by that side;
// the sum of a measured and an unmeasured side is not measured).
func addLiveness(a, b *Liveness) *Liveness {
	if a == nil || b == nil {
		if a == nil {
			return cloneLiveness(b)
		}
		return a
	}
	if !b.Measured && a.Measured {
		a.Measured, a.NotMeasured = false, b.NotMeasured
	}
	a.Samples += b.Samples
	a.ReadErrors += b.ReadErrors
	a.OrphanLocks += b.OrphanLocks
	a.OrphanLockMS += b.OrphanLockMS
	a.OrphansAtEnd += b.OrphansAtEnd
	a.OrphanAcquires += b.OrphanAcquires
	a.OrphanRenewals += b.OrphanRenewals
	a.HeldPastTTL += b.HeldPastTTL
	a.OrphanShares += b.OrphanShares
	a.DeadlineOvershoots += b.DeadlineOvershoots
	a.GoroutinesMax = max(a.GoroutinesMax, b.GoroutinesMax)
	a.ForeignHoldMaxMS = max(a.ForeignHoldMaxMS, b.ForeignHoldMaxMS)
	a.ResolutionMS = max(a.ResolutionMS, b.ResolutionMS)
	return a
}

// combineStop is the stop reason of two combined parts: an interruption or
// an abort wins over a normal end, and "done" over "duration".
func combineStop(a, b string) string {
	rank := func(s string) int {
		switch s {
		case "interrupted":
			return 4
		case "aborted":
			return 3
		case "done":
			return 2
		case "duration":
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// combineStats combines strategy stats: keys naming a maximum ("max")
// take the largest, quantiles and means ("p50", "p99", "mean") are left
// out (they do not combine), every other key is a count and is summed.
func combineStats(all []map[string]float64) map[string]float64 {
	var out map[string]float64
	for _, m := range all {
		for k, v := range m {
			if strings.Contains(k, "_p") && quantileKey(k) || strings.Contains(k, "mean") {
				continue
			}
			if out == nil {
				out = map[string]float64{}
			}
			if strings.Contains(k, "max") {
				out[k] = max(out[k], v)
			} else {
				out[k] += v
			}
		}
	}
	return out
}

// quantileKey reports whether k names a quantile (p50, p99, p999, ...).
func quantileKey(k string) bool {
	for _, part := range strings.Split(k, "_") {
		if len(part) > 1 && part[0] == 'p' && strings.Trim(part[1:], "0123456789") == "" {
			return true
		}
	}
	return false
}

// appendIntervals is the interval histograms of ss one run after another,
// as appendTimeline puts their timelines (the .hlog of pooled repeats);
// nil unless every input has one per timeline entry.
func appendIntervals(ss []Scenario) *IntervalHists {
	var out *IntervalHists
	for _, s := range ss {
		iv := s.Intervals
		if iv == nil || len(iv.Op) != len(s.Timeline) || len(iv.Acquire) != len(s.Timeline) {
			return nil
		}
		if out == nil {
			out = &IntervalHists{Start: iv.Start, WindowS: iv.WindowS}
		}
		out.Op = append(out.Op, iv.Op...)
		out.Acquire = append(out.Acquire, iv.Acquire...)
	}
	return out
}

// appendTimeline puts b's entries after a's: b's t_s shifted by a's last.
func appendTimeline(a, b []Second) []Second {
	var shift float64
	if len(a) > 0 {
		shift = a[len(a)-1].TS
	}
	for _, e := range b {
		e.TS += shift
		a = append(a, e)
	}
	return a
}

// fold is a per-key map as Raw keeps it: the sum of its values, and the
// map itself unless it has one key, which is then returned alone (a
// single host's CPU budget, a single lock space need no map).
func fold[V int | float64](m map[string]V) (sum V, only string, many map[string]V) {
	for _, v := range m {
		sum += v
	}
	if len(m) == 1 {
		for k := range m {
			only = k
		}
		return sum, only, nil
	}
	return sum, "", m
}
