package claims

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

// worked is a scenario as a run of an experiment writes it when the
// strategy did work: 400 operations (orders, for flash-sale: as many sold)
// and 400 locks granted in a 2 s measured window, changed by mod.
func worked(strategy, workload string, mod func(s *report.Scenario)) report.Scenario {
	s := report.Scenario{Strategy: strategy, Driver: "rueidis", Workload: workload, Retry: "fixed:interval=5ms", Clients: 10,
		Topology: "standalone", DurationS: 2, Ops: 400, OpsPerSec: 200, StopReason: "duration", Loop: "closed",
		AcquireMS: metrics.Latency{P50: 1, P99: 5, Max: 9, Mean: 1.5, Count: 400},
		Counters:  report.Counters{Attempts: 900}, Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	if workload == "flash-sale" {
		s.Figures["sold"], s.Figures["acked_orders"], s.Figures["final_stock"] = 400, 400, 1000000-400
	}
	if mod != nil {
		mod(&s)
	}
	return s
}

// run is a result file holding scenarios.
func run(scenarios ...report.Scenario) *report.Run {
	return &report.Run{Schema: report.Schema, Meta: report.Meta{Topology: "standalone"}, Scenarios: scenarios}
}

// repeats builds the results of n repeats of a performance experiment.
func repeats(n int, f func(k int) Results) []Results {
	out := make([]Results, n)
	for k := range out {
		out[k] = f(k)
	}
	return out
}

// fault is the window of a fault that acted at 300 ms, with the locks
// granted after it.
func fault(name string, opsAfter int64) []report.FaultWindow {
	return []report.FaultWindow{{Fault: name, ArmedMS: 300, StartMS: 300, EndMS: 300, OpsBefore: 120, OpsAfter: opsAfter, StuckAfter: -1}}
}

// judgeCase is one claim's inputs: in("") must meet its rule, in(v) for
// each v of fail must not (with the verdict given).
type judgeCase struct {
	id   string
	fail map[string]Verdict
	in   func(v string) []Results
}

// reportedOnly picks, per row, the scenarios whose figures the row reports
// but does not judge: one of them doing no work leaves the passing input's
// verdict as it is.
var reportedOnly = map[string]func(s *report.Scenario) bool{
	"P2": func(s *report.Scenario) bool { return s.Retry == "spin" || s.Retry == "pubsub" },
}

// one is a safety row's input: a single Results.
func one(r Results) []Results { return []Results{r} }

// if0 is a when v == name, else b.
func if0[T any](v, name string, a, b T) T {
	if v == name {
		return a
	}
	return b
}

var judgeCases = []judgeCase{
	{"S1", map[string]Verdict{"atomic stuck": NotReproduced, "naive recovers": NotReproduced}, func(v string) []Results {
		return one(Results{"crash": run(
			worked("naive", "flash-sale", func(s *report.Scenario) {
				s.Violations.StuckLocks, s.Faults = 1, fault("crash-after-setnx", if0[int64](v, "naive recovers", 50, 0))
			}),
			worked("atomic", "flash-sale", func(s *report.Scenario) {
				s.Violations.StuckLocks, s.Faults = if0[int64](v, "atomic stuck", 1, 0), fault("crash-after-setnx", 1395)
			}))})
	}},
	{"S2", map[string]Verdict{"atomic holds": NotReproduced}, func(v string) []Results {
		return one(Results{"long-task": run(
			worked("naive", "long-task", func(s *report.Scenario) { s.Violations.Overlap = 43 }),
			worked("atomic", "long-task", func(s *report.Scenario) { s.Violations.Overlap = if0[int64](v, "atomic holds", 0, 24) }))})
	}},
	{"S3", map[string]Verdict{"lua release foreign": NotReproduced, "del safe": NotReproduced}, func(v string) []Results {
		return one(Results{"long-task": run(
			worked("naive", "long-task", func(s *report.Scenario) { s.Violations.ForeignReleases = if0[int64](v, "del safe", 0, 43) }),
			worked("atomic", "long-task", func(s *report.Scenario) {
				s.Violations.ForeignReleases = if0[int64](v, "lua release foreign", 2, 0)
			}))})
	}},
	{"S4", map[string]Verdict{"constant safe": NotReproduced}, func(v string) []Results {
		return one(Results{
			"constant-token": run(worked("atomic", "long-task", func(s *report.Scenario) {
				s.Violations.ForeignReleases = if0[int64](v, "constant safe", 0, 23)
			})),
			"long-task": run(worked("atomic", "long-task", nil))})
	}},
	{"S5", map[string]Verdict{"overlap": NotReproduced, "no renewals": NotReproduced}, func(v string) []Results {
		return one(Results{"long-task": run(worked("watchdog", "long-task", func(s *report.Scenario) {
			s.Violations.Overlap = if0[int64](v, "overlap", 1, 0)
			s.StrategyStats["renewals"] = if0[float64](v, "no renewals", 0, 68)
		}))})
	}},
	{"S6", map[string]Verdict{"fencing lost": NotReproduced, "watchdog fine": NotReproduced}, func(v string) []Results {
		return one(Results{"gc-pause": run(
			worked("watchdog", "flash-sale", func(s *report.Scenario) {
				s.Violations.Overlap, s.Violations.LostUpdates = 46, if0[int64](v, "watchdog fine", 0, 1)
			}),
			worked("fencing", "flash-sale", func(s *report.Scenario) {
				s.Counters.Rejected, s.Violations.LostUpdates = 1, if0[int64](v, "fencing lost", 1, 0)
			}))})
	}},
	// The figures of a quick failover run (2026-12-01): wait-replicas
	// granted 1 lock and completed 1 order.
	{"S7", map[string]Verdict{"wait overlaps": NotReproduced, "atomic holds": NotReproduced}, func(v string) []Results {
		return one(Results{"failover": run(
			worked("atomic", "flash-sale", func(s *report.Scenario) {
				s.Topology, s.Ops, s.AcquireMS.Count, s.Violations.Overlap = "replica", 4, 94, if0[int64](v, "atomic holds", 0, 90)
			}),
			worked("wait-replicas", "flash-sale", func(s *report.Scenario) {
				s.Topology, s.Ops, s.AcquireMS.Count, s.Figures["sold"] = "replica", 1, 1, 0
				s.Violations.Overlap = if0[int64](v, "wait overlaps", 1, 0)
			}))})
	}},
	{"S8", map[string]Verdict{"3 down grants": NotReproduced, "2 down stops": NotReproduced, "overlap": NotReproduced}, func(v string) []Results {
		rl := func(after, overlap int64) report.Scenario {
			return worked("redlock", "flash-sale", func(s *report.Scenario) {
				s.Topology, s.Faults, s.Violations.Overlap = "masters:5", fault("node-kill", after), overlap
			})
		}
		return one(Results{
			"redlock-2-down": run(rl(if0[int64](v, "2 down stops", 0, 41), if0[int64](v, "overlap", 1, 0))),
			"redlock-3-down": run(rl(if0[int64](v, "3 down grants", 5, 0), 0))})
	}},
	{"S9", map[string]Verdict{"no overlap": NotReproduced}, func(v string) []Results {
		return one(Results{"redlock-restart": run(worked("redlock", "long-task", func(s *report.Scenario) {
			s.Topology, s.Ops, s.AcquireMS.Count, s.Violations.Overlap = "masters:5", 8, 9, if0[int64](v, "no overlap", 0, 1)
		}))})
	}},
	// Every naive and atomic operation fails (0 ops) after its outer lock
	// was granted: they count as having worked.
	{"S10", map[string]Verdict{"reentrant fails": NotReproduced, "atomic nests": NotReproduced}, func(v string) []Results {
		nonre := func(name string, fails int64) report.Scenario {
			return worked(name, "nested", func(s *report.Scenario) {
				s.Ops, s.AcquireMS.Count, s.Counters.Failures, s.Figures["nested_failures"] = 0, 9298, fails, fails
			})
		}
		return one(Results{"nested": run(nonre("naive", 9298), nonre("atomic", if0[int64](v, "atomic nests", 0, 13692)),
			worked("reentrant", "nested", func(s *report.Scenario) {
				s.Ops, s.AcquireMS.Count, s.Figures["nested_failures"] = 1226, 1226, if0[int64](v, "reentrant fails", 3, 0)
			}))})
	}},
	{"S11", map[string]Verdict{"decr oversells": NotReproduced, "pause loses": NotReproduced, "no overlap": NotReproduced,
		"decr sold nothing": Failed}, func(v string) []Results {
		return one(Results{
			"guard-none": run(worked("atomic", "flash-sale", func(s *report.Scenario) {
				s.Ops, s.Figures["sold"], s.Violations.Overlap, s.Violations.Oversell = 796, 796, 40, 596
			})),
			"guard-decr": run(worked("atomic", "flash-sale", func(s *report.Scenario) {
				s.Ops, s.Figures["sold"], s.Counters.Rejected, s.Violations.Overlap = 200, 200, 3, if0[int64](v, "no overlap", 0, 4)
				s.Violations.Oversell = if0[int64](v, "decr oversells", 1, 0)
				if v == "decr sold nothing" {
					s.Figures["sold"] = 0
				}
			})),
			"gc-pause-decr": run(worked("watchdog", "flash-sale", func(s *report.Scenario) {
				s.Violations.Overlap, s.Violations.LostUpdates = 2, if0[int64](v, "pause loses", 1, 0)
			}))})
	}},
	{"S12", map[string]Verdict{"multilevel errs": NotReproduced, "plain clean": NotReproduced, "multilevel sold nothing": Failed}, func(v string) []Results {
		return one(Results{"multilevel": run(
			worked("atomic", "flash-sale", func(s *report.Scenario) {
				s.Ops, s.Figures["sold"], s.Violations.Oversell = 325, 325, if0[int64](v, "plain clean", 0, 243)
			}),
			worked("multilevel", "flash-sale", func(s *report.Scenario) {
				s.Ops, s.Figures["sold"], s.Counters.Rejected = 82, if0[int64](v, "multilevel sold nothing", 0, 82), 245
				s.Violations.LostUpdates = if0[int64](v, "multilevel errs", 1, 0)
			}))})
	}},
	{"P1", map[string]Verdict{"slow": NotReproduced, "straddles": Inconclusive}, func(v string) []Results {
		return repeats(3, func(k int) Results {
			seg := map[string]float64{"": 1040, "slow": 500, "straddles": []float64{900, 1100, 1000}[k]}[v]
			return Results{"segments": run(
				worked("atomic", "flash-sale", func(s *report.Scenario) { s.OpsPerSec = 160 }),
				worked("segmented", "flash-sale", func(s *report.Scenario) { s.OpsPerSec, s.CeilingOpsPerSec, s.Efficiency = seg, 1312, seg/1312 }))}
		})
	}},
	// Full mode: spin and pubsub come from one sweep made once, the same
	// in every repeat (as Execute passes a run made once).
	{"P2", map[string]Verdict{"no faster": NotReproduced, "fairer": NotReproduced}, func(v string) []Results {
		var reported []report.Scenario
		for _, pol := range []string{"spin", "pubsub"} {
			for _, n := range retryClients {
				reported = append(reported, worked("atomic", "hot-key", func(s *report.Scenario) {
					s.Retry, s.Clients, s.OpsPerSec, s.Fairness.JainIndex, s.RedisCost.CommandsPerOp = pol, n, 150, 0.5, 12
				}))
			}
		}
		spinPubsub := run(reported...)
		return repeats(3, func(k int) Results {
			var ss []report.Scenario
			for _, pol := range []string{"fixed:interval=100ms", "backoff:base=1ms"} {
				for _, n := range retryClients {
					ss = append(ss, worked("atomic", "hot-key", func(s *report.Scenario) {
						s.Retry, s.Clients, s.OpsPerSec, s.Fairness.JainIndex, s.RedisCost.CommandsPerOp = pol, n, 150, 0.5, 12
						if strings.HasPrefix(pol, "backoff") {
							s.OpsPerSec = if0[float64](v, "no faster", 150, 180+float64(k))
							s.Fairness.JainIndex = if0(v, "fairer", 0.6, 0.3)
						}
					}))
				}
			}
			return Results{"retry": run(ss...), "retry-spin-pubsub": spinPubsub}
		})
	}},
	{"P3", map[string]Verdict{"steady": NotReproduced}, func(v string) []Results {
		return repeats(3, func(k int) Results {
			load := func(p99 float64) *report.ServerLoad {
				return &report.ServerLoad{IntervalMS: 10, Samples: 500, MeanPerSec: p99 / 2, P99PerSec: p99, PeakPerSec: 2 * p99, PeakToMean: 4}
			}
			var ss []report.Scenario
			for _, n := range retryClients {
				ss = append(ss,
					worked("atomic", "hot-key", func(s *report.Scenario) {
						s.Retry, s.Clients, s.ServerLoad = "fixed:interval=100ms", n, load(if0(v, "steady", 1200.0, 3000+float64(k)))
					}),
					worked("atomic", "hot-key", func(s *report.Scenario) { s.Retry, s.Clients, s.ServerLoad = "backoff:base=1ms", n, load(1000) }))
			}
			return Results{"retry": run(ss...)}
		})
	}},
	{"P4", map[string]Verdict{"no gain": NotReproduced}, func(v string) []Results {
		return repeats(3, func(k int) Results {
			return Results{"async": run(
				worked("atomic", "flash-sale", func(s *report.Scenario) { s.Retry, s.OpsPerSec = "none", if0(v, "no gain", 700.0, 1335) }),
				worked("atomic", "flash-sale", func(s *report.Scenario) { s.Retry, s.OpsPerSec = "fixed:interval=100ms", 678 }))}
		})
	}},
	// P5 reads rates after the window's first second (steadyRate): a
	// queued row lock's first second loses its queue's wait. At the top
	// count a row lock that completes nothing while its clients keep
	// trying has collapsed (rate 0), which the rule reads as such.
	{"P5", map[string]Verdict{"row lock holds up": NotReproduced, "first second only": NotReproduced, "short window": Failed,
		"redis slower": NotReproduced}, func(v string) []Results {
		return repeats(3, func(k int) Results {
			rate := func(s *report.Scenario, first, steady int64) {
				// A quick run's 2 s window.
				s.Timeline = []report.Second{{TS: 1, Ops: first}, {TS: 2, Ops: steady}}
				s.Ops, s.OpsPerSec = first+steady, float64(first+steady)/2
				if v == "short window" {
					s.Timeline = s.Timeline[:1]
				}
			}
			return Results{
				"sql": run(
					worked("sql-rowlock", "flash-sale", func(s *report.Scenario) { rate(s, 1900, 2000) }),
					worked("sql-rowlock", "flash-sale", func(s *report.Scenario) {
						s.Clients = 500
						switch v {
						case "row lock holds up":
							rate(s, 1800, 1900)
						case "first second only": // 950 ops/s over the window (0.49x), 1,900 after its first second
							rate(s, 0, 1900)
						case "redis slower": // fell to 0.15x, but the Redis lock is slower still
							rate(s, 300, 300)
						default: // collapsed: clients trying, none granted in the window
							rate(s, 0, 0)
							s.AcquireMS = metrics.Latency{}
						}
					})),
				"sql-redis": run(worked("atomic", "flash-sale", func(s *report.Scenario) {
					s.Clients = 500
					rate(s, 600, if0[int64](v, "redis slower", 100, 600))
				}))}
		})
	}},
	// Full mode: etcd, reported only, from one run shared by the repeats.
	{"P6", map[string]Verdict{"zk warm": NotReproduced, "zk cheap": NotReproduced}, func(v string) []Results {
		etcd := run(worked("etcd", "lock-cycle", func(s *report.Scenario) { s.OpsPerSec, s.RedisCost.ServerCPUMSPer1kOps = 4000, 150 }))
		return repeats(3, func(k int) Results {
			return Results{
				"zk": run(worked("zk", "lock-cycle", func(s *report.Scenario) {
					s.OpsPerSec, s.RedisCost.ServerCPUMSPer1kOps = if0(v, "zk warm", 7000.0, 2000), if0(v, "zk cheap", 50.0, 200)
				})),
				"zk-redis": run(worked("atomic", "lock-cycle", func(s *report.Scenario) { s.OpsPerSec, s.RedisCost.ServerCPUMSPer1kOps = 14000, 25 })),
				"zk-etcd":  etcd}
		})
	}},
	// P7: 3 repeats of 120,000 orders without a failure bound the rate
	// below 3 / 360,000 = 0.00083 % at 95 %.
	{"P7", map[string]Verdict{"failures": NotReproduced, "slow": NotReproduced, "3 nodes": NotReproduced,
		"3 failures in 12,000": NotReproduced, "straddles": Inconclusive, "nodes differ": Failed}, func(v string) []Results {
		return repeats(3, func(k int) Results {
			return Results{"redlock-orders": run(
				worked("atomic", "flash-sale", func(s *report.Scenario) { s.OpsPerSec, s.RedisCost.CommandsPerOp = 10000, 4 }),
				worked("redlock", "flash-sale", func(s *report.Scenario) {
					s.Topology, s.OpsPerSec, s.RedisCost.CommandsPerOp = "masters:5", 2500, 13
					s.Ops, s.AcquireMS.Count = 120000, 120000
					switch v {
					case "failures":
						s.Counters.Timeouts = 50
					case "slow":
						s.OpsPerSec = 1500 // 0.15x < 1/5
					case "3 nodes":
						s.Topology = "masters:3" // 0.25x < 1/3
					case "3 failures in 12,000":
						// 0.12 failures expected at 0.001 %: 3 or more has
						// a probability of 0.0003
						s.Ops, s.AcquireMS.Count = 3999, 3999
						s.Counters.Timeouts = 1
					case "straddles":
						s.OpsPerSec = []float64{1500, 2500, 2500}[k] // 0.15x, 0.25x, 0.25x against >= 1/5
					case "nodes differ":
						s.Topology = fmt.Sprintf("masters:%d", 5+k)
					}
				}))}
		})
	}},
	{"P8", map[string]Verdict{"3 nodes": NotReproduced, "too costly": NotReproduced}, func(v string) []Results {
		return repeats(3, func(k int) Results {
			return Results{"uncontended": run(
				worked("atomic", "lock-cycle", func(s *report.Scenario) { s.OpsPerSec, s.RedisCost.CommandsPerOp = 20913, 2 }),
				worked("redlock", "lock-cycle", func(s *report.Scenario) {
					s.Topology, s.OpsPerSec, s.RedisCost.CommandsPerOp = if0(v, "3 nodes", "masters:3", "masters:5"), 5025, if0(v, "too costly", 16.0, 10)
				}))}
		})
	}},
}

// judgeOf applies c's judge to rs: a safety row's to rs[0].
func judgeOf(c Claim, rs []Results) Outcome {
	if c.Performance() {
		return c.Perf(rs)
	}
	return c.Judge(rs[0])
}

// noWork empties s as a run in which its strategy did nothing does: no
// operation, no lock granted, nothing sold.
func noWork(s *report.Scenario) {
	s.Ops, s.OpsPerSec, s.AcquireMS, s.Efficiency, s.Counters.Attempts = 0, 0, metrics.Latency{}, 0, 0
	delete(s.StrategyStats, "not_replicated")
	if _, ok := s.Figures["sold"]; ok {
		s.Figures["sold"], s.Figures["acked_orders"] = 0, 0
	}
}

// Every judge, both ways, on result data: the passing input meets the
// rule, each failing one does not; and a run in which any scenario the
// judge reads did no work is Failed, not a verdict.
func TestJudgesBothWays(t *testing.T) {
	byID := map[string]judgeCase{}
	for _, c := range judgeCases {
		byID[c.id] = c
	}
	for _, c := range Table() {
		jc, ok := byID[c.ID]
		if !ok {
			t.Errorf("%s: no judge test case", c.ID)
			continue
		}
		if len(jc.fail) == 0 {
			t.Errorf("%s: no failing input", c.ID)
		}
		t.Run(c.ID, func(t *testing.T) {
			want := Reproduced
			if c.ID == "P7" {
				want = HardwareBound // the checkable parts hold; 120,000 orders/s is not checkable here
			}
			out := judgeOf(c, jc.in(""))
			if out.Verdict != want || len(out.Figures) == 0 || out.Measured == "" {
				t.Errorf("passing input: %s (%s) figures %v, want %s", out.Verdict, out.Measured, out.Figures, want)
			}
			t.Logf("passing input: %s: %s", out.Verdict, out.Measured)
			for name, v := range jc.fail {
				if out := judgeOf(c, jc.in(name)); out.Verdict != v {
					t.Errorf("%q: %s (%s), want %s", name, out.Verdict, out.Measured, v)
				}
			}
			// Empty runs: each scenario of the passing input in turn (in
			// repeat 2 for a performance row) did no work.
			rs := jc.in("")
			k := min(1, len(rs)-1)
			for runName, r := range rs[k] {
				for i := range r.Scenarios {
					rs := jc.in("")
					noWork(&rs[k][runName].Scenarios[i])
					out := judgeOf(c, rs)
					what := fmt.Sprintf("%s/%s", runName, describe(&rs[k][runName].Scenarios[i]))
					if ro := reportedOnly[c.ID]; ro != nil && ro(&rs[k][runName].Scenarios[i]) {
						if out.Verdict != want {
							t.Errorf("%s (reported, not judged) did no work: %s (%s), want %s", what, out.Verdict, out.Measured, want)
						}
						continue
					}
					if out.Verdict != Failed || !strings.Contains(out.Measured, "nothing to judge") {
						t.Errorf("%s did no work: %s (%s), want %s", what, out.Verdict, out.Measured, Failed)
					}
				}
			}
		})
	}
}

// P7 and P8 read N from the run: the same measurements judged at
// masters:5 and masters:3 differ, and a run without a node count fails.
func TestJudgesReadNodeCount(t *testing.T) {
	cs, _ := Select([]string{"P7", "P8"})
	for _, c := range cs {
		jc := judgeCases[0]
		for _, x := range judgeCases {
			if x.id == c.ID {
				jc = x
			}
		}
		five, three := c.Perf(jc.in("")), c.Perf(jc.in("3 nodes"))
		if five.Figures["nodes"] != 5 || three.Figures["nodes"] != 3 || five.Verdict == three.Verdict {
			t.Errorf("%s: masters:5 %s (N %v), masters:3 %s (N %v); want N read and the verdicts to differ",
				c.ID, five.Verdict, five.Figures["nodes"], three.Verdict, three.Figures["nodes"])
		}
		// Without a topology the per-node strategy stats give N.
		rs := jc.in("")
		for _, r := range rs {
			for i := range r[c.Runs[0]].Scenarios {
				s := &r[c.Runs[0]].Scenarios[i]
				if s.Strategy == "redlock" {
					s.Topology = "external"
					for n := range 5 {
						s.StrategyStats[fmt.Sprintf("node%d_acquired", n)] = 10
					}
				}
			}
		}
		if out := c.Perf(rs); out.Figures["nodes"] != 5 || out.Verdict != five.Verdict {
			t.Errorf("%s from strategy stats: %s, N %v", c.ID, out.Verdict, out.Figures["nodes"])
		}
		for _, r := range rs {
			for i := range r[c.Runs[0]].Scenarios {
				clear(r[c.Runs[0]].Scenarios[i].StrategyStats)
			}
		}
		if out := c.Perf(rs); out.Verdict != Failed || !strings.Contains(out.Measured, "no node count") {
			t.Errorf("%s without a node count: %s (%s), want failed", c.ID, out.Verdict, out.Measured)
		}
	}
}

// poissonUpper against chi-square tables: chi2(0.95, 2k+2) / 2.
func TestPoissonUpper(t *testing.T) {
	for _, c := range []struct{ k, want float64 }{{0, -math.Log(0.05)}, {1, 4.7439}, {10, 16.9622}} {
		if got := poissonUpper(c.k, 0.95); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("poissonUpper(%v) = %v, want %v", c.k, got, c.want)
		}
	}
}

// The judges on result files of real runs (`lockbench claims --quick
// --only S7,S10,S11,S12`, 2026-12-01, histograms and timelines cut out):
// each reproduced; the same files with one strategy's work removed fail.
func TestJudgesOnRecordedRuns(t *testing.T) {
	load := func(name string) *report.Run {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var r report.Run
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	cs, _ := Select([]string{"S7", "S10", "S11", "S12"})
	for _, c := range cs {
		r := Results{}
		for _, name := range c.Runs {
			r[name] = load(name)
		}
		if out := c.Judge(r); out.Verdict != Reproduced {
			t.Errorf("%s on recorded runs: %s (%s)", c.ID, out.Verdict, out.Measured)
		}
		for _, name := range c.Runs {
			for i := range r[name].Scenarios {
				r[name] = load(name)
				noWork(&r[name].Scenarios[i])
				if out := c.Judge(r); out.Verdict != Failed {
					t.Errorf("%s with %s/%s emptied: %s (%s), want failed", c.ID, name, r[name].Scenarios[i].Strategy, out.Verdict, out.Measured)
				}
			}
			r[name] = load(name)
		}
	}
}

// S7 judges wait-replicas when it refused every acquire (the replica cut
// off for the whole window, as on a loaded machine): 0 overlaps in 0 locks
// granted but 5 refused is a result; 0 attempts is not.
func TestS7RefusedAcquires(t *testing.T) {
	cs, _ := Select([]string{"S7"})
	mk := func(refused float64, attempts int64) Results {
		return Results{"failover": run(
			worked("atomic", "flash-sale", func(s *report.Scenario) { s.Topology, s.Violations.Overlap = "replica", 90 }),
			worked("wait-replicas", "flash-sale", func(s *report.Scenario) {
				s.Topology, s.Ops, s.AcquireMS, s.Counters.Attempts = "replica", 0, metrics.Latency{}, attempts
				s.Figures["sold"], s.StrategyStats["not_replicated"] = 0, refused
			}))}
	}
	if out := cs[0].Judge(mk(5, 250)); out.Verdict != Reproduced || !strings.Contains(out.Measured, "5 refused") {
		t.Fatalf("refused every acquire: %s (%s), want reproduced", out.Verdict, out.Measured)
	}
	if out := cs[0].Judge(mk(0, 250)); out.Verdict != Failed {
		t.Fatalf("neither held nor refused: %s (%s), want failed", out.Verdict, out.Measured)
	}
	if out := cs[0].Judge(mk(5, 0)); out.Verdict != Failed {
		t.Fatalf("no attempt: %s (%s), want failed", out.Verdict, out.Measured)
	}
}
