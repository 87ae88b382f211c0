package strategies

import (
	"context"
	"sync"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("atomic", Info{Desc: "SET key token NX PX ttl, release by Lua compare-and-delete (redis.io distlock, single instance)", ConstantToken: true,
		Params: []registry.Param{OnTimeoutParam}},
		func(c Config) (Locker, error) {
			return &atomicLocker{d: c.Nodes[0], ttl: c.TTL, constTok: c.ConstantToken, tokens: c.Tokens, releaseOnErr: releaseOnTimeout(c)}, nil
		})
}

// OnTimeoutParam is the on-timeout parameter of atomic and watchdog: what
// an acquire does when its SET returns an error (a timeout, a lost reply),
// for the SET may have reached the server and been applied, leaving a lock
// that nobody holds until its TTL runs out (an orphan). "keep" (the
// default, and every other strategy's behaviour) returns the error and
// leaves whatever the SET did; "release" first sends the compare-and-delete
// (UnlockScript) with that attempt's token, on a context detached from the
// caller's (context.WithoutCancel) bounded by OnTimeoutReleaseTimeout, then
// returns the SET's error. The clean-up's own result is ignored: a token
// that never landed is simply not found.
var OnTimeoutParam = registry.Param{Name: "on-timeout",
	Doc:     "after an acquire's SET returned an error (it may have been applied): keep (leave it to the TTL) or release (compare-and-delete the attempt's token, detached, sent again until it is answered, for at most 1s)",
	Default: "keep", Check: registry.OneOf("keep", "release")}

// OnTimeoutReleaseTimeout bounds the compare-and-delete that on-timeout=
// release sends after a failed SET.
const OnTimeoutReleaseTimeout = time.Second

// releaseOnTimeout reports whether c asks for on-timeout=release.
func releaseOnTimeout(c Config) bool { return c.Params.String("on-timeout") == "release" }

// UnlockScript deletes KEYS[1] only when it holds ARGV[1], the caller's
// token; it returns 1 when it deleted, 0 otherwise. The script from the
// redis.io distributed-lock page.
var UnlockScript = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("del", KEYS[1])
else
	return 0
end`)

// atomicLocker takes the lock with one SET NX PX and releases it with
// UnlockScript, so a lease that expired cannot delete its successor's lock.
type atomicLocker struct {
	d   drivers.Driver
	ttl time.Duration
	// constTok: every lease stores ConstantValue (Config.ConstantToken).
	constTok bool
	// tokens is told of every token before its SET (Config.Tokens).
	tokens TokenTracker
	// releaseOnErr: on-timeout=release (see OnTimeoutParam).
	releaseOnErr bool
	// free holds recycled leases (see Recycler).
	free sync.Pool
}

var (
	_ Locker   = (*atomicLocker)(nil)
	_ Recycler = (*atomicLocker)(nil)
)

func (a *atomicLocker) TryAcquire(ctx context.Context, key string) (Lease, error) {
	l, _ := a.free.Get().(*atomicLease)
	if l == nil {
		l = &atomicLease{a: a}
	}
	l.keys[0] = key
	if a.constTok {
		l.args[0] = ConstantValue
	} else {
		l.args[0] = NewToken()
	}
	sent(a.tokens, ctx, key, l.args[0])
	ok, err := a.d.SetNX(ctx, key, l.args[0], a.ttl)
	if err != nil || !ok {
		if err != nil && a.releaseOnErr {
			a.undo(ctx, l)
		}
		a.free.Put(l) // never handed out
		if err != nil {
			return nil, err
		}
		return nil, ErrNotAcquired
	}
	return l, nil
}

// undo is on-timeout=release: the compare-and-delete of l's token after
// its SET failed, on a context the caller's cancellation cannot end. It is
// sent again (every 10 ms) until one call returns a reply, for at most
// OnTimeoutReleaseTimeout: the faults that made the SET fail may also cost
// the clean-up its connection or its reply, and the compare-and-delete is
// idempotent. After that bound the token is left to its TTL.
func (a *atomicLocker) undo(ctx context.Context, l *atomicLease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OnTimeoutReleaseTimeout)
	defer cancel()
	for {
		if _, err := a.d.Eval(rctx, UnlockScript, l.keys[:], l.args[:]...); err == nil {
			return
		}
		select {
		case <-rctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Recycle keeps l, released, for a later TryAcquire (see Recycler).
func (a *atomicLocker) Recycle(l Lease) {
	if al, ok := l.(*atomicLease); ok && al.a == a {
		a.free.Put(al)
	}
}

// atomicLease is atomic's lease: the key and argument lists of the
// release's EVALSHA live in it, and atomicLocker recycles it (Recycler),
// so that an acquire+release cycle allocates only its token. The token is
// a string of its own, never memory of the lease: a token read before
// the lease was recycled stays what it was.
type atomicLease struct {
	a    *atomicLocker
	keys [1]string // KEYS of UnlockScript: the lock key
	args [1]string // ARGV of UnlockScript: the token
}

var _ Lease = (*atomicLease)(nil)

func (l *atomicLease) Key() string   { return l.keys[0] }
func (l *atomicLease) Token() string { return l.args[0] }

func (l *atomicLease) Release(ctx context.Context) error {
	r, err := l.a.d.Eval(ctx, UnlockScript, l.keys[:], l.args[:]...)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}

func (a *atomicLocker) release(ctx context.Context, key, token string) error {
	r, err := a.d.Eval(ctx, UnlockScript, []string{key}, token)
	if err != nil {
		return err
	}
	if r.Int != 1 {
		return ErrNotOwner
	}
	return nil
}
