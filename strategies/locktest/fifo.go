package locktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

// fifoWaiters is the number of waiters FIFOOrder queues.
const fifoWaiters = 4

// fifoSettle is how long FIFOOrder lets a waiter of a locker that waits
// in its attempt (strategies.Blocks) queue before the next starts: such
// a waiter gives no sign that it has queued, and its first commands take
// milliseconds.
const fifoSettle = time.Second

// FIFOOrder, for a locker that declares strategies.FIFO (fair, handoff):
// waiters queued in a known order get the lock in that order. A holds the
// lock (a 30 s lease); fifoWaiters (4) waiters W1..W4 start one after
// the other, each once the one before has queued: for a locker whose
// attempts return (not strategies.Blocks), once its first attempt was
// refused (ErrNotAcquired), after which it retries every 5 ms; for one
// that waits in its attempt (Queued, OwnRetry), which gives no sign of
// having queued, fifoSettle (1 s) after the one before started. Then A
// releases; each waiter, once granted, holds the lock 20 ms and releases
// it. Every waiter must be granted (within 30 s), in the order W1, W2,
// W3, W4. It is skipped for a locker that does not declare FIFO (the
// hand-over figures' fifo_violations are not measured for it either).
func (s Suite) FIFOOrder(t *testing.T, strategy, driver string) {
	ctx := context.Background()
	ds := s.Open(t, strategy, driver)
	l := s.locker(t, strategy, ds, 30*time.Second, nil)
	if _, ok := l.(strategies.FIFO); !ok {
		t.Skipf("%s does not declare strategies.FIFO", strategy)
	}
	key := lockKey(t)
	a, err := l.TryAcquire(as(ctx, 0, "A"), key)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strategies.Blocks(l)
	p := fifoPolicy(t, strategy)
	var (
		mu     sync.Mutex
		order  []int
		failed []string
		wg     sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		failed = append(failed, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for i := 1; i <= fifoWaiters; i++ {
		queued := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithTimeout(as(ctx, i, fmt.Sprintf("W%d", i)), 30*time.Second)
			defer cancel()
			if !blocks { // the first attempt queues the waiter
				le, err := l.TryAcquire(wctx, key)
				close(queued)
				if err == nil {
					_ = le.Release(ctx)
					fail("W%d was granted the lock A holds", i)
					return
				}
				if !errors.Is(err, strategies.ErrNotAcquired) {
					fail("W%d's first attempt: %v, want ErrNotAcquired", i, err)
					return
				}
			}
			le, _, err := strategies.Acquire(wctx, l, key, p.New(nil), 30*time.Second)
			if err != nil {
				fail("W%d was not granted the lock: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			if err := le.Release(ctx); err != nil {
				fail("W%d's release: %v", i, err)
			}
		}()
		if blocks {
			time.Sleep(fifoSettle)
		} else {
			<-queued
		}
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("A's release: %v", err)
	}
	wg.Wait()
	for _, f := range failed {
		t.Error(f)
	}
	want := make([]int, fifoWaiters)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(order, want) {
		t.Fatalf("grants went to waiters %v, want %v (their arrival order)", order, want)
	}
}

// fifoPolicy is the retry policy of FIFOOrder's waiters: the strategy's
// own queue (Info.Queues) or retry loop (Info.OwnsRetry), else an attempt
// every 5 ms.
func fifoPolicy(t *testing.T, strategy string) *retry.Policy {
	t.Helper()
	if strategies.InfoOf(strategy).Queues {
		return retry.Queue()
	}
	return policyFor(t, strategy, "fixed:interval=5ms")
}
