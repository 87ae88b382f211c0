package faults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/faults"
)

// crash-after-setnx:role=read takes the first reader at the crash point
// and no client of another role; a scenario whose clients play no such
// role is refused.
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
