package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// lostReply is a driver whose SetNX reaches the server (the real SetNX
// runs) and then fails as if its reply were lost past the client's
// timeout: the lock may be set, and the caller is told
// context.DeadlineExceeded. then, when set, runs after the real SET (the
// caller's deadline passes while the reply is awaited).
type lostReply struct {
	drivers.Driver
	then func()
}

func (d lostReply) SetNX(ctx context.Context, key, val string, ttl time.Duration) (bool, error) {
	if _, err := d.Driver.SetNX(ctx, key, val, ttl); err != nil {
		return false, err
	}
	if d.then != nil {
		d.then()
	}
	return false, context.DeadlineExceeded
}

// on-timeout (atomic, watchdog): an acquire whose SET was applied but whose
// reply was lost leaves the token in the key with keep (the default: an
// orphan until the TTL) and is undone with release (the compare-and-delete
// of the attempt's token), even when the caller's context is already
// cancelled (the clean-up runs detached).
func TestOnTimeout(t *testing.T) {
	for _, s := range []string{"atomic", "watchdog"} {
		for _, d := range drivers.Names() {
			for _, mode := range []string{"", "keep", "release"} {
				name := mode
				if name == "" {
					name = "default"
				}
				t.Run(s+"/"+d+"/"+name, func(t *testing.T) {
					ctx := context.Background()
					ds := open(t, d, s)
					rec := newRecorder()
					var p registry.Values
					if mode != "" {
						p = registry.Values{"on-timeout": mode}
					}
					actx, cancel := context.WithCancel(strategies.WithClient(ctx, strategies.Client{ID: 1, Owner: "owner-1"}))
					defer cancel()
					// The caller's context ends with the lost reply: the
					// clean-up must not need it.
					l, err := strategies.New(s, strategies.Config{Nodes: []drivers.Driver{lostReply{ds[0], cancel}}, TTL: 10 * time.Second, Params: p, Tokens: rec})
					if err != nil {
						t.Fatal(err)
					}
					key := "lockbench:locktest:{" + t.Name() + "}:lock"
					_, err = l.TryAcquire(actx, key)
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("TryAcquire = %v, want the lost reply's DeadlineExceeded", err)
					}
					pttl, err := ds[0].Do(ctx, "PTTL", key)
					if err != nil {
						t.Fatal(err)
					}
					if mode == "release" {
						if pttl.Int != -2 {
							t.Fatalf("release: PTTL %d, want -2 (the applied SET undone)", pttl.Int)
						}
						return
					}
					if pttl.Int <= 0 {
						t.Fatalf("%s: PTTL %d, want > 0 (the token left to its TTL)", name, pttl.Int)
					}
					got := stored(t, ds[0], key)
					if len(got) != 1 || !rec.wasSent(key, got[0]) {
						t.Fatalf("the orphan %q was not reported to Sent (%q)", got, rec.sent[key])
					}
					ds[0].Do(ctx, "DEL", key)
				})
			}
		}
	}
}

// on-timeout accepts keep and release only.
func TestOnTimeoutValues(t *testing.T) {
	ds := open(t, "goredis", "atomic")
	_, err := strategies.New("atomic", strategies.Config{Nodes: ds, TTL: time.Second, Params: registry.Values{"on-timeout": "drop"}})
	if err == nil {
		t.Fatal("on-timeout=drop accepted")
	}
}
