package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// Test-only defective strategies of the command line's tests (this test
// binary only), both the atomic lock otherwise:
//   - cli-hung-release: the release frees the key, then never returns;
//   - cli-false-acquire: every 5th attempt is granted without setting the
//     key (cliFalseGrants counts them).
var (
	cliHung        = make(chan struct{}) // never closed
	cliFalseGrants atomic.Int64
)

func init() {
	atomicOf := func(c strategies.Config) (strategies.Locker, error) {
		return strategies.New("atomic", strategies.Config{Nodes: c.Nodes, TTL: c.TTL})
	}
	strategies.Register("cli-hung-release", strategies.Info{Desc: "test only: atomic, whose release never returns"},
		func(c strategies.Config) (strategies.Locker, error) {
			in, err := atomicOf(c)
			return cliDefect{in: in, hang: true}, err
		})
	var attempts atomic.Int64
	strategies.Register("cli-false-acquire", strategies.Info{Desc: "test only: atomic, whose every 5th attempt is granted without setting the key"},
		func(c strategies.Config) (strategies.Locker, error) {
			in, err := atomicOf(c)
			return cliDefect{in: in, n: &attempts}, err
		})
}

type cliDefect struct {
	in   strategies.Locker
	hang bool
	n    *atomic.Int64
}

func (d cliDefect) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	if d.n != nil {
		if n := d.n.Add(1); n%5 == 0 {
			cliFalseGrants.Add(1)
			return cliLease{key: key, token: "never-stored-" + strconv.FormatInt(n, 10)}, nil
		}
	}
	l, err := d.in.TryAcquire(ctx, key)
	if err != nil || !d.hang {
		return l, err
	}
	return cliHungLease{l}, nil
}

type cliLease struct{ key, token string }

func (l cliLease) Key() string                   { return l.key }
func (l cliLease) Token() string                 { return l.token }
func (l cliLease) Release(context.Context) error { return nil }

type cliHungLease struct{ strategies.Lease }

func (l cliHungLease) Release(ctx context.Context) error {
	if err := l.Lease.Release(ctx); err != nil {
		return err
	}
	<-cliHung
	return nil
}

// The figures end to end, in the result file, --fail-on and show: a
// release that hangs is counted once per client (hung_releases 2) and
// fails --fail-on hung_releases==0; acquires granted without the key are
// false_acquires, exactly, a violation --fail-on safety fails on; atomic
// shows neither.
func TestReleaseAndOwnershipFigures(t *testing.T) {
	// In-process runs with servers of their own; cliFalseGrants and
	// cliHung are this test's alone.
	t.Parallel()
	cliFalseGrants.Store(0) // -count=N
	dir := t.TempDir()
	common := []string{"run", "-q", "--driver", "rueidis", "--workload", "lock-cycle", "--keys", "1", "--clients", "2",
		"--duration", "2s", "--work", "1ms", "--ttl", "10s", "--verify-acquire", "1"}
	// The three runs at once (17 s one after another, 2026-12-04).
	runs := runStrategiesIn(t, dir, common, map[string][]string{
		"cli-hung-release":  {"--fail-on", "hung_releases==0"},
		"cli-false-acquire": {"--fail-on", "safety"},
		"atomic":            {"--fail-on", "safety", "--fail-on", "hung_releases==0", "--fail-on", "slow_releases==0"},
	}, "cli-hung-release", "cli-false-acquire", "atomic")
	hung, hungFile, err := runs["cli-hung-release"].sc, runs["cli-hung-release"].file, runs["cli-hung-release"].err
	if err == nil || hung.Counters.HungReleases != 2 {
		t.Fatalf("cli-hung-release: hung_releases %d (want 2, the clients), --fail-on error %v (want one)", hung.Counters.HungReleases, err)
	}
	fa, faFile, err := runs["cli-false-acquire"].sc, runs["cli-false-acquire"].file, runs["cli-false-acquire"].err
	if want := cliFalseGrants.Load(); err == nil || want == 0 || fa.Violations.FalseAcquires != want {
		t.Fatalf("cli-false-acquire: false_acquires %d, want %d (> 0); --fail-on safety error %v (want one)", fa.Violations.FalseAcquires, want, err)
	}
	ok, err := runs["atomic"].sc, runs["atomic"].err
	if err != nil || ok.Violations.FalseAcquires != 0 || ok.Counters.HungReleases != 0 || ok.SlowReleases != 0 {
		t.Fatalf("atomic: false_acquires %d, hung %d, slow %d, error %v; want none", ok.Violations.FalseAcquires, ok.Counters.HungReleases, ok.SlowReleases, err)
	}
	for file, want := range map[string]string{hungFile: "hung rel 2", faFile: "false acq " + strconv.FormatInt(fa.Violations.FalseAcquires, 10)} {
		out, err := inProcess(t, "show", file, "--columns", "strategy,release_p99,release_max,other")
		if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "release p99 ms") || !strings.Contains(out, "release max ms") {
			t.Fatalf("show %s: %v, want %q and the release columns:\n%s", filepath.Base(file), err, want, out)
		}
		t.Logf("show %s:\n%s", filepath.Base(file), out)
	}
	b, _ := os.ReadFile(faFile)
	if !strings.Contains(string(b), `"false_acquires"`) || !strings.Contains(string(b), `"verify_acquire": "1"`) {
		t.Fatalf("the result file lacks false_acquires or params.verify_acquire")
	}
}
