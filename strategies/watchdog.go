package strategies

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("watchdog", Info{Desc: "atomic SET NX PX, renewed every TTL/3 by an owner-checked Lua PEXPIRE; the lease's context is cancelled when the lock is lost (Redisson watchdog)", ConstantToken: true,
		Params: []registry.Param{OnTimeoutParam}},
		func(c Config) (Locker, error) {
			return &watchdog{atomicLocker: atomicLocker{d: c.Nodes[0], ttl: c.TTL, constTok: c.ConstantToken, tokens: c.Tokens, releaseOnErr: releaseOnTimeout(c)},
				st: newRenewStats()}, nil
		})
}

// watchdog is atomic plus a renewal loop per lease (Redisson's
// lockWatchdogTimeout, renewed every timeout/3 while the holder lives).
// Release stops the loop first, then compare-and-deletes.
type watchdog struct {
	atomicLocker
	st *renewStats
}

var (
	_ Locker         = (*watchdog)(nil)
	_ StatsReporter  = (*watchdog)(nil)
	_ RenewalMargins = (*watchdog)(nil)
	_ Watched        = (*watchedLease)(nil)
)

func (w *watchdog) TryAcquire(ctx context.Context, key string) (Lease, error) {
	start := time.Now()
	l, err := w.atomicLocker.TryAcquire(ctx, key)
	if err != nil {
		return nil, err
	}
	r := startRenewal(w.st, w.ttl, start, ClientFrom(ctx).Gate, renewer(w.d, w.tokens, key, l.Token(), w.ttl))
	return &watchedLease{Lease: l, r: r}, nil
}

func (w *watchdog) Stats() map[string]float64 { return w.st.stats() }

// RenewalMargins: every lease is renewed; each renewal's margin is the
// server's (RenewScriptPTTL's PTTL before its PEXPIRE).
func (w *watchdog) RenewalMargins(rec MarginFunc) bool { w.st.setMargin(rec); return true }

// watchedLease is a lease kept alive by a renewal loop.
type watchedLease struct {
	Lease
	r *renewal
}

func (l *watchedLease) Context() context.Context { return l.r.ctx }

// Abandon stops the renewal without releasing (a crashed client).
func (l *watchedLease) Abandon() { l.r.end(); l.r.cancel() }

func (l *watchedLease) Release(ctx context.Context) error {
	l.r.end()
	defer l.r.cancel()
	return l.Lease.Release(ctx)
}

// renewer returns a renew function for a token-valued lock on d, which
// tells tokens of each renewal before it is sent; it reports the key's
// PTTL before the renewal (RenewScriptPTTL).
func renewer(d drivers.Driver, tokens TokenTracker, key, token string, ttl time.Duration) renewFunc {
	ttlMS := ms(ttl)
	return func(ctx context.Context) (bool, time.Duration, bool, error) {
		renewing(tokens, key, token)
		res, err := d.Eval(ctx, RenewScriptPTTL, []string{key}, token, ttlMS)
		if err != nil {
			return false, 0, false, err
		}
		ok, left, known := Renewed(res)
		return ok, left, known, nil
	}
}
