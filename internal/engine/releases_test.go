package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// Test-only defective strategies (registered in this test binary only):
// the atomic lock, with a release that misbehaves after it has freed the
// key, so that every client keeps getting the lock.
//
//   - test-hung-release: the release frees the key, then never returns
//     (it ignores its context) until the test ends: every client that
//     releases once hangs there.
//   - test-slow-release: every 10th release of each lease frees the key,
//     then sleeps slowReleaseSleep (the TTL, twice the slow bound of
//     TTL/2); slowed counts them.
var (
	hungForever = make(chan struct{}) // closed by no one: a hung release never returns
	hungEntered atomic.Int64          // releases that entered the hang
	slowed      atomic.Int64          // slow releases made (test-slow-release)
	releasesN   atomic.Int64          // releases of test-slow-release
)

const slowReleaseSleep = 2 * time.Second // the TTL of TestSlowReleases

func init() {
	wrap := func(name, desc string, release func(ctx context.Context, l strategies.Lease) error) {
		strategies.Register(name, strategies.Info{Desc: desc}, func(c strategies.Config) (strategies.Locker, error) {
			inner, err := strategies.New("atomic", strategies.Config{Nodes: c.Nodes, TTL: c.TTL})
			if err != nil {
				return nil, err
			}
			return defectLocker{inner: inner, release: release}, nil
		})
	}
	wrap("test-hung-release", "test only: atomic, whose release never returns", func(ctx context.Context, l strategies.Lease) error {
		if err := l.Release(ctx); err != nil {
			return err
		}
		hungEntered.Add(1)
		<-hungForever // ignores ctx: the grace period cannot cut it
		return nil
	})
	wrap("test-slow-release", "test only: atomic, whose every 10th release takes the TTL", func(ctx context.Context, l strategies.Lease) error {
		if err := l.Release(ctx); err != nil {
			return err
		}
		if releasesN.Add(1)%10 == 0 {
			time.Sleep(slowReleaseSleep)
			slowed.Add(1)
		}
		return nil
	})
}

type defectLocker struct {
	inner   strategies.Locker
	release func(ctx context.Context, l strategies.Lease) error
}

func (d defectLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	l, err := d.inner.TryAcquire(ctx, key)
	if err != nil {
		return nil, err
	}
	return defectLease{Lease: l, release: d.release}, nil
}

type defectLease struct {
	strategies.Lease
	release func(ctx context.Context, l strategies.Lease) error
}

func (l defectLease) Release(ctx context.Context) error { return l.release(ctx, l.Lease) }

// releaseScenario is strategy with 4 clients for 4 s on one lock.
func releaseScenario(t *testing.T, strategy string, ttl time.Duration) engine.Scenario {
	t.Helper()
	return engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "rueidis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 4,
		Duration: 4 * time.Second, TTL: ttl, AcquireTimeout: 30 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"keys": 1}, Seed: 1,
	}}
}

// releaseRuns runs the defective strategy and atomic at once, each on
// keys of its own, and returns the defective run's time and both results.
func releaseRuns(t *testing.T, defective string, ttl time.Duration) (elapsed time.Duration, res, ok report.Scenario) {
	t.Helper()
	p := "lockbench:test:" + t.Name() + ":"
	runs, took := atOnce(t, []string{p + defective + ":", p + "atomic:"}, releaseScenario(t, defective, ttl), releaseScenario(t, "atomic", ttl))
	return took[0], runs[0], runs[1]
}

// A release that never returns is counted once per client that hung
// (hung_releases = 4, the clients), and the run ends after its grace
// period instead of waiting for them; a correct lock shows none.
//
// The two runs go at once (18 s one after the other, 2026-12-04), and the
// test beside the package's other parallel tests: its counters are its
// own.
func TestHungReleases(t *testing.T) {
	t.Parallel()
	hungEntered.Store(0) // -count=N
	elapsed, res, ok := releaseRuns(t, "test-hung-release", time.Second)
	if got, want := res.Counters.HungReleases, hungEntered.Load(); got != 4 || want != 4 {
		t.Fatalf("hung_releases %d, releases that hung %d; want 4 and 4 (every client)", got, want)
	}
	// Not a speed assertion: a run that waited for its hung clients would
	// never end; 4 s + the 10 s grace, with a minute of slack.
	if limit := 4*time.Second + engine.Grace + time.Minute; elapsed > limit {
		t.Fatalf("the run took %v, want it to end after its grace period (< %v)", elapsed, limit)
	}
	if res.Ops != 0 {
		t.Fatalf("ops %d: no operation of a hung client completed", res.Ops)
	}
	t.Logf("hung_releases: test-hung-release %d (run %v), atomic %d", res.Counters.HungReleases, elapsed.Round(time.Second), ok.Counters.HungReleases)
	if ok.Counters.HungReleases != 0 || ok.Ops == 0 {
		t.Fatalf("atomic: hung_releases %d, ops %d; want 0 and some", ok.Counters.HungReleases, ok.Ops)
	}
}

// A release that takes the TTL every 10th time is counted slow each
// time (slow_releases = the releases slowed, over the bound of TTL/2); a
// correct lock's releases are all under it.
//
// The two runs go at once (9 s one after the other, 2026-12-04), and the
// test beside the package's other parallel tests: its counters are its
// own.
func TestSlowReleases(t *testing.T) {
	t.Parallel()
	slowed.Store(0) // -count=N
	releasesN.Store(0)
	_, res, ok := releaseRuns(t, "test-slow-release", slowReleaseSleep)
	if n := slowed.Load(); n == 0 || res.SlowReleases != n {
		t.Fatalf("slow_releases %d, want %d (the releases slowed), > 0", res.SlowReleases, n)
	}
	if want := float64(slowReleaseSleep/2) / 1e6; res.SlowReleaseBoundMS != want {
		t.Fatalf("slow_release_bound_ms %v, want %v (TTL/2)", res.SlowReleaseBoundMS, want)
	}
	if res.ReleaseMS.Max < float64(slowReleaseSleep/time.Millisecond) {
		t.Fatalf("release max %v ms, want at least the %v sleep", res.ReleaseMS.Max, slowReleaseSleep)
	}
	t.Logf("slow_releases (over %v ms): test-slow-release %d of %d (release p99 %v ms, max %v ms), atomic %d of %d (max %v ms)",
		res.SlowReleaseBoundMS, res.SlowReleases, res.ReleaseMS.Count, res.ReleaseMS.P99, res.ReleaseMS.Max, ok.SlowReleases, ok.ReleaseMS.Count, ok.ReleaseMS.Max)
	if ok.SlowReleases != 0 || ok.SlowReleaseBoundMS == 0 || ok.ReleaseMS.Count == 0 {
		t.Fatalf("atomic: slow_releases %d over %v ms (%d releases); want 0 over a bound", ok.SlowReleases, ok.SlowReleaseBoundMS, ok.ReleaseMS.Count)
	}
}
