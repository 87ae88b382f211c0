package strategies

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/drivers"
)

// NewTrackingHub is the wake-up of the `csc` retry policy, the way
// rueidislock's waiters wait (github.com/redis/rueidis/rueidislock: a
// waiter sleeps until an invalidation of its lock's keys arrives): a Hub
// whose wake-ups are RESP3 client-side-caching invalidations instead of
// release messages. d's Tracker (the rueidis adapter) opens a client of
// its own with CLIENT TRACKING ON BCAST PREFIX prefix, and the server
// pushes the name of every key under prefix that changes: a SET, a DEL,
// a PEXPIRE, a script's writes, an expiry. Each pushed key wakes its
// waiters as Hub's release messages do: the longest waiting one, which
// moves to the back. A WaitQueue waiter (fair) watches the key its
// WakeChannel names, which the release SETs for the queue head alone
// (Config.Wake = WakeKey), so exactly the waiter whose turn it is wakes. A
// flush-all push (FLUSHALL, or the
// tracking connection lost) wakes every waiter of every key. Nothing is
// published: Published is not for this Hub, and the workload's
// Env.Released stays nil.
//
// Why one waiter per push. A push does not say what changed, and a lock
// key changes when the lock is released or expires, but also when it is
// taken and when its lease is renewed. A release or an expiry frees the
// lock for whichever client comes first, so one woken waiter is enough
// to take it: waking every waiter on every push would make each
// acquire, renewal and release cost an attempt by each of them. Waking
// one costs one wasted attempt per acquire or renewal (the woken waiter
// finds the lock held and waits again, at the back); a waiter that is
// never woken still tries again after the policy's max (the lease TTL by
// default).
//
// Keys. The waiters watch the lock key (the key Acquire is given), and
// only its pushes wake them; pushes of other keys under prefix (a
// workload's data, fair's queue and deadline keys) find no waiter. A lock
// kept in one Redis key of any type (reentrant's and rwlock's hashes) is
// woken by every change to it; a locker whose lock is not the lock key
// (Stored keys) gets no wake-ups and waits max between attempts (the
// Queued lockers, ZooKeeper's, etcd's, MariaDB's, handoff's, wait in
// their own queues and never retry). Only d's server is tracked:
// the engine passes Nodes[0], so redlock's waiters are woken by the
// release or expiry of the key on the first master only (as the pubsub
// Hub listens on the first node only). The tracking client is built once
// and does not follow a failover (drivers.Switch).
//
// It tracks until ctx ends. Errors: d has no Tracker (go-redis), or the
// tracking client could not connect.
func NewTrackingHub(ctx context.Context, d drivers.Driver, prefix string) (*Hub, error) {
	tr, ok := d.(drivers.Tracker)
	if !ok {
		return nil, errors.New("csc retry: driver " + d.Name() + " has no client-side-caching invalidations (RESP3 CLIENT TRACKING); use the rueidis driver")
	}
	h := &Hub{d: d, waiters: map[string][]chan struct{}{}}
	done, err := tr.TrackPrefix(ctx, prefix, func(keys []string) {
		if keys == nil {
			h.wakeEvery()
			return
		}
		for _, k := range keys {
			h.wake(k)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("csc retry: %w", err)
	}
	h.done = done
	return h, nil
}

// wakeEvery signals every waiter of every key.
func (h *Hub) wakeEvery() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, list := range h.waiters {
		for _, c := range list {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}
