package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

func init() {
	Register("hot-key", "read-modify-write of a counter per key under its lock; K keys (--keys) drawn from a Zipf law (--zipf, 0 = uniform)",
		[]registry.Param{keysParam, zipfParam},
		func(v registry.Values) Workload {
			return &counter{name: "hot-key", keys: v.Int("keys"), zipfS: v.Float("zipf")}
		})
	Register("long-task", "one lock, a long critical section from --work (fixed, uniform:, lognormal:): shows fixed leases expiring mid-task",
		nil, func(registry.Values) Workload { return &counter{name: "long-task", single: true, keys: 1} })
	Register("nested", "the critical section takes the same lock again (and with --nested-second a second lock, in a fixed order); nested failures counted",
		[]registry.Param{keysParam, zipfParam,
			{Name: "nested-second", Doc: "also take a second lock inside the first (in a fixed order)", Default: false}},
		func(v registry.Values) Workload {
			return &counter{name: "nested", nested: true, keys: v.Int("keys"), zipfS: v.Float("zipf"), second: v.Bool("nested-second")}
		})
}

// counter is the family of counter workloads. Under lock i's critical
// section a client reads counter i (GET), spends the work time, and writes
// it back plus one (SET) — an increment that only the lock protects. With
// nested, inside that section it also acquires lock i again (one attempt
// within min(acquire timeout, 1 s)) and, with nested-second, lock
// i+1 (i is then drawn below the last key, so locks are always taken in
// ascending order and cannot deadlock), before the write.
//
// Params.Guard adds a check to the write (GuardCAS, GuardFence; see
// Guards): the read and the write then go through the scripts of
// guards.go, as flash-sale's do. A lock-free strategy (redis-guard) reads,
// works and writes with INCR in place (GuardIncr), or with the guard
// given; the SQL strategies write their rows their own way.
//
// Keys for counter i share the hash tag {ctr:i}: <prefix>{ctr:i}:lock, :n,
// and with the fence guard :fence-seen (the highest fencing token seen).
// Verify: increments = writes acknowledged by Redis; lost_updates =
// increments − Σ counters (increments another holder overwrote).
type counter struct {
	// rows keeps the counters in SQL rows (sql-rowlock, sql-guard);
	// lockless takes no lock (redis-guard, sql-guard): the increment is
	// then done in place by the store (Redis INCR, SQL n = n + 1).
	rows           strategies.RowStore
	lockless       bool
	name           string
	single, nested bool
	keys           int     // lock keys (1 for long-task)
	zipfS          float64 // Zipf exponent of the key choice; 0 = uniform
	second         bool    // nested: also take lock i+1
	guard          string  // the write guard (Guards)
	locks, vals    []string
	seen           []string     // the fence guard's highest token seen, per counter
	zipf           []*rand.Zipf // per worker, made on first use
	done           atomic.Int64 // acknowledged increments
	nestedFail     atomic.Int64
}

var (
	_ Workload  = (*counter)(nil)
	_ LockKeyer = (*counter)(nil)
	_ Guarder   = (*counter)(nil)
)

// Guards: a counter's write takes the optimistic check, the fencing token
// and the increment in place; the conditional decrement is flash-sale's
// stock's alone.
func (*counter) Guards() []string { return []string{GuardNone, GuardCAS, GuardFence, GuardIncr} }

// errNested is an operation whose nested acquire failed.
var errNested = errors.New("nested acquire failed")

// errZipf is zipf's Check error.
var errZipf = errors.New("must be 0 (uniform) or above 1 (and at most 100)")

func (c *counter) Setup(ctx context.Context, env *Env) error {
	if c.guard = env.Params.Guard; c.guard == "" {
		c.guard = GuardNone
	}
	if !slices.Contains(c.Guards(), c.guard) {
		return fmt.Errorf("%s: guard %q is not one of %s", c.name, env.Params.Guard, strings.Join(c.Guards(), ", "))
	}
	k := c.keys
	c.locks, c.vals, c.seen = make([]string, k), make([]string, k), make([]string, k)
	for i := range c.locks {
		base := env.Prefix + "{ctr:" + strconv.Itoa(i) + "}:"
		c.locks[i], c.vals[i], c.seen[i] = base+"lock", base+"n", base+"fence-seen"
	}
	c.zipf = make([]*rand.Zipf, max(env.Clients, 1))
	env.SetLocks(k)
	c.lockless = strategies.IsLockless(env.Locker)
	if rs, ok := env.Locker.(strategies.RowStore); ok {
		c.rows = rs
		return rs.CreateRows(ctx, env.Prefix, c.locks, make([]int64, k))
	}
	// Every counter exists from the start, at 0 with the safety TTL, and
	// so does the fence guard's highest token seen: the writes (SET ...
	// KEEPTTL, INCR) keep it and create no key.
	step := batchSize(env)
	for lo := 0; lo < k; lo += step {
		var keys, vals []string
		for i := lo; i < min(lo+step, k); i++ {
			keys, vals = append(keys, c.vals[i]), append(vals, "0")
			if c.guard == GuardFence {
				keys, vals = append(keys, c.seen[i]), append(vals, "0")
			}
		}
		if err := SetData(ctx, env, keys, vals); err != nil {
			return err
		}
	}
	return nil
}

// LockKeys lists the lock keys.
func (c *counter) LockKeys() []string { return c.locks }

func (c *counter) pick(w *Worker) int {
	k := len(c.locks)
	if c.nested && c.second && k > 1 {
		k-- // the second lock is i+1: keys are always taken in ascending order
	}
	if k == 1 {
		return 0
	}
	if z := c.zipfS; z > 1 && w.ID < len(c.zipf) {
		if c.zipf[w.ID] == nil {
			c.zipf[w.ID] = rand.NewZipf(w.Rng, z, 1, uint64(k-1))
		}
		return int(c.zipf[w.ID].Uint64())
	}
	return w.Rng.IntN(k)
}

func (c *counter) Op(ctx context.Context, w *Worker) error {
	i := c.pick(w)
	if c.rows != nil {
		body := func(ictx context.Context, l strategies.Lease) error { return c.onRows(ictx, w, i, l) }
		if c.lockless {
			return w.Unlocked(ctx, body)
		}
		return w.Hold(ctx, i, c.locks[i], false, body)
	}
	if c.lockless {
		return w.Unlocked(ctx, func(ictx context.Context, l strategies.Lease) error { return c.increment(ictx, w, i, l) })
	}
	return w.Hold(ctx, i, c.locks[i], false, func(ictx context.Context, l strategies.Lease) error {
		if c.nested {
			release, err := c.enterNested(ctx, w, i)
			if err != nil && ctx.Err() != nil {
				return ctx.Err() // the run is stopping: not a nested failure
			}
			if err != nil {
				c.nestedFail.Add(1)
				return fmt.Errorf("%w: %w", errNested, err)
			}
			defer release(ictx)
		}
		return c.increment(ictx, w, i, l)
	})
}

// increment is the read-modify-write of counter i in Redis under lease l
// (nil for a lock-free strategy): read it, work, then write it plus one
// through the guard (see rmw), or with GuardIncr INCR it in place. A
// holder that knows its lease is lost does not write (ErrRejected).
func (c *counter) increment(ctx context.Context, w *Worker, i int, l strategies.Lease) error {
	r := rmw{guard: c.guard, key: c.vals[i], seen: c.seen[i], zero: true}
	if err := r.readValue(ctx, w, l); err != nil {
		if errors.Is(err, errNoFence) {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		return err
	}
	w.Work()
	if Lost(l) {
		w.Obs.WriteRejected()
		return ErrRejected
	}
	w.BeforeWrite()
	var err error
	if c.guard == GuardIncr {
		_, err = w.Env.Data.Do(ctx, "INCR", c.vals[i])
	} else {
		err = r.write(ctx, w, r.read+1)
	}
	if err != nil {
		return err
	}
	c.done.Add(1)
	w.Wrote(l)
	return nil
}

// onRows is the increment of counter i in SQL rows. Under sql-rowlock's
// row lock: the value read by SELECT ... FOR UPDATE, work, UPDATE n =
// read + 1 (committed by the release). With no lock (sql-guard): a plain
// SELECT, work, then the increment in place (UPDATE n = n + 1), which
// cannot lose another client's.
func (c *counter) onRows(ctx context.Context, w *Worker, i int, l strategies.Lease) error {
	var err error
	switch rl, ok := l.(strategies.RowLease); {
	case ok:
		w.Work()
		if Lost(l) {
			w.Obs.WriteRejected()
			return ErrRejected
		}
		err = rl.WriteRow(ctx, rl.Value()+1, 0)
	case c.lockless:
		if _, err = c.rows.ReadRow(ctx, c.locks[i]); err != nil {
			return err
		}
		w.Work()
		err = c.rows.Increment(ctx, c.locks[i])
	default:
		return fmt.Errorf("%s: SQL rows without a lock need the guarded strategy (sql-guard)", c.name)
	}
	if err != nil {
		return err
	}
	c.done.Add(1)
	w.Wrote(l)
	return nil
}

// enterNested re-acquires lock i (and the second lock) for the holder of
// lock i, and returns the function that releases them, inner first.
func (c *counter) enterNested(ctx context.Context, w *Worker, i int) (func(context.Context), error) {
	bound := min(w.Env.AcquireTimeout, time.Second)
	if bound <= 0 {
		bound = time.Second
	}
	once := noRetry.New(nil)
	inner, _, err := strategies.Acquire(ctx, w.Env.Locker, c.locks[i], once, bound)
	if err != nil {
		return nil, err
	}
	held := []strategies.Lease{inner}
	release := func(rctx context.Context) {
		for j := len(held) - 1; j >= 0; j-- {
			_ = held[j].Release(rctx)
		}
	}
	if c.second && len(c.locks) > 1 {
		j := i + 1 // pick keeps i below the last key: one global order, no deadlock
		second, _, err := strategies.Acquire(ctx, w.Env.Locker, c.locks[j], w.Backoff, bound)
		if err != nil {
			release(w.IO(ctx))
			return nil, err
		}
		held = append(held, second)
	}
	return release, nil
}

var noRetry, _ = retry.Parse("none")

// Counts are the acknowledged increments (workloads.Pooled).
func (c *counter) Counts() map[string]int64 { return map[string]int64{"done": c.done.Load()} }

// SetCounts sets the acknowledged increments to the sum over every segment.
func (c *counter) SetCounts(m map[string]int64) {
	if v, ok := m["done"]; ok {
		c.done.Store(v)
	}
}

func (c *counter) Verify(ctx context.Context, env *Env) (Result, error) {
	var sum int64
	if c.rows != nil {
		n, _, err := c.rows.Rows(ctx)
		if err != nil {
			return Result{}, err
		}
		for _, v := range n {
			sum += v
		}
		done := c.done.Load()
		return Result{
			Figures:    map[string]int64{"increments": done, "counter_sum": sum},
			Violations: map[string]int64{LostUpdates: max(0, done-sum)},
		}, nil
	}
	step := batchSize(env)
	for lo := 0; lo < len(c.vals); lo += step {
		args := append([]string{"MGET"}, c.vals[lo:min(lo+step, len(c.vals))]...)
		r, err := env.Data.Do(ctx, args...)
		if err != nil {
			return Result{}, err
		}
		for _, v := range r.Array {
			if v.IsNil() {
				continue
			}
			n, err := v.AsInt()
			if err != nil {
				return Result{}, err
			}
			sum += n
		}
	}
	done := c.done.Load()
	res := Result{
		Figures:    map[string]int64{"increments": done, "counter_sum": sum},
		Violations: map[string]int64{LostUpdates: max(0, done-sum)},
	}
	if c.nested {
		res.Figures["nested_failures"] = c.nestedFail.Load()
	}
	return res, nil
}
