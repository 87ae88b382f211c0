package strategies

// Acquiring a lock with a retry policy and a timeout.

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/strategies/retry"
)

// Acquire takes the lock named key with l, retrying as b says until the
// lock is taken, b gives up (ErrNotAcquired), timeout passes
// (ErrAcquireTimeout; timeout <= 0 means no bound but ctx), or ctx ends
// (ctx.Err()). A Redis error ends the loop at once. attempts counts the
// TryAcquire calls made (>= 1 unless ctx was already done).
func Acquire(ctx context.Context, l Locker, key string, b retry.Backoff, timeout time.Duration) (lease Lease, attempts int, err error) {
	return AcquireIO(ctx, ctx, l, key, b, timeout)
}

// AcquireIO is Acquire with the attempts' Redis calls made on io instead
// of ctx: ctx still ends the acquire between attempts (and before the
// first), io carries the calls themselves. lockbench's worker passes an io
// without cancellation for Redis-only strategies whose attempts never wait
// in-process, so that a driver call does not also wait on a done channel;
// each call is bounded by the driver's I/O timeout. For a locker that
// Blocks, pass ctx itself as io (under a timeout its attempts get ctx's
// deadline in any case).
func AcquireIO(ctx, io context.Context, l Locker, key string, b retry.Backoff, timeout time.Duration) (lease Lease, attempts int, err error) {
	if _, queue := l.(WaitQueue); queue {
		if _, ok := ctx.Value(clientKey{}).(Client); !ok {
			// A caller without a Client: one owner for every attempt, so
			// that the waiter keeps one queue entry and watches its own
			// channel.
			c := ClientFrom(ctx)
			ctx, io = WithClient(ctx, c), WithClient(io, c)
		}
	}
	var start time.Time
	if timeout > 0 {
		start = time.Now()
	}
	// The common case, a first attempt that succeeds, needs no timer, no
	// pub/sub watch and no deferred clean-up: it takes this path, and only
	// a lock held by another goes on to the retry loop.
	if _, waker := b.(retry.Waker); !waker && (timeout <= 0 || !isBlocking(l)) {
		if err = ctx.Err(); err == nil {
			attempts = 1
			if lease, err = l.TryAcquire(io, key); err == nil {
				return lease, 1, nil
			}
			if errors.Is(err, ErrNotAcquired) {
				return acquireRetry(ctx, io, l, key, b, timeout, start, 1)
			}
		}
		if ab, ok := l.(Abandoner); ok {
			ab.Abandon(context.WithoutCancel(ctx), key)
		}
		return nil, attempts, err
	}
	return acquireRetry(ctx, io, l, key, b, timeout, start, 0)
}

// acquireRetry is Acquire's retry loop, begun at start with attempts
// TryAcquire calls already made and failed with ErrNotAcquired.
func acquireRetry(ctx, io context.Context, l Locker, key string, b retry.Backoff, timeout time.Duration, start time.Time, attempts int) (lease Lease, _ int, err error) {
	var deadline time.Time
	blocks := isBlocking(l)
	if timeout > 0 {
		deadline = start.Add(timeout)
		if blocks {
			// A locker that can block inside TryAcquire gets the bound in ctx.
			var cancel context.CancelFunc
			parent := ctx
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
			defer func() {
				if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
					err = ErrAcquireTimeout
				}
			}()
		}
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	// A waker (pub/sub retry) is watched before the first attempt, so a
	// release between a failed attempt and the wait is not missed.
	// A WaitQueue waiter watches its own channel, and waits at most a
	// third of its entry's timeout between attempts, so that the entry is
	// refreshed before it expires.
	var wake <-chan struct{}
	wq, queue := l.(WaitQueue)
	if wk, ok := b.(retry.Waker); ok {
		ch := key
		if queue {
			ch = wq.WakeChannel(ctx, key)
		}
		var stop func()
		wake, stop = wk.Watch(ch)
		defer stop()
	}
	var maxWait time.Duration
	if queue {
		maxWait = max(wq.EntryTimeout()/3, time.Millisecond)
	}
	if ab, ok := l.(Abandoner); ok {
		defer func() {
			if err != nil {
				ab.Abandon(context.WithoutCancel(ctx), key)
			}
		}()
	}
	for {
		if attempts > 0 { // the last attempt found the lock held
			wait, ok := b.Next(attempts)
			if !ok {
				return nil, attempts, ErrNotAcquired
			}
			if !deadline.IsZero() {
				left := time.Until(deadline)
				if left <= 0 {
					return nil, attempts, ErrAcquireTimeout
				}
				if wait > left {
					wait = left
				}
			}
			if maxWait > 0 && wait > maxWait {
				wait = maxWait
			}
			if wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-ctx.Done():
					return nil, attempts, ctx.Err()
				case <-timer.C:
				case <-wake:
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, attempts, err
		}
		attempts++
		att := ctx
		if !blocks {
			att = io
		}
		lease, err = l.TryAcquire(att, key)
		if err == nil {
			return lease, attempts, nil
		}
		if !errors.Is(err, ErrNotAcquired) {
			return nil, attempts, cutShort(att, err)
		}
	}
}

// cutShort returns the error of an attempt made on ctx: ctx's own error
// when ctx ended it (a driver's i/o timeout at ctx's deadline is that
// deadline, also when the socket's deadline fired a moment before ctx's
// timer), else err.
func cutShort(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return err
}

// Blocks reports whether l's TryAcquire may wait in-process (a local
// mutex, a queue in ZooKeeper, etcd or the database) rather than make its
// Redis calls and return: such an attempt needs a cancellable context.
func Blocks(l Locker) bool { return isBlocking(l) }

// blocking marks lockers whose TryAcquire may wait in-process (multilevel's
// local mutex); Acquire bounds that wait by the acquire timeout.
type blocking interface{ blocks() }

func isBlocking(l Locker) bool {
	if _, ok := l.(blocking); ok {
		return true
	}
	if _, ok := l.(OwnRetry); ok {
		return true
	}
	_, ok := l.(Queued)
	return ok
}
