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
	Get, HExists atomic.Int64
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
	if len(m) == 0 {
		return nil
	}
	return m
}

// verifyAcquire runs after a granted exclusive acquire: on every
// Env.VerifyAcquire-th of the worker's, it reads the lock key on the
// data server and counts a false acquire (Observer.FalseAcquire) when the
// key does not hold the lease's token: GET for a string lock, HEXISTS
// of the token's field for a hash lock (a WRONGTYPE reply to the GET).
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
	ioctx := w.IO(ctx)
	key, tok := l.Key(), l.Token()
	cost := w.Env.VerifyCost
	if cost != nil {
		cost.Get.Add(1)
	}
	d := w.Env.LockNode
	if d == nil {
		d = w.Env.Data
	}
	r, err := d.Do(ioctx, "GET", key)
	if err != nil {
		if drivers.ErrorKind(err) != "wrongtype" {
			return
		}
		if cost != nil {
			cost.HExists.Add(1)
		}
		r, err = d.Do(ioctx, "HEXISTS", key, tok)
		if err != nil {
			return
		}
		if v, _ := r.AsInt(); v != 1 && w.withinTTL(start) {
			w.Obs.FalseAcquire()
		}
		return
	}
	if (r.Kind != drivers.KindString || r.Str != tok) && w.withinTTL(start) {
		w.Obs.FalseAcquire()
	}
}

// withinTTL reports whether now is less than Env.VerifyTTL after start
// (always, without a TTL).
func (w *Worker) withinTTL(start time.Duration) bool {
	return w.Env.VerifyTTL <= 0 || metrics.Now()-start < w.Env.VerifyTTL
}
