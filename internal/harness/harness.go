// Package harness checks that lockbench is never the bottleneck: it
// measures, on the same server and at the same connection count, the lock
// cycle (SET NX PX, then EVALSHA of the compare-and-delete script) three
// ways — redis-benchmark (Debian's redis-tools), a bare Go loop per driver
// that records nothing, and lockbench's own engine — so that their ratios
// show what the harness costs.
package harness

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

var rpsRe = regexp.MustCompile(`([0-9.]+) requests per second`)

// RedisBenchmark runs redis-benchmark against addr with clients
// connections and n requests per command: SET key tok NX PX 1000 on random
// keys, then EVALSHA of the unlock script on random keys. It returns both
// rates (requests/s) and the equivalent cycle rate 1 / (1/set + 1/evalsha).
// Errors: redis-benchmark missing or failing, or output without a rate.
func RedisBenchmark(addr, password string, clients, n int) (set, evalsha, cycle float64, err error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, 0, 0, fmt.Errorf("redis-benchmark not found (Debian's redis-tools): %w", err)
	}
	sha, err := topology.Command(addr, password, 5*time.Second, "SCRIPT", "LOAD", strategies.UnlockScript.Src)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("SCRIPT LOAD: %w", err)
	}
	host, port := addr[:strings.LastIndexByte(addr, ':')], addr[strings.LastIndexByte(addr, ':')+1:]
	run := func(cmd ...string) (float64, error) {
		args := []string{"-h", host, "-p", port, "-c", strconv.Itoa(clients), "-n", strconv.Itoa(n), "-r", "10000000", "-q"}
		if password != "" {
			args = append(args, "-a", password)
		}
		out, err := exec.Command(bin, append(args, cmd...)...).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("redis-benchmark: %w: %s", err, out)
		}
		m := rpsRe.FindAllSubmatch(out, -1)
		if len(m) == 0 {
			return 0, fmt.Errorf("redis-benchmark printed no rate: %s", out)
		}
		return strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	}
	if set, err = run("SET", "lockbench:bench:__rand_int__", "tok", "NX", "PX", "1000"); err != nil {
		return
	}
	if evalsha, err = run("EVALSHA", sha, "1", "lockbench:bench:__rand_int__", "tok"); err != nil {
		return
	}
	return set, evalsha, 1 / (1/set + 1/evalsha), nil
}

// BareLoop runs clients goroutines for d, each doing only SET NX PX and
// EVALSHA of the unlock script on a key of its own, recording nothing but
// a count. It sends what lockbench's lock-cycle --own-keys sends: a fresh
// 128-bit token per cycle (strategies.NewToken; a lock cycle without a
// unique token is not a lock) on a key of the same form, so that
// lockbench / bare loop is the cost of lockbench's measuring, not of a
// difference on the wire. It returns lock cycles per second.
func BareLoop(ctx context.Context, driver, addr, password string, clients int, d time.Duration) (float64, error) {
	drv, err := drivers.Open(driver, drivers.Options{Endpoint: drivers.Endpoint{Addr: addr, Password: password}, PoolSize: clients + 4})
	if err != nil {
		return 0, err
	}
	defer drv.Close()
	// As engine.Run does: the garbage of earlier measurements is collected
	// before the clock starts, not swept during this one.
	runtime.GC()
	// A stop flag, not a context deadline: a deadline would cut the last
	// command of each goroutine into an error.
	var stop atomic.Bool
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	var total atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	// The calls run on a context without cancellation, as lockbench's are
	// for atomic (engine: QuietIO), so that neither waits on a done channel
	// the other does not; ctx still ends the loop between cycles.
	io := context.WithoutCancel(ctx)
	start := time.Now()
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			key := "lockbench:bare:" + driver + ":{cyc:" + strconv.Itoa(g) + "}:lock"
			keys := []string{key}
			var n int64
			for !stop.Load() && ctx.Err() == nil {
				tok := strategies.NewToken()
				if _, err := drv.SetNX(io, key, tok, time.Second); err != nil {
					firstErr.CompareAndSwap(nil, err)
					break
				}
				if _, err := drv.Eval(io, strategies.UnlockScript, keys, tok); err != nil {
					firstErr.CompareAndSwap(nil, err)
					break
				}
				n++
			}
			total.Add(n)
		}(g)
	}
	wg.Wait()
	if e, _ := firstErr.Load().(error); e != nil {
		return 0, e
	}
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}

// BareHandover measures the floor of a lock hand-over through Redis on
// this machine: clients goroutines (at least 2) pass one turn around a
// ring, each holding it for hold (time.Sleep, as lock-cycle's --work
// does) and then PUBLISHing on the next goroutine's channel; the next
// holds the turn when the message arrives (one PSUBSCRIBE per run, on the
// driver's own connection, as the handoff strategy's grants). There is no
// lock key, queue or script: one message through the server per hand-over,
// the least that a lock whose waiters learn of their turn from Redis
// spends. It runs for d and returns hand-overs per second and the mean
// hold (µs, measured); their product is the efficiency (ops/s over the
// lock-bound ceiling 1 / mean hold) of a lock at that floor. Errors: the
// driver's, a driver without pub/sub, no hand-over in d.
func BareHandover(ctx context.Context, driver, addr, password string, clients int, hold, d time.Duration) (rate, meanHoldUS float64, err error) {
	if clients < 2 {
		return 0, 0, fmt.Errorf("%d clients, want at least 2", clients)
	}
	drv, err := drivers.Open(driver, drivers.Options{Endpoint: drivers.Endpoint{Addr: addr, Password: password}, PoolSize: clients + 4})
	if err != nil {
		return 0, 0, err
	}
	defer drv.Close()
	sub, ok := drv.(drivers.Subscriber)
	if !ok {
		return 0, 0, fmt.Errorf("driver %s has no pub/sub", driver)
	}
	prefix := "lockbench:handover:" + strategies.NewToken() + ":"
	turns := make([]chan struct{}, clients)
	for i := range turns {
		turns[i] = make(chan struct{}, 1)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended, err := sub.PSubscribe(sctx, prefix+"*", func(channel, _ string) {
		if i, err := strconv.Atoi(strings.TrimPrefix(channel, prefix)); err == nil && i >= 0 && i < clients {
			select {
			case turns[i] <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return 0, 0, fmt.Errorf("PSUBSCRIBE: %w", err)
	}
	runtime.GC()
	var stop atomic.Bool
	var holds atomic.Int64  // completed holds
	var heldNS atomic.Int64 // their total time
	var firstErr atomic.Value
	io := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			next := prefix + strconv.Itoa((g+1)%clients)
			for {
				select {
				case <-turns[g]:
				case <-sctx.Done():
					return
				}
				if stop.Load() {
					cancel()
					return
				}
				t0 := time.Now()
				time.Sleep(hold)
				if !stop.Load() { // a hold that ended after the clock stopped is not counted
					heldNS.Add(int64(time.Since(t0)))
					holds.Add(1)
				}
				if _, err := drv.Do(io, "PUBLISH", next, "turn"); err != nil {
					firstErr.CompareAndSwap(nil, err)
					cancel()
					return
				}
			}
		}(g)
	}
	start := time.Now()
	turns[0] <- struct{}{}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	elapsed := time.Since(start)
	// Ending the subscription's context releases every goroutine waiting
	// for a turn, also when a turn's message was lost (a connection drop):
	// the ring never hangs. The PUBLISH of a hold under way runs on io
	// and ends as it would.
	cancel()
	wg.Wait()
	<-ended
	if e, _ := firstErr.Load().(error); e != nil {
		return 0, 0, e
	}
	if ctx.Err() != nil {
		return 0, 0, ctx.Err()
	}
	n := holds.Load()
	if n == 0 {
		return 0, 0, fmt.Errorf("no hand-over in %v", d)
	}
	return float64(n) / elapsed.Seconds(), float64(heldNS.Load()) / float64(n) / 1e3, nil
}
