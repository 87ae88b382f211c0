package liveness_test

import (
	"context"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology/topotest"
	"github.com/lockbench/lockbench/strategies"
)

// A renewer that outlives its holder keeps a dead token alive past 3 x
// the TTL: the sampler, reading a real redis-server, sees one orphan held
// past the TTL, counts the renewals sent for it, and frees it once the
// renewals stop; a live holder's key and a string that was never a
// token are not orphans.
func TestSamplerRenewerOutlivesHolderTimed(t *testing.T) {
	d, _ := topotest.Server(t)
	ctx := context.Background()
	const ttl = 100 * time.Millisecond
	tr := liveness.NewTracker(2, ttl)
	c0 := strategies.WithClient(ctx, strategies.Client{ID: 0})
	c1 := strategies.WithClient(ctx, strategies.Client{ID: 1})
	// Client 0 holds lock a; client 1 held lock b and left without
	// releasing; c is a key no client registered.
	tr.Sent(c0, "t:a", "live")
	if _, err := d.SetNX(ctx, "t:a", "live", time.Minute); err != nil {
		t.Fatal(err)
	}
	tr.Acquired(0, "t:a", "live")
	tr.Sent(c1, "t:b", "dead")
	if _, err := d.SetNX(ctx, "t:b", "dead", ttl); err != nil {
		t.Fatal(err)
	}
	tr.Acquired(1, "t:b", "dead")
	tr.Exit(1, "t:b", "dead", liveness.Abandoned, metrics.Now())
	if _, err := d.Do(ctx, "SET", "t:c", "stranger", "PX", "60000"); err != nil {
		t.Fatal(err)
	}
	smp := &liveness.Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"t:a", "t:b", "t:c"}, Interval: 5 * time.Millisecond}
	smp.Start(ctx)
	// The renewer keeps b alive for 5 x the TTL, then stops.
	renewals := 0
	for end := time.Now().Add(5 * ttl); time.Now().Before(end); time.Sleep(ttl / 3) {
		tr.Renewing("t:b", "dead")
		if _, err := d.Do(ctx, "PEXPIRE", "t:b", "100"); err != nil {
			t.Fatal(err)
		}
		renewals++
	}
	time.Sleep(3 * ttl) // b expires
	smp.Stop()
	l := smp.Result()
	if l.OrphanLocks != 1 || l.HeldPastTTL != 1 || l.OrphanRenewals != int64(renewals) || l.OrphansAtEnd != 0 {
		t.Fatalf("%+v; want 1 orphan, held past 3 x TTL once, %d orphan renewals, none at the end", l, renewals)
	}
	// Its lock time: the 5 x TTL of renewals plus the last lease, within a
	// read interval or two.
	if l.OrphanLockMS < 500 || l.OrphanLockMS > 700 {
		t.Fatalf("orphan_lock_ms %.1f, want about 600", l.OrphanLockMS)
	}
	if l.TimeToFreeMS.Count != 1 || l.TimeToFreeMS.Max < 500 {
		t.Fatalf("time to free %+v, want b's one exit freed after the renewals stopped", l.TimeToFreeMS)
	}
	// The sampler's commands, for the cost: string keys only, so each read
	// is one MULTI, MGET, EXISTS, EXEC, and no script.
	n := l.Samples
	if cost, want := smp.Cost(), map[string]int64{"multi": n, "mget": n, "exists": n, "exec": n}; !maps.Equal(cost, want) {
		t.Fatalf("cost %v over %d reads, want %v", cost, n, want)
	}
}

// With Foreign (a process that is one execution segment of several), the
// sampler times the tokens it never registered: another process's token
// left in a lock until its 1 s lease ends shows as about 1 s; a
// token of this process is not timed. Without Foreign the figure is 0.
func TestSamplerForeignHold(t *testing.T) {
	d, _ := topotest.Server(t)
	ctx := context.Background()
	// The other token's lease is 1 s: the span the sampler sees is 1 s
	// less the time to its first read (one 5 ms interval, and whatever
	// stall a loaded machine puts between the SET and that read, allowed
	// up to 300 ms). Redis keeps the key up to a ms past its PX (its
	// expire time and clock are in ms; a CI run saw 1000.7), and a read's
	// start time is taken just before it is sent: 5 ms are allowed above.
	const ttl = time.Second
	for _, foreign := range []bool{true, false} {
		tr := liveness.NewTracker(1, ttl)
		c0 := strategies.WithClient(ctx, strategies.Client{ID: 0})
		tr.Sent(c0, "f:own", "mine") // ours, held for a minute: not timed
		if _, err := d.Do(ctx, "SET", "f:own", "mine", "PX", "60000"); err != nil {
			t.Fatal(err)
		}
		tr.Acquired(0, "f:own", "mine")
		if _, err := d.Do(ctx, "SET", "f:other", "theirs", "PX", strconv.FormatInt(ttl.Milliseconds(), 10)); err != nil {
			t.Fatal(err)
		}
		smp := &liveness.Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"f:own", "f:other"}, Interval: 5 * time.Millisecond, Foreign: foreign}
		smp.Start(ctx)
		time.Sleep(2 * ttl)
		smp.Stop()
		got := smp.Result().ForeignHoldMaxMS
		if foreign && (got < 700 || got > 1005) {
			t.Errorf("foreign_hold_max_ms %.1f, want 700 to 1005 (the other token's 1 s lease)", got)
		}
		if !foreign && got != 0 {
			t.Errorf("without Foreign: %.1f, want 0", got)
		}
		if _, err := d.Do(ctx, "DEL", "f:own"); err != nil {
			t.Fatal(err)
		}
	}
}

// A read takes every string key's value with one MGET (in MULTI, with an
// EXISTS of the keys): finding a key of another type there, it reads by
// the script, which looks at the keys without a string one by one. A dead
// token stored as a hash key's field (as reentrant stores it) is an
// orphan, a live one as a string value is not, a list and a missing key
// hold none; the cost counts both ways of the read, the script's TYPE of
// the hash, the list and the missing key, and the hash's HKEYS.
func TestSamplerReadsHashAndStringKeys(t *testing.T) {
	d, _ := topotest.Server(t)
	ctx := context.Background()
	tr := liveness.NewTracker(2, time.Minute)
	c0 := strategies.WithClient(ctx, strategies.Client{ID: 0})
	c1 := strategies.WithClient(ctx, strategies.Client{ID: 1})
	tr.Sent(c0, "h:hash", "owner-0")
	if _, err := d.Do(ctx, "HSET", "h:hash", "owner-0", "1"); err != nil {
		t.Fatal(err)
	}
	tr.Acquired(0, "h:hash", "owner-0")
	tr.Exit(0, "h:hash", "owner-0", liveness.Abandoned, metrics.Now())
	tr.Sent(c1, "h:str", "live")
	if _, err := d.SetNX(ctx, "h:str", "live", time.Minute); err != nil {
		t.Fatal(err)
	}
	tr.Acquired(1, "h:str", "live")
	if _, err := d.Do(ctx, "RPUSH", "h:list", "owner-0"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond) // the read begins after the death
	smp := &liveness.Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"h:hash", "h:str", "h:list", "h:missing"}, Interval: time.Hour}
	smp.Start(ctx) // one read at once
	smp.Stop()
	l := smp.Result()
	if l.Samples != 1 || l.OrphanLocks != 1 || l.OrphansAtEnd != 1 {
		t.Fatalf("%+v; want one read finding the hash's dead field an orphan", l)
	}
	want := map[string]int64{"multi": 1, "exec": 1, "evalsha": 1, "mget": 2, "exists": 2, "type": 3, "hkeys": 1}
	if cost := smp.Cost(); !maps.Equal(cost, want) {
		t.Fatalf("cost %v, want %v", cost, want)
	}
}

// A hash lock key with Redisson's "mode" field beside a dead holder's
// field, kept past 3 x the TTL: with "mode" declared no token
// (Sampler.NotTokens, from strategies.NonTokenFields) the key holds only
// a dead token and counts once in held_past_ttl; without, "mode" is a
// field the registry does not know, read as a live holder's, and the key
// never counts (0). The dead field is an orphan either way. The test
// polls the figures (up to 10 s) instead of sleeping a fixed time: the
// declared case until its key is counted, the other until its reads span
// one TTL more than the declared case's did when counted.
func TestSamplerNotTokens(t *testing.T) {
	d, _ := topotest.Server(t)
	ctx := context.Background()
	const ttl = time.Second
	span := func(l report.Liveness) time.Duration { // first read to last
		return time.Duration(l.ResolutionMS * 1e6 * float64(max(l.Samples-1, 0)))
	}
	var declaredSpan time.Duration // the declared case's reads when counted
	for _, declared := range []bool{true, false} {
		tr := liveness.NewTracker(1, ttl)
		c0 := strategies.WithClient(ctx, strategies.Client{ID: 0})
		tr.Sent(c0, "n:rw", "reader-0")
		if _, err := d.Do(ctx, "HSET", "n:rw", "mode", "read", "reader-0", "1"); err != nil {
			t.Fatal(err)
		}
		tr.Acquired(0, "n:rw", "reader-0")
		tr.Exit(0, "n:rw", "reader-0", liveness.Abandoned, metrics.Now())
		time.Sleep(time.Millisecond) // the reads begin after the death
		smp := &liveness.Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"n:rw"}, Interval: 20 * time.Millisecond}
		if declared {
			smp.NotTokens = []string{"mode"}
		}
		smp.Start(ctx)
		// The key stays (no expiry): poll until past 3 x the TTL.
		deadline := time.Now().Add(10 * time.Second)
		for {
			l := smp.Result()
			if declared && l.HeldPastTTL > 0 {
				declaredSpan = span(l)
				break
			}
			if !declared && span(l) > max(declaredSpan, 3*ttl)+ttl {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("mode declared %v: after 10 s, %+v (reads span %v)", declared, l, span(l))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		smp.Stop()
		l := smp.Result()
		want := int64(0)
		if declared {
			want = 1
		}
		if l.HeldPastTTL != want || l.OrphanLocks != 1 {
			t.Errorf("mode declared %v: held_past_ttl %d, orphan_locks %d; want %d and 1", declared, l.HeldPastTTL, l.OrphanLocks, want)
		}
		if _, err := d.Do(ctx, "DEL", "n:rw"); err != nil {
			t.Fatal(err)
		}
	}
}
