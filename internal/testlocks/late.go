package testlocks

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// LateRenewal is the name of a custom lock written through the public
// API, as a user's would be: the atomic lock plus a renewal loop of its
// own that renews each lease at LateRenewalAt x TTL instead of every
// TTL/3 (a renewal schedule that leaves too little margin), with
// strategies.RenewScriptPTTL (owner-checked PEXPIRE), and that reports
// each renewal's margin, the server's PTTL before the PEXPIRE, through
// strategies.RenewalMargins. With a 5 s TTL it renews with about 1 s
// left: every renewal is late (under TTL/3), none loses its lease unless
// the machine stalls the renewal for a second. Late holds what it did.
const LateRenewal = "test-late-renewal"

// LateRenewalAt is when LateRenewal renews a lease, as a share of the TTL
// from its grant or last renewal.
const LateRenewalAt = 0.8

// Late is what LateRenewal's leases did in this process: their renewals'
// times and the leases whose renewal failed. ResetLate clears it.
var Late struct {
	sync.Mutex
	Renewals []time.Time
	Lost     int64
}

// ResetLate clears Late (a test run with -count=N).
func ResetLate() {
	Late.Lock()
	Late.Renewals, Late.Lost = nil, 0
	Late.Unlock()
}

func init() {
	strategies.Register(LateRenewal, strategies.Info{Desc: "test only: atomic, renewed at 0.8 x TTL, reporting its margins"},
		func(c strategies.Config) (strategies.Locker, error) {
			inner, err := strategies.New("atomic", strategies.Config{Nodes: c.Nodes, TTL: c.TTL})
			if err != nil {
				return nil, err
			}
			return &lateLocker{inner: inner, d: c.Nodes[0], ttl: c.TTL}, nil
		})
}

type lateLocker struct {
	inner strategies.Locker
	d     drivers.Driver
	ttl   time.Duration
	rec   strategies.MarginFunc
}

var _ strategies.RenewalMargins = (*lateLocker)(nil)

func (l *lateLocker) RenewalMargins(rec strategies.MarginFunc) bool { l.rec = rec; return true }

func (l *lateLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	lease, err := l.inner.TryAcquire(ctx, key)
	if err != nil {
		return nil, err
	}
	ll := &lateLease{Lease: lease, stop: make(chan struct{})}
	ll.wg.Add(1)
	go func() {
		defer ll.wg.Done()
		t := time.NewTicker(time.Duration(LateRenewalAt * float64(l.ttl)))
		defer t.Stop()
		for {
			select {
			case <-ll.stop:
				return
			case <-t.C:
			}
			res, err := l.d.Eval(context.Background(), strategies.RenewScriptPTTL, []string{key}, lease.Token(), strconv.FormatInt(l.ttl.Milliseconds(), 10))
			ok, left, known := strategies.Renewed(res)
			Late.Lock()
			if err != nil || !ok {
				Late.Lost++
				Late.Unlock()
				return
			}
			Late.Renewals = append(Late.Renewals, time.Now())
			Late.Unlock()
			if known && l.rec != nil {
				l.rec(l.ttl, left)
			}
		}
	}()
	return ll, nil
}

type lateLease struct {
	strategies.Lease
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func (l *lateLease) end() { l.once.Do(func() { close(l.stop) }); l.wg.Wait() }

func (l *lateLease) Release(ctx context.Context) error { l.end(); return l.Lease.Release(ctx) }

// Abandon stops the renewal without releasing (a crashed client).
func (l *lateLease) Abandon() { l.end() }
