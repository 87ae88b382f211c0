package liveness

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/strategies"
)

func client(id int) context.Context {
	return strategies.WithClient(context.Background(), strategies.Client{ID: id})
}

// The registry's states: a retried attempt's token is forgotten, a failed
// acquire's last token is dead, a confirmed one held, a release frees it,
// and a renewal after the release or after death is an orphan renewal.
func TestTrackerStates(t *testing.T) {
	tr := NewTracker(2, 1e9)
	tr.Sent(client(0), "k", "a")
	tr.Sent(client(0), "k", "b") // "a" was answered "not acquired"
	if _, ok := tr.m[tokKey{"k", "a"}]; ok {
		t.Fatal("the retried attempt's token is still registered")
	}
	tr.Acquired(0, "k", "b")
	if e := tr.m[tokKey{"k", "b"}]; e == nil || e.st != held {
		t.Fatalf("b: %+v, want held", e)
	}
	tr.Renewing("k", "b") // a live holder's renewal
	tr.Exit(0, "k", "b", Released, metrics.Now())
	tr.Renewing("k", "b") // after its release
	if n := tr.orphanRenewals.Load(); n != 1 {
		t.Fatalf("orphan renewals %d, want 1 (the one after the release)", n)
	}
	tr.Sent(client(1), "k", "c")
	tr.Failed(1) // a timeout: c may be stored
	e := tr.m[tokKey{"k", "c"}]
	if e == nil || e.st != dead || e.exit || !e.tracked {
		t.Fatalf("c: %+v, want dead from a failed acquire, tracked", e)
	}
	tr.Renewing("k", "c")
	if n := tr.orphanRenewals.Load(); n != 2 {
		t.Fatalf("orphan renewals %d, want 2", n)
	}
	tr.Sent(client(1), "k", "d")
	tr.Acquired(1, "k", "d")
	tr.Exit(1, "k", "d", Abandoned, metrics.Now())
	if e := tr.m[tokKey{"k", "d"}]; e == nil || e.st != dead || !e.exit {
		t.Fatalf("d: %+v, want dead at a holder's exit", e)
	}
	tr.Exit(1, "k", "zz", NotOwner, metrics.Now()) // never registered: ignored
	if tr.ttf.TotalCount() != 1 {
		t.Fatalf("time-to-free values %d, want 1 (b's release)", tr.ttf.TotalCount())
	}
	// No client in the context: not tracked.
	tr.Sent(context.Background(), "k", "x")
	if _, ok := tr.m[tokKey{"k", "x"}]; ok {
		t.Fatal("a token sent without a client was registered")
	}
}
