package workloads

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

// HoldMulti runs body as one critical section over several locks at once:
// locks[j] (0..Env.Locks-1, distinct) whose Redis key is keys[j]. It takes
// them all with strategies.AcquireMulti (the strategy's TryAcquireMulti
// when it is a strategies.MultiLocker, else one acquire per key in order,
// strategies.OrderSorted or OrderGiven), within the acquire timeout in
// all; body runs only once every key is held, on a context the run's
// stop cannot cancel, and the keys are released after it.
//
// The oracles see each key: the holder registry registers the worker as
// every lock's holder and the overlap count enters every lock (an entry
// that finds another holder inside is an overlap, one per lock), foreign
// releases and lost leases are judged per key (once per lease of a
// MultiLease), the liveness registry is told of each key's token, and
// the history records one section per key. The acquire is timed once
// (Obs.Acquired or AcquireFailed: its attempts are every TryAcquire or
// TryAcquireMulti call), and so is the hold. Not done for a multi-key
// section: the hand-over measurement (a run with one reports its figures
// as not measured, as for read sides), the crash-after-acquire and cancel
// faults, the nested role, and the ownership check after acquire.
//
// It returns body's error, else the release's; an acquire that timed out
// or gave up while it held some of the keys returns a
// *strategies.PartialError (which wraps ErrAcquireTimeout or
// ErrNotAcquired): the deadlock signature of OrderGiven.
func (w *Worker) HoldMulti(ctx context.Context, locks []int, keys []string, order string, body func(ctx context.Context, l strategies.Lease) error) error {
	if len(locks) != len(keys) {
		return errors.New("workloads: HoldMulti needs one lock number per key")
	}
	w.Env.Handover.SharedSection()
	start := w.acquireStart()
	lease, attempts, err := strategies.AcquireMulti(ctx, w.attemptCtx(ctx), w.Env.Locker, keys, order, w.Backoff, w.Env.AcquireTimeout)
	parts := leaseParts(lease)
	var first strategies.Lease
	if err == nil {
		first = parts[0].lease
	}
	w.observe(ctx, start, attempts, keys[0], first, err)
	if err != nil {
		return err
	}
	if lv := w.Env.Live; lv != nil {
		for _, p := range parts {
			for _, k := range p.keys {
				if p.lease != first || k != first.Key() {
					lv.Acquired(w.ID, k, p.lease.Token())
				}
			}
		}
	}
	o := w.Env.Oracle
	for _, i := range locks {
		o.Acquired(i, w.ID)
		if o.Enter(i) {
			w.Obs.Overlapped()
		}
	}
	entered := w.granted
	w.cur, w.curLock = lease, -1
	err = body(w.IO(ctx), lease)
	w.cur = nil
	for _, i := range locks {
		o.Leave(i)
	}
	left := metrics.Now()
	if h := w.Hist; h != nil {
		for _, p := range parts {
			var fence int64
			if f, ok := p.lease.(strategies.Fenced); ok {
				fence = f.Fence()
			}
			for _, k := range p.keys {
				h.Add(k, p.lease.Token(), fence, entered, left, false)
			}
		}
	}
	w.Obs.Held(left - entered)
	another := make([]bool, len(keys)) // by keys' index
	for j, i := range locks {
		another[j] = o.Releasing(i, w.ID)
	}
	var rerr error
	for _, p := range parts {
		foreign := false
		for _, k := range p.keys {
			if j := slices.Index(keys, k); j >= 0 {
				foreign = foreign || another[j]
			}
		}
		if e := w.releasePart(ctx, p, left, foreign); rerr == nil {
			rerr = e
		}
	}
	if err == nil {
		err = rerr
	}
	return err
}

// LostAny reports whether l, or any lease of a multi-key section's l (a
// *strategies.KeyLeases' per-key leases), is known to be lost (Lost): a
// holder that learns it must not write.
func LostAny(l strategies.Lease) bool {
	if kl, ok := l.(*strategies.KeyLeases); ok {
		return slices.ContainsFunc(kl.Leases(), Lost)
	}
	return l != nil && Lost(l)
}

// WroteMulti is Wrote for each lease of a multi-key section's l.
func (w *Worker) WroteMulti(l strategies.Lease) {
	if kl, ok := l.(*strategies.KeyLeases); ok {
		for _, x := range kl.Leases() {
			w.Wrote(x)
		}
	} else if l != nil {
		w.Wrote(l)
	}
}

// leasePart is one lease of a multi-key section and the keys it holds.
type leasePart struct {
	lease strategies.Lease
	keys  []string
}

// leaseParts splits l: one part per lease of a *strategies.KeyLeases,
// else l with its keys (strategies.KeysOf). nil for a nil l.
func leaseParts(l strategies.Lease) []leasePart {
	if l == nil {
		return nil
	}
	if kl, ok := l.(*strategies.KeyLeases); ok {
		var out []leasePart
		for _, x := range kl.Leases() {
			out = append(out, leasePart{lease: x, keys: strategies.KeysOf(x)})
		}
		return out
	}
	return []leasePart{{lease: l, keys: strategies.KeysOf(l)}}
}

// releasePart releases p's lease (Unlock: timed, told to the liveness
// registry for its first key, recycled) and tells the liveness registry
// and Env.Released of its other keys; it counts a lost lease when the
// release did not own it, and a foreign release when it did while the
// registry named another holder of one of its keys' locks (another).
func (w *Worker) releasePart(ctx context.Context, p leasePart, start time.Duration, another bool) error {
	tok := p.lease.Token()
	lost := Lost(p.lease)
	owned, err := w.unlock(ctx, p.lease, start)
	if lv := w.Env.Live; lv != nil && len(p.keys) > 1 {
		how := liveness.Released
		switch {
		case !owned && err == nil:
			how = liveness.NotOwner
		case err != nil:
			how = liveness.Abandoned
		}
		for _, k := range p.keys[1:] {
			lv.ExitAt(w.ID, k, tok, how, start, w.released)
		}
	}
	if owned && w.Env.Released != nil {
		for _, k := range p.keys[1:] {
			if e := w.Env.Released(w.IO(ctx), k); err == nil {
				err = e
			}
		}
	}
	if !owned && err == nil {
		lost = true
	}
	if lost {
		w.Obs.LeaseLost()
	}
	if owned && another {
		w.Obs.ForeignRelease()
	}
	return err
}
