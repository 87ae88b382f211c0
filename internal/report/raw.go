package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

// Raw is what a scenario measured, kept as data that combines exactly:
// histograms, counts and sums, never a percentile or a rate. Every derived
// figure of a Scenario (ops/s, latency percentiles, the ceiling and
// efficiency, Jain's index, commands/op, CPU/op, the server load) is
// computed from it by Derive, for a single run as for any combination of
// runs (Combine): repeats, segments, --procs and lockbench merge. The
// counters, violations and figures of a Scenario are raw already (sums),
// and Combine adds them up beside Raw.
type Raw struct {
	// WindowS is the measured window, s (warm-up excluded). Segments of one
	// run share a window (the longest is kept); repeats add theirs up.
	WindowS float64 `json:"window_s"`
	// Runs is how many sequential runs (repeats) the data pools: 1 for one
	// run, or for the segments of one run merged.
	Runs int `json:"runs"`
	// Hists are the measured window's HdrHistograms in µs (1 µs .. 60 s,
	// 3 significant figures), each encoded as hdrhistogram-go's Encode
	// writes it (V2 compressed, base64), by kind: "op" (the whole
	// operation; from the intended start in an open loop), "acquire"
	// (granted acquires, retries and waits included), "release", "hold"
	// (the critical section), "service" (open loop: the operation from its
	// actual start), "acquire_failed" (acquires that ended without the
	// lock, warm-up included) and "time_to_free" (liveness oracle: a holder's
	// exit to its lock being free), "handover_gap" (a lock's freeing
	// to its next grant while a client waited, see HandoverRaw),
	// "renewal_margin_first" and "renewal_margin_second" (a lease's
	// remaining TTL at each renewal, by half of the window, see
	// RenewalMarginRaw) and "orphan_share_age" (liveness oracle: an
	// orphan share's owner's death to the last read that saw it). A kind
	// with no value is absent.
	Hists map[string]string `json:"hists"`
	// ClientOps are the operations each client completed in the measured
	// window, in client order (segments: concatenated in segment order;
	// repeats: added up client by client). Their sum is the op count.
	ClientOps []int64 `json:"client_ops"`
	// Locks is how many distinct locks the workload takes (0: none, or no
	// critical-section work, so no lock-bound ceiling): the ceiling holds
	// min(clients, Locks) locks at once.
	Locks int `json:"locks,omitempty"`
	// Permits is, for a semaphore (strategies.PermitsOf > 1), how many
	// holders one lock admits at once: the ceiling then holds
	// min(clients, Locks x Permits) permits at once. Combined: the
	// largest. Absent (0) for an exclusive lock.
	Permits int `json:"permits,omitempty"`
	// ThinkMS is the mean of the clients' think time (--think: the mean
	// of its distribution), ms; 0: no think time.
	ThinkMS float64 `json:"think_ms,omitempty"`
	// ClientSeconds is, with a client ramp (params.clients_shape), the
	// ramp's client count integrated over the measured window, s: the
	// clients in force on average are ClientSeconds / WindowS, which the
	// lock-bound ceiling and the think bound take instead of clients.
	// Combined: summed (segments side by side, repeats one after
	// another). 0, and absent, without a ramp.
	ClientSeconds float64 `json:"client_seconds,omitempty"`
	// LockSpace names where those locks live: the prefix of the keys the
	// scenario wrote (lockbench:<run-id>:, the same in every segment of a
	// run). Scenarios combined Concurrent on one lock space share their
	// locks; on several (independent runs merged) each brings its own, and
	// the locks add up.
	LockSpace string `json:"lock_space,omitempty"`
	// LockSpaces are, after a Concurrent combination of several lock
	// spaces, the locks of each (LockSpace is then empty and Locks their
	// sum).
	LockSpaces map[string]int `json:"lock_spaces,omitempty"`
	// CostOps are the operations over the window the server cost and the
	// client CPU were read over (warm-up included).
	CostOps int64 `json:"cost_ops"`
	// Cost is the servers' cost: INFO commandstats and INFO cpu deltas,
	// one entry per set of servers measured, and for a baseline strategy
	// (zk, etcd, sql-*) whose server lockbench started, an entry of that
	// server's process CPU time (no command counts). Absent when they
	// could not be read (a server went away): commands/op is then not
	// measured.
	Cost []ServerCost `json:"cost,omitempty"`
	// ClientCPUS is lockbench's CPU time (user + sys) over the cost window,
	// s; CPUBudgetS the CPU time it could have had (wall time x
	// GOMAXPROCS), s. Processes add theirs up.
	ClientCPUS float64 `json:"client_cpu_s"`
	CPUBudgetS float64 `json:"cpu_budget_s"`
	// Host is the machine lockbench ran on (its host name); CPUBudgets,
	// after a combination over several, each one's budget (s): processes
	// on one machine at the same time share its cores, so their budget is
	// the machine's once (the largest), not their sum.
	Host       string             `json:"host,omitempty"`
	CPUBudgets map[string]float64 `json:"cpu_budgets,omitempty"`
	// Segment is set in the file of one execution segment of a run: its
	// servers' cost covers every segment's commands over the window, so no
	// cost per operation is derived from it (commands/op is absent); the
	// merge of every segment of the run derives it (Merge clears it when
	// no segment is missing). Absent (false) elsewhere.
	Segment bool `json:"segment,omitempty"`
	// SharedCost is set on a scenario that ran at the same time as others
	// on the same servers, in the same process (a scenario file with
	// concurrent: true): its servers' cost and its client CPU cover every
	// one of them, so no cost per operation is derived from it
	// (commands_per_op, server_cpu_ms_per_1k_ops and cpu_us_per_op are
	// absent); the totals are the run's, not this scenario's. Absent
	// (false) elsewhere.
	SharedCost bool `json:"shared_cost,omitempty"`
	// LoadIntervalMS and LoadRates are --load-sample's samples: the
	// servers' commands/s over each interval of the measured window.
	LoadIntervalMS float64   `json:"load_interval_ms,omitempty"`
	LoadRates      []float64 `json:"load_rates,omitempty"`
	// Background is the background traffic's data (--background): its
	// counts and latency histograms per command kind over the measured
	// window. Absent without background traffic.
	Background *BackgroundRaw `json:"background,omitempty"`
	// Handover is the hand-over measurement's counts and sums (with the
	// handover_gap histogram in Hists): absent when it was not measured.
	Handover *HandoverRaw `json:"handover,omitempty"`
	// RenewalMargin is the renewal-margin measurement's counts (with the
	// renewal_margin_first and renewal_margin_second histograms in Hists):
	// absent for a strategy that does not renew.
	RenewalMargin *RenewalMarginRaw `json:"renewal_margin,omitempty"`
	// Roles are the client roles' data (--mix), by role (RoleNames):
	// each role's clients, ops, histograms and violations. Absent without
	// --mix (nothing measured per role).
	Roles map[string]*RoleRaw `json:"roles,omitempty"`
}

// ServerCost is one set of servers' cost over a cost window.
type ServerCost struct {
	// Servers names the servers measured: the Redis nodes' addresses,
	// sorted and joined by commas; a baseline strategy's server, its kind
	// and address ("zookeeper 127.0.0.1:PORT", "etcd …", "mariadb …").
	Servers string `json:"servers"`
	// ByCommand counts the commands executed per command name (lower case)
	// over the window, lockbench's INFO snapshots and connection set-up
	// left out: every client's commands, of this process and of any other
	// that ran at the same time (segments), their instrumentation included.
	// Null (nil) for a baseline server's entry: its commands are not
	// counted (only its CPU is measured), and it adds nothing to
	// commands/op; an empty object is Redis nodes that executed none.
	ByCommand map[string]int64 `json:"by_command"`
	// Own are the commands in ByCommand that lockbench's own samplers sent
	// (the liveness oracle's reads) and its background traffic
	// (--background), per command name: the workload's cost is ByCommand
	// less the Own of every process combined.
	Own map[string]int64 `json:"own,omitempty"`
	// CPUMS is the servers' CPU time (user + sys), ms: Redis nodes' from
	// INFO cpu (used_cpu_sys + used_cpu_user), a baseline server's from
	// its process (/proc/<pid>/stat utime + stime, every thread; 10 ms
	// ticks).
	CPUMS float64 `json:"cpu_ms"`
}

// Histogram kinds of Raw.Hists.
const (
	HistOp            = "op"
	HistAcquire       = "acquire"
	HistRelease       = "release"
	HistHold          = "hold"
	HistService       = "service"
	HistAcquireFailed = "acquire_failed"
	HistTimeToFree    = "time_to_free"
	// HistOrphanShareAge: the liveness oracle's orphan shares, each from
	// its owner's death to the last read that saw it.
	HistOrphanShareAge = "orphan_share_age"
)

// EncodeHist encodes h as Raw.Hists holds it; "" for a nil or empty
// histogram.
func EncodeHist(h *hdrhistogram.Histogram) string {
	if h == nil || h.TotalCount() == 0 {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// SetHist stores h under kind (nothing for a nil or empty histogram).
func (r *Raw) SetHist(kind string, h *hdrhistogram.Histogram) {
	if e := EncodeHist(h); e != "" {
		if r.Hists == nil {
			r.Hists = map[string]string{}
		}
		r.Hists[kind] = e
	}
}

// Hist decodes the histogram of kind; nil when absent. Errors: a histogram
// that does not decode.
func (r *Raw) Hist(kind string) (*hdrhistogram.Histogram, error) {
	e, ok := r.Hists[kind]
	if !ok || e == "" {
		return nil, nil
	}
	h, err := hdrhistogram.Decode([]byte(e))
	if err != nil {
		return nil, fmt.Errorf("raw.hists.%s: %w", kind, err)
	}
	return h, nil
}

// PermitsOrOne is r.Permits, or 1 for an exclusive lock: the holders one
// lock admits at once.
func (r *Raw) PermitsOrOne() int { return max(r.Permits, 1) }

// Derive computes every derived figure of s from s.Raw: ops and ops/s,
// the latency summaries and latency_hist, fairness, the servers' cost per
// op, client CPU per op, the server load, the lock-bound ceiling and
// efficiency, and the time-to-free summary of the liveness figures. A
// scenario without Raw (a file written before it existed) is left as it
// is. What was not measured is left zero (absent in the JSON): latency
// without values, cost per op without ops or cost, the ceiling without a
// hold. Errors: a histogram that does not decode.
func Derive(s *Scenario) error {
	r := s.Raw
	if r == nil {
		return nil
	}
	hs := map[string]*hdrhistogram.Histogram{}
	for _, k := range []string{HistOp, HistAcquire, HistRelease, HistHold, HistService, HistAcquireFailed, HistTimeToFree, HistHandoverGap, HistMarginFirst, HistMarginSecond, HistOrphanShareAge} {
		h, err := r.Hist(k)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		hs[k] = h
	}
	op := hs[HistOp]
	s.DurationS = r.WindowS
	s.Ops = 0
	if op != nil {
		s.Ops = op.TotalCount()
	}
	s.OpsPerSec = 0
	if r.WindowS > 0 {
		s.OpsPerSec = float64(s.Ops) / r.WindowS
	}
	s.LatencyMS = metrics.Summarize(op)
	s.LatencyHist = r.Hists[HistOp]
	s.AcquireMS = metrics.Summarize(hs[HistAcquire])
	s.ReleaseMS = metrics.Summarize(hs[HistRelease])
	s.SlowReleases, s.SlowReleaseBoundMS = slowReleases(hs[HistRelease], s.Params["ttl"])
	s.HoldMS = metrics.Summarize(hs[HistHold])
	s.ServiceMS = nil
	if s.Loop == "open" {
		l := metrics.Summarize(hs[HistService])
		s.ServiceMS = &l
	}
	s.AcquireFailedMS = nil
	if h := hs[HistAcquireFailed]; h != nil {
		l := metrics.Summarize(h)
		s.AcquireFailedMS = &l
	}
	if s.Liveness != nil && s.Liveness.Measured {
		s.Liveness.TimeToFreeMS = metrics.Summarize(hs[HistTimeToFree])
		s.Liveness.OrphanShareAgeMS = metrics.Summarize(hs[HistOrphanShareAge])
	}
	s.Handover = deriveHandover(r.Handover, r.WindowS, hs[HistHandoverGap])
	s.RenewalMargin = deriveRenewalMargin(r.RenewalMargin, hs[HistMarginFirst], hs[HistMarginSecond])
	roles, err := deriveRoles(r.Roles, r.WindowS)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	s.Roles = roles
	s.Fairness = Fairness{LongestWaitMS: s.AcquireMS.Max}
	if s.HasJain() {
		// With a client ramp the clients ran for different times, so their
		// op counts are no measure of fairness: Jain is left out (absent).
		s.Fairness.JainIndex = metrics.Jain(r.ClientOps)
	}
	s.RedisCost = RedisCost{}
	if len(r.Cost) > 0 {
		// Every entry's CPU adds up (the Redis nodes' and a baseline
		// server's); commands only from the entries that counted them
		// (ByCommand not nil): with none, commands/op is not measured.
		c := RedisCost{Ops: r.CostOps}
		for _, sc := range r.Cost {
			if sc.ByCommand != nil && c.ByCommand == nil {
				c.ByCommand = map[string]int64{}
			}
			for k, v := range sc.ByCommand {
				if n := v - sc.Own[k]; n > 0 {
					c.ByCommand[k] += n
					c.Commands += n
				}
			}
			c.ServerCPUMS += sc.CPUMS
		}
		if r.CostOps > 0 && !r.Segment && !r.SharedCost {
			if c.ByCommand != nil {
				c.CommandsPerOp = float64(c.Commands) / float64(r.CostOps)
			}
			c.ServerCPUMSPer1kOps = c.ServerCPUMS * 1000 / float64(r.CostOps)
		}
		s.RedisCost = c
	}
	s.ClientCPU = ClientCPU{CPUSeconds: r.ClientCPUS}
	if r.CostOps > 0 && !r.SharedCost {
		s.ClientCPU.CPUMicrosPerOp = r.ClientCPUS * 1e6 / float64(r.CostOps)
	}
	if r.CPUBudgetS > 0 {
		s.ClientCPU.BudgetShare = r.ClientCPUS / r.CPUBudgetS
		s.ClientCPU.ClientBound = s.ClientCPU.BudgetShare > 0.9
	}
	s.ServerLoad = SummarizeLoad(r.LoadRates, r.LoadIntervalMS)
	bg, err := deriveBackground(r.Background, r.WindowS)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	s.Background = bg
	// The clients the bounds below count: clients, or with a client ramp
	// the clients in force on average over the window.
	clients := s.ClientsInForce()
	s.CeilingOpsPerSec, s.Efficiency = 0, 0
	holdS := 0.0 // the mean hold, s, when it bounds a ceiling
	// Reads (Counters.Reads: --read-ratio, the read role of --mix) may
	// hold a lock shared (rwlock's read side), which the exclusive
	// ceiling, Locks x Permits holders at once, does not bound: a
	// scenario with reads has no ceiling (Check exempts it already).
	if hold := hs[HistHold]; hold != nil && r.Locks > 0 && s.Ops > 0 && s.Counters.Reads == 0 && hold.Mean() >= CeilingMinHoldMicros {
		holdS = hold.Mean() / 1e6
		s.CeilingOpsPerSec = min(clients, float64(r.Locks*r.PermitsOrOne())) / holdS
		s.Efficiency = s.OpsPerSec / s.CeilingOpsPerSec
	}
	deriveTimeline(s.Timeline, s.Params, r.Locks*r.PermitsOrOne(), holdS > 0)
	// With think time each client makes at most one operation per mean
	// think time plus mean hold, however fast the lock hands over.
	s.ThinkBoundOpsPerSec = 0
	if hold := hs[HistHold]; r.ThinkMS > 0 && s.Clients > 0 {
		cycleMS := r.ThinkMS
		if hold != nil {
			cycleMS += hold.Mean() / 1e3
		}
		s.ThinkBoundOpsPerSec = clients / (cycleMS / 1e3)
	}
	return nil
}

// SlowReleaseBound is the bound over which a release call counts as slow
// (Scenario.SlowReleases): ten times the scenario's release p50 (about
// ten round trips of a one-command release) or half the lease's TTL,
// whichever is larger. The p50 term keeps a lock whose release is
// several round trips by design (Redlock on five nodes, a library's
// release) from counting every release; the TTL term says what is
// slow for a lock: a release that takes half the lease is as slow as
// waiting for the lease to expire. 0 without a TTL.
func SlowReleaseBound(releaseP50 time.Duration, ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return 0
	}
	return max(10*releaseP50, ttl/2)
}

// slowReleases counts the release calls of h (µs) over SlowReleaseBound,
// the TTL read from the params' ttl; and returns that bound in ms (0, 0
// without releases or a TTL).
func slowReleases(h *hdrhistogram.Histogram, ttlParam string) (int64, float64) {
	ttl, err := time.ParseDuration(ttlParam)
	if h == nil || h.TotalCount() == 0 || err != nil || ttl <= 0 {
		return 0, 0
	}
	bound := SlowReleaseBound(time.Duration(h.ValueAtQuantile(50))*time.Microsecond, ttl)
	boundUS := bound.Microseconds()
	var n int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.From > boundUS {
			n += b.Count
		}
	}
	return n, float64(bound) / float64(time.Millisecond)
}

// deriveTimeline sets, with a client ramp (entries with clients_mean),
// each timeline entry's Efficiency: its ops/s over its own lock-bound
// ceiling, min(clients_mean, locks) / its own mean hold (hold_ms_sum /
// holds); 0 (absent) when the scenario has no ceiling (ceiling false),
// or the entry no clients, no hold or a mean hold under
// CeilingMinHoldMicros. The first entry's interval starts at
// params.warmup.
func deriveTimeline(tl []Second, params map[string]string, locks int, ceiling bool) {
	prev := 0.0
	if w, err := time.ParseDuration(params["warmup"]); err == nil {
		prev = w.Seconds()
	}
	for i := range tl {
		e := &tl[i]
		e.Efficiency = 0
		if ceiling && e.ClientsMean > 0 && locks > 0 && e.Holds > 0 && e.HoldMSSum*1e3/float64(e.Holds) >= CeilingMinHoldMicros {
			holdS := e.HoldMSSum / float64(e.Holds) / 1e3
			e.Efficiency = e.OpsPerSec(prev) / (min(e.ClientsMean, float64(locks)) / holdS)
		}
		prev = e.TS
	}
}

// SummarizeLoad turns per-interval command rates (commands/s) into a
// ServerLoad: mean, p99 (nearest rank), peak, peak/mean and the
// coefficient of variation. Nil without samples.
func SummarizeLoad(rates []float64, intervalMS float64) *ServerLoad {
	if len(rates) == 0 {
		return nil
	}
	s := slices.Clone(rates)
	sort.Float64s(s)
	var sum, sq float64
	for _, r := range s {
		sum += r
	}
	mean := sum / float64(len(s))
	for _, r := range s {
		sq += (r - mean) * (r - mean)
	}
	l := &ServerLoad{
		IntervalMS: intervalMS, Samples: len(s),
		MeanPerSec: mean, PeakPerSec: s[len(s)-1],
		P99PerSec: s[min(len(s)-1, int(math.Ceil(0.99*float64(len(s))))-1)],
	}
	if mean > 0 {
		l.PeakToMean = l.PeakPerSec / mean
		l.CV = math.Sqrt(sq/float64(len(s))) / mean
	}
	return l
}
