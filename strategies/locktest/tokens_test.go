package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// Token reporting (issue 17, the liveness oracle) of naive, which the
// conformance suite leaves out (its plain DEL release is the broken
// baseline's): its token is a plain value, reported like every other
// strategy's (Suite.TokensReported; TestConformance checks the others).
func TestTokensReported(t *testing.T) {
	for _, d := range drivers.Names() {
		t.Run("naive/"+d, func(t *testing.T) { suite("naive").TokensReported(t, "naive", d) })
	}
}

// Redlock extend (issue 17): with extend=on a lease extends while it holds
// a quorum and fails with ErrExtendFailed once its keys expired and another
// client took the lock; extend=unchecked (a plain PEXPIRE) reports success
// then, on the other client's lock, and revives the lease's context. The
// default (off) leases cannot extend. Every node's extend is reported to
// Renewing.
func TestRedlockExtend(t *testing.T) {
	t.Parallel() // as its subtests are: beside the package's other parallel tests
	ctx := context.Background()
	for _, d := range drivers.Names() {
		for _, mode := range []string{"off", "on", "unchecked"} {
			t.Run(mode+"/"+d, func(t *testing.T) {
				t.Parallel() // own key (the test's name); 1 s sleeps inside a 2 s lease
				ds := open(t, d, "redlock")
				rec := newRecorder()
				// 2 s: the sleeps and round trips below must stay well
				// inside the lease on a loaded machine (300 ms gave an
				// extend after expiry; 1 s a 430 ms stall at load 5).
				const ttl = 2 * time.Second
				l, err := strategies.New("redlock", strategies.Config{Nodes: ds, TTL: ttl, Tokens: rec, Params: map[string]any{"extend": mode}})
				if err != nil {
					t.Fatal(err)
				}
				key := "lockbench:locktest:{" + t.Name() + "}:lock"
				a, err := l.TryAcquire(strategies.WithClient(ctx, strategies.Client{ID: 1, Owner: "A"}), key)
				if err != nil {
					t.Fatal(err)
				}
				ext, ok := a.(strategies.Extender)
				if mode == "off" {
					if ok {
						t.Fatal("extend=off: the lease is an Extender")
					}
					_ = a.Release(ctx)
					return
				}
				if !ok {
					t.Fatalf("extend=%s: the lease is not an Extender", mode)
				}
				time.Sleep(ttl / 2)
				if err := ext.Extend(ctx); err != nil {
					t.Fatalf("extend of a held lease: %v", err)
				}
				if n := rec.renewals(key, a.Token()); n != len(ds) {
					t.Fatalf("%d extends reported to Renewing, want one per node (%d)", n, len(ds))
				}
				// Before the extend at most ttl/2 was left; after it, more.
				for i, d := range ds {
					if p, _ := d.Do(ctx, "PTTL", key); p.Int <= (ttl / 2).Milliseconds() {
						t.Fatalf("node %d: PTTL %d ms after the extend, want over %v (about %v)", i, p.Int, ttl/2, ttl)
					}
				}
				// A's keys expire; B takes the lock. A's context ends at its
				// validity (a timer: allowed 2 s more on a loaded machine).
				time.Sleep(ttl + 50*time.Millisecond)
				select {
				case <-a.(strategies.Watched).Context().Done():
				case <-time.After(2 * time.Second):
					t.Fatal("A's context still live 2 s after its validity")
				}
				b, err := l.TryAcquire(strategies.WithClient(ctx, strategies.Client{ID: 2, Owner: "B"}), key)
				if err != nil {
					t.Fatalf("B could not take the expired lock: %v", err)
				}
				err = ext.Extend(ctx)
				st := l.(strategies.StatsReporter).Stats()
				switch mode {
				case "on":
					if !errors.Is(err, strategies.ErrExtendFailed) || !errors.Is(err, strategies.ErrNotOwner) {
						t.Fatalf("extend=on on B's lock = %v, want ErrExtendFailed (an ErrNotOwner)", err)
					}
					if a.(strategies.Watched).Context().Err() == nil {
						t.Fatal("a failed extend revived A's context")
					}
					if st["extends"] != 1 || st["extend_failures"] != 1 {
						t.Fatalf("stats %v, want 1 extend and 1 failure", st)
					}
				case "unchecked":
					if err != nil {
						t.Fatalf("extend=unchecked on B's lock = %v, want success (the broken variant)", err)
					}
					if a.(strategies.Watched).Context().Err() != nil {
						t.Fatal("the unchecked extend's success did not revive A's context")
					}
					if st["extends"] != 2 || st["extend_failures"] != 0 {
						t.Fatalf("stats %v, want 2 extends and no failure", st)
					}
				}
				if got := stored(t, ds[0], key); len(got) != 1 || got[0] != b.Token() {
					t.Fatalf("the lock holds %q, want B's token", got)
				}
				if err := b.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if err := a.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
					t.Fatalf("A's release after B's = %v, want ErrNotOwner", err)
				}
			})
		}
	}
}
