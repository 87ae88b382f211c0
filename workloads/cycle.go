package workloads

import (
	"context"
	"strconv"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

func init() {
	Register("lock-cycle", "acquire a lock, spend --work, release it; no data command. The key is drawn uniformly from --keys (little contention with many keys) or, with --own-keys, is each client's own (none): the lock's own cost",
		[]registry.Param{keysParam,
			{Name: "own-keys", Doc: "each client locks a key of its own instead of one of --keys (no contention at all)", Default: false}},
		func(v registry.Values) Workload { return &cycle{keys: v.Int("keys"), own: v.Bool("own-keys")} })
}

// cycle measures the lock alone: an operation is an acquire and a release
// of lock key i, drawn uniformly from keys, with Params.Work spent
// in between and no data command. With many keys and few clients there is
// next to no contention, so ops/s is the strategy's uncontended cycle rate
// (claim P8). With own-keys client i always locks key i: no
// contention at all (`lockbench harness` measures that way); under
// execution segments i counts the clients of the whole scenario
// (Env.ClientOffset + worker ID), so that no two segments share a key.
// Key i has the hash tag {cyc:i}.
type cycle struct {
	locks []string
	keys  int
	own   bool
}

var (
	_ Workload   = (*cycle)(nil)
	_ LockKeyer  = (*cycle)(nil)
	_ SharedSafe = (*cycle)(nil)
)

// SharedSafe: no data, so several holders of one lock lose nothing (a
// semaphore's permits, strategies.PermitsOf).
func (*cycle) SharedSafe() {}

func (c *cycle) Setup(_ context.Context, env *Env) error {
	k := max(c.keys, 1)
	if c.own {
		k = max(env.Clients, 1)
	}
	c.locks = make([]string, k)
	first := 0
	if c.own {
		first = env.ClientOffset
	}
	for i := range c.locks {
		c.locks[i] = env.Prefix + "{cyc:" + strconv.Itoa(first+i) + "}:lock"
	}
	env.SetLocks(k)
	return nil
}

// LockKeys lists the lock keys.
func (c *cycle) LockKeys() []string { return c.locks }

func (c *cycle) Op(ctx context.Context, w *Worker) error {
	i := 0
	if c.own {
		i = w.ID % len(c.locks) // IDs are 0..Clients-1: i = w.ID
	} else if len(c.locks) > 1 {
		i = w.Rng.IntN(len(c.locks))
	}
	return w.Hold(ctx, i, c.locks[i], false, func(context.Context, strategies.Lease) error {
		w.Work()
		return nil
	})
}

func (c *cycle) Verify(context.Context, *Env) (Result, error) {
	return Result{Figures: map[string]int64{}, Violations: map[string]int64{}}, nil
}
