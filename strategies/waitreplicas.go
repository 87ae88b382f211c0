package strategies

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("wait-replicas", Info{
		Desc:     "atomic SET NX PX followed by WAIT 1 <timeout>: the acquire fails and releases unless a replica acknowledged it (Redisson's synced-replica check)",
		Topology: Replicated,
		Params: []registry.Param{{Name: "wait-timeout", Doc: "WAIT timeout for a replica's acknowledgement (ms resolution)",
			Default: 50 * time.Millisecond, Check: registry.DurationBetween(time.Millisecond, time.Hour)}},
	}, func(c Config) (Locker, error) {
		return &waitReplicas{atomicLocker: atomicLocker{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, replicas: 1, timeout: c.Params.Duration("wait-timeout")}, nil
	})
}

// waitReplicas narrows the async-replication window: after SET NX PX on the
// master it sends WAIT numreplicas timeout, which returns how many replicas
// have acknowledged every write of this connection so far. With fewer than
// asked, the lock could vanish in a failover, so the acquire is undone.
// WAIT makes the write reach the replica's memory, not its disk; a failover
// after it keeps the lock.
type waitReplicas struct {
	atomicLocker
	replicas      int
	timeout       time.Duration
	notReplicated atomic.Int64
}

var (
	_ Locker        = (*waitReplicas)(nil)
	_ StatsReporter = (*waitReplicas)(nil)
)

func (w *waitReplicas) TryAcquire(ctx context.Context, key string) (Lease, error) {
	pl, ok := w.d.(drivers.Pipeliner)
	if !ok {
		return nil, errors.New("wait-replicas: driver " + w.d.Name() + " cannot pipeline SET and WAIT on one connection")
	}
	tok := NewToken()
	// SET and WAIT on one connection: WAIT counts the replicas that have
	// acknowledged this connection's writes, so on another connection it
	// would vouch for the wrong write.
	sent(w.tokens, ctx, key, tok)
	replies, errs := pl.Pipeline(ctx,
		[]string{"SET", key, tok, "NX", "PX", ms(w.ttl)},
		[]string{"WAIT", strconv.Itoa(w.replicas), ms(w.timeout)})
	if errs[0] != nil {
		return nil, errs[0]
	}
	if replies[0].IsNil() {
		return nil, ErrNotAcquired
	}
	l := &lease{key: key, token: tok, owner: &w.atomicLocker}
	if errs[1] == nil && replies[1].Int >= int64(w.replicas) {
		return l, nil
	}
	w.notReplicated.Add(1)
	_ = l.Release(context.WithoutCancel(ctx))
	if errs[1] != nil {
		return nil, errs[1]
	}
	return nil, ErrNotAcquired
}

// Stats reports acquires undone because no replica acknowledged in time.
func (w *waitReplicas) Stats() map[string]float64 {
	return map[string]float64{"not_replicated": float64(w.notReplicated.Load())}
}
