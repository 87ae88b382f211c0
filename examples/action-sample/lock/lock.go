// Package lock is the sample repository's own lock, registered with
// lockbench as the strategy "inhouse": SET key token NX PX ttl to take
// it, a Lua compare-and-delete to release it (the lock of
// examples/custom-lock, docs/custom-lock.md walks through it). In your
// repository this is the package that holds your lock; importing it
// registers the strategy.
package lock

import (
	"context"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

func init() {
	strategies.Register("inhouse", strategies.Info{Desc: "sample in-house lock: SET NX PX, compare-and-delete release (examples/action-sample)"},
		func(c strategies.Config) (strategies.Locker, error) { return &locker{c}, nil })
}

type locker struct{ c strategies.Config }

func (l *locker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	token := strategies.NewToken()
	l.c.Sent(ctx, key, token) // the liveness oracle learns the token first
	ok, err := l.c.Nodes[0].SetNX(ctx, key, token, l.c.TTL)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, strategies.ErrNotAcquired
	}
	return &lease{l.c.Nodes[0], key, token}, nil
}

var unlock = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

type lease struct {
	d          drivers.Driver
	key, token string
}

func (l *lease) Key() string   { return l.key }
func (l *lease) Token() string { return l.token }

func (l *lease) Release(ctx context.Context) error {
	r, err := l.d.Eval(ctx, unlock, []string{l.key}, l.token)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return strategies.ErrNotOwner // the lease had expired: not our lock any more
	}
	return nil
}
