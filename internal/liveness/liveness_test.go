package liveness

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/topology/topotest"
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

// Refused tokens (the server answered "not acquired") are judged by the
// first read after them: of 1,000 never stored, none is left in the
// registry after one read, while one that a minority write left stored
// (as Redlock's can) is an orphan of a failed acquire and stays, and an
// unanswered failure (a timeout) stays for the retention although the
// read did not find it.
func TestRefusedTokensLeaveAtNextRead(t *testing.T) {
	d, _ := topotest.Server(t)
	ctx := context.Background()
	tr := NewTracker(1, time.Minute)
	for i := range 1000 {
		tr.Sent(client(0), "r:a", "refused-"+strconv.Itoa(i))
		tr.Refused(0)
	}
	tr.Sent(client(0), "r:b", "left")
	if _, err := d.Do(ctx, "SET", "r:b", "left", "PX", "60000"); err != nil {
		t.Fatal(err)
	}
	tr.Refused(0)
	tr.Sent(client(0), "r:a", "timeout")
	tr.Failed(0)
	if len(tr.m) != 1002 || len(tr.fresh) != 1001 || len(tr.aging) != 1 {
		t.Fatalf("before the read: %d registered, %d fresh, %d aging; want 1002, 1001, 1", len(tr.m), len(tr.fresh), len(tr.aging))
	}
	time.Sleep(time.Millisecond) // the read begins after the refusals
	smp := &Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"r:a", "r:b"}, Interval: time.Hour}
	smp.Start(ctx) // one read at once
	smp.Stop()
	_, left := tr.m[tokKey{"r:b", "left"}]
	_, timeout := tr.m[tokKey{"r:a", "timeout"}]
	if len(tr.m) != 2 || !left || !timeout || len(tr.fresh) != 0 || len(tr.aging) != 2 || len(tr.dead) != 2 {
		t.Fatalf("after one read: %d registered (left %v, timeout %v), %d fresh, %d aging, %d dead; want 2 (both), 0, 2, 2",
			len(tr.m), left, timeout, len(tr.fresh), len(tr.aging), len(tr.dead))
	}
	if l := smp.Result(); l.OrphanLocks != 1 || l.OrphanAcquires != 1 || l.OrphansAtEnd != 1 {
		t.Fatalf("%+v; want the one stored refusal an orphan of a failed acquire, still there at the end", l)
	}
}

// On several nodes (Redlock) a refusal may have a write in flight to a
// node that did not answer in time: Refused is then Failed, kept for the
// retention.
func TestRefusedMultiNodeIsFailed(t *testing.T) {
	tr := NewTracker(1, time.Minute)
	tr.MultiNode = true
	tr.Sent(client(0), "k", "a")
	tr.Refused(0)
	e := tr.m[tokKey{"k", "a"}]
	if e == nil || e.st != dead || e.answered || len(tr.fresh) != 0 || len(tr.aging) != 1 {
		t.Fatalf("entry %+v, %d fresh, %d aging; want dead, not answered, aging", e, len(tr.fresh), len(tr.aging))
	}
}
