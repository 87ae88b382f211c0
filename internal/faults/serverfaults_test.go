package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

func start(t *testing.T, n int) *topology.Topology {
	t.Helper()
	topo, err := topology.Start(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Stop)
	return topo
}

// inject runs one fault (triggered at once) on topo's servers until it
// has acted, and returns its window.
func inject(t *testing.T, topo *topology.Topology, spec string, run time.Duration) faults.Window {
	t.Helper()
	sp, err := faults.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	in := faults.New([]faults.Spec{sp}, faults.Env{Servers: topo.Servers, TTL: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	in.Start(ctx)
	<-ctx.Done()
	w := in.Finish()
	if len(w) != 1 || w[0].StartMS < 0 || w[0].EndMS < w[0].StartMS {
		t.Fatalf("window %+v", w)
	}
	return w[0]
}

// A key with PX 10000 is gone after a +20s clock jump and there without
// it; a longer one loses 20 s; clock-jump:count=2 acts on two of three.
func TestClockJump(t *testing.T) {
	t.Parallel()
	topo := start(t, 3)
	cmd := func(i int, args ...string) string {
		s := topo.Servers[i]
		out, err := topology.Command(s.Addr, s.Password, 2*time.Second, args...)
		if err != nil {
			t.Fatalf("%v on %d: %v", args, i, err)
		}
		return out
	}
	for i := range topo.Servers {
		cmd(i, "SET", "k", "v", "PX", "10000")
		cmd(i, "SET", "long", "v", "PX", "60000")
		cmd(i, "SET", "forever", "v")
	}
	w := inject(t, topo, "clock-jump:at=0s,count=2,by=20s", 300*time.Millisecond)
	if !strings.Contains(w.Note, "node 0: +20s (1 keys expired, 1 moved)") || !strings.Contains(w.Note, "node 1:") || strings.Contains(w.Note, "node 2") {
		t.Fatalf("note %q", w.Note)
	}
	for i := 0; i < 2; i++ {
		if got := cmd(i, "GET", "k"); got != "" {
			t.Errorf("node %d: k = %q after a +20s jump, want gone", i, got)
		}
		if got := cmd(i, "GET", "forever"); got != "v" {
			t.Errorf("node %d: a key without TTL = %q, want kept", i, got)
		}
		if pttl := cmd(i, "PTTL", "long"); pttl > "40000" || len(pttl) != 5 || pttl < "39000" {
			t.Errorf("node %d: PTTL long = %s after the jump, want about 40000", i, pttl)
		}
	}
	if got := cmd(2, "GET", "k"); got != "v" {
		t.Errorf("node 2 (no jump): k = %q, want v", got)
	}
}

// CLIENT PAUSE WRITE: a SET waits for the pause while a GET does not.
// The drivers take turns (not each: they share the server, its key and
// its pause).
func TestClientPause(t *testing.T) {
	t.Parallel()
	topo := start(t, 1)
	s := topo.Servers[0]
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			d, err := drivers.Open(name, drivers.Options{Endpoint: drivers.Endpoint{Addr: s.Addr, Password: s.Password}, PoolSize: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			if _, err := d.Do(ctx, "PING"); err != nil {
				t.Fatal(err)
			}
			done := make(chan faults.Window)
			go func() { done <- inject(t, topo, "client-pause:at=0s,for=600ms", 800*time.Millisecond) }()
			time.Sleep(100 * time.Millisecond)
			t0 := time.Now()
			if _, err := d.Do(ctx, "GET", "cp"); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(t0); took > 300*time.Millisecond {
				t.Errorf("GET took %v under CLIENT PAUSE WRITE", took)
			}
			t0 = time.Now()
			if _, err := d.SetNX(ctx, "cp", "v", time.Second); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(t0); took < 300*time.Millisecond {
				t.Errorf("SET NX took %v under a 600ms CLIENT PAUSE WRITE, want it to wait for the pause", took)
			}
			if w := <-done; !strings.Contains(w.Note, "CLIENT PAUSE WRITE") {
				t.Errorf("note %q", w.Note)
			}
		})
	}
}

// SCRIPT FLUSH every 100 ms under atomic (a Lua release): every release
// after a flush finds NOSCRIPT, falls back to EVAL, and no call fails.
func TestScriptFlushFault(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		res := scenario(t, "atomic", d, "flash-sale", "", 200*time.Millisecond, "1ms", "script-flush:at=100ms,every=100ms", 8, time.Second)
		if res.Counters.Errors != 0 || res.Counters.NotOwner != 0 || !strings.Contains(res.Faults[0].Note, "times, every 100ms") {
			t.Fatalf("errors %d (%v), not_owner %d, note %q; want 0, 0 and several flushes", res.Counters.Errors, res.Counters.ErrorSamples, res.Counters.NotOwner, res.Faults[0].Note)
		}
	})
}

// The Redlock critique's clock jump: the clocks of 3 of 5 masters jump by
// more than the TTL while a client holds the lock, its key expires there,
// and a second client takes a majority (overlap); on 2 of 5 the holder
// keeps a majority and nobody else gets in. The jump strikes right after
// the second grant (after=2): the first one is a race of every client
// for the five masters, which its winner may take with only three (and
// then 2 jumps of 5 can leave it a minority, as Redlock allows); later
// ones go to a client alone at that moment (the others poll every
// 200 ms), which takes all five.
// Two clients: the holder, which re-acquires at once when it releases and
// so holds all five masters at its second grant, and one competitor,
// retrying every 200 ms. (With two competitors their attempts, in step,
// split the free masters between them and neither reaches a majority
// before the holder's work ends: no overlap, and the test failed once.)
func TestClockJumpRedlock(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, d string) {
		for _, c := range []struct {
			count   int
			overlap bool
		}{{3, true}, {2, false}} {
			topo := start(t, 5)
			var nodes []engine.Node
			for _, s := range topo.Servers {
				nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
			}
			sp, err := faults.Parse(fmt.Sprintf("clock-jump:after=2,count=%d,by=10s", c.count))
			if err != nil {
				t.Fatal(err)
			}
			pol, _ := retry.Parse("fixed:interval=200ms")
			res, err := engine.Run(context.Background(), engine.Scenario{Spec: engine.Spec{
				Strategy: "redlock", Driver: d, Workload: "long-task", Retry: pol, Clients: 2,
				Duration: 2 * time.Second, TTL: 5 * time.Second, AcquireTimeout: 3 * time.Second, Seed: 1,
				Params: workloads.Params{Work: workloads.Fixed(500 * time.Millisecond)}, Options: registry.Values{"keys": 1},
				Faults: []faults.Spec{sp},
			}, Env: engine.Env{Servers: topo.Servers}}, nodes, fmt.Sprintf("lockbench:faulttest:clockjump%d:", c.count))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Violations.Overlap > 0; got != c.overlap {
				t.Fatalf("clock jump on %d of 5: overlap %d, want > 0: %v; window %+v", c.count, res.Violations.Overlap, c.overlap, res.Faults)
			}
		}
	})
}
