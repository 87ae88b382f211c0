package strategies

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
)

func init() {
	Register("redlock", Info{
		Desc:          "Redlock over N independent masters (--nodes, default 5): SET NX PX on all in parallel, held with a quorum N/2+1 and validity = TTL - elapsed - drift (redis.io distlock)",
		Topology:      Masters,
		ConstantToken: true,
		MinNodes:      3,
		Params: []registry.Param{{Name: "extend",
			Doc:     "leases can be extended (strategies.Extender; the worker extends after its work): off, on (owner-checked PEXPIRE on every node, quorum and validity left), unchecked (plain PEXPIRE, the broken variant)",
			Default: "off", Check: registry.OneOf("off", "on", "unchecked")}},
	}, newRedlock)
}

// ErrExtendFailed is returned by a Redlock lease's Extend when fewer than
// a quorum of nodes extended it or no validity was left: the lease must not
// be counted on. It wraps ErrNotOwner.
var ErrExtendFailed = fmt.Errorf("strategies: extend failed, no quorum or no validity left: %w", ErrNotOwner)

// redlock is the algorithm of the redis.io "Distributed Locks with Redis"
// page: the client sends SET key token NX PX ttl to every master in
// parallel, each with a short per-node timeout; it holds the lock when a
// majority (N/2+1) said OK and the validity time, ttl - elapsed - drift,
// is still positive, where drift = 1 % of ttl + 2 ms for clock drift. On
// failure, and on release, it runs the compare-and-delete on every node,
// including those that refused.
type redlock struct {
	constTok bool // every lease stores ConstantValue
	nodes    []drivers.Driver
	ttl      time.Duration
	quorum   int
	drift    time.Duration
	perNode  time.Duration
	tokens   TokenTracker // told of the token before each node's SET
	// extend is the extend parameter: "off", "on" or "unchecked".
	extend string

	acquired, refused, errs []atomic.Int64 // per node
	noQuorum, expired       atomic.Int64
	extends, extendFailures atomic.Int64
}

var (
	_ Locker        = (*redlock)(nil)
	_ StatsReporter = (*redlock)(nil)
	_ Watched       = (*redlockLease)(nil)
	_ Extender      = (*extendingLease)(nil)
	_ Watched       = (*extendingLease)(nil)
	_ Validity      = (*redlockLease)(nil)
	_ ExtendsLeases = (*redlock)(nil)
)

// ExtendsLeases: with extend=on or unchecked the leases are Extenders.
func (r *redlock) ExtendsLeases() bool { return r.extend == "on" || r.extend == "unchecked" }

func newRedlock(c Config) (Locker, error) {
	n := len(c.Nodes)
	return &redlock{
		nodes:    c.Nodes,
		constTok: c.ConstantToken,
		ttl:      c.TTL,
		quorum:   n/2 + 1,
		drift:    c.TTL/100 + 2*time.Millisecond,
		perNode:  min(max(c.TTL/10, 25*time.Millisecond), time.Second),
		tokens:   c.Tokens,
		extend:   c.Params.String("extend"),
		acquired: make([]atomic.Int64, n),
		refused:  make([]atomic.Int64, n),
		errs:     make([]atomic.Int64, n),
	}, nil
}

func (r *redlock) TryAcquire(ctx context.Context, key string) (Lease, error) {
	tok := Config{ConstantToken: r.constTok}.token()
	start := time.Now()
	var (
		wg       sync.WaitGroup
		ok, nerr atomic.Int32
		firstErr atomic.Value
	)
	for i, d := range r.nodes {
		wg.Add(1)
		go func(i int, d drivers.Driver) {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, r.perNode)
			sent(r.tokens, ctx, key, tok)
			got, err := d.SetNX(nctx, key, tok, r.ttl)
			cancel()
			switch {
			case err != nil:
				r.errs[i].Add(1)
				nerr.Add(1)
				firstErr.CompareAndSwap(nil, err)
			case got:
				r.acquired[i].Add(1)
				ok.Add(1)
			default:
				r.refused[i].Add(1)
			}
		}(i, d)
	}
	wg.Wait()
	validity := r.ttl - time.Since(start) - r.drift
	if int(ok.Load()) >= r.quorum && validity > 0 {
		// The keys expire TTL after they were set, at the earliest start+TTL;
		// the holder may count on start + TTL - drift = now + validity.
		until := start.Add(r.ttl - r.drift)
		if r.ExtendsLeases() {
			lctx, cancel := context.WithCancel(context.Background())
			return &extendingLease{redlockLease: redlockLease{key: key, token: tok, r: r, ctx: lctx, cancel: cancel, until: until},
				timer: time.AfterFunc(validity, cancel)}, nil
		}
		lctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(validity))
		return &redlockLease{key: key, token: tok, r: r, ctx: lctx, cancel: cancel, until: until}, nil
	}
	if int(ok.Load()) >= r.quorum {
		r.expired.Add(1)
	} else {
		r.noQuorum.Add(1)
	}
	// Undo the partial acquisition everywhere, refusers included.
	_ = r.releaseAll(context.WithoutCancel(ctx), key, tok)
	if int(nerr.Load()) == len(r.nodes) { // no node answered: an error, not "busy"
		e, _ := firstErr.Load().(error)
		return nil, e
	}
	return nil, ErrNotAcquired
}

// releaseAll runs the compare-and-delete on every node in parallel and
// returns how many deleted the key.
func (r *redlock) releaseAll(ctx context.Context, key, tok string) int {
	var wg sync.WaitGroup
	var deleted atomic.Int32
	for _, d := range r.nodes {
		wg.Add(1)
		go func(d drivers.Driver) {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, r.perNode)
			res, err := d.Eval(nctx, UnlockScript, []string{key}, tok)
			cancel()
			if err == nil && res.Int == 1 {
				deleted.Add(1)
			}
		}(d)
	}
	wg.Wait()
	return int(deleted.Load())
}

// extendAll extends the lock on every node in parallel, each within the
// per-node timeout, and returns how many replied 1: with checked, the
// owner-checked RenewScript (PEXPIRE only while the node holds tok); else
// a plain PEXPIRE, which extends whatever token the key holds (1 when
// the key exists). Each node's
// extend is reported to Renewing first.
func (r *redlock) extendAll(ctx context.Context, key, tok string, checked bool) int {
	var wg sync.WaitGroup
	var n atomic.Int32
	ttlMS := ms(r.ttl)
	for _, d := range r.nodes {
		wg.Add(1)
		go func(d drivers.Driver) {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, r.perNode)
			defer cancel()
			renewing(r.tokens, key, tok)
			var res drivers.Reply
			var err error
			if checked {
				res, err = d.Eval(nctx, RenewScript, []string{key}, tok, ttlMS)
			} else {
				res, err = d.Do(nctx, "PEXPIRE", key, ttlMS)
			}
			if err == nil && res.Int == 1 { // PEXPIRE's and RenewScript's 1: extended
				n.Add(1)
			}
		}(d)
	}
	wg.Wait()
	return int(n.Load())
}

// Stats reports per-node acquire results (node<i>_acquired, _refused,
// _errors), acquires that failed for want of a quorum (no_quorum), and
// those that had a quorum but no validity left (validity_expired); with
// extend on or unchecked, the extends that succeeded (extends) and failed
// (extend_failures).
func (r *redlock) Stats() map[string]float64 {
	out := map[string]float64{
		"quorum":           float64(r.quorum),
		"no_quorum":        float64(r.noQuorum.Load()),
		"validity_expired": float64(r.expired.Load()),
	}
	if r.extend == "on" || r.extend == "unchecked" {
		out["extends"] = float64(r.extends.Load())
		out["extend_failures"] = float64(r.extendFailures.Load())
	}
	for i := range r.nodes {
		p := "node" + strconv.Itoa(i) + "_"
		out[p+"acquired"] = float64(r.acquired[i].Load())
		out[p+"refused"] = float64(r.refused[i].Load())
		out[p+"errors"] = float64(r.errs[i].Load())
	}
	return out
}

// redlockLease's context ends when the validity time runs out.
type redlockLease struct {
	key, token string
	r          *redlock
	ctx        context.Context
	cancel     context.CancelFunc
	until      time.Time // the validity's end: the acquire's (last extend's) start + TTL - drift
}

// ValidUntil is the end of the lease's validity as Redlock counts it (the
// acquire's, or the last successful extend's, start plus the TTL minus
// the drift; strategies.Validity).
func (l *redlockLease) ValidUntil() time.Time { return l.until }

func (l *redlockLease) Key() string              { return l.key }
func (l *redlockLease) Token() string            { return l.token }
func (l *redlockLease) Context() context.Context { return l.ctx }

// Release deletes the lock on every node; ErrNotOwner when no node still
// held this token.
func (l *redlockLease) Release(ctx context.Context) error {
	defer l.cancel()
	if l.r.releaseAll(ctx, l.key, l.token) == 0 {
		return ErrNotOwner
	}
	return nil
}

// extendingLease is a Redlock lease that can be extended (extend=on or
// unchecked): its context is cancelled by a timer when the validity runs
// out, and a successful Extend moves that moment. Its methods are called
// from its holder's goroutine only.
type extendingLease struct {
	redlockLease
	timer *time.Timer // cancels the context at the end of the validity
}

// Extend re-extends the lease to the TTL on every node, in parallel with
// the acquire's per-node timeout: the extension the redis.io Redlock page
// describes (a script sent to all instances that extends the key's TTL
// while it still holds the client's random value; the lock counts as
// re-acquired only when a majority extended it within the validity time). It succeeds when a quorum (N/2+1) of nodes extended it and the
// validity left, TTL - elapsed - drift counted from the extend's start, is
// positive; the lease's context then ends at the new validity (a lease
// whose context had already ended gets a new one). Otherwise it returns
// ErrExtendFailed and the lease is as before.
//
// With extend=unchecked the command is a plain PEXPIRE without the owner
// check, counted when the key exists, whoever holds it: the broken variant,
// whose success after another client has taken the lock since this holder
// acquired it the worker counts as a false extend (false_extends).
func (l *extendingLease) Extend(ctx context.Context) error {
	r := l.r
	start := time.Now()
	n := r.extendAll(ctx, l.key, l.token, r.extend == "on")
	validity := r.ttl - time.Since(start) - r.drift
	if n < r.quorum || validity <= 0 {
		r.extendFailures.Add(1)
		return ErrExtendFailed
	}
	r.extends.Add(1)
	l.until = start.Add(r.ttl - r.drift)
	if l.timer.Stop() && l.ctx.Err() == nil {
		l.timer.Reset(validity)
		return nil
	}
	// The validity had run out (the context is cancelled): a lease that
	// extended after its end lives on in a new context.
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.timer = time.AfterFunc(validity, l.cancel)
	return nil
}

// Context ends when the validity, as extended, runs out, or on release.
func (l *extendingLease) Context() context.Context { return l.ctx }

// Release stops the validity timer and deletes the lock on every node.
func (l *extendingLease) Release(ctx context.Context) error {
	l.timer.Stop()
	return l.redlockLease.Release(ctx)
}

// Abandon stops the validity timer without releasing (a crashed client).
func (l *extendingLease) Abandon() { l.timer.Stop(); l.cancel() }
