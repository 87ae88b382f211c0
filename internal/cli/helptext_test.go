package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaleHelpText: run's --repeat names its interval for what it is
// (order statistics of the median, as internal/report.MedianCI computes
// it; never a bootstrap), and compose/README.md no longer says lockbench
// cannot use Sentinels or a Cluster (--sentinel-master and --cluster).
func TestStaleHelpText(t *testing.T) {
	u := newRunCmd().Flags().Lookup("repeat").Usage
	if !strings.Contains(u, "order statistics") || strings.Contains(strings.ToLower(u), "bootstrap") {
		t.Errorf("run --repeat help %q: want the interval from order statistics, no bootstrap", u)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "compose", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	for _, stale := range []string{"does not yet talk to Sentinels", "not yet: see below"} {
		if strings.Contains(s, stale) {
			t.Errorf("compose/README.md still says %q", stale)
		}
	}
	for _, want := range []string{"--cluster --addr 127.0.0.1:7001", "--sentinel-master lockbench --addr 127.0.0.1:26390"} {
		if !strings.Contains(s, want) {
			t.Errorf("compose/README.md: no %q", want)
		}
	}
}

// TestFairPollingNote: fair (a lock whose waiters queue in Redis) with a
// retry policy that waits between attempts says, before it runs, that a
// free lock waits for the queue head's next poll; with pubsub (the
// release wakes the head) and for atomic with the same backoff, no note.
func TestFairPollingNote(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	r := lockbench(t, "run", "--strategy", "fair,atomic", "--retry", "backoff,pubsub", "--driver", "rueidis",
		"--clients", "2", "--duration", "200ms", "--out", out, "-q")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	notes := 0
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "note: ") && strings.Contains(l, "queue") {
			notes++
			if !strings.HasPrefix(l, "note: fair with retry backoff: ") || !strings.Contains(l, "pubsub or csc") {
				t.Errorf("note %q, want one for fair with backoff naming pubsub and csc", l)
			}
		}
	}
	if notes != 1 {
		t.Errorf("%d notes of a polled queue, want 1 (fair/backoff; not fair/pubsub, not atomic)\n%s", notes, r.stderr)
	}
}
