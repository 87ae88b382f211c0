package strategies

import (
	"context"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	Register("naive", Info{Desc: "SETNX then EXPIRE as two commands, release by plain DEL (the broken pattern the articles warn of)", ConstantToken: true, Unsafe: true},
		func(c Config) (Locker, error) {
			return &naive{d: c.Nodes[0], ttl: c.TTL, constTok: c.ConstantToken, tokens: c.Tokens}, nil
		})
}

// naive is the two-command lock: SETNX key token, then PEXPIRE key ttl.
// A client that dies between the two leaves a key with no TTL, and release
// by DEL deletes whatever lock is there, even another client's.
type naive struct {
	d        drivers.Driver
	ttl      time.Duration
	constTok bool
	tokens   TokenTracker // told of each token before its SETNX
}

var (
	_ Locker       = (*naive)(nil)
	_ CrashPointer = (*naive)(nil)
)

// CrashPoint is between SETNX and EXPIRE.
func (n *naive) CrashPoint() string { return "after-setnx" }

func (n *naive) TryAcquire(ctx context.Context, key string) (Lease, error) {
	tok := Config{ConstantToken: n.constTok}.token()
	sent(n.tokens, ctx, key, tok)
	r, err := n.d.Do(ctx, "SETNX", key, tok)
	if err != nil {
		return nil, err
	}
	if r.Int != 1 {
		return nil, ErrNotAcquired
	}
	// The second round trip: the lock exists without a TTL until it lands.
	if crashAt(ctx, "after-setnx") {
		return nil, ErrCrashed
	}
	if _, err := n.d.Do(ctx, "PEXPIRE", key, strconv.FormatInt(n.ttl.Milliseconds(), 10)); err != nil {
		return nil, err
	}
	return &lease{key: key, token: tok, owner: n}, nil
}

// release deletes the key without looking at its value.
func (n *naive) release(ctx context.Context, key, _ string) error {
	_, err := n.d.Do(ctx, "DEL", key)
	return err
}
