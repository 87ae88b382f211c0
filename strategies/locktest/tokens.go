package locktest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
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
	if _, ok := strategies.ClientID(ctx); !ok {
		r.noCtx++
	}
}

func (r *recorder) Renewing(key, token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renewed[key] = append(r.renewed[key], token)
}

// count is the number of Sent calls.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ts := range r.sent {
		n += len(ts)
	}
	return n
}

// sentTo returns the tokens passed to Sent for key.
func (r *recorder) sentTo(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent[key])
}

// noContext is the number of Sent calls whose ctx carried no Client.
func (r *recorder) noContext() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noCtx
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
// string key's value, a hash key's field names, a sorted set's members (a
// semaphore's permits); nil when the key is gone.
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
	case "hash", "zset":
		cmd := []string{"HKEYS", key}
		if typ.Str == "zset" { // a semaphore's permits
			cmd = []string{"ZRANGE", key, "0", "-1"}
		}
		r, err := d.Do(ctx, cmd...)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range r.Array {
			out = append(out, e.Str)
		}
		return out
	}
	t.Fatalf("lock key %s is a %s: the liveness oracle reads only strings (the value), hashes (the field names) and sorted sets (the members)", key, typ.Str)
	return nil
}

// storedTokens is stored less the field names notTokens (a locker's
// strategies.NonTokenFields: Redisson's "mode").
func storedTokens(t *testing.T, d drivers.Driver, key string, notTokens []string) []string {
	t.Helper()
	return slices.DeleteFunc(stored(t, d, key), func(f string) bool { return slices.Contains(notTokens, f) })
}

// checkStored asserts that every token stored under key, on every node
// (the fields notTokens left out), was passed to Sent for key before, and
// that the lease's own token is among those stored on some node.
func checkStored(t *testing.T, rec *recorder, ds []drivers.Driver, key string, l strategies.Lease, notTokens []string) {
	t.Helper()
	mine := false
	for i, d := range ds {
		for _, tok := range storedTokens(t, d, key, notTokens) {
			if !rec.wasSent(key, tok) {
				t.Errorf("node %d: %s holds %q, never passed to Sent (sent: %q)", i, key, tok, rec.sentTo(key))
			}
			mine = mine || tok == l.Token()
		}
	}
	if !mine {
		t.Errorf("no node stores the lease's token %q under %s", l.Token(), key)
	}
}
