package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// The csc retry policy from the command line: `lockbench list` describes
// it; with both drivers its goredis scenario is skipped with a message
// (and listed in the result's skipped) while the others run, csc on
// rueidis and pubsub on both, with no violation. The lease is 2 s as 0
// violations are asserted.
func TestCSCRetryRunsOnRueidisOnly(t *testing.T) {
	t.Parallel()
	r := lockbench(t, "list")
	if r.code != 0 {
		t.Fatalf("list: exit %d: %s", r.code, r.stderr)
	}
	for _, w := range []string{"csc", "CLIENT TRACKING ON BCAST PREFIX", "rueidis driver only", "github.com/redis/rueidis/rueidislock"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("list lacks %q", w)
		}
	}
	out := filepath.Join(t.TempDir(), "csc.json")
	r = lockbench(t, "run", "--strategy", "atomic", "--retry", "csc,pubsub", "--driver", "goredis,rueidis", "--duration", "1s",
		"--ttl", "2s", "--clients", "8", "--stock", "40", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "skipping scenario 1 (atomic): retry csc runs on the rueidis driver only, not on goredis"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range run.Scenarios {
		got = append(got, s.Driver+"/"+s.Retry)
		if s.Violations.Total() != 0 || s.Ops != 40 {
			t.Errorf("%s/%s: violations %+v ops %d, want none and the 40 sold", s.Driver, s.Retry, s.Violations, s.Ops)
		}
	}
	if strings.Join(got, ",") != "rueidis/csc:max=0s,goredis/pubsub:max=0s,rueidis/pubsub:max=0s" {
		t.Fatalf("scenarios %v, want csc on rueidis and pubsub on both drivers", got)
	}
	if len(run.Skipped) != 1 || !strings.HasPrefix(run.Skipped[0], "atomic/goredis/flash-sale: retry csc runs on the rueidis driver only") {
		t.Fatalf("skipped %q, want atomic/goredis with csc", run.Skipped)
	}
}
