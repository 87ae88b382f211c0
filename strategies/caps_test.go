package strategies_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// capsLocker never takes a lock; the types below add one capability each.
type capsLocker struct{}

func (capsLocker) TryAcquire(context.Context, string) (strategies.Lease, error) {
	return nil, strategies.ErrNotAcquired
}

type ownRetryLocker struct{ capsLocker }

func (*ownRetryLocker) OwnRetry() {}

type queuedLocker struct{ capsLocker }

func (*queuedLocker) Queued() {}

// Info.OwnsRetry and Info.Queues come from the factory's locker type, the
// one declaration of each fact: a concrete type that implements OwnRetry
// or Queued sets them, a plain one neither; a factory typed Locker whose
// locker implements one is refused by New (lockbench would drive it as a
// lock it retries), and a caller that sets them panics.
func TestRegisterDerivesCapabilities(t *testing.T) {
	strategies.Register("caps-own-retry", strategies.Info{Desc: "test"},
		func(strategies.Config) (*ownRetryLocker, error) { return &ownRetryLocker{}, nil })
	strategies.Register("caps-queued", strategies.Info{Desc: "test"},
		func(strategies.Config) (*queuedLocker, error) { return &queuedLocker{}, nil })
	strategies.Register("caps-plain", strategies.Info{Desc: "test"},
		func(strategies.Config) (capsLocker, error) { return capsLocker{}, nil })
	strategies.Register("caps-hidden", strategies.Info{Desc: "test"},
		func(strategies.Config) (strategies.Locker, error) { return &queuedLocker{}, nil })
	for name, want := range map[string][2]bool{
		"caps-own-retry": {true, false}, "caps-queued": {false, true}, "caps-plain": {false, false}, "caps-hidden": {false, false},
		// The built-in strategies, by the methods of their lockers.
		"handoff": {false, true}, "atomic": {false, false}, "fair": {false, false},
	} {
		if info := strategies.InfoOf(name); info.OwnsRetry != want[0] || info.Queues != want[1] {
			t.Errorf("%s: OwnsRetry %v, Queues %v; want %v, %v", name, info.OwnsRetry, info.Queues, want[0], want[1])
		}
	}
	c := strategies.Config{Nodes: []drivers.Driver{nil}, TTL: time.Second}
	for _, name := range []string{"caps-own-retry", "caps-queued", "caps-plain"} {
		if _, err := strategies.New(name, c); err != nil {
			t.Errorf("New(%s): %v", name, err)
		}
	}
	if _, err := strategies.New("caps-hidden", c); err == nil ||
		!strings.Contains(err.Error(), "its locker *strategies_test.queuedLocker implements strategies.Queued, but its factory returns a type that does not") {
		t.Errorf("New(caps-hidden) = %v, want the factory's type refused", err)
	}
	// Reads, Reentrant and Lockless likewise (the roles of --mix).
	for name, want := range map[string][3]bool{
		"rwlock": {true, true, false}, "reentrant": {false, true, false}, "reentrant-watchdog": {false, true, false},
		"atomic": {false, false, false}, "redis-guard": {false, false, true}, "caps-plain": {false, false, false},
	} {
		if info := strategies.InfoOf(name); info.Reads != want[0] || info.Reentrant != want[1] || info.Lockless != want[2] {
			t.Errorf("%s: Reads %v, Reentrant %v, Lockless %v; want %v", name, info.Reads, info.Reentrant, info.Lockless, want)
		}
	}
	// WaitQueue likewise: fair queues its waiters in Redis, atomic not.
	if !strategies.InfoOf("fair").WaitQueue || strategies.InfoOf("atomic").WaitQueue {
		t.Errorf("WaitQueue: fair %v, atomic %v; want true, false", strategies.InfoOf("fair").WaitQueue, strategies.InfoOf("atomic").WaitQueue)
	}
	for _, info := range []strategies.Info{{OwnsRetry: true}, {Queues: true}, {Reads: true}, {Reentrant: true}, {Lockless: true}, {WaitQueue: true}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "set from the factory's locker type") {
					t.Errorf("Register with %+v: recovered %v, want a panic", info, r)
				}
			}()
			strategies.Register("caps-given", info, func(strategies.Config) (*queuedLocker, error) { return &queuedLocker{}, nil })
		}()
	}
}

// readRetryLocker has a read side and waits itself (an external
// read-write lock, Redisson's RReadWriteLock through its adapter).
type readRetryLocker struct{ ownRetryLocker }

func (readRetryLocker) TryAcquireRead(context.Context, string) (strategies.Lease, error) {
	return nil, strategies.ErrNotAcquired
}

// The read side of an OwnRetry locker is OwnRetry too, so that a read's
// acquire gets the acquire timeout as its deadline (the library's wait)
// and not one attempt; the read side of a plain locker does not block.
func TestReadSideKeepsOwnRetry(t *testing.T) {
	r := strategies.ReadSide(&readRetryLocker{})
	if _, ok := r.(strategies.OwnRetry); !ok || !strategies.Blocks(r) {
		t.Fatalf("the read side %T of an OwnRetry locker is not OwnRetry", r)
	}
	if r := strategies.ReadSide(capsLocker{}); strategies.Blocks(r) {
		t.Fatalf("the read side %T of a locker without OwnRetry blocks", r)
	}
}
