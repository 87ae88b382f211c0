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
// token ARGV[1]; it returns 1 when renewed, 0 when the token is gone.
var RenewScript = drivers.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("pexpire", KEYS[1], ARGV[2])
else
	return 0
end`)

// renewStats are a watchdog's counts, shared by all its leases.
type renewStats struct {
	renewals atomic.Int64
	lost     atomic.Int64
	mu       sync.Mutex
	gaps     *hdrhistogram.Histogram // µs between successive renewals of a lease
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

// startRenewal starts the loop; acquired is when the acquire command was
// sent (the lease runs from then, conservatively).
func startRenewal(st *renewStats, ttl time.Duration, acquired time.Time, gate *Gate, renew func(ctx context.Context) (bool, error)) *renewal {
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
			ok, err := renew(rctx)
			rcancel()
			now := time.Now()
			switch {
			case err == nil && ok:
				st.gap(sent.Sub(last))
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
