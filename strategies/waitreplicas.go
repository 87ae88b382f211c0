package strategies

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"
)

func init() {
	Register("wait-replicas", Info{
		Desc:     "atomic SET NX PX followed by WAIT 1 <timeout>: the acquire fails and releases unless a replica acknowledged it (Redisson's synced-replica check)",
		Topology: Replicated,
	}, func(c Config) (Locker, error) {
		w := &waitReplicas{atomicLocker: atomicLocker{d: c.Nodes[0], ttl: c.TTL}, replicas: c.Replicas, timeout: c.WaitTimeout}
		if w.replicas <= 0 {
			w.replicas = 1
		}
		if w.timeout <= 0 {
			w.timeout = 50 * time.Millisecond
		}
		return w, nil
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
	l, err := w.atomicLocker.TryAcquire(ctx, key)
	if err != nil {
		return nil, err
	}
	r, err := w.d.Do(ctx, "WAIT", strconv.Itoa(w.replicas), ms(w.timeout))
	if err == nil && r.Int >= int64(w.replicas) {
		return l, nil
	}
	w.notReplicated.Add(1)
	_ = l.Release(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	return nil, ErrNotAcquired
}

// Stats reports acquires undone because no replica acknowledged in time.
func (w *waitReplicas) Stats() map[string]float64 {
	return map[string]float64{"not_replicated": float64(w.notReplicated.Load())}
}
