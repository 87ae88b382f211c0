package strategies

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/drivers"
)

// RenewScript extends KEYS[1]'s TTL to ARGV[2] ms only while it holds the
// token ARGV[1]; it returns 1 when renewed, 0 when the token is gone (the
// key is missing or holds another token). Its contract is unchanged since
// it was exported; lockbench's own watchdogs use RenewScriptPTTL, which
// also returns the renewal margin.
var RenewScript = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("pexpire", KEYS[1], ARGV[2])
else
	return 0
end`)

// RenewScriptPTTL extends KEYS[1]'s TTL to ARGV[2] ms only while it holds
// the token ARGV[1], as RenewScript does, but it returns the key's PTTL
// before the extension, ms (the renewal margin as the server sees it: 0
// or more; -1 for a key that had no TTL) when renewed, and -2 when the
// token is gone (the key is missing or holds another token). Renewed
// reads its reply.
var RenewScriptPTTL = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
	local left = redis.call("pttl", KEYS[1])
	redis.call("pexpire", KEYS[1], ARGV[2])
	return left
else
	return -2
end`)

// Renewed reads a reply of RenewScriptPTTL (or ReentrantRenewScriptPTTL):
// whether the lease was renewed, and its remaining TTL before the renewal
// (-1 ms when the key had none, then not a margin: known is false). It
// does not read RenewScript's 1/0 replies.
func Renewed(r drivers.Reply) (ok bool, left time.Duration, known bool) {
	if r.Int < -1 {
		return false, 0, false
	}
	return true, time.Duration(r.Int) * time.Millisecond, r.Int >= 0
}

// renewStats are a watchdog's counts, shared by all its leases.
type renewStats struct {
	renewals atomic.Int64
	lost     atomic.Int64
	mu       sync.Mutex
	gaps     *hdrhistogram.Histogram // µs between successive renewals of a lease
	// margin, when set (RenewalMargins), is told of each renewal's
	// remaining TTL.
	margin atomic.Pointer[MarginFunc]
}

// setMargin sets the function told of each renewal's margin.
func (s *renewStats) setMargin(rec MarginFunc) {
	if rec != nil {
		s.margin.Store(&rec)
	}
}

func newRenewStats() *renewStats {
	return &renewStats{gaps: hdrhistogram.New(1, 600_000_000, 3)}
}

func (s *renewStats) gap(d time.Duration) {
	s.renewals.Add(1)
	s.mu.Lock()
	_ = s.gaps.RecordValue(max(1, d.Microseconds()))
	s.mu.Unlock()
}

// stats returns renewals, lost_leases and the renewal lag: p99 and max of
// the gap between successive renewals of one lease (the first gap counted
// from the acquire), in ms.
func (s *renewStats) stats() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]float64{
		"renewals":           float64(s.renewals.Load()),
		"lost_leases":        float64(s.lost.Load()),
		"renewal_gap_p99_ms": float64(s.gaps.ValueAtQuantile(99)) / 1000,
		"renewal_gap_max_ms": float64(s.gaps.Max()) / 1000,
	}
}

// renewal keeps one lease alive: every ttl/3 it calls renew, which must
// extend the lease to ttl only while this holder owns it (Redisson's
// watchdog: lockWatchdogTimeout / 3). When renew reports the lock gone, or
// no renewal succeeded before the lease would have ended, the lease's
// context is cancelled and the loss counted.
type renewal struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// renewFunc renews one lease: ok when it was renewed; left is its
// remaining TTL before the renewal as the server saw it, when known
// (RenewScriptPTTL's reply), else the loop counts it from the client's side.
type renewFunc func(ctx context.Context) (ok bool, left time.Duration, known bool, err error)

// startRenewal starts the loop; acquired is when the acquire command was
// sent (the lease runs from then, conservatively). Each successful
// renewal's margin goes to st's margin function: the remaining TTL renew
// reports (the server's view), or else the lease's end as the loop counts
// it (the last successful renewal's send time, or acquired, plus ttl)
// minus the renewal's send time.
func startRenewal(st *renewStats, ttl time.Duration, acquired time.Time, gate *Gate, renew renewFunc) *renewal {
	ctx, cancel := context.WithCancel(context.Background())
	r := &renewal{ctx: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	interval := max(ttl/3, time.Millisecond)
	go func() {
		defer close(r.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		last := acquired
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
			gate.Wait() // a paused client renews nothing
			select {
			case <-r.stop:
				return
			default:
			}
			leaseEnd := last.Add(ttl)
			if !time.Now().Before(leaseEnd) {
				// The lease ran out while the holder was stopped (a pause
				// fault closed the gate): lost, known at once on waking,
				// without a renewal that cannot succeed.
				st.lost.Add(1)
				cancel()
				return
			}
			sent := time.Now() // a successful renewal's lease runs from here at the latest
			rctx, rcancel := context.WithDeadline(context.Background(), leaseEnd)
			ok, left, known, err := renew(rctx)
			rcancel()
			now := time.Now()
			switch {
			case err == nil && ok:
				st.gap(sent.Sub(last))
				if rec := st.margin.Load(); rec != nil {
					if !known {
						left = leaseEnd.Sub(sent)
					}
					(*rec)(ttl, left)
				}
				last = sent
			case err == nil || !now.Before(leaseEnd):
				// The token is gone, or the lease ran out before any renewal
				// got through: the holder has lost the lock.
				st.lost.Add(1)
				cancel()
				return
			}
		}
	}()
	return r
}

// end stops the renewal loop and waits for it to exit. It is called before
// the release command, so no renewal can revive a released lock.
func (r *renewal) end() {
	r.once.Do(func() { close(r.stop) })
	<-r.done
}
