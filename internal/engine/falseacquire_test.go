package engine_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// falseGrants counts the acquires test-false-acquire reported granted
// without setting the key.
var falseGrants atomic.Int64

// test-false-acquire (registered in this test binary only) is the atomic
// lock, except that every 5th attempt reports success without sending
// anything: a client that believes a stale or mismatched reply. Its
// fake lease's token is in no key, and its release does nothing.
func init() {
	var attempts atomic.Int64
	strategies.Register("test-false-acquire", strategies.Info{Desc: "test only: atomic, whose every 5th attempt is granted without setting the key"},
		func(c strategies.Config) (strategies.Locker, error) {
			inner, err := strategies.New("atomic", strategies.Config{Nodes: c.Nodes, TTL: c.TTL})
			if err != nil {
				return nil, err
			}
			return falseLocker{inner: inner, n: &attempts}, nil
		})
}

type falseLocker struct {
	inner strategies.Locker
	n     *atomic.Int64
}

func (f falseLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	if n := f.n.Add(1); n%5 == 0 {
		falseGrants.Add(1)
		return fakeLease{key: key, token: "never-stored-" + strconv.FormatInt(n, 10)}, nil
	}
	return f.inner.TryAcquire(ctx, key)
}

type fakeLease struct{ key, token string }

func (l fakeLease) Key() string                   { return l.key }
func (l fakeLease) Token() string                 { return l.token }
func (l fakeLease) Release(context.Context) error { return nil }

func verifyRun(t *testing.T, strategy string, verify int) report.Scenario {
	t.Helper()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "goredis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 4,
		Duration: 2 * time.Second, TTL: 10 * time.Second, AcquireTimeout: 30 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"keys": 1}, Seed: 1, VerifyAcquire: verify,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":"+strategy+":")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ownGets is the GETs the run's ownership checks sent (lockbench's own).
func ownGets(s report.Scenario) int64 {
	var n int64
	if s.Raw != nil {
		for _, c := range s.Raw.Cost {
			n += c.Own["get"]
		}
	}
	return n
}

// With --verify-acquire 1 every acquire granted without setting the key
// is a false acquire (false_acquires = the fake grants, a safety
// violation); atomic's grants all hold their token (0), at one GET per
// acquire that commands/op leaves out. Beside the package's other
// parallel tests: keys of its own, its own counter, and the GETs counted
// are lockbench's own (Raw.Cost's Own), not the server's.
func TestFalseAcquires(t *testing.T) {
	t.Parallel()
	falseGrants.Store(0) // -count=N
	res := verifyRun(t, "test-false-acquire", 1)
	want := falseGrants.Load()
	if want == 0 || res.Violations.FalseAcquires != want {
		t.Fatalf("false_acquires %d, want %d (the grants that set no key), > 0", res.Violations.FalseAcquires, want)
	}
	if res.Violations.Get("false_acquires") != want || res.Violations.Total() < want {
		t.Fatalf("false_acquires is not a violation kind counted in the total: %+v", res.Violations)
	}
	ok := verifyRun(t, "atomic", 1)
	if ok.Violations.FalseAcquires != 0 {
		t.Fatalf("atomic: false_acquires %d, want 0", ok.Violations.FalseAcquires)
	}
	if got := ownGets(ok); got != ok.AcquireMS.Count {
		t.Fatalf("atomic: %d own GETs, want one per granted acquire (%d)", got, ok.AcquireMS.Count)
	}
	off := verifyRun(t, "atomic", 0)
	t.Logf("false_acquires: test-false-acquire %d (of %d fake grants), atomic %d; atomic commands/op %.3f with --verify-acquire 1 (own GETs %d for %d acquires, %d ops), %.3f with 0",
		res.Violations.FalseAcquires, want, ok.Violations.FalseAcquires, ok.RedisCost.CommandsPerOp, ownGets(ok), ok.AcquireMS.Count, ok.Ops, off.RedisCost.CommandsPerOp)
	if ownGets(off) != 0 || off.Violations.FalseAcquires != 0 {
		t.Fatalf("--verify-acquire 0: %d own GETs, false_acquires %d; want none", ownGets(off), off.Violations.FalseAcquires)
	}
}
