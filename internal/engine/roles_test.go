package engine_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// writerIgnoresReaders is a deliberately defective read-write lock for
// these tests, a hash like rwlock's (a field per holder, "<owner>:w" for
// the writer): its read side is correct (no reader while a writer holds),
// but its write side lets a writer in while readers hold the lock (it
// checks for another writer only). Its overlaps are mostly a writer's
// entry finding readers inside (the write role's); a reader granted just
// before the writer but entering its section just after finds the writer
// inside (the read role's).
type writerIgnoresReaders struct {
	d   drivers.Driver
	ttl time.Duration
}

var (
	// ARGV[1] = lease ms, ARGV[2] = holder field.
	badReadScript = drivers.NewScript(`for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
	if string.sub(f, -2) == ':w' then return redis.call('pttl', KEYS[1]) end
end
redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return nil`)
	badWriteScript = drivers.NewScript(`for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
	if string.sub(f, -2) == ':w' and f ~= ARGV[2] then return redis.call('pttl', KEYS[1]) end
end
redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return nil`)
	// ARGV[1] = holder field; nil when it holds none.
	badUnlockScript = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then redis.call('hdel', KEYS[1], ARGV[1]) end
return 1`)
)

func (l *writerIgnoresReaders) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	return l.take(ctx, badWriteScript, key, strategies.ClientFrom(ctx).Owner+":w")
}

func (l *writerIgnoresReaders) TryAcquireRead(ctx context.Context, key string) (strategies.Lease, error) {
	return l.take(ctx, badReadScript, key, strategies.ClientFrom(ctx).Owner)
}

func (l *writerIgnoresReaders) take(ctx context.Context, s *drivers.Script, key, holder string) (strategies.Lease, error) {
	res, err := l.d.Eval(ctx, s, []string{key}, strconv.FormatInt(l.ttl.Milliseconds(), 10), holder)
	if err != nil {
		return nil, err
	}
	if !res.IsNil() {
		return nil, strategies.ErrNotAcquired
	}
	return &hashLease{d: l.d, unlock: badUnlockScript, key: key, field: holder}, nil
}

// innerReleaseFrees is a deliberately defective reentrant lock for these
// tests: a hash with the holder's count, as reentrant's, whose release
// deletes the whole lock whatever the count, so that a nested holder's
// inner release frees the lock its outer hold still needs.
type innerReleaseFrees struct {
	d   drivers.Driver
	ttl time.Duration
}

var (
	freeingUnlockScript = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return nil end
redis.call('del', KEYS[1])
return 1`)
)

func (*innerReleaseFrees) Reentrant() {}

func (l *innerReleaseFrees) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	field := strategies.ClientFrom(ctx).Owner
	res, err := l.d.Eval(ctx, strategies.ReentrantLockScript, []string{key}, strconv.FormatInt(l.ttl.Milliseconds(), 10), field)
	if err != nil {
		return nil, err
	}
	if !res.IsNil() {
		return nil, strategies.ErrNotAcquired
	}
	return &hashLease{d: l.d, unlock: freeingUnlockScript, key: key, field: field}, nil
}

// hashLease is a hold of the field of a hash lock, released by unlock
// (KEYS[1] = key, ARGV[1] = field; nil: not held).
type hashLease struct {
	d          drivers.Driver
	unlock     *drivers.Script
	key, field string
}

func (h *hashLease) Key() string   { return h.key }
func (h *hashLease) Token() string { return h.field }
func (h *hashLease) Release(ctx context.Context) error {
	res, err := h.d.Eval(ctx, h.unlock, []string{h.key}, h.field)
	if err != nil {
		return err
	}
	if res.IsNil() {
		return strategies.ErrNotOwner
	}
	return nil
}

func init() {
	strategies.Register("test-rw-writer-ignores-readers", strategies.Info{Desc: "test only: a read-write lock whose writer enters while readers hold", Workloads: []string{"flash-sale"}},
		func(c strategies.Config) (*writerIgnoresReaders, error) {
			return &writerIgnoresReaders{d: c.Nodes[0], ttl: c.TTL}, nil
		})
	strategies.Register("test-reentrant-inner-release-frees", strategies.Info{Desc: "test only: a reentrant lock whose inner release frees the lock", Workloads: []string{"flash-sale"}},
		func(c strategies.Config) (*innerReleaseFrees, error) {
			return &innerReleaseFrees{d: c.Nodes[0], ttl: c.TTL}, nil
		})
}

// roleRun runs flash-sale on one item with strategy and mix (workloads.
// ParseMix), 8 clients holding the lock 5 ms and thinking think between
// operations ("" or "0": none; workloads.ParseDist), a warm-up included,
// and checks what holds for any lock: the result has each role of the
// mix, every role completed operations, the roles' clients are the mix's
// counts, their ops sum to the scenario's exactly, and their overlaps to
// the oracle's. A role that may be starved (rwlock's writers beside
// readers that hold without pause) can fail the "completed operations"
// check by chance: give such a run a think time and few of the starving
// role's clients.
func roleRun(t *testing.T, strategy, mix, think string) report.Scenario {
	t.Helper()
	m, err := workloads.ParseMix(mix)
	if err != nil {
		t.Fatal(err)
	}
	var th workloads.Dist
	if think != "" {
		if th, err = workloads.ParseDist(think); err != nil {
			t.Fatal(err)
		}
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "goredis", Workload: "flash-sale",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 8, Mix: &m,
		Warmup: 200 * time.Millisecond, Duration: 1500 * time.Millisecond, TTL: 10 * time.Second, AcquireTimeout: 20 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(5 * time.Millisecond)},
		Think:   th,
		Options: registry.Values{"stock": int64(1_000_000), "skus": 1}, Seed: 1,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if res.Params["mix"] != m.String() {
		t.Errorf("params mix %q, want %q", res.Params["mix"], m.String())
	}
	counts, _ := m.Counts(8)
	var ops, overlaps int64
	for _, role := range m.Roles() {
		r, ok := res.Roles[role]
		if !ok {
			t.Fatalf("no figures of role %s: %+v", role, res.Roles)
		}
		if r.Clients != counts[role] {
			t.Errorf("role %s: %d clients, want %d", role, r.Clients, counts[role])
		}
		if r.Ops == 0 || r.AcquireMS.Count == 0 {
			t.Errorf("role %s: %d ops, %d acquires measured: want some", role, r.Ops, r.AcquireMS.Count)
		}
		ops += r.Ops
		overlaps += r.Violations["overlap"]
	}
	if len(res.Roles) != len(m.Roles()) {
		t.Errorf("roles %v, want those of %s", res.Roles, mix)
	}
	if ops != res.Ops {
		t.Errorf("the roles' ops sum to %d, the scenario's are %d", ops, res.Ops)
	}
	if overlaps != res.Violations.Overlap {
		t.Errorf("the roles' overlaps sum to %d, the oracle counted %d", overlaps, res.Violations.Overlap)
	}
	if m.Shares[workloads.RoleRead] > 0 && res.Counters.Reads != res.Roles[workloads.RoleRead].Ops {
		t.Errorf("%d reads, the read role's ops are %d: every read role op reads", res.Counters.Reads, res.Roles[workloads.RoleRead].Ops)
	}
	return res
}

// rwMix and rwThink are TestRolesReadWrite's mix and think time: 2
// readers and 6 writers of 8 clients, each waiting an exponential think
// time (mean 10 ms) between operations, so that the read side is often
// free and rwlock's writers (no writer preference) get in. A read-heavy
// mix without think time (read=0.75 of 8, back to back) can keep the read
// side held for the whole run and give rwlock's writers 0 operations (the
// starvation docs/workloads-and-faults.md's "Client roles" describes),
// which would fail roleRun by chance on a loaded machine.
const (
	rwMix   = "read=0.25,write=0.75"
	rwThink = "exp:mean=10ms"
)

// Both ways, on real redis-server: a read-write lock whose writer enters
// while readers hold shows overlaps on the write role (a writer's entry
// finding readers inside), the roles' overlaps summing to the oracle's
// exactly (roleRun); rwlock shows 0 in every role, with readers and
// writers both completing operations (roleRun; rwMix keeps its writers
// from being starved).
func TestRolesReadWrite(t *testing.T) {
	t.Parallel()
	bad := roleRun(t, "test-rw-writer-ignores-readers", rwMix, rwThink)
	w, r := bad.Roles[workloads.RoleWrite], bad.Roles[workloads.RoleRead]
	if w.Violations["overlap"] < 1 || w.ViolationsTotal < w.Violations["overlap"] {
		t.Errorf("defective lock: write role %+v, want overlaps", w)
	}
	t.Logf("defective rwlock: write role overlap %d (violations %d), read role overlap %d; scenario overlap %d",
		w.Violations["overlap"], w.ViolationsTotal, r.Violations["overlap"], bad.Violations.Overlap)

	good := roleRun(t, "rwlock", rwMix, rwThink)
	for name, ro := range good.Roles {
		if ro.ViolationsTotal != 0 {
			t.Errorf("rwlock: role %s violations %v, want none", name, ro.Violations)
		}
	}
	if good.Violations.Total() != 0 {
		t.Errorf("rwlock: violations %+v, want none", good.Violations)
	}
	t.Logf("rwlock: write %d ops, read %d ops, violations 0 in every role", good.Roles["write"].Ops, good.Roles["read"].Ops)
}

// Both ways: a reentrant lock whose inner release frees the lock lets
// other clients in while a nested holder still works (overlaps on their
// entries) and its nested holders find their lease lost at release;
// reentrant shows 0 in every role.
func TestRolesNested(t *testing.T) {
	t.Parallel()
	bad := roleRun(t, "test-reentrant-inner-release-frees", "nested=0.5,write=0.5", "")
	var overlaps int64
	for _, ro := range bad.Roles {
		overlaps += ro.Violations["overlap"]
	}
	n := bad.Roles[workloads.RoleNested]
	if overlaps < 1 || n.Violations["lost_leases"] < 1 {
		t.Errorf("defective lock: roles %+v, want overlaps and the nested role's lost leases", bad.Roles)
	}
	t.Logf("defective reentrant: overlaps write %d nested %d; nested lost leases %d",
		bad.Roles["write"].Violations["overlap"], n.Violations["overlap"], n.Violations["lost_leases"])

	good := roleRun(t, "reentrant", "nested=0.5,write=0.5", "")
	for name, ro := range good.Roles {
		if ro.ViolationsTotal != 0 {
			t.Errorf("reentrant: role %s violations %v, want none", name, ro.Violations)
		}
	}
	if good.Violations.Total() != 0 {
		t.Errorf("reentrant: violations %+v, want none", good.Violations)
	}
}

// A mix the strategy, the workload or the clients cannot run is refused
// before anything starts, each reason named.
func TestRolesValidate(t *testing.T) {
	mix := func(s string) *workloads.Mix {
		m, err := workloads.ParseMix(s)
		if err != nil {
			t.Fatal(err)
		}
		return &m
	}
	for _, c := range []struct {
		strategy, workload, mix string
		clients                 int
		opts                    registry.Values
		want                    string // "" = valid
	}{
		{"rwlock", "flash-sale", "read=0.8,write=0.2", 10, nil, ""},
		{"atomic", "flash-sale", "read=0.8,write=0.2", 10, nil, "strategy atomic has no read side"},
		{"atomic", "flash-sale", "nested=0.5,write=0.5", 10, nil, "strategy atomic is not reentrant"},
		{"reentrant", "flash-sale", "nested=0.05,write=0.95", 20, nil, ""},
		{"reentrant", "flash-sale", "nested=0.05,write=0.95", 10, nil, "role nested gets no client of 10"},
		{"rwlock", "lock-cycle", "read=0.5,write=0.5", 10, nil, "workload lock-cycle has no read operation"},
		{"redis-guard", "flash-sale", "write=1", 10, nil, "takes no lock"},
		{"rwlock", "flash-sale", "read=0.5,write=0.5", 10, registry.Values{"read-ratio": 0.3}, "--read-ratio"},
	} {
		sc := engine.Scenario{Spec: engine.Spec{Strategy: c.strategy, Driver: "goredis", Workload: c.workload,
			Retry: policy(t, "fixed"), Clients: c.clients, Duration: time.Second, TTL: time.Second, Mix: mix(c.mix), Options: c.opts}}
		errs := engine.Validate(sc, engine.Layout{})
		err := errors.Join(errs...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s --mix %s: %v, want valid", c.strategy, c.workload, c.mix, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s --mix %s: %v, want an error with %q", c.strategy, c.workload, c.mix, err, c.want)
		}
	}
}

// The result file's role names are the workloads' roles, and a role's
// violation counts are the kinds the oracle and the clients count.
func TestRoleNames(t *testing.T) {
	if !slices.Equal(report.RoleNames, workloads.Roles) {
		t.Errorf("report.RoleNames %v, workloads.Roles %v", report.RoleNames, workloads.Roles)
	}
	m, _ := workloads.ParseMix("write=1")
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "atomic", Driver: "goredis", Workload: "lock-cycle", Retry: policy(t, "fixed"), Clients: 1, Mix: &m,
		Duration: 200 * time.Millisecond, TTL: 10 * time.Second, Params: workloads.Params{Work: workloads.Fixed(time.Millisecond)}, Seed: 1,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	got, want := slices.Sorted(maps.Keys(res.Roles["write"].Violations)), slices.Sorted(slices.Values(report.RoleViolationKinds()))
	if !slices.Equal(got, want) {
		t.Errorf("a role's violation keys %v, want %v", got, want)
	}
	if w := res.Roles["write"]; w.Clients != 1 || w.Ops != res.Ops {
		t.Errorf("write=1: the write role %+v, scenario ops %d", w, res.Ops)
	}
}

// crash-after-setnx:role=read on real redis-server crashes a reader while
// it holds rwlock's read side: its window says so, and the crashed client
// is one of the readers (clients 1 and 3 of read=0.5,write=0.5 on 4
// clients), which stops there while the other reader goes on. A role no
// client plays is refused.
func TestRoleCrash(t *testing.T) {
	t.Parallel()
	m, _ := workloads.ParseMix("read=0.5,write=0.5")
	if roles, _ := m.Assign(4); !slices.Equal(roles, []string{"write", "read", "write", "read"}) {
		t.Fatalf("roles %v", roles)
	}
	sp, err := faults.Parse("crash-after-setnx:role=read,at=300ms")
	if err != nil {
		t.Fatal(err)
	}
	sc := engine.Scenario{Spec: engine.Spec{
		Strategy: "rwlock", Driver: "goredis", Workload: "flash-sale",
		Retry: policy(t, "fixed:interval=2ms"), Clients: 4, Mix: &m, Faults: []faults.Spec{sp},
		Duration: 1500 * time.Millisecond, TTL: 10 * time.Second, AcquireTimeout: 20 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(2 * time.Millisecond)},
		Options: registry.Values{"stock": int64(1_000_000), "skus": 1}, Seed: 1, Liveness: -1,
	}}
	res, err := engine.Run(context.Background(), sc, nodes, "lockbench:test:"+t.Name()+":")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 || res.Faults[0].Note != "a client of role read crashed at after-acquire" {
		t.Fatalf("fault windows %+v", res.Faults)
	}
	ops := res.Raw.ClientOps
	dead, alive := min(ops[1], ops[3]), max(ops[1], ops[3])
	if dead >= alive {
		t.Errorf("client ops %v: no reader stopped early", ops)
	}
	t.Logf("client ops %v (writers 0 and 2, readers 1 and 3); roles %+v", ops, res.Roles)

	wm, _ := workloads.ParseMix("write=1")
	sc.Mix = &wm
	if err := errors.Join(engine.Validate(sc, engine.Layout{})...); err == nil || !strings.Contains(err.Error(), "role=read, but no client plays it") {
		t.Errorf("role=read without readers: %v", err)
	}
}
