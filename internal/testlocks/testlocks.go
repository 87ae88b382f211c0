// Package testlocks holds deliberately defective lock strategies that the
// tests of several packages run, so that each is written once. Importing
// it registers them (strategies.Register); only _test.go files import it,
// so no lockbench binary offers them.
package testlocks

import (
	"context"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// WholeKeyReaders is the name of a lock of shares only (every holder a
// reader) in one hash whose field is the holder's owner id (value: its
// hold count), as rwlock's readers, except that each acquire extends the
// whole hash (PEXPIRE of the TTL): a dead reader's share lives as long as
// other readers keep arriving, the defect orphan_shares names. Its release
// drops one hold (ErrNotOwner when the field is gone). It reports its
// tokens (strategies.TokenTracker) before each acquire.
const WholeKeyReaders = "test-whole-key-readers"

func init() {
	strategies.Register(WholeKeyReaders, strategies.Info{Desc: "test only: readers' shares in one hash, every acquire extending the whole hash"},
		func(c strategies.Config) (strategies.Locker, error) {
			return wholeKeyReaders{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, nil
		})
}

var (
	wholeKeyTake = drivers.NewScript(`redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return 1`)
	wholeKeyDrop = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return 0
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
	redis.call('hdel', KEYS[1], ARGV[1])
end
return 1`)
)

type wholeKeyReaders struct {
	d      drivers.Driver
	ttl    time.Duration
	tokens strategies.TokenTracker
}

func (w wholeKeyReaders) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	owner := strategies.ClientFrom(ctx).Owner
	if w.tokens != nil {
		w.tokens.Sent(ctx, key, owner)
	}
	if _, err := w.d.Eval(ctx, wholeKeyTake, []string{key}, strconv.FormatInt(w.ttl.Milliseconds(), 10), owner); err != nil {
		return nil, err
	}
	return wholeKeyLease{w: w, key: key, owner: owner}, nil
}

type wholeKeyLease struct {
	w          wholeKeyReaders
	key, owner string
}

func (l wholeKeyLease) Key() string   { return l.key }
func (l wholeKeyLease) Token() string { return l.owner }
func (l wholeKeyLease) Release(ctx context.Context) error {
	r, err := l.w.d.Eval(ctx, wholeKeyDrop, []string{l.key}, l.owner)
	if err != nil {
		return err
	}
	if r.Int == 0 {
		return strategies.ErrNotOwner
	}
	return nil
}
