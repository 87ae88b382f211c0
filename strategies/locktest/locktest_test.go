package locktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/libs"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/strategies/rueidislk"
	"github.com/lockbench/lockbench/workloads"
)

// servers are the redis-server processes of this package's tests, shared
// by every test: the three layouts are started by TestMain.
var servers = NewServers()

func TestMain(m *testing.M) {
	code := 1
	var err error
	if os.Getenv(brokenChild) == "" { // a child starts what it uses only
		err = servers.Start(strategies.Standalone, strategies.Masters, strategies.Replicated)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "locktest needs redis-server:", err)
	} else {
		code = m.Run()
	}
	servers.Close()
	os.Exit(code)
}

// params are the parameter values the suite runs a built-in strategy
// with (the defaults otherwise): segmented's stock in 2 segments, so that
// 4 clients contend for each; semaphore with 1 permit.
var params = map[string]strategies.Values{
	"segmented": {"segments": 2},
	// A semaphore of 1 permit is an exclusive lock: the suite's checks
	// (a stock sold exactly, overlaps) hold for it; TestSemaphore runs
	// more permits.
	"semaphore": {"permits": 1},
}

// suite is the conformance suite for built-in strategy on the shared
// servers: every built-in strategy must report its tokens.
// suite is the conformance suite for a built-in strategy: every one must
// report its tokens, but rueidislock, whose library stores a random value
// of its own that the adapter can neither choose nor read (its runs
// report the liveness figures as not measured).
func suite(strategy string) Suite {
	return Suite{Servers: servers, Params: params[strategy], RequireTokens: strategy != rueidislk.Name}
}

// nodes returns the servers a strategy runs on (the replica is not used
// by clients).
func nodes(t testing.TB, strategy string) []engine.Node {
	t.Helper()
	ns, err := servers.Nodes(strategy)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func open(t *testing.T, driver, strategy string) []drivers.Driver {
	t.Helper()
	return suite(strategy).Open(t, strategy, driver)
}

func locker(t *testing.T, strategy string, ds []drivers.Driver, ttl time.Duration) strategies.Locker {
	t.Helper()
	l, err := strategies.New(strategy, strategies.Config{Nodes: ds, TTL: ttl, Prefix: keyPrefix})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := l.(io.Closer); ok { // a library's own clients (rueidislock), its renewals
		t.Cleanup(func() { c.Close() })
	}
	return l
}

func run(t *testing.T, sc engine.Scenario) report.Scenario {
	t.Helper()
	if strategies.InfoOf(sc.Strategy).OwnsRetry {
		sc.Retry = retry.Library() // the library retries; engine.Validate refuses any other policy
	}
	res, err := engine.Run(context.Background(), sc, nodes(t, sc.Strategy), "lockbench:locktest:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// every runs f for every registered strategy except naive (the broken
// baseline), the lock-free redis-guard (no lock to conform; the
// baselines' tests in strategies/baselines cover it) and this package's
// test-only defective locks (testOnly), on every driver it runs on
// (strategies.RunsOn; the library strategies included).
func every(t *testing.T, f func(t *testing.T, strategy, driver string)) {
	for _, s := range strategies.Names() {
		if s == "naive" || s == "redis-guard" || testOnly(s) {
			continue
		}
		for _, d := range drivers.Names() {
			if !strategies.RunsOn(s, d) {
				continue
			}
			t.Run(s+"/"+d, func(t *testing.T) { f(t, s, d) })
		}
	}
}

// brokenChild, set in a child test process's environment to
// "CHECK/STRATEGY", names the check TestSuiteFailsBrokenLock runs there,
// and the strategy it runs it on.
const brokenChild = "LOCKTEST_BROKEN_CHECK"

// The suite itself, both ways: each check named here fails a lock with
// its defect and passes a sound one, run in a child test process
// (TestBrokenChild), so that a failure is observed here rather than
// failing this test; the failure must carry the message given (an exact
// count where the defect's count is known in advance).
//   - OwnerOnlyRelease: naive (SETNX then EXPIRE; release by plain DEL)
//     fails it, because A's release after its lease "expired" deletes
//     B's lock instead of returning ErrNotOwner; atomic
//     (compare-and-delete) passes.
//   - OwnedAfterAcquire: locktest-false-acquire, granted without setting
//     the key on every 5th attempt, fails it on 2 of its 10 acquires;
//     atomic and reentrant (a hash lock: HEXISTS of its field) pass.
//   - ReleaseAfterExpiry: locktest-release-loop, whose release retries
//     while the lock is not its own, does not return within 2 s; atomic
//     and handoff (whose release of an expired lease hands nothing on)
//     pass.
//   - FIFOOrder: locktest-lifo, which declares FIFO and grants its
//     stack's top, grants W4, W3, W2, W1; fair (a queue in Redis, its
//     attempts return) and handoff (a queue it waits in) pass.
//
// And two capabilities the suite honours, each shown by the same lock
// without and with its declaration:
//   - strategies.LossAtRenewal: locktest-late-loss, a Watched lease that
//     learns of a loss at its next renewal (every TTL/2) and whose
//     release returns nil until then, fails OwnerOnlyRelease;
//     declaring it (locktest-late-loss-declared), the check waits for
//     the loss to be learned, and it passes.
//   - strategies.NonTokenFields: locktest-redisson-rw, a read-write lock
//     with Redisson's "mode" field beside its holders' fields, fails
//     TokensReported ("mode" was never passed to Sent); declaring "mode"
//     (locktest-redisson-rw-declared), it passes.
func TestSuiteFailsBrokenLock(t *testing.T) {
	t.Parallel() // as its subtests are: beside the package's other parallel tests
	for _, c := range []struct {
		check, strategy string
		fails           string // the failure's message; "": it passes
	}{
		{"OwnerOnlyRelease", "naive", "A's release = <nil>, want ErrNotOwner"},
		{"OwnerOnlyRelease", "atomic", ""},
		{"OwnedAfterAcquire", "locktest-false-acquire", "2 of 10 granted acquires did not hold their token in the lock key"},
		{"OwnedAfterAcquire", "atomic", ""},
		{"OwnedAfterAcquire", "reentrant", ""},
		{"ReleaseAfterExpiry", "locktest-release-loop", "the release of an expired lease did not return within 2s"},
		{"ReleaseAfterExpiry", "atomic", ""},
		{"ReleaseAfterExpiry", "handoff", ""},
		{"FIFOOrder", "locktest-lifo", "grants went to waiters [4 3 2 1], want [1 2 3 4]"},
		{"FIFOOrder", "fair", ""},
		{"FIFOOrder", "handoff", ""},
		{"OwnerOnlyRelease", "locktest-late-loss", "A's release = <nil>, want ErrNotOwner"},
		{"OwnerOnlyRelease", "locktest-late-loss-declared", ""},
		{"TokensReported", "locktest-redisson-rw", `holds "mode", never passed to Sent`},
		{"TokensReported", "locktest-redisson-rw-declared", ""},
	} {
		t.Run(c.check+"/"+c.strategy, func(t *testing.T) {
			t.Parallel() // a child process each, with servers and keys of its own
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), brokenChild+"="+c.check+"/"+c.strategy)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			switch {
			case c.fails != "" && !errors.As(err, &ee):
				t.Fatalf("the suite's %s passed on %s (err %v):\n%s", c.check, c.strategy, err, out)
			case c.fails != "" && !strings.Contains(string(out), c.fails):
				t.Fatalf("the child failed, but not with %q:\n%s", c.fails, out)
			case c.fails == "" && err != nil:
				t.Fatalf("%s failed on %s: %v\n%s", c.check, c.strategy, err, out)
			case c.fails == "" && !strings.Contains(string(out), "--- PASS: TestBrokenChild"):
				t.Fatalf("%s on %s did not pass (skipped?):\n%s", c.check, c.strategy, out)
			}
		})
	}
}

// TestBrokenChild runs the check named by brokenChild ("CHECK/STRATEGY")
// on its strategy, on goredis; without it, it is skipped (it is
// TestSuiteFailsBrokenLock's child).
func TestBrokenChild(t *testing.T) {
	v := os.Getenv(brokenChild)
	if v == "" {
		t.Skip("run by TestSuiteFailsBrokenLock")
	}
	name, s, ok := strings.Cut(v, "/")
	if !ok {
		t.Fatalf("%s=%q, want CHECK/STRATEGY", brokenChild, v)
	}
	for _, c := range checks {
		if c.name == name {
			c.f(suite(s), t, s, "goredis")
			return
		}
	}
	t.Fatalf("no check %q", name)
}

// The conformance suite (Suite.Check: mutual exclusion, owner-only
// release, lease expiry, loss reporting, token reporting, the oracle both
// ways), the same code outside strategies run through Run, on every
// built-in strategy and driver, in two passes: "exact", the checks that
// assert exact counts and behaviour only (untimedChecks), every strategy
// and driver at once (t.Parallel); then "timed", the checks that time
// leases, renewals and losses, every strategy and driver at once but
// those whose library owns the retry loop.
// The two passes do not overlap (a pass ends when its subtests do). The
// timed checks compare no speed: each is built with a wide margin (a
// 5 ms lease under 20 ms of work for the broken side, a 2 s lease for
// 1 ms of work for the correct one, a 150 ms lease waited for up to 5 s,
// a renewing lease told from a fixed one after 10 of its TTLs), and each
// subtest has its own keys (lockKey: the test's name) on the shared
// servers, which no check flushes or pauses.
func TestConformance(t *testing.T) {
	t.Run("exact", func(t *testing.T) {
		every(t, func(t *testing.T, strategy, driver string) {
			t.Parallel()
			suite(strategy).checkOnly(t, strategy, driver, func(name string) bool { return untimedChecks[name] })
		})
	})
	t.Run("timed", func(t *testing.T) {
		every(t, func(t *testing.T, strategy, driver string) {
			if strategies.InfoOf(strategy).OwnsRetry {
				t.Skip("a library's own retry loop: TestConformanceOwnRetryTimed")
			}
			t.Parallel()
			suite(strategy).checkOnly(t, strategy, driver, func(name string) bool { return !untimedChecks[name] })
		})
	})
}

// TestConformanceOwnRetryTimed is TestConformance's timed checks for the
// strategies whose library owns the retry loop (Info.OwnsRetry: redsync),
// in the timing lane: such a library refuses a lease whose validity (the
// broken side's 20 ms less the round and the drift) is gone when granted,
// and beside another test package at load 8-10 redsync's broken side sold
// nothing in 8 s (12 of 16 tries timed out), so no overlap to show.
func TestConformanceOwnRetryTimed(t *testing.T) {
	every(t, func(t *testing.T, strategy, driver string) {
		if !strategies.InfoOf(strategy).OwnsRetry {
			return
		}
		suite(strategy).checkOnly(t, strategy, driver, func(name string) bool { return !untimedChecks[name] })
	})
}

// untimedChecks are the checks of the suite whose outcome does not depend
// on timing (a stock sold exactly with 50 clients under a 5 s lease; a
// foreign release refused; the token in the lock key right after a grant,
// under a 5 s lease). A check not named here runs in the "timed"
// pass.
var untimedChecks = map[string]bool{"MutualExclusion": true, "OwnerOnlyRelease": true, "OwnedAfterAcquire": true}

// The watchdog keeps the lock through a critical section of 1.5x the TTL;
// the fixed-lease atomic lock in the same setup lets holders overlap. The
// lease is 1 s, renewed every 333 ms: only a renewal late by 667 ms loses
// it, so a loaded machine does not; a watchdog that did not renew lets a
// waiter in 1 s into the 1.5 s section.
func TestWatchdogOutlivesTTL(t *testing.T) {
	t.Parallel() // as its subtests are: beside the package's other parallel tests
	for _, d := range drivers.Names() {
		for strategy, wantOverlap := range map[string]bool{"watchdog": false, "reentrant-watchdog": false, "atomic": true} {
			t.Run(strategy+"/"+d, func(t *testing.T) {
				// Own keys (run: the test's name); 1.5 s sections, a 667 ms renewal margin.
				t.Parallel()
				stock := int64(2) // two sections for the watchdogs; one shows atomic's overlap
				if wantOverlap {
					stock = 1
				}
				res := run(t, engine.Scenario{Spec: engine.Spec{
					Strategy: strategy, Driver: d, Workload: "flash-sale", Retry: policy(t, "fixed:interval=5ms"),
					Clients: 4, Duration: 60 * time.Second, TTL: time.Second, AcquireTimeout: 50 * time.Second,
					Params: workloads.Params{Work: workloads.Fixed(1500 * time.Millisecond)}, Options: registry.Values{"stock": stock, "skus": 1}, Seed: 3,
				}})
				if got := res.Violations.Overlap > 0; got != wantOverlap {
					t.Fatalf("overlap %d; want overlap>0 = %v", res.Violations.Overlap, wantOverlap)
				}
				if !wantOverlap {
					st := res.StrategyStats
					if st["renewals"] < 4 || st["lost_leases"] != 0 {
						t.Fatalf("strategy stats %v: want >= 4 renewals (2 or more per 1.5xTTL section) and no lost lease", st)
					}
					if res.Figures["sold"] != 2 || res.Violations.LostUpdates != 0 {
						t.Fatalf("sold %d lost %d", res.Figures["sold"], res.Violations.LostUpdates)
					}
					// Every renewal's margin, the server's PTTL before the
					// PEXPIRE (0 or more), is in renewal_margin.
					if m := res.RenewalMargin; m == nil || float64(m.Renewals) != st["renewals"] || m.MinMS == nil || *m.MinMS < 0 {
						t.Fatalf("renewal_margin %+v; want the %v renewals, min >= 0", m, st["renewals"])
					}
				} else if res.RenewalMargin != nil {
					t.Fatalf("atomic: renewal_margin %+v, want absent (no renewal)", res.RenewalMargin)
				}
			})
		}
	}
}

// Reentrant locks nest to depth 3 and unwind; a non-reentrant lock fails
// the nested acquire at once with ErrNotAcquired (retry none), no hang.
func TestReentrancy(t *testing.T) {
	ctx := strategies.WithClient(context.Background(), strategies.Client{ID: 1, Owner: "owner-1"})
	for _, d := range drivers.Names() {
		for _, strategy := range []string{"reentrant", "reentrant-watchdog"} {
			t.Run(strategy+"/"+d, func(t *testing.T) {
				ds := open(t, d, strategy)
				l := locker(t, strategy, ds, 5*time.Second)
				key := "lockbench:locktest:{" + t.Name() + "}:lock"
				var leases []strategies.Lease
				for depth := 1; depth <= 3; depth++ {
					le, err := l.TryAcquire(ctx, key)
					if err != nil {
						t.Fatalf("depth %d: %v", depth, err)
					}
					leases = append(leases, le)
				}
				if n, _ := ds[0].Do(ctx, "HGET", key, "owner-1"); n.Str != "3" {
					t.Fatalf("hold count %+v, want 3", n)
				}
				other := strategies.WithClient(context.Background(), strategies.Client{ID: 2, Owner: "owner-2"})
				if _, err := l.TryAcquire(other, key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("another owner entered: %v", err)
				}
				for i := len(leases) - 1; i >= 0; i-- {
					if n, _ := ds[0].Do(ctx, "EXISTS", key); n.Int != 1 {
						t.Fatalf("lock gone with %d holds left", i+1)
					}
					if err := leases[i].Release(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if n, _ := ds[0].Do(ctx, "EXISTS", key); n.Int != 0 {
					t.Fatal("lock remains after the outermost release")
				}
			})
		}
		for _, strategy := range []string{"atomic", "watchdog", "fencing"} {
			t.Run(strategy+"/"+d+"/not-reentrant", func(t *testing.T) {
				ds := open(t, d, strategy)
				l := locker(t, strategy, ds, 5*time.Second)
				key := "lockbench:locktest:{" + t.Name() + "}:lock"
				outer, err := l.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				defer outer.Release(ctx)
				start := time.Now()
				// A 10 s acquire timeout: a nested acquire that hung until it
				// would take 10 s; one attempt takes a round trip, far under
				// the 2 s bound even on a loaded machine.
				_, n, err := strategies.Acquire(ctx, l, key, policy(t, "none").New(nil), 10*time.Second)
				if !errors.Is(err, strategies.ErrNotAcquired) || n != 1 {
					t.Fatalf("nested acquire = %v after %d attempts, want ErrNotAcquired after 1", err, n)
				}
				if time.Since(start) > 2*time.Second {
					t.Fatalf("nested acquire took %v; want one attempt, no wait for the 10 s timeout", time.Since(start))
				}
			})
		}
	}
}

// Redlock holds with 2 of 5 masters stopped and fails closed with 3
// stopped. Each driver gets 5 masters of its own, really stopped.
func TestRedlockQuorum(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			topo, err := topology.Start(ctx, 5)
			if err != nil {
				t.Fatal(err)
			}
			defer topo.Stop()
			var ds []drivers.Driver
			for _, s := range topo.Servers {
				dr, err := drivers.Open(d, drivers.Options{Endpoint: drivers.Endpoint{Addr: s.Addr, Password: s.Password}, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer dr.Close()
				ds = append(ds, dr)
			}
			l := locker(t, "redlock", ds, 2*time.Second)
			key := "lockbench:locktest:{redlock}:lock"
			topo.Servers[4].Stop()
			topo.Servers[3].Stop()
			le, err := l.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("with 2 of 5 stopped: %v, want the lock", err)
			}
			if w, ok := le.(strategies.Watched); !ok || w.Context().Err() != nil {
				t.Fatal("redlock lease has no live validity context")
			}
			if err := le.Release(ctx); err != nil {
				t.Fatal(err)
			}
			topo.Servers[2].Stop()
			if _, err := l.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("with 3 of 5 stopped: %v, want ErrNotAcquired (fail closed)", err)
			}
			// The failed attempt released the two nodes it won.
			for i, n := range ds[:2] {
				if r, _ := n.Do(ctx, "EXISTS", key); r.Int != 0 {
					t.Fatalf("node %d kept the key after a failed acquire", i)
				}
			}
			st := l.(strategies.StatsReporter).Stats()
			if st["no_quorum"] != 1 || st["node0_acquired"] != 2 || st["node2_acquired"] != 1 || st["node2_errors"] != 1 || st["node4_errors"] != 2 {
				t.Fatalf("stats %v", st)
			}
		})
	}
}

// Pub/sub wake-ups cost fewer Redis commands per order than spinning.
func TestPubSubCheaperThanSpinTimed(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			cost := map[string]float64{}
			for _, p := range []string{"spin", "pubsub"} {
				res := run(t, engine.Scenario{Spec: engine.Spec{
					Strategy: "atomic", Driver: d, Workload: "flash-sale", Retry: policy(t, p),
					Clients: 20, Duration: 60 * time.Second, TTL: time.Second, AcquireTimeout: 50 * time.Second,
					Params: workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)}, Options: registry.Values{"stock": int64(100), "skus": 1}, Seed: 5,
				}})
				if res.Violations.Total() != 0 || res.Figures["sold"] != 100 {
					t.Fatalf("%s: violations %+v sold %d", p, res.Violations, res.Figures["sold"])
				}
				cost[p] = res.RedisCost.CommandsPerOp
				if p == "pubsub" && res.RedisCost.ByCommand["publish"] < 100 {
					t.Fatalf("pubsub published %d times for 100 orders", res.RedisCost.ByCommand["publish"])
				}
			}
			if cost["pubsub"] >= cost["spin"] {
				t.Fatalf("commands per order: pubsub %.1f, spin %.1f; want pubsub < spin", cost["pubsub"], cost["spin"])
			}
			t.Logf("commands per order: pubsub %.1f, spin %.1f", cost["pubsub"], cost["spin"])
		})
	}
}

// rwlock: readers share, a writer waits for them, readers wait for a
// writer; on a read-mostly run the oracle sees no reader/writer overlap.
func TestReadWriteLock(t *testing.T) {
	ctx := context.Background()
	as := func(owner string) context.Context {
		return strategies.WithClient(ctx, strategies.Client{ID: 0, Owner: owner})
	}
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := open(t, d, "rwlock")
			l := locker(t, "rwlock", ds, 5*time.Second)
			rl := strategies.ReadSide(l)
			key := "lockbench:locktest:{" + t.Name() + "}:lock"
			r1, err1 := rl.TryAcquire(as("r1"), key)
			r2, err2 := rl.TryAcquire(as("r2"), key)
			if err1 != nil || err2 != nil {
				t.Fatalf("two readers: %v, %v", err1, err2)
			}
			if _, err := l.TryAcquire(as("w"), key); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("writer entered among readers: %v", err)
			}
			r1.Release(ctx)
			r2.Release(ctx)
			w, err := l.TryAcquire(as("w"), key)
			if err != nil {
				t.Fatalf("writer after readers left: %v", err)
			}
			if _, err := rl.TryAcquire(as("r3"), key); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("reader entered with a writer inside: %v", err)
			}
			if err := w.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := ds[0].Do(ctx, "EXISTS", key); n.Int != 0 {
				t.Fatal("lock left after the last holder")
			}
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "rwlock", Driver: d, Workload: "flash-sale", Retry: policy(t, "fixed:interval=2ms"),
				Clients: 30, Duration: 60 * time.Second, TTL: 2 * time.Second, AcquireTimeout: 50 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(60), "skus": 1, "read-ratio": 0.7}, Seed: 11,
			}})
			if res.Violations.Total() != 0 || res.Figures["sold"] != 60 || res.Counters.Reads == 0 {
				t.Fatalf("violations %+v sold %d reads %d", res.Violations, res.Figures["sold"], res.Counters.Reads)
			}
		})
	}
}

// rwFixture opens rwlock (10 s leases) on driver d and returns its
// exclusive and read sides, a lock key of the test's own, a command on
// the first server that fails the test on an error, and a context per
// owner (the holder field's name).
func rwFixture(t *testing.T, d string) (l, rl strategies.Locker, key string, do func(args ...string) drivers.Reply, as func(owner string) context.Context) {
	ctx := context.Background()
	ds := open(t, d, "rwlock")
	l = locker(t, "rwlock", ds, 10*time.Second)
	do = func(args ...string) drivers.Reply {
		t.Helper()
		v, err := ds[0].Do(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	as = func(owner string) context.Context {
		return strategies.WithClient(ctx, strategies.Client{ID: 0, Owner: owner})
	}
	return l, strategies.ReadSide(l), "lockbench:locktest:{" + t.Name() + "}:lock", do, as
}

// rwlock's release keeps what the holder fields say: a nested read
// hold's release counts the field down and keeps its deadline as stored;
// the last hold's release drops the field and sets the key to expire with
// the latest deadline of the holders left (here one set 60 s ahead).
func TestReadWriteLockRelease(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			_, rl, key, do, as := rwFixture(t, d)
			outer, err := rl.TryAcquire(as("a"), key)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := rl.TryAcquire(as("a"), key)
			if err != nil {
				t.Fatal(err)
			}
			held := do("HGET", key, "a").Str
			deadline, ok := strings.CutPrefix(held, "2:")
			if !ok {
				t.Fatalf("field a %q after two holds, want 2:<deadline>", held)
			}
			if err := inner.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if v := do("HGET", key, "a").Str; v != "1:"+deadline {
				t.Fatalf("field a %q after the nested release, want %q", v, "1:"+deadline)
			}
			if _, err := rl.TryAcquire(as("b"), key); err != nil {
				t.Fatal(err)
			}
			tm := do("TIME").Array
			if len(tm) != 2 {
				t.Fatalf("TIME: %+v", tm)
			}
			sec, _ := strconv.ParseInt(tm[0].Str, 10, 64)
			do("HSET", key, "b", "1:"+strconv.FormatInt(sec*1000+60_000, 10))
			if err := outer.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if do("HEXISTS", key, "a").Int != 0 || do("HLEN", key).Int != 1 {
				t.Fatalf("after a's last release: %v, want b's field alone", do("HGETALL", key))
			}
			if pttl := do("PTTL", key).Int; pttl < 50_000 || pttl > 60_000 {
				t.Fatalf("pttl %d, want b's deadline about 60 s ahead", pttl)
			}
			do("DEL", key)
		})
	}
}

// rwlock's shares expire one by one: a share whose lease has ended (its
// deadline set in the past here, as a crashed reader's would pass) is
// dropped by the next call on the lock, whatever other readers do, so it
// neither lives on beside theirs nor keeps a writer out; its holder's
// release finds it gone; the key expires with its last live share.
func TestReadWriteLockShareExpiry(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			l, rl, key, do, as := rwFixture(t, d)
			dead, err := rl.TryAcquire(as("dead"), key)
			if err != nil {
				t.Fatal(err)
			}
			live, err := rl.TryAcquire(as("live"), key)
			if err != nil {
				t.Fatal(err)
			}
			do("HSET", key, "dead", "1:1000") // its lease ended (1970)
			late, err := rl.TryAcquire(as("late"), key)
			if err != nil {
				t.Fatal(err)
			}
			if do("HEXISTS", key, "dead").Int != 0 || do("HLEN", key).Int != 2 {
				t.Fatalf("the expired share is still stored beside the live ones: %v", do("HKEYS", key))
			}
			if pttl := do("PTTL", key).Int; pttl < 5000 || pttl > 10000 {
				t.Fatalf("pttl %d, want the live shares' 10 s lease", pttl)
			}
			if err := dead.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
				t.Fatalf("release of the expired share: %v, want ErrNotOwner", err)
			}
			if _, err := l.TryAcquire(as("w"), key); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("writer entered among live readers: %v", err)
			}
			if err := live.Release(ctx); err != nil {
				t.Fatal(err)
			}
			do("HSET", key, "late", "1:1000")
			w, err := l.TryAcquire(as("w"), key)
			if err != nil {
				t.Fatalf("writer kept out by expired shares only: %v", err)
			}
			if err := late.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
				t.Fatalf("release of the expired share: %v, want ErrNotOwner", err)
			}
			if err := w.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if do("EXISTS", key).Int != 0 {
				t.Fatalf("lock left after the last holder: %v", do("HGETALL", key))
			}
		})
	}
}

// fair: a free lock goes to the head of the queue, not to whoever asks.
func TestFairQueue(t *testing.T) {
	ctx := context.Background()
	as := func(owner string) context.Context {
		return strategies.WithClient(ctx, strategies.Client{ID: 0, Owner: owner})
	}
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := open(t, d, "fair")
			l := locker(t, "fair", ds, 5*time.Second)
			key := "lockbench:locktest:{" + t.Name() + "}:lock"
			a, err := l.TryAcquire(as("A"), key)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{"B", "C"} { // queue: B, C
				if _, err := l.TryAcquire(as(w), key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("%s: %v", w, err)
				}
			}
			a.Release(ctx)
			if _, err := l.TryAcquire(as("C"), key); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("C jumped the queue: %v", err)
			}
			b, err := l.TryAcquire(as("B"), key)
			if err != nil {
				t.Fatalf("B at the head did not get the free lock: %v", err)
			}
			// D queues behind C, then gives up: Acquire abandons its place.
			if _, _, err := strategies.Acquire(as("D"), l, key, policy(t, "none").New(nil), 0); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("D: %v", err)
			}
			if n, _ := ds[0].Do(ctx, "LRANGE", key+":queue", "0", "-1"); len(n.Array) != 1 || n.Array[0].Str != "C" {
				t.Fatalf("queue %+v, want [C] after D abandoned", n)
			}
			b.Release(ctx)
			if _, err := l.TryAcquire(as("C"), key); err != nil {
				t.Fatalf("C at the head: %v", err)
			}
		})
	}
}

// wait-replicas: with the replica frozen (SIGSTOP) no acquire is
// acknowledged, so none succeeds and each is undone; thawed, it works.
func TestWaitReplicasNeedsAck(t *testing.T) {
	ctx := context.Background()
	repl, err := servers.layout(strategies.Replicated)
	if err != nil {
		t.Fatal(err)
	}
	replica := repl.Servers[1]
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := open(t, d, "wait-replicas")
			l, err := strategies.New("wait-replicas", strategies.Config{Nodes: ds, TTL: 5 * time.Second, Params: registry.Values{"wait-timeout": 30 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			key := "lockbench:locktest:{" + t.Name() + "}:lock"
			if err := syscall.Kill(replica.Pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ {
				if _, err := l.TryAcquire(ctx, key); !errors.Is(err, strategies.ErrNotAcquired) {
					syscall.Kill(replica.Pid, syscall.SIGCONT)
					t.Fatalf("acquire %d with a frozen replica: %v, want ErrNotAcquired", i, err)
				}
				if r, _ := ds[0].Do(ctx, "EXISTS", key); r.Int != 0 {
					syscall.Kill(replica.Pid, syscall.SIGCONT)
					t.Fatal("an unacknowledged lock was left in place")
				}
			}
			syscall.Kill(replica.Pid, syscall.SIGCONT)
			if st := l.(strategies.StatsReporter).Stats(); st["not_replicated"] != 5 {
				t.Fatalf("not_replicated = %v, want 5", st["not_replicated"])
			}
			b, n, err := strategies.Acquire(ctx, l, key, policy(t, "fixed:interval=50ms").New(nil), 10*time.Second)
			if err != nil {
				t.Fatalf("after the replica thawed: %v (%d attempts)", err, n)
			}
			b.Release(ctx)
		})
	}
}

// fair with pubsub wake-ups completes its orders safely (every waiter of
// the key is woken, so the queue head is among them). The fallback wait
// is the 5 s TTL: a waiter never woken waits all of it, while woken ones
// wait a few ms of others' 1 ms sections, so the bound of half the
// fallback is generous on a loaded machine.
func TestFairWithPubSub(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			res := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "fair", Driver: d, Workload: "flash-sale", Retry: policy(t, "pubsub"),
				Clients: 10, Duration: 60 * time.Second, TTL: 5 * time.Second, AcquireTimeout: 50 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"stock": int64(40), "skus": 1}, Seed: 9,
			}})
			if res.Violations.Total() != 0 || res.Figures["sold"] != 40 || res.Counters.Timeouts != 0 {
				t.Fatalf("violations %+v sold %d timeouts %d", res.Violations, res.Figures["sold"], res.Counters.Timeouts)
			}
			// Woken by messages, not by the 5 s fallback: no acquire waits
			// half of it.
			if res.AcquireMS.Max >= 2500 {
				t.Fatalf("longest acquire %.0f ms: waiters slept until the TTL fallback", res.AcquireMS.Max)
			}
		})
	}
}

// hot-key: exact counts under a Zipf key choice; nested: a reentrant lock
// re-enters, a plain one fails every nested acquire at once.
//
// Beside the package's other parallel tests, the drivers at once: keys of
// their own (run: the test's name), exact counts (7.4 s serial,
// 2026-12-04).
func TestCounterWorkloads(t *testing.T) {
	t.Parallel()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			hk := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "atomic", Driver: d, Workload: "hot-key", Retry: policy(t, "fixed:interval=2ms"),
				Clients: 20, Duration: 600 * time.Millisecond, TTL: time.Second, AcquireTimeout: 5 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 50, "zipf": 1.1}, Seed: 2,
			}})
			if hk.Violations.Total() != 0 || hk.Figures["increments"] == 0 || hk.Figures["increments"] != hk.Figures["counter_sum"] {
				t.Fatalf("hot-key: %+v %v", hk.Violations, hk.Figures)
			}
			re := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "reentrant", Driver: d, Workload: "nested", Retry: policy(t, "fixed:interval=2ms"),
				Clients: 10, Duration: 500 * time.Millisecond, TTL: time.Second, AcquireTimeout: 5 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 5, "nested-second": true}, Seed: 3,
			}})
			if re.Violations.Total() != 0 || re.Figures["nested_failures"] != 0 || re.Figures["increments"] == 0 {
				t.Fatalf("reentrant nested: %+v %v", re.Violations, re.Figures)
			}
			at := run(t, engine.Scenario{Spec: engine.Spec{
				Strategy: "atomic", Driver: d, Workload: "nested", Retry: policy(t, "fixed:interval=2ms"),
				Clients: 4, Duration: 300 * time.Millisecond, TTL: time.Second, AcquireTimeout: 5 * time.Second,
				Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Options: registry.Values{"keys": 5}, Seed: 3,
			}})
			if at.Figures["increments"] != 0 || at.Figures["nested_failures"] == 0 || at.Violations.Total() != 0 {
				t.Fatalf("atomic nested: %+v %v; want every nested acquire to fail", at.Violations, at.Figures)
			}
		})
	}
}

// On a 3-master Redis Cluster both drivers route by slot (keys carry hash
// tags): exact sales, exact counters, and every key deleted after. The
// runs one after another (each checks every node's DBSIZE after it), the
// test beside the package's other parallel tests: the Cluster is its own
// (14.4 s, serial until 2026-12-04).
func TestOnCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	topo, err := topology.StartCluster(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s0 := topo.Servers[0]
	node := engine.Node{Addr: s0.Addr, Password: s0.Password, Cluster: true}
	for _, d := range drivers.Names() {
		for _, c := range []struct{ strategy, workload, retry string }{
			{"atomic", "flash-sale", "fixed:interval=2ms"},
			{"watchdog", "flash-sale", "pubsub"},
			{"reentrant", "hot-key", "fixed:interval=2ms"},
			{"fencing", "flash-sale", "backoff:start=1ms,cap=20ms,tries=1000"},
			{"fencing", "hot-key", "fixed:interval=2ms"}, // the fence guard's scripts keep a counter's keys in one slot
			{"segmented", "flash-sale", "fixed:interval=2ms"},
		} {
			t.Run(d+"/"+c.strategy+"/"+c.workload, func(t *testing.T) {
				res, err := engine.Run(ctx, engine.Scenario{Spec: engine.Spec{
					Strategy: c.strategy, Driver: d, Workload: c.workload, Retry: policy(t, c.retry),
					Clients: 20, Duration: duration(c.workload), TTL: 2 * time.Second, AcquireTimeout: 15 * time.Second,
					Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
					Options: registry.Values{"stock": int64(40), "skus": 6, "keys": 30, "zipf": 1.1, "segments": 4}, Seed: 4,
				}}, []engine.Node{node}, "lockbench:clustertest:"+d+":"+c.strategy+":")
				if err != nil {
					t.Fatal(err)
				}
				if res.Violations.Total() != 0 || res.Counters.Errors != 0 {
					t.Fatalf("violations %+v errors %v", res.Violations, res.Counters.ErrorsByKind)
				}
				if c.workload == "flash-sale" && res.Figures["sold"] != 240 {
					t.Fatalf("sold %d, want 240 (6 x 40)", res.Figures["sold"])
				}
				if c.workload == "hot-key" && (res.Figures["increments"] == 0 || res.Figures["increments"] != res.Figures["counter_sum"]) {
					t.Fatalf("figures %v", res.Figures)
				}
				if res.RedisCost.Commands == 0 {
					t.Fatal("no command counted across the cluster's nodes")
				}
				for _, s := range topo.Servers {
					if n, err := topology.Command(s.Addr, s.Password, time.Second, "DBSIZE"); err != nil || n != "0" {
						t.Fatalf("node %s holds %s keys after the run (%v)", s.Addr, n, err)
					}
				}
			})
		}
	}
}

// duration bounds a cluster scenario: flash-sale ends when sold out,
// hot-key runs for its duration.
func duration(workload string) time.Duration {
	if workload == "hot-key" {
		return time.Second
	}
	return 20 * time.Second
}

// BenchmarkCycle measures one uncontended acquire+release (fresh key each
// time) per strategy and driver, with allocations; benchstat reads it. A
// released lease goes back to a strategy that recycles them
// (strategies.Recycler), as lockbench's worker does.
func BenchmarkCycle(b *testing.B) {
	ctx := strategies.WithClient(context.Background(), strategies.Client{ID: 0, Owner: "bench"})
	for _, s := range strategies.Names() {
		if s == "redis-guard" || testOnly(s) {
			continue // no lock: nothing to cycle; a test-only defective lock
		}
		for _, d := range drivers.Names() {
			if !strategies.RunsOn(s, d) {
				continue
			}
			b.Run(s+"/"+d, func(b *testing.B) {
				ds, err := engine.Open(ctx, d, nodes(b, s), 4)
				if err != nil {
					b.Fatal(err)
				}
				defer func() {
					for _, x := range ds {
						x.Close()
					}
				}()
				l, err := strategies.New(s, strategies.Config{Nodes: ds, TTL: 5 * time.Second, Prefix: "lockbench:bench:"})
				if err != nil {
					b.Fatal(err)
				}
				if c, ok := l.(io.Closer); ok {
					defer c.Close()
				}
				rec, _ := l.(strategies.Recycler)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					key := "lockbench:bench:{" + s + d + "}:" + strconv.Itoa(i)
					le, err := l.TryAcquire(ctx, key)
					if err != nil {
						b.Fatal(err)
					}
					if err := le.Release(ctx); err != nil {
						b.Fatal(err)
					}
					if rec != nil {
						rec.Recycle(le)
					}
				}
			})
		}
	}
}

// The suite's SemaphoreCapacity on semaphore with 3 permits (the
// conformance above runs it with 1, where the check is skipped): 3
// holders at once, each token stored and reported, a 4th refused until a
// release, and a run of 6 clients on one key with no capacity violation
// and at most 3 holders at once.
func TestSemaphorePermits(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			Suite{Servers: servers, Params: strategies.Values{"permits": 3}, RequireTokens: true}.
				checkOnly(t, "semaphore", d, func(name string) bool { return name == "SemaphoreCapacity" })
		})
	}
}
