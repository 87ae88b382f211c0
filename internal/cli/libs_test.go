package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
)

// The library strategies from the command line: `lockbench list` shows
// them with their parameters; a run over both drivers runs every pair
// they support (redsync on both, redislock on goredis), skips
// redislock/rueidis with a message, exits 0, and shows "library" in the
// retry column.
func TestLibraryStrategies(t *testing.T) {
	t.Parallel()
	r := lockbench(t, "list")
	if r.code != 0 {
		t.Fatalf("list: exit %d: %s", r.code, r.stderr)
	}
	for _, w := range []string{"redsync ", "redsync-redlock", "redislock", "github.com/go-redsync/redsync/v4 v4.18.1", "github.com/bsm/redislock v0.9.4",
		"--tries", "--retry-delay", "--drift-factor", "--timeout-factor", "--retry-strategy", "--retry-interval", "--retry-min", "--retry-max", "--retry-limit"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("list lacks %q", w)
		}
	}
	out := filepath.Join(t.TempDir(), "libs.json")
	r = lockbench(t, "run", "--strategy", "redsync,redislock", "--driver", "goredis,rueidis", "--duration", "1s",
		"--clients", "8", "--stock", "40", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "skipping scenario 4 (redislock): redislock runs on the goredis driver only, not on rueidis"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range run.Scenarios {
		got = append(got, s.Strategy+"/"+s.Driver+"/"+s.Retry)
		if s.Violations.Total() != 0 || s.Ops != 40 {
			t.Errorf("%s/%s: violations %+v ops %d, want none and the 40 sold", s.Strategy, s.Driver, s.Violations, s.Ops)
		}
	}
	if strings.Join(got, ",") != "redsync/goredis/library,redsync/rueidis/library,redislock/goredis/library" {
		t.Fatalf("scenarios %v, want redsync on both drivers and redislock on goredis, retry library", got)
	}
	if len(run.Skipped) != 1 || !strings.HasPrefix(run.Skipped[0], "redislock/rueidis/flash-sale: ") {
		t.Fatalf("skipped %q, want redislock/rueidis", run.Skipped)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "redsync") || strings.Contains(line, "redislock") {
			if !strings.Contains(line, " library ") {
				t.Errorf("table row without library in its retry column: %s", line)
			}
		}
	}
}

// Bad library parameters are usage errors (exit 2) naming the parameter.
func TestLibraryStrategyBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "redislock", "--retry-strategy", "fibonacci"}, "retry-strategy"},
		{[]string{"--strategy", "redsync", "--tries", "0"}, "tries"},
		{[]string{"--strategy", "redsync", "--extend", "unchecked"}, "extend"},
		{[]string{"--strategy", "redsync-redlock", "--nodes", "2"}, "at least 3"},
		{[]string{"--strategy", "atomic", "--tries", "3"}, "--tries goes with"},
	} {
		r := lockbench(t, append([]string{"run", "--duration", "1s", "--out", filepath.Join(t.TempDir(), "x.json")}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
