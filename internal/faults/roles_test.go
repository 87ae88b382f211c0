package faults_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/strategies"
)

// crash-after-setnx:role=read takes the first reader at the crash point
// and no client of another role; a scenario whose clients play no such
// role is refused. pause:role=write likewise pauses the first writer.
func TestCrashRole(t *testing.T) {
	sp, err := faults.Parse("crash-after-setnx:role=read")
	if err != nil {
		t.Fatal(err)
	}
	if errs := sp.Check(faults.Layout{}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "role=read, but no client plays it") {
		t.Errorf("no roles: %v, want role=read refused", errs)
	}
	if errs := sp.Check(faults.Layout{Roles: []string{"write", "read"}}); len(errs) != 0 {
		t.Errorf("readers and writers: %v", errs)
	}
	if _, err := faults.Parse("crash-after-setnx:role=reader"); err == nil {
		t.Error("role=reader parsed")
	}
	roles := []string{"write", "read", "write", "read"}
	in := faults.New([]faults.Spec{sp}, faults.Env{CrashPoint: "after-acquire", TTL: time.Second,
		Role: func(c int) string { return roles[c] }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in.Start(ctx)
	deadline := time.Now().Add(5 * time.Second)
	crashed := -1
	for crashed < 0 && time.Now().Before(deadline) {
		for c := range roles {
			if in.Crash(c, "after-acquire") {
				crashed = c
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
	if crashed != 1 {
		t.Fatalf("crashed client %d, want 1 (the first reader)", crashed)
	}
	for c := range roles {
		if in.Crash(c, "after-acquire") {
			t.Errorf("client %d crashed after the fault's one crash", c)
		}
	}
	cancel()
	ws := in.Finish()
	if len(ws) != 1 || ws[0].Note != "a client of role read crashed at after-acquire" {
		t.Errorf("windows %+v", ws)
	}
}

// TestPauseRole: pause:role=write, armed at 10 ms, passes over the
// readers and pauses the writer. No step rests on a fixed time: Env.Role
// is consulted only by the armed fault (a client offered to it), and
// Env.Stuck runs when its window ends (Action.End), so the test offers
// the readers until the armed fault has consulted both and let them go
// (its window still open: not paused), then offers the writer until the
// window has ended, each within 5 s.
func TestPauseRole(t *testing.T) {
	sp, err := faults.Parse("pause:role=write,for=1ms,at=10ms")
	if err != nil {
		t.Fatal(err)
	}
	if errs := sp.Check(faults.Layout{Roles: []string{"read"}}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "fault pause: role=write, but no client plays it") {
		t.Errorf("readers only: %v, want role=write refused", errs)
	}
	roles := []string{"read", "read", "write"}
	var consulted [3]atomic.Int64 // Role calls per client: by the armed fault only
	var ended atomic.Int64        // windows ended (Stuck runs in Action.End)
	in := faults.New([]faults.Spec{sp}, faults.Env{TTL: time.Second,
		Role:  func(c int) string { consulted[c].Add(1); return roles[c] },
		Stuck: func() (int64, error) { ended.Add(1); return 0, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in.Start(ctx)
	var g strategies.Gate
	deadline := time.Now().Add(5 * time.Second)
	for consulted[0].Load() == 0 || consulted[1].Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the fault did not arm within 5 s: readers consulted %d and %d times", consulted[0].Load(), consulted[1].Load())
		}
		in.Paused(0, &g) // readers: offered, never taken
		in.Paused(1, &g)
		time.Sleep(time.Millisecond)
	}
	if n := ended.Load(); n != 0 {
		t.Fatalf("%d windows ended while only readers were offered: a reader was paused", n)
	}
	deadline = time.Now().Add(5 * time.Second)
	for ended.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the writer was not paused within 5 s of the fault's arming")
		}
		in.Paused(2, &g)
		time.Sleep(time.Millisecond)
	}
	if consulted[2].Load() == 0 {
		t.Error("the writer's role was never consulted")
	}
	cancel()
	if ws := in.Finish(); len(ws) != 1 || ws[0].Note != "client 2 paused 1ms inside its critical section (role write)" {
		t.Errorf("windows %+v, want the writer (client 2) paused", ws)
	}
}
