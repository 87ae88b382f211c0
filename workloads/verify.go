package workloads

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// VerifyCost counts the commands the ownership check after acquire
// (Env.VerifyAcquire) sent, by command: lockbench's own, left out of the
// workload's commands per operation.
type VerifyCost struct {
	Get, HExists, ZScore atomic.Int64
}

// Map is the counts by command name (lower case), as the servers' cost
// records lockbench's own commands; nil when none was sent.
func (c *VerifyCost) Map() map[string]int64 {
	if c == nil {
		return nil
	}
	m := map[string]int64{}
	if n := c.Get.Load(); n > 0 {
		m["get"] = n
	}
	if n := c.HExists.Load(); n > 0 {
		m["hexists"] = n
	}
	if n := c.ZScore.Load(); n > 0 {
		m["zscore"] = n
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// verifyAcquire runs after a granted exclusive acquire: on every
// Env.VerifyAcquire-th of the worker's, it reads the lock key on the
// lock's server (Env.LockNode, else Env.Data; HoldsToken) and counts a false acquire
// (Observer.FalseAcquire) when the key does not hold the lease's token.
// A read that fails (a server or network error) judges nothing, nor does
// one that ends Env.VerifyTTL or more after the acquire began (start):
// the lease was set no earlier than that, so before it a lock that was
// granted must still be there, and after it the lease may have expired
// on its own (a stall between the grant and the read: a lost lease, not
// a false acquire). The hold then starts after the read (w.granted), so
// that neither the acquire's time nor the hold's includes it.
func (w *Worker) verifyAcquire(ctx context.Context, l strategies.Lease, start time.Duration) {
	n := w.Env.VerifyAcquire
	if n <= 0 || l == nil {
		return
	}
	if w.verifySkip++; w.verifySkip < n {
		return
	}
	w.verifySkip = 0
	defer func() { w.granted = metrics.Now() }()
	d := w.Env.LockNode // a separate resource: the lock is not on Data
	if d == nil {
		d = w.Env.Data
	}
	held, err := HoldsToken(w.IO(ctx), d, l.Key(), l.Token(), w.Env.VerifyCost)
	if err == nil && !held && w.withinTTL(start) {
		w.Obs.FalseAcquire()
	}
}

// HoldsToken is the ownership check after acquire (--verify-acquire; the
// conformance suite's OwnedAfterAcquire): it reads lock key on d and
// reports whether the key holds token: GET for a string lock (its value
// is token), and, when the GET is answered WRONGTYPE, HEXISTS of token's
// field for a hash lock (a reentrant or read-write lock's holder field),
// and when that is answered WRONGTYPE too, ZSCORE of token for a sorted
// set (a semaphore's permit: held while a member). A key that is gone,
// or of another type, does not hold it. cost, when
// not nil, counts the commands sent. An error is the read's (a server or
// network error, ctx's): nothing is judged. Only a lock kept in d's key
// itself can be judged so: see OwnershipCheckable.
func HoldsToken(ctx context.Context, d drivers.Driver, key, token string, cost *VerifyCost) (bool, error) {
	if cost != nil {
		cost.Get.Add(1)
	}
	r, err := d.Do(ctx, "GET", key)
	if err == nil {
		return r.Kind == drivers.KindString && r.Str == token, nil
	}
	if drivers.ErrorKind(err) != "wrongtype" {
		return false, err
	}
	if cost != nil {
		cost.HExists.Add(1)
	}
	r, err = d.Do(ctx, "HEXISTS", key, token)
	if err == nil {
		v, _ := r.AsInt()
		return v == 1, nil
	}
	if drivers.ErrorKind(err) != "wrongtype" {
		return false, err
	}
	if cost != nil {
		cost.ZScore.Add(1)
	}
	r, err = d.Do(ctx, "ZSCORE", key, token)
	if err != nil {
		if drivers.ErrorKind(err) == "wrongtype" {
			return false, nil // another type: not a lock this check knows
		}
		return false, err
	}
	return !r.IsNil(), nil
}

// OwnershipCheckable reports whether HoldsToken can judge the leases of
// strategy's locker l: a lock kept in one Redis server's lock key, which
// is not the case of zk, etcd or a SQL row lock (Info.Backend), of
// Redlock's keys on several masters (Info.Topology Masters), whose lock
// a single read cannot judge, nor of a lock kept in keys other than its
// lock key (strategies.Stored: rueidislock's 2N-1 keys). The engine's
// --verify-acquire runs only on those (and only with a token of each
// lease's own, not Config.ConstantToken); package locktest's
// OwnedAfterAcquire skips the others.
func OwnershipCheckable(strategy string, l strategies.Locker) bool {
	info := strategies.InfoOf(strategy)
	_, apart := l.(strategies.Stored)
	return info.Backend == strategies.NoBackend && info.Topology != strategies.Masters && !apart
}

// withinTTL reports whether now is less than Env.VerifyTTL after start
// (always, without a TTL).
func (w *Worker) withinTTL(start time.Duration) bool {
	return w.Env.VerifyTTL <= 0 || metrics.Now()-start < w.Env.VerifyTTL
}
