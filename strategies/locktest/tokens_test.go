package locktest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/rueidislk"
)

// recorder is a strategies.TokenTracker that remembers every token sent
// and every renewal, by key.
type recorder struct {
	mu      sync.Mutex
	sent    map[string][]string
	renewed map[string][]string
	noCtx   int // Sent calls whose ctx carried no Client
}

func newRecorder() *recorder {
	return &recorder{sent: map[string][]string{}, renewed: map[string][]string{}}
}

func (r *recorder) Sent(ctx context.Context, key, token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[key] = append(r.sent[key], token)
	if strategies.ClientFrom(ctx).ID < 0 {
		r.noCtx++
	}
}

func (r *recorder) Renewing(key, token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renewed[key] = append(r.renewed[key], token)
}

func (r *recorder) wasSent(key, token string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.sent[key], token)
}

func (r *recorder) renewals(key, token string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.renewed[key] {
		if t == token {
			n++
		}
	}
	return n
}

// stored returns what the liveness oracle reads of a lock key on d: a
// string key's value, a hash key's field names; nil when the key is gone.
func stored(t *testing.T, d drivers.Driver, key string) []string {
	t.Helper()
	ctx := context.Background()
	typ, err := d.Do(ctx, "TYPE", key)
	if err != nil {
		t.Fatal(err)
	}
	switch typ.Str {
	case "none":
		return nil
	case "string":
		r, err := d.Do(ctx, "GET", key)
		if err != nil {
			t.Fatal(err)
		}
		return []string{r.Str}
	case "hash":
		r, err := d.Do(ctx, "HKEYS", key)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range r.Array {
			out = append(out, e.Str)
		}
		return out
	}
	t.Fatalf("lock key %s is a %s: the liveness oracle reads only strings (the value) and hashes (the field names)", key, typ.Str)
	return nil
}

// checkStored asserts that every token stored under key, on every node,
// was passed to Sent for key before, and that the lease's own token is
// among those stored on some node.
func checkStored(t *testing.T, rec *recorder, ds []drivers.Driver, key string, l strategies.Lease) {
	t.Helper()
	mine := false
	for i, d := range ds {
		for _, tok := range stored(t, d, key) {
			if !rec.wasSent(key, tok) {
				t.Errorf("node %d: %s holds %q, never passed to Sent (sent: %q)", i, key, tok, rec.sent[key])
			}
			mine = mine || tok == l.Token()
		}
	}
	if !mine {
		t.Errorf("no node stores the lease's token %q under %s", l.Token(), key)
	}
}

// Token reporting (issue 17, the liveness oracle): every Redis-backed
// strategy tells Config.Tokens of each token before the command that may
// store it, and of each renewal. After an acquire the lock key's stored
// value (GET) or hash fields (HKEYS), on every node, are all tokens that
// were passed to Sent for that key; a watchdog's renewal calls Renewing.
// naive is included (its token is a plain value); the lock-free
// redis-guard stores none, and rueidislock stores its library's own random
// value, which it cannot report (its liveness is not measured: see
// strategies/rueidislk).
func TestTokensReported(t *testing.T) {
	for _, s := range strategies.Names() {
		if s == "redis-guard" || s == rueidislk.Name {
			continue
		}
		for _, d := range drivers.Names() {
			if !strategies.RunsOn(s, d) {
				continue
			}
			t.Run(s+"/"+d, func(t *testing.T) {
				ctx := context.Background()
				ds := open(t, d, s)
				rec := newRecorder()
				ttl := 5 * time.Second
				renews := s == "watchdog" || s == "reentrant-watchdog"
				if renews {
					ttl = 150 * time.Millisecond // renewed every 50 ms
				}
				l, err := strategies.New(s, strategies.Config{Nodes: ds, TTL: ttl, Tokens: rec})
				if err != nil {
					t.Fatal(err)
				}
				key := "lockbench:locktest:{" + t.Name() + "}:lock"
				actx := strategies.WithClient(ctx, strategies.Client{ID: 1, Owner: "owner-1"})
				a, err := l.TryAcquire(actx, key)
				if err != nil {
					t.Fatal(err)
				}
				if !rec.wasSent(key, a.Token()) {
					t.Fatalf("the lease's token %q was not passed to Sent (sent: %q)", a.Token(), rec.sent[key])
				}
				checkStored(t, rec, ds, key, a)
				if renews {
					deadline := time.Now().Add(3 * time.Second)
					for rec.renewals(key, a.Token()) == 0 && time.Now().Before(deadline) {
						time.Sleep(10 * time.Millisecond)
					}
					if rec.renewals(key, a.Token()) == 0 {
						t.Fatal("no renewal was reported to Renewing")
					}
					checkStored(t, rec, ds, key, a)
				}
				if rl, ok := l.(strategies.ReadLocker); ok { // the read side, with two readers
					rkey := key + ":read"
					r1, err := rl.TryAcquireRead(actx, rkey)
					if err != nil {
						t.Fatal(err)
					}
					r2, err := rl.TryAcquireRead(strategies.WithClient(ctx, strategies.Client{ID: 2, Owner: "owner-2"}), rkey)
					if err != nil {
						t.Fatal(err)
					}
					if n := len(stored(t, ds[0], rkey)); n != 2 {
						t.Fatalf("two readers: %d fields stored, want 2", n)
					}
					checkStored(t, rec, ds, rkey, r1)
					checkStored(t, rec, ds, rkey, r2)
					for _, r := range []strategies.Lease{r1, r2} {
						if err := r.Release(ctx); err != nil {
							t.Fatal(err)
						}
					}
					if got := stored(t, ds[0], rkey); got != nil {
						t.Fatalf("after both readers released, the lock holds %q", got)
					}
				}
				if rec.noCtx != 0 {
					t.Errorf("%d Sent calls had a context without the Client", rec.noCtx)
				}
				if err := a.Release(ctx); err != nil {
					t.Fatal(err)
				}
				for i, d := range ds {
					if got := stored(t, d, key); got != nil {
						t.Fatalf("node %d: after the release the lock holds %q", i, got)
					}
				}
			})
		}
	}
}

// Redlock extend (issue 17): with extend=on a lease extends while it holds
// a quorum and fails with ErrExtendFailed once its keys expired and another
// client took the lock; extend=unchecked (a plain PEXPIRE) reports success
// then, on the other client's lock, and revives the lease's context. The
// default (off) leases cannot extend. Every node's extend is reported to
// Renewing.
func TestRedlockExtend(t *testing.T) {
	ctx := context.Background()
	for _, d := range drivers.Names() {
		for _, mode := range []string{"off", "on", "unchecked"} {
			t.Run(mode+"/"+d, func(t *testing.T) {
				ds := open(t, d, "redlock")
				rec := newRecorder()
				const ttl = 300 * time.Millisecond
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
				for i, d := range ds {
					if p, _ := d.Do(ctx, "PTTL", key); p.Int < (ttl - 50*time.Millisecond).Milliseconds() {
						t.Fatalf("node %d: PTTL %d ms after the extend, want about %v", i, p.Int, ttl)
					}
				}
				// A's keys expire; B takes the lock.
				time.Sleep(ttl + 50*time.Millisecond)
				if a.(strategies.Watched).Context().Err() == nil {
					t.Fatal("A's context still live after its validity")
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
