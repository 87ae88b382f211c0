package workloads

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// holdAt stops client 0 at the start of its work (the Paused hook, after
// its read) until resume is closed, having closed reached: an interleaving
// that does not depend on the machine's speed.
type holdAt struct{ reached, resume chan struct{} }

func newHoldAt() *holdAt { return &holdAt{make(chan struct{}), make(chan struct{})} }

func (h *holdAt) Paused(client int, _ *strategies.Gate) {
	if client == 0 {
		close(h.reached)
		<-h.resume
	}
}
func (*holdAt) PausedBeforeWrite(int, *strategies.Gate) {}
func (*holdAt) Crash(int, string) bool                  { return false }
func (*holdAt) Acquired()                               {}
func (*holdAt) Cancels(int) (float64, bool)             { return 0, false }
func (*holdAt) Kills(int) (float64, bool)               { return 0, false }
func (*holdAt) Die()                                    {}

// takeOver acquires key once the previous holder's lease has run out
// (within 5 s).
func takeOver(t *testing.T, l strategies.Locker, key string) strategies.Lease {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		lease, err := l.TryAcquire(context.Background(), key)
		if err == nil {
			return lease
		}
		if !errors.Is(err, strategies.ErrNotAcquired) || time.Now().After(deadline) {
			t.Fatalf("could not take the expired lock: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Which workload runs which guard, and what auto resolves to.
func TestGuardsOfWorkloads(t *testing.T) {
	for g, want := range map[string][]string{
		GuardCAS:   {"flash-sale", "hot-key", "long-task", "nested"},
		GuardFence: {"flash-sale", "hot-key", "long-task", "nested"},
		GuardDecr:  {"flash-sale"},
		GuardIncr:  {"hot-key", "long-task", "nested"},
		GuardNone:  {"flash-sale", "hot-key", "lock-cycle", "long-task", "nested", "transfer"},
	} {
		if got := GuardedBy(g); !slices.Equal(got, want) {
			t.Errorf("GuardedBy(%s) = %v, want %v", g, got, want)
		}
	}
	for _, c := range []struct{ workload, asked, want string }{
		{"hot-key", GuardFence, GuardFence},
		{"nested", GuardCAS, GuardCAS},
		{"flash-sale", GuardDecr, GuardDecr},
		{"hot-key", GuardDecr, GuardIncr}, // redis-guard, sql-guard on a counter
		{"lock-cycle", GuardFence, GuardNone},
		{"lock-cycle", GuardCAS, GuardNone},
		{"long-task", "", GuardNone},
	} {
		if got := AutoGuard(c.workload, c.asked); got != c.want {
			t.Errorf("AutoGuard(%s, %q) = %s, want %s", c.workload, c.asked, got, c.want)
		}
	}
	if Guards("no-such-workload") != nil {
		t.Error("Guards of an unknown workload is not nil")
	}
}

// A counter refuses a guard it does not run.
func TestCounterRefusesDecr(t *testing.T) {
	d, err := drivers.Open("rueidis", drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, _ := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second})
	c := &counter{name: "hot-key", keys: 1}
	err = c.Setup(context.Background(), &Env{Data: d, Locker: l, Prefix: "lockbench:wltest:decr:", Params: Params{Guard: GuardDecr}})
	if err == nil || !strings.Contains(err.Error(), `hot-key: guard "decr" is not one of none, cas, fence, incr`) {
		t.Fatalf("Setup with decr: %v, want the refusal", err)
	}
}

// A hot-key holder that resumes after its lease passed to another client,
// which incremented the counter meanwhile: with the fence or the cas guard
// its stale write is rejected and no update is lost; with none it
// overwrites the other's increment (1 lost update); with the increment in
// place both count (no loss, nothing rejected).
func TestCounterStaleHolder(t *testing.T) {
	for _, drv := range drivers.Names() {
		for _, c := range []struct {
			guard                     string
			errA                      error
			rejected, incs, sum, lost int64
		}{
			{GuardFence, ErrRejected, 1, 1, 1, 0},
			{GuardCAS, ErrRejected, 1, 1, 1, 0},
			{GuardNone, nil, 0, 2, 1, 1},
			{GuardIncr, nil, 0, 2, 2, 0},
		} {
			t.Run(drv+"/"+c.guard, func(t *testing.T) {
				ctx := context.Background()
				d, err := drivers.Open(drv, drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				l, err := strategies.New("fencing", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 50 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				prefix := "lockbench:wltest:" + t.Name() + ":"
				ctr := &counter{name: "hot-key", keys: 1}
				hold := newHoldAt()
				env := &Env{Data: d, Locker: l, Prefix: prefix, Clients: 2, Params: Params{Guard: c.guard}}
				if err := ctr.Setup(ctx, env); err != nil {
					t.Fatal(err)
				}
				held := *env
				held.Faults = hold
				a := &Worker{ID: 0, Env: &held, Rng: rand.New(rand.NewPCG(1, 1)), Obs: metrics.NewRecorder()}
				b := &Worker{ID: 1, Env: env, Rng: rand.New(rand.NewPCG(1, 2)), Obs: metrics.NewRecorder()}

				la, err := l.TryAcquire(ctx, ctr.locks[0])
				if err != nil {
					t.Fatal(err)
				}
				errA := make(chan error, 1)
				go func() { errA <- ctr.increment(ctx, a, 0, la) }() // reads 0, then waits in its work
				<-hold.reached
				lb := takeOver(t, l, ctr.locks[0]) // A's 50 ms lease is over
				if err := ctr.increment(ctx, b, 0, lb); err != nil {
					t.Fatalf("B's increment: %v", err)
				}
				close(hold.resume) // A writes now, on the value it read before B's increment
				ea := <-errA
				res, err := ctr.Verify(ctx, env)
				if err != nil {
					t.Fatal(err)
				}
				if !errors.Is(ea, c.errA) {
					t.Fatalf("A's stale write: %v, want %v", ea, c.errA)
				}
				if got := rec(a).Rejected + rec(b).Rejected; got != c.rejected {
					t.Fatalf("rejected %d, want %d", got, c.rejected)
				}
				if res.Figures["increments"] != c.incs || res.Figures["counter_sum"] != c.sum || res.Violations["lost_updates"] != c.lost {
					t.Fatalf("result %+v, want increments %d, counter_sum %d, lost_updates %d", res, c.incs, c.sum, c.lost)
				}
			})
		}
	}
}

// The fence guard refuses a stale holder already at its read: once a
// later token has read the counter, an earlier one reads nothing.
func TestCounterFenceRefusesStaleRead(t *testing.T) {
	ctx := context.Background()
	d, err := drivers.Open("goredis", drivers.Options{Endpoint: drivers.Endpoint{Addr: srv.Addr, Password: srv.Password}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, _ := strategies.New("fencing", strategies.Config{Nodes: []drivers.Driver{d}, TTL: 50 * time.Millisecond})
	ctr := &counter{name: "long-task", single: true, keys: 1}
	env := &Env{Data: d, Locker: l, Prefix: "lockbench:wltest:" + t.Name() + ":", Clients: 2, Params: Params{Guard: GuardFence}}
	if err := ctr.Setup(ctx, env); err != nil {
		t.Fatal(err)
	}
	la, err := l.TryAcquire(ctx, ctr.locks[0])
	if err != nil {
		t.Fatal(err)
	}
	lb := takeOver(t, l, ctr.locks[0]) // A's lease is over before it reads
	a := &Worker{ID: 0, Env: env, Rng: rand.New(rand.NewPCG(1, 1)), Obs: metrics.NewRecorder()}
	b := &Worker{ID: 1, Env: env, Rng: rand.New(rand.NewPCG(1, 2)), Obs: metrics.NewRecorder()}
	if err := ctr.increment(ctx, b, 0, lb); err != nil {
		t.Fatal(err)
	}
	if err := ctr.increment(ctx, a, 0, la); !errors.Is(err, ErrRejected) || rec(a).Rejected != 1 {
		t.Fatalf("stale read: %v, rejected %d; want ErrRejected, 1", err, rec(a).Rejected)
	}
	res, _ := ctr.Verify(ctx, env)
	if res.Figures["increments"] != 1 || res.Figures["counter_sum"] != 1 || res.Violations["lost_updates"] != 0 {
		t.Fatalf("result %+v, want 1 increment, sum 1, no loss", res)
	}
	// Without a fencing token the fence guard cannot run.
	al, _ := strategies.New("atomic", strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second})
	lease, err := al.TryAcquire(ctx, ctr.locks[0]+":atomic")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	if err := ctr.increment(ctx, a, 0, lease); err == nil || !strings.Contains(err.Error(), "long-task: the fence guard needs a strategy with fencing tokens") {
		t.Fatalf("fence with an atomic lease: %v", err)
	}
}
