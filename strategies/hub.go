package strategies

import (
	"context"
	"errors"
	"sync"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies/retry"
)

// Hub is the pub/sub wake-up of the `pubsub` retry policy (Redisson's
// LockPubSub): a holder PUBLISHes on the lock key's channel after it
// releases; one PSUBSCRIBE per process hears every such message under a
// prefix and wakes one waiter for that lock, the one waiting longest, which
// then tries again at once. Waiters also retry after at most the lease TTL,
// so a lost message (or a lease that expires unreleased) costs one TTL.
// Locks whose release script publishes itself (WakesOnRelease) name a
// channel per waiter instead (fair's queue head, handoff's grant); a Hub
// dispatches by exact channel name, so such a channel has one waiter.
type Hub struct {
	d       drivers.Driver
	mu      sync.Mutex
	waiters map[string][]chan struct{}
	done    <-chan struct{}
}

var _ retry.Notifier = (*Hub)(nil)

// NewHub subscribes on d to every channel under prefix until ctx ends.
// Errors: the driver has no pub/sub, or the subscription failed.
func NewHub(ctx context.Context, d drivers.Driver, prefix string) (*Hub, error) {
	sub, ok := d.(drivers.Subscriber)
	if !ok {
		return nil, errors.New("pubsub retry: driver " + d.Name() + " has no pub/sub")
	}
	h := &Hub{d: d, waiters: map[string][]chan struct{}{}}
	done, err := sub.PSubscribe(ctx, prefix+"*", func(channel, _ string) { h.wake(channel) })
	if err != nil {
		return nil, err
	}
	h.done = done
	return h, nil
}

// Done is closed when the subscription has ended.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Watch registers a waiter for channel key (a lock key, or a waiter's own
// channel); stop unregisters it.
func (h *Hub) Watch(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.waiters[key] = append(h.waiters[key], ch)
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		list := h.waiters[key]
		for i, c := range list {
			if c == ch {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(h.waiters, key)
		} else {
			h.waiters[key] = list
		}
	}
}

// wake signals the longest-waiting waiter of key and moves it to the back.
func (h *Hub) wake(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.waiters[key]
	if len(list) == 0 {
		return
	}
	first := list[0]
	select {
	case first <- struct{}{}:
	default:
	}
	copy(list, list[1:])
	list[len(list)-1] = first
}

// Published announces the release of key (PUBLISH key "").
func (h *Hub) Published(ctx context.Context, key string) error {
	_, err := h.d.Do(ctx, "PUBLISH", key, "")
	return err
}
