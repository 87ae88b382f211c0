package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// --mix on a real redis-server: rwlock with readers and writers records
// the mix in params and each role's figures (their ops summing to the
// scenario's), prints a line per role after the table (run and show),
// and --fail-on reads the roles' figures: none of rwlock's roles has a
// violation, and a threshold a role breaks exits 3. Bad mixes exit 2
// naming --mix and the problem, before any server starts.
func TestMixFlag(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, run := runAndRead(t, out, "run", "--strategy", "rwlock", "--driver", "goredis", "--workload", "flash-sale", "--stock", "1000000",
		"--clients", "4", "--duration", "700ms", "--work", "2ms", "--think", "10ms", "--mix", "read=0.75,write=0.25",
		"--fail-on", "role_read_violations==0", "--fail-on", "role_write_violations==0", "--fail-on", "role_read_ops>0", "--out", out)
	s := run.Scenarios[0]
	if s.Params["mix"] != "write=0.25,read=0.75" || len(s.Roles) != 2 || s.Roles["read"].Clients != 3 || s.Roles["write"].Clients != 1 {
		t.Fatalf("params %v, roles %+v", s.Params, s.Roles)
	}
	if s.Roles["read"].Ops+s.Roles["write"].Ops != s.Ops || s.Raw.Roles["read"] == nil {
		t.Errorf("the roles' ops %d + %d, the scenario's %d", s.Roles["read"].Ops, s.Roles["write"].Ops, s.Ops)
	}
	for _, text := range []string{r.stdout, lockbench(t, "show", out).stdout} {
		if !strings.Contains(text, "roles (rwlock/goredis/flash-sale/fixed): write 1 client ") || !strings.Contains(text, "; read 3 clients ") ||
			!strings.Contains(text, "acquire p50 ") || strings.Contains(text, "violations 1") {
			t.Errorf("no role line:\n%s", text)
		}
	}
	r = lockbench(t, "run", "-q", "--strategy", "rwlock", "--driver", "goredis", "--workload", "flash-sale", "--stock", "1000000",
		"--clients", "2", "--duration", "300ms", "--mix", "read=0.5,write=0.5", "--fail-on", "role_read_ops<0", "--force", "--out", out)
	if r.code != exitThresholds {
		t.Errorf("--fail-on role_read_ops<0: exit %d, want %d\n%s", r.code, exitThresholds, r.stderr)
	}
	r = lockbench(t, "run", "-q", "--strategy", "atomic", "--driver", "goredis", "--workload", "lock-cycle",
		"--clients", "1", "--duration", "200ms", "--fail-on", "role_write_ops>=0", "--force", "--out", out)
	if r.code != exitThresholds || !strings.Contains(r.stdout+r.stderr, "not measured") {
		t.Errorf("a role's threshold without --mix: exit %d, want %d (not measured)\n%s\n%s", r.code, exitThresholds, r.stdout, r.stderr)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mix", "reader=0.8,write=0.2"}, `--mix: unknown role "reader" (roles: write, read, nested)`},
		{[]string{"--mix", "read=0.8,write=0.3"}, "--mix: the shares sum to 1.1, not 1"},
		{[]string{"--mix", "read=0.8"}, "--mix: the shares sum to 0.8, not 1"},
		{[]string{"--mix", "read=1.5"}, "--mix: read=1.5: the share must be > 0 and at most 1"},
		{[]string{"--mix", "read=0.5,write=0.5", "--strategy", "atomic"}, "strategy atomic has no read side (the read role needs a read-write lock: redisson-rw, rwlock)"},
		{[]string{"--mix", "nested=0.5,write=0.5", "--strategy", "atomic"}, "strategy atomic is not reentrant"},
		{[]string{"--mix", "nested=0.01,write=0.99", "--strategy", "reentrant"}, "role nested gets no client of 10"},
		{[]string{"--mix", "read=0.5,write=0.5", "--workload", "lock-cycle"}, "workload lock-cycle has no read operation"},
		{[]string{"--mix", "read=0.5,write=0.5", "--read-ratio", "0.2"}, "--read-ratio"},
	} {
		args := append([]string{"run", "--strategy", "rwlock", "--driver", "goredis", "--workload", "flash-sale", "--clients", "10", "--out", filepath.Join(dir, "x.json")}, c.args...)
		r := lockbench(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
