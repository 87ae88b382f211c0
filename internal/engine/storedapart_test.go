package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// test-stored-apart (registered in this test binary only) keeps lock key
// K in the key K:apart (strategies.Stored) with a SET NX PX of its token
// and a compare-and-delete release, and reports its tokens for K through
// Config.Sent, as the token checks ask.
func init() {
	strategies.Register("test-stored-apart", strategies.Info{Desc: "test only: a lock kept in a key beside its lock key, reporting its tokens"},
		func(c strategies.Config) (*apartLocker, error) { return &apartLocker{c: c}, nil })
}

type apartLocker struct{ c strategies.Config }

func (l *apartLocker) StoredKeys(key string) []string { return []string{key + ":apart"} }

func (l *apartLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	tok := strategies.NewToken()
	l.c.Sent(ctx, key, tok)
	ok, err := l.c.Nodes[0].SetNX(ctx, key+":apart", tok, l.c.TTL)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, strategies.ErrNotAcquired
	}
	return apartLease{l: l, key: key, tok: tok}, nil
}

type apartLease struct {
	l        *apartLocker
	key, tok string
}

func (a apartLease) Key() string   { return a.key }
func (a apartLease) Token() string { return a.tok }
func (a apartLease) Release(ctx context.Context) error {
	r, err := a.l.c.Nodes[0].Do(ctx, "GET", a.key+":apart")
	if err != nil {
		return err
	}
	if r.Str != a.tok {
		return strategies.ErrNotOwner
	}
	_, err = a.l.c.Nodes[0].Do(ctx, "DEL", a.key+":apart")
	return err
}

// A lock kept in keys other than its lock key (strategies.Stored) that
// reports its tokens would have the liveness reader find none of them in
// the lock key, every exit freed at the first read and no orphan: its
// liveness figures are not measured, with the reason, instead (atomic's,
// in the lock key, are: liveRun asserts it). Beside the package's other
// parallel tests: keys of its own (the test's name).
func TestLivenessStoredApartNotMeasured(t *testing.T) {
	t.Parallel()
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "test-stored-apart", Driver: "goredis", Workload: "lock-cycle",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 2,
		Duration: 500 * time.Millisecond, TTL: 10 * time.Second, AcquireTimeout: 5 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(time.Millisecond)},
		Options: registry.Values{"keys": 1}, Seed: 1,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops == 0 {
		t.Fatal("no operation")
	}
	lv := res.Liveness
	if lv == nil || lv.Measured || lv.Samples != 0 || !strings.Contains(lv.NotMeasured, "strategies.Stored") {
		t.Fatalf("liveness %+v, want not measured (no read), naming strategies.Stored", lv)
	}
	if ok := liveRun(t, "goredis", ""); !ok.Liveness.Measured { // the lock in its key: measured
		t.Fatalf("atomic: liveness %+v, want measured", ok.Liveness)
	}
}
