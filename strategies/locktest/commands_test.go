package locktest

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// dedicated starts a redis-server of the test's own (so that no other
// test's commands are counted) and opens driver d on it.
func dedicated(t *testing.T, d string) []drivers.Driver {
	t.Helper()
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Stop)
	ds, err := engine.Open(context.Background(), d, []engine.Node{{Addr: topo.Servers[0].Addr, Password: topo.Servers[0].Password}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds[0].Close() })
	return ds
}

// notCounted are the commands of the test itself and of the drivers'
// connections (INFO, CONFIG RESETSTAT, the LLEN that polls the queue,
// PING keep-alives, the handshake), left out of the counts compared.
var notCounted = map[string]bool{"info": true, "config": true, "llen": true, "ping": true, "hello": true, "auth": true, "client": true, "select": true}

// counts returns the commands the server ran since the last counts (or
// the start), by name (INFO commandstats' calls; failed calls included),
// less notCounted, and resets them (CONFIG RESETSTAT).
func counts(t *testing.T, d drivers.Driver) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	r, err := d.Do(ctx, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Do(ctx, "CONFIG", "RESETSTAT"); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(r.Str, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		name, _, _ = strings.Cut(name, "|") // a subcommand: counted under its command
		if notCounted[name] {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("commandstats line %q", line)
				}
				out[name] += n
			}
		}
	}
	return out
}

// wantCounts fails unless got is exactly want.
func wantCounts(t *testing.T, step string, got, want map[string]int64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s ran commands %v, want exactly %v", step, got, want)
	}
}

// One contended hand-off of handoff costs five commands, counted on a
// dedicated server: with A holding the lock and B queued, C's acquire is
// the queue script alone (EVALSHA running RPUSH of its entry and PEXPIRE
// of the queue; B's failed SET NX left the locker's hint that the key is
// contended); A's release is one EVALSHA
// running LPOP (B's entry), SET (XX GET, to B's token) and PUBLISH (on
// B's channel), and B holds the lock on that message (woken, no further
// command). B, which found the queue empty at its RPUSH, sent its SET NX
// again (the holder may have released in between). B's release hands the
// lock to C the same way; C's, with nobody queued, is EVALSHA, LPOP, GET
// and DEL, and clears the hint; the next acquire, uncontended, is one SET. A warm-up cycle loads the
// release script first (its first EVALSHA would also count an EVAL).
func TestHandoffCommandCounts(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := dedicated(t, d)
			// A 30 s lease: no renewal in the counted window; the clock's
			// re-measurement (every 10 s) neither.
			l := handoffLocker(t, ds, 30*time.Second, registry.Values{"queue-timeout": 20 * time.Second})
			key := lockKey(t)
			handOn := map[string]int64{"evalsha": 1, "lpop": 1, "set": 1, "publish": 1}
			cycle := func(counted bool) {
				check := func(step string, want map[string]int64) {
					t.Helper()
					if got := counts(t, ds[0]); counted {
						wantCounts(t, step, got, want)
					}
				}
				counts(t, ds[0])
				a, err := l.TryAcquire(as(ctx, 0, "A"), key)
				if err != nil {
					t.Fatal(err)
				}
				check("an uncontended acquire", map[string]int64{"set": 1})
				type res struct {
					l   strategies.Lease
					err error
				}
				wait := func(who string, ch chan res) strategies.Lease {
					t.Helper()
					select {
					case r := <-ch:
						if r.err != nil {
							t.Fatalf("%s: %v", who, r.err)
						}
						return r.l
					case <-time.After(10 * time.Second):
						t.Fatalf("%s not granted within 10 s", who)
					}
					return nil
				}
				var chs []chan res
				for i, o := range []string{"B", "C"} {
					ch := make(chan res, 1)
					chs = append(chs, ch)
					go func() {
						le, err := l.TryAcquire(as(ctx, i+1, o), key)
						ch <- res{le, err}
					}()
					waitFor(t, 10*time.Second, o+" queued", func() bool { return queueLen(t, ds[0], key) == int64(i+1) })
				}
				check("B's and C's acquires behind A", map[string]int64{"set": 2, "evalsha": 2, "rpush": 2, "pexpire": 2})
				stats := l.(strategies.StatsReporter)
				woken := stats.Stats()["woken"]
				if err := a.Release(ctx); err != nil {
					t.Fatal(err)
				}
				b := wait("B", chs[0])
				check("A's release handing the lock to B", handOn)
				if w := stats.Stats()["woken"]; w != woken+1 {
					t.Fatalf("woken %v after the hand-off, want %v (B took it on its message)", w, woken+1)
				}
				if v := stored(t, ds[0], key); len(v) != 1 || v[0] != b.Token() {
					t.Fatalf("lock holds %q, want B's token %q", v, b.Token())
				}
				counts(t, ds[0]) // the GET of stored
				if err := b.Release(ctx); err != nil {
					t.Fatal(err)
				}
				c := wait("C", chs[1])
				check("B's release handing the lock to C", handOn)
				if err := c.Release(ctx); err != nil {
					t.Fatal(err)
				}
				check("C's release, nobody queued", map[string]int64{"evalsha": 1, "lpop": 1, "get": 1, "del": 1})
				if st := stats.Stats(); st["confirmed"] != 0 || st["rechecks"] != 0 {
					t.Fatalf("stats %v: a check script ran", st)
				}
			}
			cycle(false)
			cycle(true)
		})
	}
}

// fair's release waking one waiter, counted on a dedicated server: with A
// holding the lock, B's failed attempt is EVALSHA, EXISTS, TIME, ZADD
// (new), RPUSH and two PEXPIREs (the queue's and the deadlines' TTL); A's
// release is EVALSHA, GET, DEL, LINDEX, TIME, ZSCORE (B alive) and
// PUBLISH (on B's channel); A's next attempt, the lock free with B at the
// head, queues A without looking at B: EVALSHA, EXISTS, LINDEX, TIME,
// ZADD, RPUSH and the two PEXPIREs; B's winning attempt is EVALSHA,
// EXISTS, LINDEX, LPOP, ZREM and SET (no TIME). A warm-up cycle loads the
// scripts first.
func TestFairCommandCounts(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := dedicated(t, d)
			l := locker(t, "fair", ds, 30*time.Second)
			key := lockKey(t)
			cycle := func(counted bool) {
				check := func(step string, want map[string]int64) {
					t.Helper()
					if got := counts(t, ds[0]); counted {
						wantCounts(t, step, got, want)
					}
				}
				counts(t, ds[0])
				a, err := l.TryAcquire(as(ctx, 0, "A"), key)
				if err != nil {
					t.Fatal(err)
				}
				check("A's uncontended attempt", map[string]int64{"evalsha": 1, "exists": 1, "lindex": 1, "set": 1})
				if _, err := l.TryAcquire(as(ctx, 1, "B"), key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("B: %v", err)
				}
				check("B's attempt, the lock held", map[string]int64{"evalsha": 1, "exists": 1, "time": 1, "zadd": 1, "rpush": 1, "pexpire": 2})
				if err := a.Release(ctx); err != nil {
					t.Fatal(err)
				}
				check("A's release waking B", map[string]int64{"evalsha": 1, "get": 1, "del": 1, "lindex": 1, "time": 1, "zscore": 1, "publish": 1})
				if _, err := l.TryAcquire(as(ctx, 0, "A"), key); !errors.Is(err, strategies.ErrNotAcquired) {
					t.Fatalf("A again, B at the head: %v", err)
				}
				check("A's next attempt, the lock free, B at the head", map[string]int64{"evalsha": 1, "exists": 1, "lindex": 1, "time": 1, "zadd": 1, "rpush": 1, "pexpire": 2})
				b, err := l.TryAcquire(as(ctx, 1, "B"), key)
				if err != nil {
					t.Fatalf("B at the head: %v", err)
				}
				check("B's winning attempt", map[string]int64{"evalsha": 1, "exists": 1, "lindex": 1, "lpop": 1, "zrem": 1, "set": 1})
				l.(strategies.Abandoner).Abandon(as(ctx, 0, "A"), key)
				if err := b.Release(ctx); err != nil {
					t.Fatal(err)
				}
				counts(t, ds[0])
			}
			cycle(false)
			cycle(true)
		})
	}
}

// rwlock's commands, counted on a dedicated server: every call is one
// EVALSHA that runs TIME and one HGETALL of the whole hash (rwPrelude), then
// its own writes; a release reads the holders' deadlines from that HGETALL,
// with no HGET per holder field. With readers a, b and c holding: a read
// acquire adds HSET and PEXPIRE; a nested hold's release is one HSET; a
// last hold's release beside other holders is HDEL, EXISTS and PEXPIRE
// (to the latest deadline left); the last holder's is HDEL and EXISTS
// (Redis deletes the empty hash). A warm-up cycle loads both scripts first
// (a first EVALSHA would also count an EVAL).
func TestReadWriteLockCommandCounts(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		t.Run(d, func(t *testing.T) {
			ds := dedicated(t, d)
			rl := strategies.ReadSide(locker(t, "rwlock", ds, 30*time.Second))
			key := lockKey(t)
			acquire := func(owner string) strategies.Lease {
				t.Helper()
				l, err := rl.TryAcquire(as(ctx, 0, owner), key)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			release := func(l strategies.Lease) {
				t.Helper()
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			release(acquire("warm-up"))
			counts(t, ds[0])
			prelude := map[string]int64{"evalsha": 1, "time": 1, "hgetall": 1}
			with := func(m map[string]int64) map[string]int64 {
				out := maps.Clone(prelude)
				maps.Copy(out, m)
				return out
			}
			take := with(map[string]int64{"hset": 1, "pexpire": 1})
			a := acquire("a")
			wantCounts(t, "a read acquire", counts(t, ds[0]), take)
			b := acquire("b")
			c := acquire("c")
			wantCounts(t, "two more read acquires", counts(t, ds[0]), map[string]int64{"evalsha": 2, "time": 2, "hgetall": 2, "hset": 2, "pexpire": 2})
			bNested := acquire("b")
			wantCounts(t, "a nested read acquire", counts(t, ds[0]), take)
			release(bNested)
			wantCounts(t, "a nested hold's release", counts(t, ds[0]), with(map[string]int64{"hset": 1}))
			release(a)
			wantCounts(t, "a last hold's release beside two holders", counts(t, ds[0]), with(map[string]int64{"hdel": 1, "exists": 1, "pexpire": 1}))
			release(b)
			counts(t, ds[0])
			release(c)
			wantCounts(t, "the last holder's release", counts(t, ds[0]), with(map[string]int64{"hdel": 1, "exists": 1}))
		})
	}
}
