package strategies

import (
	"context"
	"sync"

	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("multilevel", Info{Desc: "in-process mutex per key per app instance in front of the atomic Redis lock, plus an optimistic check on the stock write (the articles' three layers)",
		Guard:  "cas",
		Params: []registry.Param{{Name: "instances", Doc: "simulated app instances, each with its own in-process mutex per key", Default: 4, Check: registry.Between(1, 10_000)}}},
		func(c Config) (Locker, error) {
			n := c.Params.Int("instances")
			return &multilevel{inner: &atomicLocker{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, locals: make([]sync.Map, n)}, nil
		})
}

// multilevel simulates n application instances, the workers split across
// them by worker id. In each instance, a local mutex per key lets one
// worker at a time go on to the Redis lock, so Redis sees at most one
// contender per instance; the workload adds a compare-and-set check on its
// write (Guard "cas").
type multilevel struct {
	inner  *atomicLocker
	locals []sync.Map // per instance: key -> chan struct{} (capacity 1)
}

var (
	_ Locker   = (*multilevel)(nil)
	_ blocking = (*multilevel)(nil)
)

func (m *multilevel) blocks() {}

func (m *multilevel) local(ctx context.Context, key string) chan struct{} {
	id := ClientFrom(ctx).ID
	if id < 0 {
		id = 0
	}
	inst := &m.locals[id%len(m.locals)]
	if ch, ok := inst.Load(key); ok {
		return ch.(chan struct{})
	}
	ch, _ := inst.LoadOrStore(key, make(chan struct{}, 1))
	return ch.(chan struct{})
}

// TryAcquire waits for the instance's local mutex (bounded by ctx), then
// makes one attempt at the Redis lock; on failure it frees the local mutex.
func (m *multilevel) TryAcquire(ctx context.Context, key string) (Lease, error) {
	ch := m.local(ctx, key)
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l, err := m.inner.TryAcquire(ctx, key)
	if err != nil {
		<-ch
		return nil, err
	}
	return &localLease{Lease: l, ch: ch}, nil
}

type localLease struct {
	Lease
	ch   chan struct{}
	once sync.Once
}

// Release gives up the Redis lock, then the local mutex (once, however
// often it is called).
func (l *localLease) Release(ctx context.Context) error {
	err := l.Lease.Release(ctx)
	l.once.Do(func() { <-l.ch })
	return err
}
