package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// lifoLocker is a deliberately defective queued lock for these tests: it
// declares FIFO order (strategies.FIFO) but hands each released lock to
// the waiter that arrived last. Its queue is in-process (one stack per
// key): a waiter waits in TryAcquire (Queued) until a release hands it
// the lock, and the release hands over directly, so the lock is never
// idle while wanted; only the order is wrong.
type lifoLocker struct {
	mu   sync.Mutex
	keys map[string]*lifoKey
}

type lifoKey struct {
	held  bool
	stack []chan struct{}
}

func (*lifoLocker) Queued() {}
func (*lifoLocker) FIFO()   {}

func (l *lifoLocker) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	l.mu.Lock()
	k := l.keys[key]
	if k == nil {
		k = &lifoKey{}
		l.keys[key] = k
	}
	if !k.held {
		k.held = true
		l.mu.Unlock()
		return &lifoLease{l: l, key: key, token: strategies.NewToken()}, nil
	}
	ch := make(chan struct{}, 1)
	k.stack = append(k.stack, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return &lifoLease{l: l, key: key, token: strategies.NewToken()}, nil
	case <-ctx.Done():
		l.mu.Lock()
		for i, c := range k.stack {
			if c == ch {
				k.stack = append(k.stack[:i], k.stack[i+1:]...)
				l.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		l.mu.Unlock()
		// Handed the lock meanwhile: pass it on.
		l.release(key)
		return nil, ctx.Err()
	}
}

// release hands key to the waiter that arrived last (LIFO), or frees it.
func (l *lifoLocker) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[key]
	if n := len(k.stack); n > 0 {
		ch := k.stack[n-1]
		k.stack = k.stack[:n-1]
		ch <- struct{}{}
		return
	}
	k.held = false
}

type lifoLease struct {
	l          *lifoLocker
	key, token string
}

func (s *lifoLease) Key() string   { return s.key }
func (s *lifoLease) Token() string { return s.token }
func (s *lifoLease) Release(context.Context) error {
	s.l.release(s.key)
	return nil
}

func init() {
	strategies.Register("test-lifo-queue", strategies.Info{Desc: "test only: a queued lock that declares FIFO and grants LIFO"},
		func(strategies.Config) (*lifoLocker, error) { return &lifoLocker{keys: map[string]*lifoKey{}}, nil })
}

// handoverRun runs strategy on one hot lock (lock-cycle, 1 key) and
// returns the scenario, which must have hand-over figures.
func handoverRun(t *testing.T, strategy, retrySpec string, clients int, work, think time.Duration) report.Scenario {
	t.Helper()
	res, err := engine.Run(context.Background(), handoverScenario(t, strategy, retrySpec, clients, work, think), nodes, "lockbench:test:"+t.Name()+":"+strategy+":")
	if err != nil {
		t.Fatal(err)
	}
	if res.Handover == nil {
		t.Fatalf("%s: no hand-over figures", strategy)
	}
	return res
}

// handoverScenario is handoverRun's scenario.
func handoverScenario(t *testing.T, strategy, retrySpec string, clients int, work, think time.Duration) engine.Scenario {
	t.Helper()
	return engine.Scenario{Spec: engine.Spec{
		Strategy: strategy, Driver: "goredis", Workload: "lock-cycle",
		Retry: policy(t, retrySpec), Clients: clients,
		Warmup: 300 * time.Millisecond, Duration: 2500 * time.Millisecond, TTL: 10 * time.Second, AcquireTimeout: 20 * time.Second,
		Params:  workloads.Params{Work: workloads.Fixed(work)},
		Think:   workloads.Fixed(think),
		Options: registry.Values{"keys": 1}, Seed: 1,
	}}
}

// A lock that declares FIFO and grants LIFO shows grants out of arrival
// order; fair and handoff, whose queues are FIFO, show none. A lock that
// does not declare FIFO has no order figures (not measured, not 0).
//
// The three runs go at once, each on a lock of its own (10.7 s one after
// the other, 2026-12-04), and the test beside the package's other
// parallel tests.
func TestHandoverFIFOViolations(t *testing.T) {
	t.Parallel()
	cases := []struct{ strategy, retry string }{{"test-lifo-queue", "fixed"}, {"fair", "pubsub"}, {"handoff", "fixed"}}
	var prefixes []string
	var scs []engine.Scenario
	for _, c := range cases {
		prefixes = append(prefixes, "lockbench:test:"+t.Name()+":"+c.strategy+":")
		scs = append(scs, handoverScenario(t, c.strategy, c.retry, 4, 10*time.Millisecond, 0))
	}
	runs, _ := atOnce(t, prefixes, scs...)
	for i, r := range runs {
		if r.Handover == nil {
			t.Fatalf("%s: no hand-over figures", cases[i].strategy)
		}
	}
	lifo := runs[0]
	h := lifo.Handover
	if !h.FIFO || h.FIFOViolations == nil || h.MaxWaitTurns == nil {
		t.Fatalf("test-lifo-queue: handover %+v, want FIFO figures", h)
	}
	// With 4 clients on one key in a closed loop, the first holder's
	// release hands the lock to the last of the 3 who queued behind it,
	// and the releaser queues again at once, on top: from then on (within
	// the warm-up) the releaser and the waiter it handed to take turns,
	// and the 2 who queued first wait for ever (the acquire timeout, 20 s,
	// outlasts the run). Every grant of the window overtakes them, and
	// each waits through every grant.
	if *h.FIFOViolations != h.Grants || h.Grants < 5 {
		t.Errorf("test-lifo-queue: fifo_violations %d of %d grants, want every one of many", *h.FIFOViolations, h.Grants)
	}
	if *h.MaxWaitTurns < h.Grants {
		t.Errorf("test-lifo-queue: max_wait_turns %d, want at least the window's %d grants (a starved waiter)", *h.MaxWaitTurns, h.Grants)
	}
	t.Logf("test-lifo-queue: fifo_violations %d of %d grants, max_wait_turns %d", *h.FIFOViolations, h.Grants, *h.MaxWaitTurns)
	for i, c := range cases[1:] {
		h := runs[i+1].Handover
		if !h.FIFO || h.FIFOViolations == nil || h.MaxWaitTurns == nil {
			t.Fatalf("%s: handover %+v, want FIFO figures", c.strategy, h)
		}
		if *h.FIFOViolations != 0 || h.Grants < 5 {
			t.Errorf("%s: fifo_violations %d of %d grants, want 0 of many", c.strategy, *h.FIFOViolations, h.Grants)
		}
		// A FIFO queue of 4 clients: each waiter waits for the other 3.
		if *h.MaxWaitTurns > 3 {
			t.Errorf("%s: max_wait_turns %d, want at most 3 (4 clients)", c.strategy, *h.MaxWaitTurns)
		}
		t.Logf("%s: fifo_violations %d of %d grants, max_wait_turns %d", c.strategy, *h.FIFOViolations, h.Grants, *h.MaxWaitTurns)
	}
}

// A lock whose waiters poll (atomic, fixed 100 ms) stands idle while
// clients wait for it; one that hands over in its release (handoff)
// barely does. The think time keeps the releaser from taking the lock
// straight back, so that a waiter must find it free. Wide margins: the
// figures are compared as ratios, never with a wall-clock bound.
func TestHandoverGapTimed(t *testing.T) {
	poll := handoverRun(t, "atomic", "fixed:interval=100ms", 8, 20*time.Millisecond, 60*time.Millisecond)
	queue := handoverRun(t, "handoff", "fixed", 8, 20*time.Millisecond, 60*time.Millisecond)
	p, q := poll.Handover, queue.Handover
	if p.GapMS == nil || q.GapMS == nil {
		t.Fatalf("gaps atomic %+v, handoff %+v: want both measured", p.GapMS, q.GapMS)
	}
	t.Logf("atomic fixed 100ms: gap p50 %.3f ms, p99 %.3f ms, idle share %.3f; handoff: gap p50 %.3f ms, p99 %.3f ms, idle share %.4f",
		p.GapMS.P50, p.GapMS.P99, p.IdleShare, q.GapMS.P50, q.GapMS.P99, q.IdleShare)
	if p.GapMS.P50 < 5*q.GapMS.P50 || p.GapMS.P50 < 1 {
		t.Errorf("gap p50: atomic polling %.3f ms, handoff %.3f ms; want the polling lock's at least 5x and over 1 ms", p.GapMS.P50, q.GapMS.P50)
	}
	if p.IdleShare < 5*q.IdleShare || p.IdleShare < 0.05 {
		t.Errorf("idle share: atomic polling %.4f, handoff %.4f; want the polling lock's at least 5x and over 0.05", p.IdleShare, q.IdleShare)
	}
	if p.FIFO || p.FIFOViolations != nil {
		t.Errorf("atomic declares no FIFO order, yet has order figures: %+v", p)
	}
}
