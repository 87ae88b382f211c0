package report

import (
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/metrics"
)

// Metric is one figure a scenario reports, by the name thresholds
// (lockbench run --fail-on) use for it.
type Metric struct {
	// Name is how --fail-on names it (p99_ms, overlap, ops_per_sec).
	Name string
	// Doc is one line: what it measures.
	Doc string
	// Of reads it from a scenario.
	Of func(Scenario) float64
	// Known, when set, reports whether the scenario measured it at all (the
	// liveness figures: not with the oracle off or a constant token); a
	// threshold on a figure not measured fails.
	Known func(Scenario) bool
}

// Metrics are the figures thresholds can test, each defined here once:
// every violation kind by its Key (ViolationKinds, so a new kind is a
// metric too), their total, the latency percentiles of the whole operation
// and of acquire and release, and the rates and counts.
var Metrics = buildMetrics()

func buildMetrics() []Metric {
	var ms []Metric
	for _, k := range ViolationKinds {
		ms = append(ms, Metric{Name: k.Key, Doc: "violations: " + k.Doc,
			Of:    func(s Scenario) float64 { return float64(k.Of(s.Violations)) },
			Known: func(s Scenario) bool { return k.Known(s.Violations) }})
	}
	for _, f := range LivenessFigures {
		ms = append(ms, Metric{Name: f.Key, Doc: "liveness: " + f.Doc, Known: f.known,
			Of: func(s Scenario) float64 {
				if s.Liveness == nil {
					return 0
				}
				return float64(f.Of(*s.Liveness))
			}})
	}
	measured := func(s Scenario) bool { return s.Liveness != nil && s.Liveness.Measured }
	ms = append(ms, Metric{Name: "orphan_lock_ms", Doc: "liveness: lock time lost to orphaned locks, ms", Known: measured,
		Of: func(s Scenario) float64 {
			if s.Liveness == nil {
				return 0
			}
			return s.Liveness.OrphanLockMS
		}},
		Metric{Name: "time_to_free_p99_ms", Doc: "liveness: 99th percentile of the time from a holder's exit to its lock being free, ms (not measured when no holder exited)",
			Known: func(s Scenario) bool { return measured(s) && LatencyMeasured(s.Liveness.TimeToFreeMS) },
			Of: func(s Scenario) float64 {
				if s.Liveness == nil {
					return 0
				}
				return s.Liveness.TimeToFreeMS.P99
			}},
		Metric{Name: "orphan_share_max_ms", Doc: "liveness: longest time an orphan share (a dead owner's share of a multi-owner lock kept past 2 x the TTL beside a live owner's) was seen stored after its owner died, ms (0 without one)",
			Known: measured,
			Of: func(s Scenario) float64 {
				if s.Liveness == nil {
					return 0
				}
				return s.Liveness.OrphanShareAgeMS.Max
			}})
	handover := func(s Scenario) bool { return s.Handover != nil }
	gapped := func(s Scenario) bool { return s.Handover != nil && s.Handover.GapMS != nil }
	fifo := func(s Scenario) bool { return s.Handover != nil && s.Handover.FIFOViolations != nil }
	gap := func(of func(metrics.Latency) float64) func(Scenario) float64 {
		return func(s Scenario) float64 {
			if !gapped(s) {
				return 0
			}
			return of(*s.Handover.GapMS)
		}
	}
	ms = append(ms,
		Metric{Name: "handover_gap_p50_ms", Doc: "hand-over: median time a lock stood free while a client waited for it (a release or a lease's end to the next grant), ms (not measured without such a wait, nor in a run of several processes)",
			Known: gapped, Of: gap(func(l metrics.Latency) float64 { return l.P50 })},
		Metric{Name: "handover_gap_p99_ms", Doc: "hand-over: 99th percentile of the time a lock stood free while wanted, ms (not measured as handover_gap_p50_ms)",
			Known: gapped, Of: gap(func(l metrics.Latency) float64 { return l.P99 })},
		Metric{Name: "handover_gap_max_ms", Doc: "hand-over: longest time a lock stood free while wanted, ms (not measured as handover_gap_p50_ms)",
			Known: gapped, Of: gap(func(l metrics.Latency) float64 { return l.Max })},
		Metric{Name: "handover_idle_share", Doc: "hand-over: the time locks stood free while wanted, as a share of the measured window times the locks (0..1; not measured without exclusive locks, nor in a run of several processes)",
			Known: handover, Of: func(s Scenario) float64 {
				if s.Handover == nil {
					return 0
				}
				return s.Handover.IdleShare
			}},
		Metric{Name: "fifo_violations", Doc: "queue order: grants made while a client that started waiting for the same lock earlier still waited (only for a lock that declares FIFO order, strategies.FIFO)",
			Known: fifo, Of: func(s Scenario) float64 {
				if !fifo(s) {
					return 0
				}
				return float64(*s.Handover.FIFOViolations)
			}},
		Metric{Name: "fifo_max_wait_turns", Doc: "queue order: the most grants of its lock to others that one waiter waited through (only for a lock that declares FIFO order)",
			Known: fifo, Of: func(s Scenario) float64 {
				if !fifo(s) {
					return 0
				}
				return float64(*s.Handover.MaxWaitTurns)
			}})
	// checked: at least one lock key decided (disagreements are counted
	// among the decided keys only).
	checked := func(s Scenario) bool {
		return s.Linearizability != nil && s.Linearizability.Locks > s.Linearizability.UnknownLocks
	}
	decided := func(s Scenario) bool {
		return s.Linearizability != nil && s.Linearizability.Verdict != history.VerdictUnknown
	}
	ms = append(ms,
		Metric{Name: "linearizable", Doc: "Porcupine's check of the processes' critical-section histories (lockbench merge, run --procs, lockbench check): 1 when every lock key has a legal order of its acquires and releases, 0 when one has none (not measured without histories, nor when the check did not decide: verdict unknown)",
			Known: decided, Of: func(s Scenario) float64 {
				if decided(s) && s.Linearizability.Verdict == history.VerdictOK {
					return 1
				}
				return 0
			}},
		Metric{Name: "oracle_disagreements", Doc: "lock keys where Porcupine's verdict and lockbench's own overlap count of the same histories disagree (not measured without histories, nor when Porcupine decided no lock key)",
			Known: checked, Of: func(s Scenario) float64 {
				if !checked(s) {
					return 0
				}
				return float64(s.Linearizability.OracleDisagreements)
			}})
	renews := func(s Scenario) bool { return s.RenewalMargin != nil }
	margin := func(of func(*RenewalMargin) *float64) (known func(Scenario) bool, value func(Scenario) float64) {
		known = func(s Scenario) bool { return s.RenewalMargin != nil && of(s.RenewalMargin) != nil }
		value = func(s Scenario) float64 {
			if !known(s) {
				return 0
			}
			return *of(s.RenewalMargin)
		}
		return known, value
	}
	minKnown, minOf := margin(func(m *RenewalMargin) *float64 { return m.MinMS })
	p1Known, p1Of := margin(func(m *RenewalMargin) *float64 { return m.P1MS })
	trendKnown, trendOf := margin(func(m *RenewalMargin) *float64 { return m.TrendMS })
	ms = append(ms,
		Metric{Name: "renewal_margin_min_ms", Doc: "renewal margin: the smallest remaining TTL of a lease at one of its renewals, ms (not measured for a strategy that does not renew, nor without renewals)",
			Known: minKnown, Of: minOf},
		Metric{Name: "renewal_margin_p1_ms", Doc: "renewal margin: 1st percentile of a lease's remaining TTL at its renewals, ms (not measured as renewal_margin_min_ms)",
			Known: p1Known, Of: p1Of},
		Metric{Name: "renewal_margin_trend_ms", Doc: "renewal margin: the second half of the window's p1 minus the first half's, ms; negative when renewals drift toward the expiry (not measured without renewals in both halves)",
			Known: trendKnown, Of: trendOf},
		Metric{Name: "late_renewals", Doc: "renewal margin: renewals made with less than a third of the lease's TTL left (not measured for a strategy that does not renew)",
			Known: renews, Of: func(s Scenario) float64 {
				if s.RenewalMargin == nil {
					return 0
				}
				return float64(s.RenewalMargin.LateRenewals)
			}})
	for _, role := range RoleNames {
		has := func(s Scenario) bool { _, ok := s.Roles[role]; return ok }
		acq := func(of func(metrics.Latency) float64) func(Scenario) float64 {
			return func(s Scenario) float64 { return of(s.Roles[role].AcquireMS) }
		}
		acqKnown := func(s Scenario) bool { return has(s) && LatencyMeasured(s.Roles[role].AcquireMS) }
		ms = append(ms,
			Metric{Name: "role_" + role + "_ops", Doc: "client roles: operations the " + role + " role's clients completed in the measured window (not measured without --mix " + role + "=...)",
				Known: has, Of: func(s Scenario) float64 { return float64(s.Roles[role].Ops) }},
			Metric{Name: "role_" + role + "_acquire_p50_ms", Doc: "client roles: median acquire wait of the " + role + " role's clients, ms (not measured as role_" + role + "_ops, nor without a granted acquire)",
				Known: acqKnown, Of: acq(func(l metrics.Latency) float64 { return l.P50 })},
			Metric{Name: "role_" + role + "_acquire_p99_ms", Doc: "client roles: 99th percentile of the acquire wait of the " + role + " role's clients, ms (not measured as role_" + role + "_acquire_p50_ms)",
				Known: acqKnown, Of: acq(func(l metrics.Latency) float64 { return l.P99 })},
			Metric{Name: "role_" + role + "_violations", Doc: "client roles: the violations counted on the " + role + " role's clients (overlaps on the client that entered, and its foreign releases, lost leases, work after loss, false extends and false acquires; not measured as role_" + role + "_ops)",
				Known: has, Of: func(s Scenario) float64 { return float64(s.Roles[role].ViolationsTotal) }})
	}
	ms = append(ms, Metric{Name: "violations", Doc: "the total of every violation kind (not measured in a follower segment's file, which lacks the end checks)",
		Of:    func(s Scenario) float64 { return float64(s.Violations.Total()) },
		Known: func(s Scenario) bool { return s.Violations.EndCheck != EndCheckNotRun }},
		Metric{Name: "max_holders", Doc: "semaphores: the most holders one lock had at once, by the safety oracle (violations.max_holders; at most raw.permits for a correct semaphore; not measured for an exclusive lock)",
			Of: func(s Scenario) float64 {
				if s.Violations.MaxHolders == nil {
					return 0
				}
				return float64(*s.Violations.MaxHolders)
			},
			Known: func(s Scenario) bool { return s.Violations.MaxHolders != nil }})
	latencies := []struct {
		prefix, what string
		of           func(Scenario) metrics.Latency
	}{
		{"", "whole operation (acquire with retries, critical section, release)", func(s Scenario) metrics.Latency { return s.LatencyMS }},
		{"acquire_", "acquire, retries and waits included", func(s Scenario) metrics.Latency { return s.AcquireMS }},
		{"release_", "release call", func(s Scenario) metrics.Latency { return s.ReleaseMS }},
	}
	stats := []struct {
		name, what string
		of         func(metrics.Latency) float64
	}{
		{"p50_ms", "median", func(l metrics.Latency) float64 { return l.P50 }},
		{"p90_ms", "90th percentile", func(l metrics.Latency) float64 { return l.P90 }},
		{"p99_ms", "99th percentile", func(l metrics.Latency) float64 { return l.P99 }},
		{"p999_ms", "99.9th percentile", func(l metrics.Latency) float64 { return l.P999 }},
		{"max_ms", "maximum", func(l metrics.Latency) float64 { return l.Max }},
		{"mean_ms", "mean", func(l metrics.Latency) float64 { return l.Mean }},
	}
	for _, l := range latencies {
		for _, st := range stats {
			ms = append(ms, Metric{Name: l.prefix + st.name, Doc: st.what + " latency of the " + l.what + ", ms (not measured without values)",
				Of:    func(s Scenario) float64 { return st.of(l.of(s)) },
				Known: func(s Scenario) bool { return LatencyMeasured(l.of(s)) }})
		}
	}
	ms = append(ms,
		Metric{"ops_per_sec", "operations completed per second of the measured window",
			func(s Scenario) float64 { return s.OpsPerSec }, nil},
		Metric{"ops", "operations completed in the measured window",
			func(s Scenario) float64 { return float64(s.Ops) }, nil},
		Metric{"efficiency", "ops_per_sec / the lock-bound ceiling (not measured when there is no ceiling: no lock held, --work 0s, a mean hold under 10 µs, or reads, which may hold the lock shared)",
			func(s Scenario) float64 { return s.Efficiency }, Scenario.HasCeiling},
		Metric{"acquire_p99_per_turn", "p99 acquire wait / one turn, a turn being clients / the lock-bound ceiling (on one hot key: clients x mean hold), the time for every client to hold the lock once; a FIFO lock at full load stays near 1 (not measured without a ceiling)",
			func(s Scenario) float64 { return s.AcquireMS.P99 / 1000 / (s.ClientsInForce() / s.CeilingOpsPerSec) }, Scenario.HasCeiling},
		Metric{"jain", "Jain's fairness index over the clients' completed operations (1 = equal shares; not measured without operations, nor with a client ramp)",
			func(s Scenario) float64 { return s.Fairness.JainIndex }, func(s Scenario) bool { return s.HasJain() }},
		Metric{"errors", "Redis and other errors (counters.errors)",
			func(s Scenario) float64 { return float64(s.Counters.Errors) }, nil},
		Metric{"timeouts", "acquires that hit --acquire-timeout",
			func(s Scenario) float64 { return float64(s.Counters.Timeouts) }, nil},
		Metric{"failures", "acquires given up by the retry policy",
			func(s Scenario) float64 { return float64(s.Counters.Failures) }, nil},
		Metric{"slow_releases", "release calls slower than max(10 x the release p50, TTL/2) (slow_release_bound_ms; not measured without a TTL or without releases)",
			func(s Scenario) float64 { return float64(s.SlowReleases) }, func(s Scenario) bool { return s.SlowReleaseBoundMS > 0 }},
		Metric{"hung_releases", "release calls that had not returned when the end-of-run grace period ended (counters.hung_releases)",
			func(s Scenario) float64 { return float64(s.Counters.HungReleases) }, nil},
		Metric{"dropped", "open loop: arrivals dropped for want of a free client (0 in a closed loop)",
			func(s Scenario) float64 { return float64(s.Dropped) }, nil},
		Metric{"commands_per_op", "Redis commands the servers executed per operation (not measured without operations, or when the servers could not be read)",
			func(s Scenario) float64 { return s.RedisCost.CommandsPerOp }, func(s Scenario) bool { return s.RedisCost.CommandsPerOp > 0 }},
		Metric{"resource_rejected", "fencing tokens the separate resource refused: a stale holder's read or write, rejected by the storage itself (figures.resource_rejected; not measured without --resource separate)",
			func(s Scenario) float64 { n, _ := s.ResourceRejected(); return float64(n) },
			func(s Scenario) bool { _, ok := s.ResourceRejected(); return ok }},
	)
	return append(ms, transferMetrics()...)
}

// MetricNames are the Names of Metrics, in their order.
func MetricNames() []string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return names
}

// LookupMetric returns the metric called name.
func LookupMetric(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// ThresholdResult is one threshold (--fail-on) tested on one scenario.
type ThresholdResult struct {
	// Expr is the threshold as tested, [scope:]metric op value (one of
	// the expressions `safety` expands to, for that shortcut).
	Expr string `json:"expr"`
	// Scenario is the scenario's Name (strategy/driver/workload/retry).
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Op       string  `json:"op"`
	Value    float64 `json:"value"`
	// Measured is the scenario's figure (Metric.Of); NotMeasured says the
	// scenario did not measure it (the threshold then fails).
	Measured    float64 `json:"measured"`
	NotMeasured bool    `json:"not_measured,omitempty"`
	// Pass: Measured Op Value holds.
	Pass bool `json:"pass"`
	// Clients is the scenario's client count (which scenario of a sweep's
	// cell it is).
	Clients int `json:"clients,omitempty"`
}
