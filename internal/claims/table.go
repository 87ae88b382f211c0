package claims

import (
	"fmt"
	"math"
	"strings"

	"github.com/lockbench/lockbench/internal/report"
)

// Runs are the `lockbench run` invocations the experiments use. Each is
// scaled to a 2-core machine: the articles' seconds become milliseconds,
// their thousands of clients tens or hundreds.
func Runs() []Run {
	quick := func(d string) []string { return []string{"--duration", d} }
	pol := "fixed:interval=5ms"
	longTask := Run{Name: "long-task", Args: []string{"--strategy", "naive,atomic,watchdog", "--workload", "long-task",
		"--ttl", "200ms", "--work", "300ms", "--clients", "10", "--retry", pol, "--duration", "5s"}, Quick: quick("2s")}
	gcPause := Run{Name: "gc-pause", Args: []string{"--strategy", "watchdog,fencing", "--workload", "flash-sale", "--stock", "1000000",
		"--ttl", "100ms", "--work", "5ms", "--clients", "6", "--retry", pol, "--acquire-timeout", "1s",
		"--fault", "pause:at=300ms,for=400ms,point=write", "--duration", "2s"}, Quick: quick("1.5s")}
	guardNone := Run{Name: "guard-none", Args: []string{"--strategy", "atomic", "--guard", "none", "--workload", "flash-sale", "--stock", "200",
		"--ttl", "5ms", "--work", "20ms", "--clients", "20", "--retry", "fixed:interval=1ms", "--duration", "10s"}}
	sqlLow := Run{Name: "sql-low", Args: []string{"--strategy", "atomic,sql-rowlock", "--workload", "flash-sale", "--stock", "1000000",
		"--work", "1ms", "--clients", "10", "--duration", "5s"}, Quick: quick("2s")}
	return []Run{
		{Name: "crash", Args: []string{"--strategy", "naive,atomic", "--workload", "flash-sale", "--stock", "1000000",
			"--work", "1ms", "--ttl", "200ms", "--clients", "8", "--retry", pol, "--acquire-timeout", "1s",
			"--fault", "crash-after-setnx:at=300ms", "--duration", "3s"}, Quick: quick("1.5s")},
		longTask,
		derive(longTask, "constant-token", "--strategy", "atomic", "--token", "constant"),
		gcPause,
		derive(gcPause, "gc-pause-decr", "--strategy", "watchdog", "--guard", "decr"),
		{Name: "failover", Args: []string{"--strategy", "atomic,wait-replicas", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "1500ms", "--work", "1s", "--clients", "10", "--retry", pol, "--acquire-timeout", "1s",
			"--fault", "failover:at=200ms,hold=2s", "--duration", "3500ms"}},
		{Name: "redlock-2-down", Args: []string{"--strategy", "redlock", "--nodes", "5", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "200ms", "--work", "1ms", "--clients", "8", "--retry", pol, "--acquire-timeout", "500ms",
			"--fault", "node-kill:node=0,at=300ms", "--fault", "node-kill:node=1,at=300ms",
			"--fault", "node-kill:node=1,at=500ms", "--duration", "2s"}, Quick: quick("1200ms")},
		{Name: "redlock-3-down", Args: []string{"--strategy", "redlock", "--nodes", "5", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "200ms", "--work", "1ms", "--clients", "8", "--retry", pol, "--acquire-timeout", "500ms",
			"--fault", "node-kill:node=0,at=300ms", "--fault", "node-kill:node=1,at=300ms", "--fault", "node-kill:node=2,at=300ms",
			"--fault", "node-kill:node=2,at=500ms", "--duration", "2s"}, Quick: quick("1200ms")},
		{Name: "redlock-restart", Args: []string{"--strategy", "redlock", "--nodes", "5", "--workload", "long-task",
			"--ttl", "3s", "--work", "1s", "--clients", "6", "--retry", "fixed:interval=10ms", "--acquire-timeout", "2s",
			"--fault", "node-restart:node=0,at=300ms", "--fault", "node-restart:node=1,at=300ms", "--fault", "node-restart:node=2,at=300ms",
			"--duration", "1500ms"}},
		{Name: "nested", Args: []string{"--strategy", "naive,atomic,reentrant", "--workload", "nested", "--keys", "10", "--ttl", "2s",
			"--clients", "10", "--duration", "3s"}, Quick: quick("1500ms")},
		guardNone,
		derive(guardNone, "guard-decr", "--guard", "decr"),
		{Name: "multilevel", Args: []string{"--strategy", "atomic,multilevel", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "5ms", "--work", "20ms", "--clients", "20", "--retry", "fixed:interval=1ms", "--duration", "4s"}, Quick: quick("2s")},
		{Name: "segments", Args: []string{"--strategy", "atomic,segmented", "--segments", "8", "--workload", "flash-sale",
			"--stock", "1000000", "--work", "5ms", "--ttl", "100ms", "--clients", "50", "--retry", "fixed:interval=1ms",
			"--duration", "5s"}, Quick: quick("2s")},
		retryRun(10), retryRun(100), retryRun(500),
		{Name: "async", Args: []string{"--strategy", "atomic", "--workload", "flash-sale", "--skus", "10", "--stock", "1000000",
			"--work", "5ms", "--retry", "none,fixed", "--clients", "50", "--duration", "5s"}, Quick: quick("2s")},
		sqlLow,
		derive(sqlLow, "sql-high", "--clients", "200"),
		{Name: "zk", Args: []string{"--strategy", "atomic,zk,etcd", "--workload", "lock-cycle", "--keys", "1000",
			"--clients", "50", "--duration", "5s"}, Quick: quick("2s")},
		{Name: "redlock-orders", Args: []string{"--strategy", "atomic,redlock", "--nodes", "5", "--workload", "flash-sale",
			"--skus", "1000", "--stock", "1000000", "--work", "1ms", "--clients", "50", "--duration", "5s"}, Quick: quick("2s")},
		{Name: "uncontended", Args: []string{"--strategy", "atomic,redlock", "--nodes", "5", "--workload", "lock-cycle",
			"--keys", "100000", "--clients", "50", "--duration", "5s"}, Quick: quick("2s")},
	}
}

// derive is base under another name with more flags appended (a later
// flag wins; --fault adds a fault).
func derive(base Run, name string, extra ...string) Run {
	return Run{Name: name, Args: append(append([]string{}, base.Args...), extra...), Quick: base.Quick}
}

// retryClients are the client counts of claims P2 and P3.
var retryClients = []int{10, 100, 500}

func retryRun(n int) Run {
	return Run{Name: fmt.Sprintf("retry-%d", n), Args: []string{"--strategy", "atomic", "--workload", "hot-key", "--keys", "1",
		"--zipf", "0", "--work", "5ms", "--retry", "fixed,backoff,spin,pubsub", "--clients", fmt.Sprint(n),
		"--load-sample", "10ms", "--duration", "5s"}, Quick: []string{"--duration", "1500ms"}}
}

// judging collects the first lookup error, so a judge reads as a list of
// lookups and one rule.
type judging struct {
	r   Results
	err error
	fig map[string]float64
}

func (j *judging) s(run, strategy, retry string, clients int) *report.Scenario {
	s, err := j.r.Find(run, strategy, retry, clients)
	if err != nil {
		if j.err == nil {
			j.err = err
		}
		return &report.Scenario{Figures: map[string]int64{}, StrategyStats: map[string]float64{}}
	}
	return s
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

// Table is every claim of docs/claims.md with its experiment and verdict rule.
func Table() []Claim {
	return []Claim{
		{ID: "S1", Claim: "SETNX then EXPIRE: a crash between them leaves a lock with no TTL forever", Seeds: "000, 003",
			Article: "every later acquire fails forever", Scaling: "8 clients, crash at 0.3 s, 200 ms lease",
			Rule: "naive: >= 1 stuck lock and 0 locks granted after the crash; atomic SET NX PX: 0 stuck and > 0 granted after (recovers after one TTL)",
			Runs: []string{"crash"},
			Judge: judge(func(j *judging) (bool, string) {
				n, a := j.s("crash", "naive", "", 0), j.s("crash", "atomic", "", 0)
				ns, na := j.set("naive_stuck", f64(n.Violations.StuckLocks)), j.set("naive_ops_after", f64(lastWindow(n).OpsAfter))
				as, aa := j.set("atomic_stuck", f64(a.Violations.StuckLocks)), j.set("atomic_ops_after", f64(lastWindow(a).OpsAfter))
				return ns >= 1 && na == 0 && as == 0 && aa > 0,
					fmt.Sprintf("naive: %.0f stuck, %.0f granted after; atomic: %.0f stuck, %.0f granted after", ns, na, as, aa)
			})},
		{ID: "S2", Claim: "a lease shorter than the task (10 s lease, 15 s task) lets a second client in", Seeds: "000, 003",
			Article: "second holder enters while the first works", Scaling: "200 ms lease, 300 ms task (1.5 x TTL), 10 clients",
			Rule: "overlap > 0 for both fixed-lease strategies (naive, atomic)", Runs: []string{"long-task"},
			Judge: judge(func(j *judging) (bool, string) {
				n := j.set("naive_overlap", f64(j.s("long-task", "naive", "", 0).Violations.Overlap))
				a := j.set("atomic_overlap", f64(j.s("long-task", "atomic", "", 0).Violations.Overlap))
				return n > 0 && a > 0, fmt.Sprintf("overlaps: naive %.0f, atomic %.0f", n, a)
			})},
		{ID: "S3", Claim: "release by plain DEL removes another client's lock", Seeds: "000, 002, 004",
			Article: "a third client then enters", Scaling: "the S2 run",
			Rule: "naive (DEL): foreign releases > 0; atomic (Lua compare-and-delete): 0", Runs: []string{"long-task"},
			Judge: judge(func(j *judging) (bool, string) {
				n := j.set("naive_foreign_releases", f64(j.s("long-task", "naive", "", 0).Violations.ForeignReleases))
				a := j.set("atomic_foreign_releases", f64(j.s("long-task", "atomic", "", 0).Violations.ForeignReleases))
				return n > 0 && a == 0, fmt.Sprintf("foreign releases: naive %.0f, atomic %.0f", n, a)
			})},
		{ID: "S4", Claim: "a constant lock value is as bad as no owner check", Seeds: "004",
			Article: `value "1": foreign deletions`, Scaling: "the S2 run with --token constant",
			Rule: "atomic with --token constant: foreign releases > 0, while atomic with random tokens has 0",
			Runs: []string{"constant-token", "long-task"},
			Judge: judge(func(j *judging) (bool, string) {
				c := j.set("constant_foreign_releases", f64(j.s("constant-token", "atomic", "", 0).Violations.ForeignReleases))
				r := j.set("random_foreign_releases", f64(j.s("long-task", "atomic", "", 0).Violations.ForeignReleases))
				return c > 0 && r == 0, fmt.Sprintf("foreign releases: constant token %.0f, random token %.0f", c, r)
			})},
		{ID: "S5", Claim: "a watchdog renewing every TTL/3 keeps the lock for tasks of any length", Seeds: "000, 002, 003, 004",
			Article: "30 s lease renewed every 10 s", Scaling: "200 ms lease renewed every ~67 ms, 300 ms task",
			Rule: "watchdog: 0 overlaps, 0 lost leases, renewals > 0", Runs: []string{"long-task"},
			Judge: judge(func(j *judging) (bool, string) {
				w := j.s("long-task", "watchdog", "", 0)
				o := j.set("overlap", f64(w.Violations.Overlap))
				l := j.set("lost_leases", f64(w.Violations.LostLeases))
				r := j.set("renewals", w.StrategyStats["renewals"])
				return o == 0 && l == 0 && r > 0, fmt.Sprintf("overlap %.0f, lost leases %.0f, %.0f renewals", o, l, r)
			})},
		{ID: "S6", Claim: "a stop-the-world pause longer than the TTL defeats the watchdog; fencing keeps data right", Seeds: "002, 003",
			Article: "GC pause > lease: two holders", Scaling: "400 ms pause of one holder (and its renewals) between its check and its write, 100 ms lease",
			Rule: "watchdog: overlap > 0 and lost updates + oversell > 0; fencing: 0 lost updates, 0 oversell, >= 1 write rejected",
			Runs: []string{"gc-pause"},
			Judge: judge(func(j *judging) (bool, string) {
				w, f := j.s("gc-pause", "watchdog", "", 0), j.s("gc-pause", "fencing", "", 0)
				wo := j.set("watchdog_overlap", f64(w.Violations.Overlap))
				wl := j.set("watchdog_lost_updates", f64(w.Violations.LostUpdates+w.Violations.Oversell))
				fl := j.set("fencing_lost_updates", f64(f.Violations.LostUpdates+f.Violations.Oversell))
				fr := j.set("fencing_rejected", f64(f.Counters.Rejected))
				return wo > 0 && wl > 0 && fl == 0 && fr >= 1,
					fmt.Sprintf("watchdog: overlap %.0f, %.0f updates lost; fencing: %.0f lost, %.0f stale writes rejected", wo, wl, fl, fr)
			})},
		{ID: "S7", Claim: "failover after acquire loses the lock (async replication); WAIT prevents it", Seeds: "000, 003, 004",
			Article: "two clients hold the lock", Scaling: "replica cut off for 2 s, master killed while a holder works (1 s task, 1.5 s lease)",
			Rule: "atomic: overlap > 0; wait-replicas (WAIT 1): overlap 0", Runs: []string{"failover"},
			Judge: judge(func(j *judging) (bool, string) {
				a := j.set("atomic_overlap", f64(j.s("failover", "atomic", "", 0).Violations.Overlap))
				w := j.set("wait_replicas_overlap", f64(j.s("failover", "wait-replicas", "", 0).Violations.Overlap))
				return a > 0 && w == 0, fmt.Sprintf("overlaps: atomic %.0f, wait-replicas %.0f", a, w)
			})},
		{ID: "S8", Claim: "Redlock (quorum 3 of 5) survives 2 node failures and fails closed with 3", Seeds: "004",
			Article: "3 of 5 masters", Scaling: "5 local masters, SIGKILL at 0.3 s; grants counted from 0.5 s (a repeated kill marks it), so acquires already past quorum at the kill are not counted",
			Rule: "2 down: > 0 locks granted after, 0 overlaps; 3 down: 0 granted after, 0 overlaps",
			Runs: []string{"redlock-2-down", "redlock-3-down"},
			Judge: judge(func(j *judging) (bool, string) {
				t, h := j.s("redlock-2-down", "redlock", "", 0), j.s("redlock-3-down", "redlock", "", 0)
				ta := j.set("two_down_ops_after", f64(lastWindow(t).OpsAfter))
				ha := j.set("three_down_ops_after", f64(lastWindow(h).OpsAfter))
				ov := j.set("overlap", f64(t.Violations.Overlap+h.Violations.Overlap))
				return ta > 0 && ha == 0 && ov == 0,
					fmt.Sprintf("2 down: %.0f granted after; 3 down: %.0f granted after; overlaps %.0f", ta, ha, ov)
			})},
		{ID: "S9", Claim: "Redlock: a majority restarted without persistence lets a second client in", Seeds: "000, 004",
			Article: "nodes forget the lock", Scaling: "3 of 5 masters restart empty while a 1 s task holds a 3 s lease",
			Rule: "redlock: overlap > 0", Runs: []string{"redlock-restart"},
			Judge: judge(func(j *judging) (bool, string) {
				o := j.set("overlap", f64(j.s("redlock-restart", "redlock", "", 0).Violations.Overlap))
				return o > 0, fmt.Sprintf("overlap %.0f", o)
			})},
		{ID: "S10", Claim: "non-reentrant locks fail on nested acquisition; the hash-counter lock handles it", Seeds: "000, 002, 003, 004",
			Article: "deadlock / failure when re-entering", Scaling: "10 clients, 10 keys, each operation takes its lock twice",
			Rule: "naive and atomic: nested failures > 0; reentrant: 0 nested failures and > 0 operations",
			Runs: []string{"nested"},
			Judge: judge(func(j *judging) (bool, string) {
				n := j.set("naive_nested_failures", f64(j.s("nested", "naive", "", 0).Figures["nested_failures"]))
				a := j.set("atomic_nested_failures", f64(j.s("nested", "atomic", "", 0).Figures["nested_failures"]))
				r := j.s("nested", "reentrant", "", 0)
				rf, ro := j.set("reentrant_nested_failures", f64(r.Figures["nested_failures"])), j.set("reentrant_ops", f64(r.Ops))
				return n > 0 && a > 0 && rf == 0 && ro > 0,
					fmt.Sprintf("nested failures: naive %.0f, atomic %.0f, reentrant %.0f (%.0f ops)", n, a, rf, ro)
			})},
		{ID: "S11", Claim: "a conditional decrement stops oversell even when the lock fails", Seeds: "000, 002",
			Article: "count = count - 1 where count >= 1", Scaling: "stock 200 under a 5 ms lease with 20 ms work (S2's fault), and S6's pause",
			Rule: "unguarded: overlap > 0 and oversell + lost updates > 0; guarded (decr), short lease and pause: overlap > 0, oversell 0, lost updates 0",
			Runs: []string{"guard-none", "guard-decr", "gc-pause-decr"},
			Judge: judge(func(j *judging) (bool, string) {
				n, d, p := j.s("guard-none", "atomic", "", 0), j.s("guard-decr", "atomic", "", 0), j.s("gc-pause-decr", "watchdog", "", 0)
				nb := j.set("unguarded_oversell_lost", f64(n.Violations.Oversell+n.Violations.LostUpdates))
				db := j.set("decr_oversell_lost", f64(d.Violations.Oversell+d.Violations.LostUpdates))
				pb := j.set("decr_pause_oversell_lost", f64(p.Violations.Oversell+p.Violations.LostUpdates))
				ov := j.set("min_overlap", f64(min(n.Violations.Overlap, d.Violations.Overlap, p.Violations.Overlap)))
				return ov > 0 && nb > 0 && db == 0 && pb == 0,
					fmt.Sprintf("oversell+lost: unguarded %.0f, decr %.0f, decr under pause %.0f (every run overlapped)", nb, db, pb)
			})},
		{ID: "S12", Claim: "local lock + Redis lock + version check cut errors from 0.1% to 0.0001%", Seeds: "002",
			Article: "0.1 % -> 0.0001 % (1000x fewer)", Scaling: "5 ms lease, 20 ms work, 20 clients: the lease fails often",
			Rule: "error rate = (oversell + lost updates) / orders; plain atomic > 0 and multilevel <= plain / 1000",
			Runs: []string{"multilevel"},
			Judge: judge(func(j *judging) (bool, string) {
				rate := func(s *report.Scenario) float64 {
					return ratio(f64(s.Violations.Oversell+s.Violations.LostUpdates), f64(max(s.Figures["sold"], 1)))
				}
				p := j.set("plain_error_rate", rate(j.s("multilevel", "atomic", "", 0)))
				m := j.set("multilevel_error_rate", rate(j.s("multilevel", "multilevel", "", 0)))
				return p > 0 && m <= p/1000, fmt.Sprintf("error rate: plain %.3f %%, multilevel %.4f %%", 100*p, 100*m)
			})},
		{ID: "P1", Claim: "per-product segmented locks raised QPS from 200 to 1,500 (7.5x)", Seeds: "002, 000",
			Article: "200 -> 1,500 QPS (7.5x)", Scaling: "5 ms critical section (global lock ~200 ops/s), 8 segments, 50 clients",
			Rule: "segmented / global ops/s >= 6.2 (80 % of the article's 6.5x gain); the ceiling is 8 / 5 ms = 1,600 ops/s",
			Runs: []string{"segments"},
			Judge: judge(func(j *judging) (bool, string) {
				g, s := j.s("segments", "atomic", "", 0), j.s("segments", "segmented", "", 0)
				go_, so := j.set("global_ops_per_s", g.OpsPerSec), j.set("segmented_ops_per_s", s.OpsPerSec)
				r := j.set("ratio", ratio(so, go_))
				e := j.set("segmented_efficiency", s.Efficiency)
				return r >= 6.2, fmt.Sprintf("%.0f -> %.0f ops/s (%.1fx); segmented at %.0f %% of its ceiling %.0f ops/s", go_, so, r, 100*e, s.CeilingOpsPerSec)
			})},
		{ID: "P2", Claim: "jittered backoff beats polling every 100 ms in throughput, with worse fairness", Seeds: "000",
			Article: "clearly higher throughput, worse fairness", Scaling: "one hot key, 5 ms work, 10 / 100 / 500 clients",
			Rule: "at >= 2 of the 3 client counts: backoff ops/s >= 1.1 x fixed ops/s, and Jain index backoff < fixed",
			Runs: []string{"retry-10", "retry-100", "retry-500"},
			Judge: judge(func(j *judging) (bool, string) {
				faster, lessFair := 0, 0
				var parts []string
				for _, n := range retryClients {
					run := fmt.Sprintf("retry-%d", n)
					f, b := j.s(run, "atomic", "fixed", n), j.s(run, "atomic", "backoff", n)
					s, p := j.s(run, "atomic", "spin", n), j.s(run, "atomic", "pubsub", n)
					r := j.set(fmt.Sprintf("backoff_over_fixed_%d", n), ratio(b.OpsPerSec, f.OpsPerSec))
					jf, jb := j.set(fmt.Sprintf("jain_fixed_%d", n), f.Fairness.JainIndex), j.set(fmt.Sprintf("jain_backoff_%d", n), b.Fairness.JainIndex)
					for name, sc := range map[string]*report.Scenario{"fixed": f, "backoff": b, "spin": s, "pubsub": p} {
						j.set(fmt.Sprintf("ops_per_s_%s_%d", name, n), sc.OpsPerSec)
						j.set(fmt.Sprintf("acquire_p99_ms_%s_%d", name, n), sc.AcquireMS.P99)
						j.set(fmt.Sprintf("commands_per_success_%s_%d", name, n), sc.RedisCost.CommandsPerOp)
					}
					if r >= 1.1 {
						faster++
					}
					if jb < jf {
						lessFair++
					}
					parts = append(parts, fmt.Sprintf("%d clients: %.2fx, Jain %.2f vs %.2f", n, r, jb, jf))
				}
				return faster >= 2 && lessFair >= 2, "backoff/fixed " + strings.Join(parts, "; ")
			})},
		{ID: "P3", Claim: "lockstep polling makes Redis load spike when all waiters retry together", Seeds: "000",
			Article: "thundering herd", Scaling: "the P2 runs, servers' command rate sampled every 10 ms",
			Rule: "at >= 2 of the 3 client counts: the p99 of the servers' command rate (commands/s over 10 ms) under fixed-interval polling >= 2 x under jittered backoff (the single highest sample is reported but too noisy to judge on)",
			Runs: []string{"retry-10", "retry-100", "retry-500"},
			Judge: judge(func(j *judging) (bool, string) {
				spiky := 0
				var parts []string
				for _, n := range retryClients {
					run := fmt.Sprintf("retry-%d", n)
					f, b := j.s(run, "atomic", "fixed", n), j.s(run, "atomic", "backoff", n)
					if f.ServerLoad == nil || b.ServerLoad == nil {
						return false, fmt.Sprintf("%d clients: no server load samples", n)
					}
					r := j.set(fmt.Sprintf("p99_rate_fixed_over_backoff_%d", n), ratio(f.ServerLoad.P99PerSec, b.ServerLoad.P99PerSec))
					j.set(fmt.Sprintf("p99_commands_per_s_fixed_%d", n), f.ServerLoad.P99PerSec)
					j.set(fmt.Sprintf("p99_commands_per_s_backoff_%d", n), b.ServerLoad.P99PerSec)
					j.set(fmt.Sprintf("peak_to_mean_fixed_%d", n), f.ServerLoad.PeakToMean)
					j.set(fmt.Sprintf("peak_to_mean_backoff_%d", n), b.ServerLoad.PeakToMean)
					j.set(fmt.Sprintf("commands_per_success_fixed_%d", n), f.RedisCost.CommandsPerOp)
					j.set(fmt.Sprintf("commands_per_success_backoff_%d", n), b.RedisCost.CommandsPerOp)
					if r >= 2 {
						spiky++
					}
					parts = append(parts, fmt.Sprintf("%d clients: %.2fx (%.0f vs %.0f/s)", n, r, f.ServerLoad.P99PerSec, b.ServerLoad.P99PerSec))
				}
				return spiky >= 2, "p99 command rate, fixed vs backoff: " + strings.Join(parts, "; ")
			})},
		{ID: "P4", Claim: "async acquisition (try-lock, serve another item) raised throughput by 40 %", Seeds: "002",
			Article: "+40 %", Scaling: "10 items, 50 clients, 5 ms work; waiting = poll every 100 ms",
			Rule: "try-lock (retry none, next item) / waiting (fixed 100 ms) ops/s >= 1.32 (80 % of the article's gain)",
			Runs: []string{"async"},
			Judge: judge(func(j *judging) (bool, string) {
				a, w := j.s("async", "atomic", "none", 0), j.s("async", "atomic", "fixed", 0)
				r := j.set("ratio", ratio(a.OpsPerSec, w.OpsPerSec))
				j.set("async_ops_per_s", a.OpsPerSec)
				j.set("waiting_ops_per_s", w.OpsPerSec)
				return r >= 1.32, fmt.Sprintf("%.0f vs %.0f ops/s (%+.0f %%)", a.OpsPerSec, w.OpsPerSec, 100*(r-1))
			})},
		{ID: "P5", Claim: "a MySQL row lock fell from 2,000 TPS to under 300 under high concurrency", Seeds: "004",
			Article: "2,000 -> < 300 TPS", Scaling: "MariaDB SELECT ... FOR UPDATE on one stock row, 10 vs 200 clients",
			Rule: "sql-rowlock ops/s at 200 clients <= 0.5 x at 10 clients, and the Redis lock (atomic) at 200 clients is faster than sql-rowlock",
			Runs: []string{"sql-low", "sql-high"}, Needs: []string{"sql-rowlock"},
			Judge: judge(func(j *judging) (bool, string) {
				lo, hi := j.s("sql-low", "sql-rowlock", "", 0), j.s("sql-high", "sql-rowlock", "", 0)
				ah := j.s("sql-high", "atomic", "", 0)
				r := j.set("rowlock_high_over_low", ratio(hi.OpsPerSec, lo.OpsPerSec))
				j.set("rowlock_ops_per_s_10", lo.OpsPerSec)
				j.set("rowlock_ops_per_s_200", hi.OpsPerSec)
				j.set("atomic_ops_per_s_200", ah.OpsPerSec)
				return r <= 0.5 && ah.OpsPerSec > hi.OpsPerSec,
					fmt.Sprintf("row lock %.0f -> %.0f ops/s (%.2fx); atomic at 200 clients %.0f", lo.OpsPerSec, hi.OpsPerSec, r, ah.OpsPerSec)
			})},
		{ID: "P6", Claim: "Redis locks ~100k QPS, ZooKeeper ~10k QPS", Seeds: "004",
			Article: "10x", Scaling: "uncontended lock cycles, 50 clients, 1,000 keys; etcd beside",
			Rule: "atomic / zk ops/s >= 5 (the article's 10x within a factor of 2)",
			Runs: []string{"zk"}, Needs: []string{"zk", "etcd"},
			Judge: judge(func(j *judging) (bool, string) {
				a, z, e := j.s("zk", "atomic", "", 0), j.s("zk", "zk", "", 0), j.s("zk", "etcd", "", 0)
				r := j.set("redis_over_zk", ratio(a.OpsPerSec, z.OpsPerSec))
				re := j.set("redis_over_etcd", ratio(a.OpsPerSec, e.OpsPerSec))
				return r >= 5, fmt.Sprintf("redis %.0f, zk %.0f (%.1fx), etcd %.0f (%.1fx) ops/s", a.OpsPerSec, z.OpsPerSec, r, e.OpsPerSec, re)
			})},
		{ID: "P7", Claim: "an improved Redlock carried 120,000 orders/s at peak with 0.001 % failures", Seeds: "004",
			Article: "120,000 orders/s, 0.001 % failures", Scaling: "5 local masters, 1,000 items, 50 clients on 2 cores",
			Rule: "hardware-bound: Redlock's orders/s and failure rate here, and its cost against single-node locking",
			Runs: []string{"redlock-orders"},
			Judge: judgeAs(HardwareBound, func(j *judging) (bool, string) {
				a, r := j.s("redlock-orders", "atomic", "", 0), j.s("redlock-orders", "redlock", "", 0)
				fails := f64(r.Counters.Failures + r.Counters.Timeouts + r.Counters.Errors)
				fr := j.set("redlock_failure_rate", ratio(fails, f64(max(r.Counters.Attempts, 1))))
				j.set("redlock_orders_per_s", r.OpsPerSec)
				rel := j.set("redlock_over_single", ratio(r.OpsPerSec, a.OpsPerSec))
				cost := j.set("commands_ratio", ratio(r.RedisCost.CommandsPerOp, a.RedisCost.CommandsPerOp))
				return true, fmt.Sprintf("redlock %.0f orders/s (%.2fx single-node, %.1fx commands/order), %.4f %% failed attempts",
					r.OpsPerSec, rel, cost, 100*fr)
			})},
		{ID: "P8", Claim: "single-node ~10^5 acquisitions/s; Redlock costs about N round trips more", Seeds: "004",
			Article: "10^5/s; N x the round trips", Scaling: "uncontended lock-cycle, 50 clients, N = 5",
			Rule: "Redis commands per Redlock cycle / per single-node cycle within [0.8 N, 1.2 N]; cycles/s reported (absolute figure hardware-bound)",
			Runs: []string{"uncontended"},
			Judge: judge(func(j *judging) (bool, string) {
				a, r := j.s("uncontended", "atomic", "", 0), j.s("uncontended", "redlock", "", 0)
				c := j.set("commands_ratio", ratio(r.RedisCost.CommandsPerOp, a.RedisCost.CommandsPerOp))
				j.set("single_cycles_per_s", a.OpsPerSec)
				j.set("redlock_cycles_per_s", r.OpsPerSec)
				sp := j.set("single_over_redlock", ratio(a.OpsPerSec, r.OpsPerSec))
				return c >= 4 && c <= 6, fmt.Sprintf("single %.0f, redlock %.0f cycles/s (%.1fx); %.1fx commands per cycle",
					a.OpsPerSec, r.OpsPerSec, sp, c)
			})},
	}
}
