package strategies_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// The exported renew scripts keep their contract: RenewScript and
// ReentrantRenewScript reply 1 when renewed and 0 when the token (owner)
// is gone; RenewScriptPTTL and ReentrantRenewScriptPTTL reply the key's
// PTTL before the renewal (0 or more) and -2 when gone, which Renewed
// reads. Every script extends only its owner's key.
func TestRenewScriptReplies(t *testing.T) {
	ctx := context.Background()
	each(t, func(t *testing.T, d drivers.Driver, p string) {
		key, hkey := p+"lock", p+"hlock"
		do(t, d, "SET", key, "tok", "PX", "5000")
		do(t, d, "HSET", hkey, "owner", "1")
		do(t, d, "PEXPIRE", hkey, "5000")
		eval := func(s *drivers.Script, k, tok string) drivers.Reply {
			t.Helper()
			r, err := d.Eval(ctx, s, []string{k}, tok, "20000")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		for _, c := range []struct {
			name   string
			s      *drivers.Script
			k, tok string
			want   int64
		}{
			{"RenewScript", strategies.RenewScript, key, "tok", 1},
			{"RenewScript foreign", strategies.RenewScript, key, "other", 0},
			{"ReentrantRenewScript", strategies.ReentrantRenewScript, hkey, "owner", 1},
			{"ReentrantRenewScript foreign", strategies.ReentrantRenewScript, hkey, "other", 0},
			{"RenewScriptPTTL foreign", strategies.RenewScriptPTTL, key, "other", -2},
			{"ReentrantRenewScriptPTTL foreign", strategies.ReentrantRenewScriptPTTL, hkey, "other", -2},
		} {
			if r := eval(c.s, c.k, c.tok); r.Int != c.want {
				t.Errorf("%s: reply %d, want %d", c.name, r.Int, c.want)
			}
		}
		for _, k := range []string{key, hkey} {
			if ttl := do(t, d, "PTTL", k).Int; ttl <= 10000 {
				t.Fatalf("%s: PTTL %d after the owner's renewal to 20 s", k, ttl)
			}
		}
		for name, s := range map[string]*drivers.Script{"RenewScriptPTTL": strategies.RenewScriptPTTL, "ReentrantRenewScriptPTTL": strategies.ReentrantRenewScriptPTTL} {
			k, tok := key, "tok"
			if name == "ReentrantRenewScriptPTTL" {
				k, tok = hkey, "owner"
			}
			ok, left, known := strategies.Renewed(eval(s, k, tok))
			if !ok || !known || left <= 10*time.Second || left > 20*time.Second {
				t.Errorf("%s: renewed %v, left %v (known %v); want renewed with 10 s < left <= 20 s", name, ok, left, known)
			}
		}
	})
}
