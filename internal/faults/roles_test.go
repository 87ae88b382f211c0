package faults_test

import (
	"context"
	"strings"
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

func TestPauseRole(t *testing.T) {
	sp, err := faults.Parse("pause:role=write,for=1ms,at=10ms")
	if err != nil {
		t.Fatal(err)
	}
	if errs := sp.Check(faults.Layout{Roles: []string{"read"}}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "fault pause: role=write, but no client plays it") {
		t.Errorf("readers only: %v, want role=write refused", errs)
	}
	roles := []string{"read", "read", "write"}
	in := faults.New([]faults.Spec{sp}, faults.Env{TTL: time.Second, Role: func(c int) string { return roles[c] }})
	ctx, cancel := context.WithCancel(context.Background())
	in.Start(ctx)
	var g strategies.Gate
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		in.Paused(0, &g) // readers: never taken
		in.Paused(1, &g)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		in.Paused(2, &g)
	}
	cancel()
	if ws := in.Finish(); len(ws) != 1 || ws[0].Note != "client 2 paused 1ms inside its critical section (role write)" {
		t.Errorf("windows %+v, want the writer (client 2) paused", ws)
	}
}
