package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// rueidislock runs on rueidis only: with both drivers the goredis pair is
// skipped with a message (and listed in the result's skipped), the rueidis
// pair runs with the library's retry, its options at the library's
// defaults in params, and its liveness reported not measured. The lease
// is 2 s (the auto --ttl would be 100 ms) as 0 violations are asserted.
func TestRueidislockRunsOnRueidisOnly(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	r := lockbench(t, "run", "--strategy", "rueidislock", "--driver", "goredis,rueidis", "--duration", "1s", "--ttl", "2s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if w := "skipping scenario 1 (rueidislock): rueidislock runs on the rueidis driver only, not on goredis"; !strings.Contains(r.stderr, w) {
		t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
	}
	if !strings.Contains(r.stdout, "library") {
		t.Errorf("the table's retry column does not say library:\n%s", r.stdout)
	}
	doc := readDoc(t, out)
	if sk := doc["skipped"].([]any); len(sk) != 1 || !strings.HasPrefix(sk[0].(string), "rueidislock/goredis/") {
		t.Errorf("skipped = %v, want the goredis pair", sk)
	}
	scs := doc["scenarios"].([]any)
	if len(scs) != 1 {
		t.Fatalf("%d scenarios, want 1 (the rueidis pair)", len(scs))
	}
	sc := scs[0].(map[string]any)
	if sc["driver"] != "rueidis" || sc["retry"] != "library" {
		t.Errorf("driver %v retry %v, want rueidis, library", sc["driver"], sc["retry"])
	}
	p := sc["params"].(map[string]any)
	for k, want := range map[string]string{"key_majority": "2", "extend_interval": "0s", "try_next_after": "20ms",
		"no_loop_tracking": "false", "fallback_setpx": "false"} {
		if p[k] != want {
			t.Errorf("params.%s = %v, want %s", k, p[k], want)
		}
	}
	v := sc["violations"].(map[string]any)
	if v["oversell"] != float64(0) || v["overlap"] != float64(0) || v["lost_updates"] != float64(0) {
		t.Errorf("violations %v, want 0", v)
	}
	if lv := sc["liveness"].(map[string]any); lv["measured"] != false || lv["not_measured"] == nil {
		t.Errorf("liveness %v, want not measured with a reason", lv)
	}
	assertServersGone(t, doc["meta"].(map[string]any))
}
