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

// ttfCount is the number of times to free recorded.
func ttfCount(t *Tracker) int64 {
	t.gather()
	return t.ttf.TotalCount()
}

// find returns the registry's entry of k: a client's own, or the map's.
func (t *Tracker) find(k tokKey) (*entry, bool) {
	for i := range t.cl {
		if e := t.cl[i].lookup(k); e != nil {
			return e, true
		}
	}
	e, ok := t.m[k]
	return e, ok
}

// The registry's states: a retried attempt's token is forgotten, a failed
// acquire's last token is dead, a confirmed one held, a release frees it,
// and a renewal after the release or after death is an orphan renewal.
func TestTrackerStates(t *testing.T) {
	tr := NewTracker(2, 1e9)
	tr.Sent(client(0), "k", "a")
	tr.Sent(client(0), "k", "b") // "a" was answered "not acquired"
	if _, ok := tr.find(tokKey{"k", "a"}); ok {
		t.Fatal("the retried attempt's token is still registered")
	}
	tr.Acquired(0, "k", "b")
	if e, _ := tr.find(tokKey{"k", "b"}); e == nil || e.st != held {
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
	if ttfCount(tr) != 1 {
		t.Fatalf("time-to-free values %d, want 1 (b's release)", ttfCount(tr))
	}
	// No client in the context: not tracked.
	tr.Sent(context.Background(), "k", "x")
	if _, ok := tr.find(tokKey{"k", "x"}); ok {
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

// A client's new token is its own entry, outside the map, while pending
// or held: the common cycle (sent, acquired, released) leaves the map
// empty and allocates nothing once the client has an entry to reuse. A
// token held while the client sends another (nested holds) moves to the
// map, as does one that dies (every dead token is in the map, where the
// sampler judges it); after indexAll every token is in the map.
func TestTrackerOwnEntries(t *testing.T) {
	tr := NewTracker(2, time.Second)
	ctx := client(0)
	tokens := make([]string, 1001)
	for i := range tokens {
		tokens[i] = "t" + strconv.Itoa(i)
	}
	i := 0
	if a := testing.AllocsPerRun(1000, func() {
		tok := tokens[i]
		i++
		tr.Sent(ctx, "k", tok)
		tr.Acquired(0, "k", tok)
		tr.ExitAt(0, "k", tok, Released, 0, time.Millisecond)
	}); a != 0 {
		t.Errorf("a lock cycle allocates %.1f times in the registry, want 0", a)
	}
	if reg, unreg := tr.gather(); len(tr.m) != 0 || reg != 1001 || unreg != 0 || ttfCount(tr) != 1001 {
		t.Fatalf("after 1,001 cycles: %d in the map, %d registered, %d unregistered, %d times to free; want 0, 1001, 0, 1001",
			len(tr.m), reg, unreg, ttfCount(tr))
	}
	// Nested: the outer token moves to the map when the inner one is sent.
	tr.Sent(ctx, "outer", "o")
	tr.Acquired(0, "outer", "o")
	tr.Sent(ctx, "inner", "i")
	if e := tr.m[tokKey{"outer", "o"}]; e == nil || e.st != held {
		t.Fatalf("outer: %+v in the map, want held", e)
	}
	if _, ok := tr.m[tokKey{"inner", "i"}]; ok {
		t.Fatal("inner token in the map, want the client's own")
	}
	tr.Acquired(0, "inner", "i")
	tr.Exit(0, "inner", "i", Released, metrics.Now())
	tr.Exit(0, "outer", "o", Released, metrics.Now())
	if reg, _ := tr.gather(); len(tr.m) != 0 || reg != 1003 {
		t.Fatalf("after the nested holds: %d in the map, %d registered; want 0, 1003", len(tr.m), reg)
	}
	// A holder that abandons its lock: its token dies in the map.
	tr.Sent(ctx, "k", "gone")
	tr.Acquired(0, "k", "gone")
	tr.Exit(0, "k", "gone", Abandoned, metrics.Now())
	if e := tr.m[tokKey{"k", "gone"}]; e == nil || e.st != dead || !e.exit || !e.tracked {
		t.Fatalf("abandoned: %+v, want dead at a holder's exit, tracked, in the map", e)
	}
	// A refused attempt: dead in the map, fresh.
	tr.Sent(ctx, "k", "no")
	tr.Refused(0)
	if e := tr.m[tokKey{"k", "no"}]; e == nil || e.st != dead || !e.answered || len(tr.fresh) != 1 {
		t.Fatalf("refused: %+v, %d fresh; want dead, answered, 1 fresh", e, len(tr.fresh))
	}
	// Retried attempts reuse the client's entry: the earlier token is gone.
	tr.Sent(ctx, "k", "a1")
	tr.Sent(ctx, "k", "a2")
	if _, ok := tr.find(tokKey{"k", "a1"}); ok {
		t.Fatal("the retried attempt's token is still registered")
	}
	// indexAll: the pending token moves to the map, and every later one
	// goes there.
	tr.indexAll()
	if e := tr.m[tokKey{"k", "a2"}]; e == nil || e.st != pending {
		t.Fatalf("after indexAll, a2: %+v in the map, want pending", e)
	}
	tr.Acquired(0, "k", "a2")
	tr.Sent(client(1), "k2", "b")
	if e := tr.m[tokKey{"k2", "b"}]; e == nil || e.st != pending {
		t.Fatalf("after indexAll, b: %+v in the map, want pending", e)
	}
	tr.Exit(0, "k", "a2", Released, metrics.Now())
	if _, ok := tr.m[tokKey{"k", "a2"}]; ok {
		t.Fatal("a2 still in the map after its release")
	}
}

// An orphan share's age is recorded once, when its dead life ends (here
// its token is sent again, as rwlock's reader sends its owner id on its
// next acquire), and not again by the summary of the shares still dead.
func TestShareAgeRecordedOnce(t *testing.T) {
	tr := NewTracker(1, time.Second)
	tr.Sent(client(0), "k", "r0")
	tr.Acquired(0, "k", "r0")
	tr.Exit(0, "k", "r0", Abandoned, metrics.Now())
	e, _ := tr.find(tokKey{"k", "r0"})
	if e == nil || e.st != dead || e.shareRef != e.since {
		t.Fatalf("r0: %+v, want dead at its exit, its share dated from it", e)
	}
	tr.mu.Lock()
	e.share, e.lastSeen = true, e.since+5*time.Second // as a read past the grace counts it
	if h := tr.shareAgeHist(); h.TotalCount() != 1 || h.Max() < 4_990_000 {
		t.Fatalf("while dead: %d ages, max %d µs; want 1 of 5 s", h.TotalCount(), h.Max())
	}
	tr.mu.Unlock()
	tr.Sent(client(0), "k", "r0") // its owner's next acquire
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if h := tr.shareAgeHist(); h.TotalCount() != 1 || e.share {
		t.Fatalf("after its token was sent again: %d ages (share %v), want the one recorded", h.TotalCount(), e.share)
	}
}

// A token its client sends again after releasing it (a reentrant lock's
// token is its owner, the same at every acquire) is live again: the new
// holder's renewals are no orphan renewals, and a renewal after the
// second release is one.
func TestRenewingReusedToken(t *testing.T) {
	tr := NewTracker(2, 1e9)
	for round := range 3 {
		tr.Sent(client(0), "k", "owner")
		tr.Acquired(0, "k", "owner")
		tr.Renewing("k", "owner")
		tr.Renewing("k", "owner")
		tr.Exit(0, "k", "owner", Released, metrics.Now())
		if n := tr.orphanRenewals.Load(); n != int64(round) {
			t.Fatalf("round %d: orphan renewals %d, want %d (one after each earlier release)", round, n, round)
		}
		tr.Renewing("k", "owner") // after its release: an orphan renewal
	}
	if n := tr.orphanRenewals.Load(); n != 3 {
		t.Fatalf("orphan renewals %d, want 3", n)
	}
}

// A dead entry already counted as an orphan share and killed again (an
// Abandoned exit reported twice for one map entry) keeps one age per
// share: orphan_shares and the ages' count stay equal through each dead
// life, the first life's age recorded when the second begins.
func TestShareAgeKilledAgain(t *testing.T) {
	tr := NewTracker(1, time.Second)
	tr.Sent(client(0), "k", "r0")
	tr.Acquired(0, "k", "r0")
	tr.Exit(0, "k", "r0", Abandoned, metrics.Now())
	e, _ := tr.find(tokKey{"k", "r0"})
	if e == nil || e.st != dead {
		t.Fatalf("r0: %+v, want dead at its exit", e)
	}
	// countShare does what a read past the grace does (Sampler.sample).
	countShare := func() {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		e.share, e.lastSeen = true, e.since+5*time.Second
		tr.orphanShares++
	}
	check := func(when string, want int64) {
		t.Helper()
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if n := tr.shareAgeHist().TotalCount(); n != tr.orphanShares || n != want {
			t.Fatalf("%s: %d ages, orphan_shares %d; want %d of each", when, n, tr.orphanShares, want)
		}
	}
	countShare()
	check("counted", 1)
	tr.Exit(0, "k", "r0", Abandoned, metrics.Now()) // the same map entry again
	if e2, _ := tr.find(tokKey{"k", "r0"}); e2 != e || e.st != dead || e.share {
		t.Fatalf("r0 after its second exit: %+v, want the same entry dead, not yet a share again", e2)
	}
	check("killed again", 1)
	countShare() // its second dead life is a share too
	check("counted again", 2)
	tr.Sent(client(0), "k", "r0") // its owner's next acquire ends it
	check("sent again", 2)
}
