package claims

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/report"
)

// The measured window of each scenario of the performance runs. The
// statistics come from the repeats, each a run on fresh servers, not from
// long windows:
//
//   - perfDuration, full mode (FullRepeats runs of each): 2 s. With 5 s
//     windows a full `lockbench claims` took 1,104 s (2026-12-01) and
//     1,230 s (2026-12-04, a shared machine); the limit is 600 s.
//   - perfQuick, --quick mode (QuickRepeats runs): 0.5 s, which still
//     holds about 80 (P1's global lock, 5 ms each) to 10,000 operations
//     per scenario; the limit is 150 s.
//   - settledQuick: the runs with the settled warm-up (P2, P3, P4)
//     measure 1 s in quick mode. P3 judges the p99 of the command rate
//     sampled every 10 ms: 100 samples at least, so that the p99 is not
//     the single highest sample; P4's try-lock / waiting ratio read
//     1.21x-2.09x in 0.5 s windows on a loaded machine (a stall of a few
//     hundred ms halves a 0.5 s window's figure), 2.29x-2.49x in 1 s
//     windows (both 2026-12-04, two busy loops beside).
const perfDuration = "2s"

var (
	perfQuick    = []string{"--duration", "500ms"}
	settledQuick = []string{"--duration", "1s"}
)

// settled is the warm-up of the runs whose first second is not like the
// rest (P2, P3, P4: every client starts in step, and jittered backoff
// needs about a second to spread the retries out; a 500-client backoff
// run's command-rate p99 was 44,279/s over its first 2 s and 3,801/s over
// the second after a 1 s warm-up, 2026-12-02), in both modes, so that
// quick and full measure the same steady state. Half a second is not
// enough: with it, backoff / fixed ops/s at 500 clients read 0.81x-0.89x
// in a quick run (2026-12-04, shared machine) against 0.96x-1.03x after
// 1 s.
const settled = "1s"

// zkWarmup is the warm-up of P6's ZooKeeper run (lockbench run --warmup:
// each scenario runs that long before its measured window, and the
// warm-up's figures are discarded), the same in full and quick mode, so
// that both measure the server's steady state: ZooKeeper's JVM compiles
// its request path while it serves; in `lockbench run --strategy zk,etcd
// --driver rueidis --workload lock-cycle --keys 1000 --clients 50
// --duration 12s` (2026-12-01, the 2-core development machine, shared)
// zk's ops per second rose from 1,177 in the first second to 7,512-9,165
// in seconds 9-10 (2026-12-04: still rising at 12 s, from 980-1,882 in
// the first second). Redis and etcd (a Go binary) showed no such trend;
// they get serverWarmup (connections made, the first keys written), in
// runs of their own (zk-redis, zk-etcd).
const (
	zkWarmup     = "8s"
	serverWarmup = "250ms"
)

// p6Clients drives each of P6's servers to saturation: lock cycles with
// no critical section on 1,000 keys, as fast as the clients can go. On
// the 2-core development machine (2026-12-04, two other builds beside)
// Redis went from 24,391 cycles/s at 20 clients to 44,807 at 100;
// ZooKeeper reached 7,371 at 100 after its warm-up; etcd fell from 2,106
// at 20 to 1,574 at 100 (its fsync per write bounds it). At 100 clients
// each server is past its knee: more clients add queueing, not cycles.
const p6Clients = 100

// p1Segments is P1's segment count. The article gives none; N segments
// allow at most N x the global lock's rate, so the count must not decide
// the verdict: 8 (ceiling 8x) is the nearest to the article's 7.5x, and
// the rule's 6.2x then asks the segmented lock for 78 % of its ceiling,
// which a lock that loses a fifth of its time to hand-overs and uneven
// segments misses. (With 16 segments, 6.2x needed only 39 %.)
const p1Segments = 8

// P5: the article's row lock fell from 2,000 TPS to under 300 "under high
// concurrency". The transaction holds the row lock and does nothing else
// (--work 0s): a 1 ms sleep inside it capped the row lock and Redis alike
// at about 680 ops/s (2026-11-30), which no concurrency could make fall
// from 2,000. sqlClients are the counts of its curve; the rule compares
// the top one with the lowest. On the 2-core development machine
// (2026-12-04, shared) the row lock ran at 2,368-3,202 ops/s with 10
// clients, 1,430-1,892 with 200 and 709 with 500 (InnoDB's wait queue on
// one row), while the Redis lock kept 4,573-5,639.
//
// A row-lock operation waits for the clients queued before it (about
// 150 ms at 200 clients, 0.7 s at 500), and lockbench counts the
// operations that start in the measured window and end in it, so a
// window's first second misses the operations that were already waiting:
// P5 judges its rates after the window's first second (steadyRate), the
// Redis lock's too, so that both sides are measured alike. That holds
// only while an operation waits less than that second: at 2,000 clients
// (waits of 2 s and more) the completions after the first second are
// mostly of operations that started before the window and are not
// counted, so a window of seconds reads a rate far below the server's (a
// quick run read 0 where a full one read 897 ops/s): 500 is the top
// count. sqlDuration 3 s in full mode (2 s judged); in quick mode a 0.5 s
// warm-up and 1.5 s (0.5 s judged), the row lock at the lowest and the
// top count only. The Redis lock runs at the lowest and the top count
// (in quick mode the top one only): the rule reads the top one.
var sqlClients = []int{10, 100, 500}

const (
	sqlWarmup   = "1s"
	sqlDuration = "3s"
)

var sqlQuick = []string{"--warmup", "500ms", "--duration", "1500ms"}

// Runs are the `lockbench run` invocations the experiments use. Each is
// scaled to a 2-core machine: the articles' seconds become milliseconds,
// their thousands of clients tens or hundreds.
func Runs() []Run {
	quick := func(d string) []string { return []string{"--duration", d} }
	pol := "fixed:interval=5ms"
	longTask := Run{Name: "long-task", Args: []string{"--strategy", "naive,atomic,watchdog", "--workload", "long-task",
		"--ttl", "200ms", "--work", "300ms", "--clients", "10", "--retry", pol, "--duration", "5s"}, Quick: quick("700ms")}
	gcPause := Run{Name: "gc-pause", Args: []string{"--strategy", "watchdog,fencing", "--workload", "flash-sale", "--stock", "1000000",
		"--ttl", "100ms", "--work", "5ms", "--clients", "6", "--retry", pol, "--acquire-timeout", "1s",
		"--fault", "pause:at=300ms,for=400ms,point=write", "--duration", "2s"}, Quick: quick("1s")}
	guardNone := Run{Name: "guard-none", Args: []string{"--strategy", "atomic", "--guard", "none", "--workload", "flash-sale", "--stock", "200",
		"--ttl", "5ms", "--work", "20ms", "--clients", "20", "--retry", "fixed:interval=1ms", "--duration", "10s"}, Quick: quick("1500ms")}
	// P5: the row lock at 10 and 200 clients in one sweep, its repeats
	// pooled (one MariaDB: its start took 3-6 s, more than the scenarios);
	// Redis at 200 clients in a run of its own, pooled alike.
	sqlFlags := func(strategy string, clients []int) []string {
		return []string{"--strategy", strategy, "--workload", "flash-sale", "--stock", "1000000", "--work", "0s",
			"--clients", joinInts(clients), "--warmup", sqlWarmup, "--duration", sqlDuration}
	}
	lowHigh := []int{sqlClients[0], sqlClients[len(sqlClients)-1]}
	// P6: ZooKeeper alone after its warm-up; Redis, which needs none, in a
	// run of its own (repeat k paired with repeat k); etcd, reported only,
	// once in full mode.
	cycles := func(strategy, warmup string) []string {
		return []string{"--strategy", strategy, "--workload", "lock-cycle", "--keys", "1000", "--work", "0s",
			"--clients", fmt.Sprint(p6Clients), "--warmup", warmup, "--duration", perfDuration}
	}
	failover := func(hold, duration string) []string {
		return []string{"--strategy", "atomic,wait-replicas", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "1500ms", "--work", "1s", "--clients", "10", "--retry", pol, "--acquire-timeout", "1s",
			"--fault", "failover:at=200ms,hold=" + hold, "--duration", duration}
	}
	return []Run{
		{Name: "crash", Args: []string{"--strategy", "naive,atomic", "--workload", "flash-sale", "--stock", "1000000",
			"--work", "1ms", "--ttl", "200ms", "--clients", "8", "--retry", pol, "--acquire-timeout", "1s",
			"--fault", "crash-after-setnx:at=300ms", "--duration", "3s"}, Quick: quick("700ms")},
		longTask,
		derive(longTask, "constant-token", "--strategy", "atomic", "--token", "constant"),
		gcPause,
		derive(gcPause, "gc-pause-decr", "--strategy", "watchdog", "--guard", "decr"),
		// In quick mode the replica is cut off for 1 s, not 2: the holder
		// that took its lock after the cut still works at the kill (1 s
		// task); 4 of 4 such runs overlapped under atomic and not under
		// wait-replicas (2026-12-04, a loaded machine).
		{Name: "failover", Args: failover("2s", "3500ms"), QuickArgs: failover("1s", "2500ms")},
		{Name: "redlock-2-down", Args: []string{"--strategy", "redlock", "--nodes", "5", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "200ms", "--work", "1ms", "--clients", "8", "--retry", pol, "--acquire-timeout", "500ms",
			"--fault", "node-kill:node=0,at=300ms", "--fault", "node-kill:node=1,at=300ms",
			"--fault", "node-kill:node=1,at=500ms", "--duration", "2s"}, Quick: quick("1s")},
		{Name: "redlock-3-down", Args: []string{"--strategy", "redlock", "--nodes", "5", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "200ms", "--work", "1ms", "--clients", "8", "--retry", pol, "--acquire-timeout", "500ms",
			"--fault", "node-kill:node=0,at=300ms", "--fault", "node-kill:node=1,at=300ms", "--fault", "node-kill:node=2,at=300ms",
			"--fault", "node-kill:node=2,at=500ms", "--duration", "2s"}, Quick: quick("1s")},
		{Name: "redlock-restart", Args: []string{"--strategy", "redlock", "--nodes", "5", "--workload", "long-task",
			"--ttl", "3s", "--work", "1s", "--clients", "6", "--retry", "fixed:interval=10ms", "--acquire-timeout", "2s",
			"--fault", "node-restart:node=0,at=300ms", "--fault", "node-restart:node=1,at=300ms", "--fault", "node-restart:node=2,at=300ms",
			"--duration", "1500ms"}},
		{Name: "nested", Args: []string{"--strategy", "naive,atomic,reentrant", "--workload", "nested", "--keys", "10", "--ttl", "2s",
			"--clients", "10", "--duration", "3s"}, Quick: quick("500ms")},
		guardNone,
		derive(guardNone, "guard-decr", "--guard", "decr"),
		{Name: "multilevel", Args: []string{"--strategy", "atomic,multilevel", "--workload", "flash-sale", "--stock", "1000000",
			"--ttl", "5ms", "--work", "20ms", "--clients", "20", "--retry", "fixed:interval=1ms", "--duration", "4s"}, Quick: quick("700ms")},
		{Name: "segments", Args: []string{"--strategy", "atomic,segmented", "--segments", fmt.Sprint(p1Segments), "--workload", "flash-sale",
			"--stock", "1000000", "--work", "5ms", "--ttl", "100ms", "--clients", "50", "--retry", "fixed:interval=1ms",
			"--duration", perfDuration}, Quick: perfQuick},
		retryRun("retry", "fixed,backoff"),
		retryRun("retry-spin-pubsub", "spin,pubsub"),
		{Name: "async", Args: []string{"--strategy", "atomic", "--workload", "flash-sale", "--skus", "10", "--stock", "1000000",
			"--work", "5ms", "--retry", "none,fixed", "--clients", "50", "--warmup", settled, "--duration", perfDuration}, Quick: settledQuick},
		{Name: "sql", Args: sqlFlags("sql-rowlock", sqlClients), Quick: append([]string{"--clients", joinInts(lowHigh)}, sqlQuick...),
			Sweep: true, Pooled: true},
		{Name: "sql-redis", Args: sqlFlags("atomic", lowHigh), QuickArgs: sqlFlags("atomic", lowHigh[1:]), Quick: sqlQuick,
			Sweep: true, Pooled: true},
		{Name: "zk", Args: cycles("zk", zkWarmup), Quick: perfQuick},
		{Name: "zk-redis", Args: cycles("atomic", serverWarmup), Quick: perfQuick},
		{Name: "zk-etcd", Args: cycles("etcd", serverWarmup), Reported: true},
		{Name: "redlock-orders", Args: []string{"--strategy", "atomic,redlock", "--nodes", "5", "--workload", "flash-sale",
			"--skus", "1000", "--stock", "1000000", "--work", "1ms", "--clients", "50", "--duration", perfDuration}, Quick: perfQuick},
		// P8: 20,000 keys for 50 clients (an acquire finds its key taken
		// about 0.25 % of the time). With 100,000 a Redlock scenario spent
		// about 1.5 s outside its window (a 0.5 s run of atomic and
		// redlock took 3.9 s, 2.0 s with 20,000 keys; commands per cycle
		// 20.3 and 20.0, single-node 4.0 both; 2026-12-04).
		{Name: "uncontended", Args: []string{"--strategy", "atomic,redlock", "--nodes", "5", "--workload", "lock-cycle",
			"--keys", "20000", "--clients", "50", "--duration", perfDuration}, Quick: perfQuick},
	}
}

// derive is base under another name with more flags appended (a later
// flag wins; --fault adds a fault).
func derive(base Run, name string, extra ...string) Run {
	return Run{Name: name, Args: append(append([]string{}, base.Args...), extra...), Quick: base.Quick, Sweep: base.Sweep}
}

// retryClients are the client counts of claims P2 and P3.
var retryClients = []int{10, 100, 500}

// retryLoad is the load each client count of P2 and P3 offers: the share
// of the hot key's ceiling (1 / 5 ms = 200 locks/s) that its clients ask
// for when no retry delays them. Each client thinks (retryThink) between
// its operations, so the lock is idle between holders and how soon a
// waiter tries again decides who gets it and when; with no think time
// the releasing client re-acquired at once, the lock was never idle, and
// every policy ran at the ceiling whatever its timing (2026-11-30: backoff
// / fixed 1.00x-1.01x at every count).
const retryLoad = 0.8

// retryThink is the mean think time (exponential) of n clients of P2 and
// P3: n x 5 ms / retryLoad, so that every count offers the same load and
// only the number of waiters sharing the lock differs (62.5 ms, 625 ms and
// 3.125 s for 10, 100 and 500 clients).
func retryThink(n int) time.Duration {
	return time.Duration(float64(n) * float64(5*time.Millisecond) / retryLoad)
}

// retryRun is a run of P2 and P3: the retry policies at each of
// retryClients, one `lockbench run` per count (Variants: a sweep cannot
// vary the think time with the count) joined into one result. "retry" has
// the two policies they judge, fixed-interval polling and jittered
// backoff; "retry-spin-pubsub" those P2 reports beside them without
// judging (Reported: made once, in full mode only).
func retryRun(name, policies string) Run {
	var variants [][]string
	for _, n := range retryClients {
		variants = append(variants, []string{"--clients", fmt.Sprint(n), "--think", "exp:mean=" + retryThink(n).String()})
	}
	return Run{Name: name, Args: []string{"--strategy", "atomic", "--workload", "hot-key", "--keys", "1",
		"--zipf", "0", "--work", "5ms", "--retry", policies,
		"--load-sample", "10ms", "--warmup", settled, "--duration", perfDuration}, Quick: settledQuick, Variants: variants,
		Reported: name != "retry"}
}

// joinInts is "10,100,500".
func joinInts(ns []int) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprint(n)
	}
	return strings.Join(out, ",")
}

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
			Article: "two clients hold the lock", Scaling: "replica cut off for 2 s (1 s in quick mode), master killed while a holder works (1 s task, 1.5 s lease)",
			Rule: "atomic: overlap > 0 (with > 0 locks granted and orders completed); wait-replicas (WAIT 1): overlap 0, having held locks or refused the ones no replica acknowledged (while the replica is cut off it refuses them all: on a loaded machine it may complete no order)", Runs: []string{"failover"},
			Judge: judge(func(j *judging) (bool, string) {
				as, ws := j.s("failover", "atomic", "", 0), j.refused("failover", "wait-replicas")
				a := j.set("atomic_overlap", f64(as.Violations.Overlap))
				w := j.set("wait_replicas_overlap", f64(ws.Violations.Overlap))
				wa := j.set("wait_replicas_acquired", f64(ws.AcquireMS.Count))
				wo := j.set("wait_replicas_orders", f64(ws.Ops))
				wr := j.set("wait_replicas_refused", ws.StrategyStats["not_replicated"])
				return a > 0 && w == 0, fmt.Sprintf("overlaps: atomic %.0f, wait-replicas %.0f (in %.0f locks granted, %.0f orders, %.0f refused as not replicated)", a, w, wa, wo, wr)
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
			Rule: "naive and atomic: nested failures > 0 (with > 0 outer locks granted); reentrant: 0 nested failures and > 0 operations",
			Runs: []string{"nested"},
			Judge: judge(func(j *judging) (bool, string) {
				// Every naive and atomic operation fails at its nested
				// acquire, so they complete none: they must have taken
				// their outer lock (> 0 granted), not completed operations.
				n := j.set("naive_nested_failures", f64(j.acquired("nested", "naive", "", 0).Figures["nested_failures"]))
				a := j.set("atomic_nested_failures", f64(j.acquired("nested", "atomic", "", 0).Figures["nested_failures"]))
				r := j.s("nested", "reentrant", "", 0)
				rf, ro := j.set("reentrant_nested_failures", f64(r.Figures["nested_failures"])), j.set("reentrant_ops", f64(r.Ops))
				return n > 0 && a > 0 && rf == 0 && ro > 0,
					fmt.Sprintf("nested failures: naive %.0f, atomic %.0f, reentrant %.0f (%.0f ops)", n, a, rf, ro)
			})},
		{ID: "S11", Claim: "a conditional decrement stops oversell even when the lock fails", Seeds: "000, 002",
			Article: "count = count - 1 where count >= 1", Scaling: "stock 200 under a 5 ms lease with 20 ms work (S2's fault), and S6's pause",
			Rule: "unguarded: overlap > 0 and oversell + lost updates > 0; guarded (decr), short lease and pause: overlap > 0, oversell 0, lost updates 0 (with > 0 sold, else failed: a guard refusing every write also shows 0)",
			Runs: []string{"guard-none", "guard-decr", "gc-pause-decr"},
			Judge: judge(func(j *judging) (bool, string) {
				n, d, p := j.s("guard-none", "atomic", "", 0), j.s("guard-decr", "atomic", "", 0), j.s("gc-pause-decr", "watchdog", "", 0)
				nb := j.set("unguarded_oversell_lost", f64(n.Violations.Oversell+n.Violations.LostUpdates))
				db := j.set("decr_oversell_lost", f64(d.Violations.Oversell+d.Violations.LostUpdates))
				pb := j.set("decr_pause_oversell_lost", f64(p.Violations.Oversell+p.Violations.LostUpdates))
				ov := j.set("min_overlap", f64(min(n.Violations.Overlap, d.Violations.Overlap, p.Violations.Overlap)))
				// A guard that refused every write would show 0 oversell
				// too: the guarded runs must have sold (j.s refuses 0
				// orders, j.sold 0 sold).
				ds, ps := j.set("decr_sold", j.sold("guard-decr", d)), j.set("decr_pause_sold", j.sold("gc-pause-decr", p))
				return ov > 0 && nb > 0 && db == 0 && pb == 0,
					fmt.Sprintf("oversell+lost: unguarded %.0f, decr %.0f (%.0f sold), decr under pause %.0f (%.0f sold); min overlap %.0f", nb, db, ds, pb, ps, ov)
			})},
		{ID: "S12", Claim: "local lock + Redis lock + version check cut errors from 0.1% to 0.0001%", Seeds: "002",
			Article: "0.1 % -> 0.0001 % (1000x fewer)", Scaling: "5 ms lease, 20 ms work, 20 clients: the lease fails often",
			Rule: "error rate = (oversell + lost updates) / orders sold (a strategy that sold nothing has no rate: failed); plain atomic > 0 and multilevel <= plain / 1000",
			Runs: []string{"multilevel"},
			Judge: judge(func(j *judging) (bool, string) {
				rate := func(s *report.Scenario) float64 {
					return f64(s.Violations.Oversell+s.Violations.LostUpdates) / j.sold("multilevel", s)
				}
				ps, ms := j.s("multilevel", "atomic", "", 0), j.s("multilevel", "multilevel", "", 0)
				p := j.set("plain_error_rate", rate(ps))
				m := j.set("multilevel_error_rate", rate(ms))
				return p > 0 && m <= p/1000, fmt.Sprintf("error rate: plain %.3f %% of %d sold, multilevel %.4f %% of %d sold", 100*p, ps.Figures["sold"], 100*m, ms.Figures["sold"])
			})},
		{ID: "P1", Claim: "per-product segmented locks raised QPS from 200 to 1,500 (7.5x)", Seeds: "002, 000",
			Article: "200 -> 1,500 QPS (7.5x)", Scaling: fmt.Sprintf("5 ms critical section (global lock ~200 ops/s), %d segments, 50 clients: the article gives no segment count; N segments allow at most N x, and %d (at most %dx) is the count nearest the article's 7.5x, so the rule asks for %.0f %% of the ceiling, not %.0f %% as 16 segments did", p1Segments, p1Segments, p1Segments, 100*6.2/p1Segments, 100*6.2/16),
			Rule: fmt.Sprintf("segmented / global ops/s >= 6.2 (80 %% of the article's 6.5x gain), ratio taken per repeat; the ceiling is %d / 5 ms = %d ops/s, and the segmented lock's efficiency (ops/s / ceiling) is reported", p1Segments, p1Segments*200),
			Runs: []string{"segments"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				g := p.each("global_ops_per_s", func(j *judging) float64 { return j.s("segments", "atomic", "", 0).OpsPerSec })
				s := p.each("segmented_ops_per_s", func(j *judging) float64 { return j.s("segments", "segmented", "", 0).OpsPerSec })
				r := p.ratio("ratio", s, g)
				e := p.each("segmented_efficiency", func(j *judging) float64 { return j.s("segments", "segmented", "", 0).Efficiency })
				c := p.each("segmented_ceiling_ops_per_s", func(j *judging) float64 { return j.s("segments", "segmented", "", 0).CeilingOpsPerSec })
				return atLeast(r, 6.2), fmt.Sprintf("%s %s segmented/global; medians %.0f -> %.0f ops/s, segmented at %.0f %% of its ceiling %.0f ops/s",
					r.Format(fx(1)), p.note(), g.Median, s.Median, 100*e.Median, c.Median)
			})},
		{ID: "P2", Claim: "jittered backoff beats polling every 100 ms in throughput, with worse fairness", Seeds: "000",
			Article: "clearly higher throughput, worse fairness", Scaling: "one hot key, 5 ms work, 10 / 100 / 500 clients, each client thinking between its operations (exponential, mean " + retryThink(10).String() + " / " + retryThink(100).String() + " / " + retryThink(500).String() + ": every count offers " + fmt.Sprintf("%.0f", 100*retryLoad) + " % of the lock's 200 ops/s, so the lock is idle between holders and retry timing decides when the next one enters); each scenario measures after a " + settled + " warm-up, " + perfDuration + " in full mode and 1 s in quick mode",
			Rule: "at >= 2 of the 3 client counts: backoff ops/s >= 1.1 x fixed ops/s, and Jain index backoff - fixed < 0 (both per repeat); spin and pubsub are reported beside them, not judged, from one run per client count in full mode only (a spin scenario with 0 ops/s is its collapse, not a failed experiment)",
			Runs: []string{"retry", "retry-spin-pubsub"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				var tests []tri
				var parts []string
				for _, n := range retryClients {
					run := "retry"
					ops := map[string]Interval{}
					for _, pol := range []string{"fixed", "backoff"} {
						get := func(j *judging) *report.Scenario { return j.s(run, "atomic", pol, n) }
						ops[pol] = p.each(fmt.Sprintf("ops_per_s_%s_%d", pol, n), func(j *judging) float64 { return get(j).OpsPerSec })
						p.each(fmt.Sprintf("acquire_p99_ms_%s_%d", pol, n), func(j *judging) float64 { return get(j).AcquireMS.P99 })
						p.each(fmt.Sprintf("commands_per_success_%s_%d", pol, n), func(j *judging) float64 { return get(j).RedisCost.CommandsPerOp })
					}
					// spin and pubsub are reported beside them, from one
					// run made in full mode only (spin may collapse to
					// 0 ops/s): single values, not intervals.
					p.once("retry-spin-pubsub", func(j *judging) {
						for _, pol := range []string{"spin", "pubsub"} {
							s := j.reported("retry-spin-pubsub", "atomic", pol, n)
							j.set(fmt.Sprintf("ops_per_s_%s_%d", pol, n), s.OpsPerSec)
							j.set(fmt.Sprintf("acquire_p99_ms_%s_%d", pol, n), s.AcquireMS.P99)
							j.set(fmt.Sprintf("commands_per_success_%s_%d", pol, n), s.RedisCost.CommandsPerOp)
						}
					})
					r := p.ratio(fmt.Sprintf("backoff_over_fixed_%d", n), ops["backoff"], ops["fixed"])
					jf := p.each(fmt.Sprintf("jain_fixed_%d", n), func(j *judging) float64 { return j.s(run, "atomic", "fixed", n).Fairness.JainIndex })
					jb := p.each(fmt.Sprintf("jain_backoff_%d", n), func(j *judging) float64 { return j.s(run, "atomic", "backoff", n).Fairness.JainIndex })
					d := p.diff(fmt.Sprintf("jain_backoff_minus_fixed_%d", n), jb, jf)
					tests = append(tests, and(atLeast(r, 1.1), below(d, 0)))
					parts = append(parts, fmt.Sprintf("%d clients: %s, Jain %s", n, r.Format(fx(2)), d.Format(f("%+.2f"))))
				}
				return atLeastOf(2, tests...), "backoff/fixed ops/s (rule >= 1.10x) and Jain backoff - fixed (rule < 0: backoff less fair), at >= 2 of 3 counts " + p.note() + ": " + strings.Join(parts, "; ")
			})},
		{ID: "P3", Claim: "lockstep polling makes Redis load spike when all waiters retry together", Seeds: "000",
			Article: "thundering herd", Scaling: "the P2 runs (clients thinking between operations, after their 1 s warm-up), servers' command rate sampled every 10 ms over the measured window",
			Rule: "at >= 2 of the 3 client counts: the p99 of the servers' command rate (commands/s over 10 ms) under fixed-interval polling >= 2 x under jittered backoff, ratio taken per repeat (the single highest sample is reported but too noisy to judge on)",
			Runs: []string{"retry"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				var tests []tri
				var parts []string
				for _, n := range retryClients {
					run := "retry"
					load := func(pol string, fig func(l *report.ServerLoad) float64) func(j *judging) float64 {
						return func(j *judging) float64 {
							s := j.s(run, "atomic", pol, n)
							if s.ServerLoad == nil {
								j.fail(fmt.Errorf("run %s: %s at %d clients has no server load samples", run, pol, n))
								return 0
							}
							return fig(s.ServerLoad)
						}
					}
					p99 := func(l *report.ServerLoad) float64 { return l.P99PerSec }
					peak := func(l *report.ServerLoad) float64 { return l.PeakToMean }
					fr := p.each(fmt.Sprintf("p99_commands_per_s_fixed_%d", n), load("fixed", p99))
					br := p.each(fmt.Sprintf("p99_commands_per_s_backoff_%d", n), load("backoff", p99))
					r := p.ratio(fmt.Sprintf("p99_rate_fixed_over_backoff_%d", n), fr, br)
					p.each(fmt.Sprintf("peak_to_mean_fixed_%d", n), load("fixed", peak))
					p.each(fmt.Sprintf("peak_to_mean_backoff_%d", n), load("backoff", peak))
					for _, pol := range []string{"fixed", "backoff"} {
						p.each(fmt.Sprintf("commands_per_success_%s_%d", pol, n), func(j *judging) float64 { return j.s(run, "atomic", pol, n).RedisCost.CommandsPerOp })
					}
					tests = append(tests, atLeast(r, 2))
					parts = append(parts, fmt.Sprintf("%d clients: %s (medians %.0f vs %.0f/s)", n, r.Format(fx(2)), fr.Median, br.Median))
				}
				return atLeastOf(2, tests...), "p99 command rate, fixed/backoff " + p.note() + ": " + strings.Join(parts, "; ")
			})},
		{ID: "P4", Claim: "async acquisition (try-lock, serve another item) raised throughput by 40 %", Seeds: "002",
			Article: "+40 %", Scaling: "10 items, 50 clients, 5 ms work; waiting = poll every 100 ms; each scenario measures after a " + settled + " warm-up, " + perfDuration + " in full mode and 1 s in quick mode",
			Rule: "try-lock (retry none, next item) / waiting (fixed 100 ms) ops/s >= 1.32 (80 % of the article's gain), ratio taken per repeat",
			Runs: []string{"async"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				a := p.each("async_ops_per_s", func(j *judging) float64 { return j.s("async", "atomic", "none", 0).OpsPerSec })
				w := p.each("waiting_ops_per_s", func(j *judging) float64 { return j.s("async", "atomic", "fixed", 0).OpsPerSec })
				r := p.ratio("ratio", a, w)
				return atLeast(r, 1.32), fmt.Sprintf("%s %s try-lock/waiting; medians %.0f vs %.0f ops/s", r.Format(fx(2)), p.note(), a.Median, w.Median)
			})},
		{ID: "P5", Claim: "a MySQL row lock fell from 2,000 TPS to under 300 under high concurrency", Seeds: "004",
			Article: "2,000 -> < 300 TPS", Scaling: "MariaDB SELECT ... FOR UPDATE on one stock row, nothing else in the transaction, at " + joinInts(sqlClients) + " clients in one sweep whose repeats share one MariaDB (fresh rows each); the Redis lock (atomic) on the same sale at the lowest and the top count, its repeats also in one process; " + sqlWarmup + " warm-up, every rate taken over the window's seconds after its first (" + sqlDuration + " windows; quick mode: 0.5 s warm-up and 1.5 s windows, the row lock at the lowest and the top count, the Redis lock at the top one): a row-lock operation waits for the clients queued before it, and lockbench counts the operations that start and end in the window, which bounds the top count: an operation must wait less than the second dropped",
			Rule: fmt.Sprintf("the row lock's ops/s at %d clients <= 0.5 x at %d clients (its fall from the low-concurrency rate), and row lock / Redis lock ops/s at %d clients < 1, both per repeat; a row lock that completes nothing at %d clients while its clients keep trying has collapsed (rate 0), not failed; %d clients reported in full mode", sqlClients[len(sqlClients)-1], sqlClients[0], sqlClients[len(sqlClients)-1], sqlClients[len(sqlClients)-1], sqlClients[1]),
			Runs: []string{"sql", "sql-redis"}, Needs: []string{"sql-rowlock"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				lowN, highN := sqlClients[0], sqlClients[len(sqlClients)-1]
				lo := p.each(fmt.Sprintf("rowlock_ops_per_s_%d", lowN), func(j *judging) float64 { return j.steadyRate(j.s("sql", "sql-rowlock", "", lowN)) })
				hi := p.each(fmt.Sprintf("rowlock_ops_per_s_%d", highN), func(j *judging) float64 { return j.steadyRate(j.tried("sql", "sql-rowlock", highN)) })
				alo := Interval{}
				if p.present("sql-redis", "atomic", lowN) { // full mode: the Redis lock's low end, reported
					alo = p.each(fmt.Sprintf("atomic_ops_per_s_%d", lowN), func(j *judging) float64 { return j.steadyRate(j.s("sql-redis", "atomic", "", lowN)) })
				}
				ahi := p.each(fmt.Sprintf("atomic_ops_per_s_%d", highN), func(j *judging) float64 { return j.steadyRate(j.s("sql-redis", "atomic", "", highN)) })
				// The middle count, in full mode only, is reported.
				rowMid, redisLow := "", "not run (quick mode)"
				if midN := sqlClients[1]; p.present("sql", "sql-rowlock", midN) {
					m := p.each(fmt.Sprintf("rowlock_ops_per_s_%d", midN), func(j *judging) float64 { return j.steadyRate(j.s("sql", "sql-rowlock", "", midN)) })
					rowMid = fmt.Sprintf(" -> %.0f (%d)", m.Median, midN)
				}
				if alo.N > 0 {
					redisLow = fmt.Sprintf("%.0f (%d)", alo.Median, lowN)
				}
				r := p.ratio(fmt.Sprintf("rowlock_%d_over_%d", highN, lowN), hi, lo)
				a := p.ratio(fmt.Sprintf("rowlock_over_atomic_%d", highN), hi, ahi)
				return and(atMost(r, 0.5), below(a, 1)), fmt.Sprintf("row lock %d/%d clients %s, row lock/Redis lock at %d clients %s %s; medians (ops/s, clients): row lock %.0f (%d)%s -> %.0f (%d), Redis lock %s -> %.0f (%d)",
					highN, lowN, r.Format(fx(2)), highN, a.Format(fx(2)), p.note(), lo.Median, lowN, rowMid, hi.Median, highN, redisLow, ahi.Median, highN)
			})},
		{ID: "P6", Claim: "Redis locks ~100k QPS, ZooKeeper ~10k QPS", Seeds: "004",
			Article: "10x", Scaling: fmt.Sprintf("uncontended lock cycles with no critical section, %d clients on 1,000 keys (each server past its knee: saturated); every server warmed up before its window (ZooKeeper %s: its JVM takes seconds to reach its steady rate; Redis and etcd %s), in quick mode too; each server's CPU time per cycle measured from its process over the same window; Redis and ZooKeeper in runs of their own; etcd beside, from one run in full mode only", p6Clients, zkWarmup, serverWarmup),
			Rule: "Redis / ZooKeeper cycles/s at saturation >= 5 and ZooKeeper / Redis server CPU per cycle >= 5 (the article's 10x within a factor of 2, in throughput on this machine and in the servers' own cost), repeat k of the Redis run against repeat k of the ZooKeeper run; etcd is reported, not judged",
			Runs: []string{"zk", "zk-redis", "zk-etcd"}, Needs: []string{"zk", "etcd"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				red := func(j *judging) *report.Scenario { return j.s("zk-redis", "atomic", "", 0) }
				zk := func(j *judging) *report.Scenario { return j.s("zk", "zk", "", 0) }
				a := p.each("redis_ops_per_s", func(j *judging) float64 { return red(j).OpsPerSec })
				z := p.each("zk_ops_per_s", func(j *judging) float64 { return zk(j).OpsPerSec })
				ac := p.each("redis_server_cpu_us_per_cycle", func(j *judging) float64 { return j.cpuPerOp("zk-redis", red(j)) })
				zc := p.each("zk_server_cpu_us_per_cycle", func(j *judging) float64 { return j.cpuPerOp("zk", zk(j)) })
				r := p.ratio("redis_over_zk", a, z)
				c := p.ratio("zk_over_redis_cpu_per_cycle", zc, ac)
				etcd := "etcd not run (full mode only)"
				p.once("zk-etcd", func(j *judging) {
					s := j.s("zk-etcd", "etcd", "", 0)
					e := j.set("etcd_ops_per_s", s.OpsPerSec)
					ec := j.set("etcd_server_cpu_us_per_cycle", j.cpuPerOp("zk-etcd", s))
					etcd = fmt.Sprintf("etcd %.0f cycles/s, %.0f µs of server CPU per cycle (one run); redis/etcd %.1fx", e, ec, j.set("redis_over_etcd", ratio(a.Median, e)))
				})
				return and(atLeast(r, 5), atLeast(c, 5)), fmt.Sprintf("redis/zk cycles/s %s, zk/redis server CPU per cycle %s %s; medians redis %.0f cycles/s at %.1f µs, zk %.0f at %.1f µs; %s",
					r.Format(fx(1)), c.Format(fx(1)), p.note(), a.Median, ac.Median, z.Median, zc.Median, etcd)
			})},
		{ID: "P7", Claim: "an improved Redlock carried 120,000 orders/s at peak with 0.001 % failures", Seeds: "004",
			Article: "120,000 orders/s, 0.001 % failures", Scaling: "5 local masters (N read from the run's topology), 1,000 items, 50 clients on 2 cores",
			Rule: "the 120,000 orders/s is hardware-bound (Redlock's orders/s here is reported beside it, not judged); judged: " +
				"(1) the failed orders (gave up + timed out + errors) of all repeats against the article's rate: a rate of 0.001 % " +
				"gives Poisson(0.001 % x orders tried) failures, and more failures than that makes likely at 95 % (P(X >= failed) < 5 %) " +
				"contradict it; fewer are consistent with it (a full run's orders, tens of thousands, cannot show a rate as low as " +
				"0.001 %: that needs 300,000 orders without a failure, so the row tests the claim rather than proving it, and says so); " +
				"(2) Redlock / single-node orders/s per repeat >= 1 / N, N the masters of the run's Redlock (its topology masters:N): " +
				"each lock on N masters costs it at most N single-node locks. Both hold: hardware-bound (what can be checked holds); " +
				"(1) contradicted or (2) failing: not reproduced; (2) straddling: inconclusive",
			Runs: []string{"redlock-orders"},
			Perf: judgePerfAs(HardwareBound, func(p *perf) (tri, string) {
				sc := func(strategy string) func(j *judging) *report.Scenario {
					return func(j *judging) *report.Scenario { return j.s("redlock-orders", strategy, "", 0) }
				}
				a, r := sc("atomic"), sc("redlock")
				failed := func(s *report.Scenario) float64 {
					return f64(s.Counters.Failures + s.Counters.Timeouts + s.Counters.Errors)
				}
				n := p.same("redlock nodes", p.each("nodes", func(j *judging) float64 { return j.nodes(r(j)) }))
				fo := p.each("redlock_failed_orders", func(j *judging) float64 { return failed(r(j)) })
				done := p.each("redlock_orders", func(j *judging) float64 { return f64(r(j).Ops) })
				fr := p.each("redlock_failure_rate", func(j *judging) float64 {
					s := r(j)
					return ratio(failed(s), f64(s.Ops)+failed(s))
				})
				tried := sum(done) + sum(fo)
				ub := p.fig("redlock_failure_rate_upper_95", poissonUpper(sum(fo), Confidence)/tried)
				ro := p.each("redlock_orders_per_s", func(j *judging) float64 { return r(j).OpsPerSec })
				so := p.each("single_orders_per_s", func(j *judging) float64 { return a(j).OpsPerSec })
				rel := p.ratio("redlock_over_single", ro, so)
				rc := p.each("redlock_commands_per_order", func(j *judging) float64 { return r(j).RedisCost.CommandsPerOp })
				ac := p.each("single_commands_per_order", func(j *judging) float64 { return a(j).RedisCost.CommandsPerOp })
				cost := p.ratio("commands_ratio", rc, ac)
				expected := p.fig("failures_expected_at_article_rate", p7MaxFailureRate*tried)
				tail := p.fig("failures_p_value", poissonTail(sum(fo), expected))
				rate, says := yes, "consistent with"
				if tail < 1-Confidence {
					rate, says = no, "too many for"
				}
				return and(rate, atLeast(rel, 1/n)), fmt.Sprintf(
					"failed orders %s %% (%.0f of %.0f tried: %s the article's 0.001 %%, which gives %.2f expected, P(>= %.0f) = %.3f; 95 %% upper bound of the rate %.4f %%); "+
						"redlock/single-node orders/s %s %s (>= 1/N = %.2fx, N = %.0f); %s commands/order; redlock %s orders/s here vs the article's 120,000 (hardware-bound)",
					scaled(fr, 100).Format(f("%.4f")), sum(fo), tried, says, expected, sum(fo), tail, 100*ub, rel.Format(fx(2)), p.note(), 1/n, n,
					cost.Format(fx(1)), ro.Format(f("%.0f")))
			})},
		{ID: "P8", Claim: "single-node ~10^5 acquisitions/s; Redlock costs about N round trips more", Seeds: "004",
			Article: "10^5/s; N x the round trips", Scaling: "uncontended lock-cycle, 50 clients on 20,000 keys, N = 5 masters (--nodes 5; the judge reads N from the run's topology)",
			Rule: "Redis commands per Redlock cycle / per single-node cycle (per repeat) within [0.8 N, 1.2 N], N the masters of the run's Redlock (its topology masters:N); cycles/s reported (absolute figure hardware-bound)",
			Runs: []string{"uncontended"},
			Perf: judgePerf(func(p *perf) (tri, string) {
				sc := func(strategy string) func(j *judging) *report.Scenario {
					return func(j *judging) *report.Scenario { return j.s("uncontended", strategy, "", 0) }
				}
				a, r := sc("atomic"), sc("redlock")
				n := p.same("redlock nodes", p.each("nodes", func(j *judging) float64 { return j.nodes(r(j)) }))
				rc := p.each("redlock_commands_per_cycle", func(j *judging) float64 { return r(j).RedisCost.CommandsPerOp })
				ac := p.each("single_commands_per_cycle", func(j *judging) float64 { return a(j).RedisCost.CommandsPerOp })
				c := p.ratio("commands_ratio", rc, ac)
				so := p.each("single_cycles_per_s", func(j *judging) float64 { return a(j).OpsPerSec })
				ro := p.each("redlock_cycles_per_s", func(j *judging) float64 { return r(j).OpsPerSec })
				sp := p.ratio("single_over_redlock", so, ro)
				return within(c, 0.8*n, 1.2*n), fmt.Sprintf("commands per cycle redlock/single %s %s, rule [%.1f, %.1f] for N = %.0f; single/redlock cycles/s %s (medians %.0f, %.0f)",
					c.Format(fx(1)), p.note(), 0.8*n, 1.2*n, n, sp.Format(fx(1)), so.Median, ro.Median)
			})},
	}
}

// p7MaxFailureRate is the article's 0.001 % failures (claim P7).
const p7MaxFailureRate = 0.001 / 100
