package strategies

// Locks over several keys: the `multi` strategy (one script, all or
// nothing) and AcquireMulti, which takes several keys with any exclusive
// Locker, one key at a time.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies/retry"
)

func init() {
	Register("multi", Info{Desc: "all-or-nothing lock over several keys: one Lua script SETs every key (token, PX ttl) only when all are free, release compare-and-deletes each (Redisson's RedissonMultiLock, bsm/redislock's ObtainMulti); one key is TryAcquireMulti of [key]",
		ConstantToken: true},
		func(c Config) (*multiLocker, error) {
			return &multiLocker{d: c.Nodes[0], ttl: c.TTL, constTok: c.ConstantToken, tokens: c.Tokens}, nil
		})
}

// multiAcquireScript sets every KEYS[i] to ARGV[1] with PX ARGV[2] (ms)
// when none of them exists, and returns 1; else it sets none and returns
// 0. One script: no other command runs between the check and the sets.
var multiAcquireScript = drivers.NewScript(`for _, k in ipairs(KEYS) do
	if redis.call('exists', k) == 1 then return 0 end
end
for _, k in ipairs(KEYS) do
	redis.call('set', k, ARGV[1], 'PX', ARGV[2])
end
return 1`)

// multiReleaseScript deletes each KEYS[i] that holds ARGV[1] and returns
// how many it deleted; a key holding another token (or none) is left
// alone.
var multiReleaseScript = drivers.NewScript(`local n = 0
for _, k in ipairs(KEYS) do
	if redis.call('get', k) == ARGV[1] then n = n + redis.call('del', k) end
end
return n`)

// multiLocker is the `multi` strategy: a MultiLocker whose TryAcquireMulti
// takes k lock keys at once, all or none, in one Lua script
// (multiAcquireScript): every key free, then SET each to the lease's token
// with PX ttl; any key held, then nothing is set and the attempt returns
// ErrNotAcquired. Release (multiReleaseScript) compare-and-deletes each
// key, so an expired lease never deletes a successor's lock; it returns
// ErrNotOwner when any of the keys no longer held the token (the keys
// that still did are deleted). TryAcquire(key) is TryAcquireMulti([key]):
// a single-key lock as atomic's (SET NX PX, compare-and-delete).
//
// It is the scheme of Redisson's RedissonMultiLock
// (org.redisson.RedissonMultiLock, which groups several RLocks and
// acquires them all or unlocks those it got) and of bsm/redislock's
// ObtainMulti (a Lua script that sets every key or none), done as one
// script, so that no key is ever held while another is waited for: it
// cannot deadlock, in any order of the keys.
//
// The keys may be in any hash slot on a standalone server (or a
// master-replica pair, Sentinel). On a Redis Cluster a script's keys must
// share one hash slot: keys of several slots are refused by the server
// (CROSSSLOT), an error TryAcquireMulti returns as it is. Give the keys
// of one operation one hash tag ({...}) there; lockbench's transfer
// workload puts every account in one tag on a Cluster.
type multiLocker struct {
	d        drivers.Driver
	ttl      time.Duration
	constTok bool
	tokens   TokenTracker // told of each key's token before the script
}

var (
	_ Locker      = (*multiLocker)(nil)
	_ MultiLocker = (*multiLocker)(nil)
)

// TryAcquire is TryAcquireMulti of [key].
func (m *multiLocker) TryAcquire(ctx context.Context, key string) (Lease, error) {
	return m.TryAcquireMulti(ctx, []string{key})
}

// TryAcquireMulti makes one attempt at every key of keys (at least one,
// each once): a MultiLease of them all, or ErrNotAcquired with none of
// them set. Errors: no key or a key given twice (a caller's mistake,
// nothing sent), the server's.
func (m *multiLocker) TryAcquireMulti(ctx context.Context, keys []string) (Lease, error) {
	if err := checkKeys(keys); err != nil {
		return nil, fmt.Errorf("multi: %w", err)
	}
	tok := Config{ConstantToken: m.constTok}.token()
	for _, k := range keys {
		sent(m.tokens, ctx, k, tok)
	}
	r, err := m.d.Eval(ctx, multiAcquireScript, keys, tok, ms(m.ttl))
	if err != nil {
		return nil, err
	}
	if r.Int != 1 {
		return nil, ErrNotAcquired
	}
	return &multiLease{m: m, keys: slices.Clone(keys), tok: tok}, nil
}

// checkKeys refuses an empty key list and a key given twice.
func checkKeys(keys []string) error {
	if len(keys) == 0 {
		return errors.New("no key to lock")
	}
	for i, k := range keys {
		if slices.Contains(keys[:i], k) {
			return fmt.Errorf("key %q given twice", k)
		}
	}
	return nil
}

// multiLease is multi's lease: every key holds tok.
type multiLease struct {
	m    *multiLocker
	keys []string
	tok  string
}

var _ MultiLease = (*multiLease)(nil)

func (l *multiLease) Key() string    { return l.keys[0] }
func (l *multiLease) Keys() []string { return l.keys }
func (l *multiLease) Token() string  { return l.tok }

// Release compare-and-deletes every key: nil when each still held the
// token, ErrNotOwner when one did not (the others are deleted).
func (l *multiLease) Release(ctx context.Context) error {
	r, err := l.m.d.Eval(ctx, multiReleaseScript, l.keys, l.tok)
	if err != nil {
		return err
	}
	if r.Int != int64(len(l.keys)) {
		return fmt.Errorf("multi: %d of %d keys still held the token: %w", r.Int, len(l.keys), ErrNotOwner)
	}
	return nil
}

// Key orders of AcquireMulti with a Locker that is not a MultiLocker.
const (
	// OrderSorted takes the keys in sorted (byte-wise) order, the
	// deadlock-avoidance rule: every client takes any two keys in the
	// same order, so no two clients each hold a key the other waits for
	// (Coffman's circular wait cannot form). AcquireMulti moreover never
	// waits while it holds a key: each round makes one attempt per key
	// and gives back what it took when one is busy.
	OrderSorted = "sorted"
	// OrderGiven takes the keys in the order the operation names them and
	// keeps what it holds while it waits for the next (hold and wait):
	// two clients taking the same two keys in opposite orders deadlock
	// until the acquire timeout of one of them ends the wait.
	OrderGiven = "given"
)

// PartialError is AcquireMulti's error when the acquire timed out (or its
// retry policy gave up) while it held Held of its Of keys: with
// OrderGiven, the signature of a deadlock (each client holds a key the
// other waits for until the timeout ends the wait). What it held was
// given back. It wraps Err (ErrAcquireTimeout or ErrNotAcquired).
type PartialError struct {
	Held, Of int
	Err      error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("holding %d of %d keys: %v", e.Held, e.Of, e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// KeyLeases is AcquireMulti's lease over several keys taken one at a time
// (a Locker that is not a MultiLocker): one lease per key, each with its
// own token. Key and Token are the first lease's; Release releases every
// lease, last taken first.
type KeyLeases struct {
	leases []Lease
}

var _ MultiLease = (*KeyLeases)(nil)

// Leases are the per-key leases, in the order they were taken.
func (k *KeyLeases) Leases() []Lease { return k.leases }

func (k *KeyLeases) Key() string   { return k.leases[0].Key() }
func (k *KeyLeases) Token() string { return k.leases[0].Token() }

// Keys are the leases' keys, in the order they were taken.
func (k *KeyLeases) Keys() []string {
	out := make([]string, len(k.leases))
	for i, l := range k.leases {
		out[i] = l.Key()
	}
	return out
}

// Release releases every lease, last first, and returns their errors
// joined (ErrNotOwner among them when a lease had ended).
func (k *KeyLeases) Release(ctx context.Context) error {
	var errs []error
	for i := len(k.leases) - 1; i >= 0; i-- {
		errs = append(errs, k.leases[i].Release(ctx))
	}
	return errors.Join(errs...)
}

// AcquireMulti takes every key of keys (at least one, each once) with l,
// all of them or none, retrying as b says within timeout (<= 0: no bound
// but ctx), its attempts' Redis calls on io (see AcquireIO). attempts
// counts the attempts: TryAcquireMulti calls, or TryAcquire calls over
// every key.
//
//   - l a MultiLocker: TryAcquireMulti(keys) with Acquire's retries, and
//     its MultiLease; order does not matter (one script takes them all).
//   - else OrderSorted: the keys sorted; each round makes one TryAcquire
//     per key in that order and, when one is busy or fails, releases what
//     it took (on io) before Acquire's retry policy backs off: all or
//     nothing by back-off. A locker whose attempts return at once never
//     waits while it holds a key; one whose attempts wait (Blocks: a
//     queue, a library's own retry loop) may wait in a round while it
//     holds the earlier keys, which the order keeps from deadlock, and a
//     round cut by the timeout is a plain timeout. A *KeyLeases.
//   - else OrderGiven: each key in the order given with Acquire (its own
//     retries, within what is left of timeout), holding the earlier ones
//     while it waits: it can deadlock, until timeout ends the wait. A
//     *KeyLeases.
//
// Errors: Acquire's (ErrAcquireTimeout, ErrNotAcquired, a Redis error,
// ctx's), wrapped in a *PartialError when an OrderGiven acquire timed out
// or gave up while it held some of the keys (it releases them first; the
// other paths never end so); an unknown order; no key or a key given
// twice.
func AcquireMulti(ctx, io context.Context, l Locker, keys []string, order string, b retry.Backoff, timeout time.Duration) (Lease, int, error) {
	if err := checkKeys(keys); err != nil {
		return nil, 0, err
	}
	if ml, ok := l.(MultiLocker); ok {
		if isBlocking(l) { // its attempts wait: they get the timeout as ctx's deadline
			return AcquireIO(ctx, io, blockingMultiKeys{multiKeys{ml, keys}}, keys[0], b, timeout)
		}
		return AcquireIO(ctx, io, multiKeys{ml, keys}, keys[0], b, timeout)
	}
	switch order {
	case OrderSorted:
		keys = slices.Sorted(slices.Values(keys))
		round := &backOffKeys{l: l, keys: keys, io: io}
		if isBlocking(l) { // its attempts wait: they get the timeout as ctx's deadline
			return AcquireIO(ctx, io, blockingBackOffKeys{round}, keys[0], b, timeout)
		}
		return AcquireIO(ctx, io, round, keys[0], b, timeout)
	case OrderGiven:
	default:
		return nil, 0, fmt.Errorf("unknown key order %q (want %s or %s)", order, OrderSorted, OrderGiven)
	}
	return holdAndWait(ctx, io, l, keys, b, timeout)
}

// blockingBackOffKeys is backOffKeys over a Locker whose attempts wait
// in-process (Blocks).
type blockingBackOffKeys struct{ *backOffKeys }

func (blockingBackOffKeys) blocks() {}

// holdAndWait takes keys in their order with Acquire each, keeping the
// earlier ones, within timeout in all.
func holdAndWait(ctx, io context.Context, l Locker, keys []string, b retry.Backoff, timeout time.Duration) (Lease, int, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	held := make([]Lease, 0, len(keys))
	total := 0
	for _, k := range keys {
		left := time.Duration(0)
		if !deadline.IsZero() {
			if left = time.Until(deadline); left <= 0 {
				return nil, total, giveBack(io, held, len(keys), ErrAcquireTimeout)
			}
		}
		lease, n, err := AcquireIO(ctx, io, l, k, b, left)
		total += n
		if err != nil {
			return nil, total, giveBack(io, held, len(keys), err)
		}
		held = append(held, lease)
	}
	return &KeyLeases{leases: held}, total, nil
}

// giveBack releases held (last first, on io) after err ended an acquire
// of of keys, and returns err, as a *PartialError when it held a key and
// err is a timeout or a give-up.
func giveBack(io context.Context, held []Lease, of int, err error) error {
	releaseHeld(io, held)
	if len(held) > 0 && (errors.Is(err, ErrAcquireTimeout) || errors.Is(err, ErrNotAcquired)) {
		return &PartialError{Held: len(held), Of: of, Err: err}
	}
	return err
}

// releaseHeld releases held, last first, on io without its cancellation.
func releaseHeld(io context.Context, held []Lease) {
	for i := len(held) - 1; i >= 0; i-- {
		_ = held[i].Release(context.WithoutCancel(io))
	}
}

// multiKeys is a MultiLocker's attempt at keys as a Locker, for
// Acquire's retry loop: TryAcquire ignores its key.
type multiKeys struct {
	ml   MultiLocker
	keys []string
}

func (m multiKeys) TryAcquire(ctx context.Context, _ string) (Lease, error) {
	return m.ml.TryAcquireMulti(ctx, m.keys)
}

// blockingMultiKeys is multiKeys for a MultiLocker whose attempts wait
// in-process (Blocks).
type blockingMultiKeys struct{ multiKeys }

func (blockingMultiKeys) blocks() {}

// backOffKeys is one round of OrderSorted over keys as a Locker, for
// Acquire's retry loop: one TryAcquire per key in order; a busy key or
// an error releases what the round took (on io) and returns its error.
type backOffKeys struct {
	l    Locker
	keys []string
	io   context.Context
}

func (b *backOffKeys) TryAcquire(ctx context.Context, _ string) (Lease, error) {
	held := make([]Lease, 0, len(b.keys))
	for _, k := range b.keys {
		lease, err := b.l.TryAcquire(ctx, k)
		if err != nil {
			if ab, ok := b.l.(Abandoner); ok && errors.Is(err, ErrNotAcquired) {
				ab.Abandon(context.WithoutCancel(ctx), k)
			}
			releaseHeld(b.io, held)
			return nil, err
		}
		held = append(held, lease)
	}
	return &KeyLeases{leases: held}, nil
}

// KeysOf returns the lock keys lease l holds: a MultiLease's Keys, or
// l's Key.
func KeysOf(l Lease) []string {
	if m, ok := l.(MultiLease); ok {
		return m.Keys()
	}
	return []string{l.Key()}
}
