package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --background runs on a real redis-server: the result records it in
// params and has its figures, the run's output and lockbench show print
// its line after the table, as does a scenario file's background: field;
// without it there is no line and no background object. Values that are
// not its grammar, and layouts it does not run on, exit 2 naming
// --background.
func TestBackgroundFlag(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, run := runAndRead(t, out, "run", "--strategy", "atomic", "--driver", "goredis", "--workload", "lock-cycle", "--own-keys",
		"--clients", "2", "--duration", "500ms", "--background", "get=400/s,set=100/s,conns=2", "--out", out)
	s := run.Scenarios[0]
	if s.Params["background"] != "get=400/s,set=100/s,keys=10000,size=64,conns=2" || s.Background == nil || s.Background.Done == 0 {
		t.Fatalf("params %v, background %+v", s.Params, s.Background)
	}
	for _, text := range []string{r.stdout, lockbench(t, "show", out).stdout} {
		if !strings.Contains(text, "background (atomic/goredis/lock-cycle/fixed, 2 clients): ") || !strings.Contains(text, "/s done") {
			t.Errorf("no background line:\n%s", text)
		}
	}

	path := filepath.Join(dir, "bg.yaml")
	body := "strategy: atomic\ndriver: rueidis\nworkload: lock-cycle\nown-keys: true\nclients: 2\nduration: 300ms\nbackground: incr=200/s,hset=100/s,hget=100/s\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r = lockbench(t, "run", "-q", "-f", path, "--force", "--out", out)
	if r.code != 0 {
		t.Fatalf("scenario file: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run = readRun(t, out)
	s = run.Scenarios[0]
	if s.Params["background"] != "incr=200/s,hget=100/s,hset=100/s,keys=10000,size=64,conns=8" || s.Background == nil ||
		len(s.Background.Commands) != 3 || s.Background.Errors != 0 || s.Background.Done == 0 {
		t.Fatalf("scenario file background: params %v, figures %+v", s.Params, s.Background)
	}

	r = lockbench(t, "run", "--strategy", "atomic", "--driver", "goredis", "--workload", "lock-cycle", "--own-keys",
		"--clients", "1", "--duration", "200ms", "--force", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "background") {
		t.Errorf("a line on background traffic without --background:\n%s", r.stdout)
	}
	run = readRun(t, out)
	if s := run.Scenarios[0]; s.Background != nil || s.Raw.Background != nil {
		t.Errorf("without --background: %+v, raw %+v", s.Background, s.Raw.Background)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--background", "gets"}, `--background: "gets" is not CMD=RATE/s`},
		{[]string{"--background", "del=100/s"}, `--background: "del" is not a command it sends (get, set, incr, hget, hset)`},
		{[]string{"--background", "get=-1/s"}, "--background: get=-1/s: want a rate like 2000/s"},
		{[]string{"--background", "get=100/s,conns=0"}, "--background: conns=0: want a whole number from 1 to 256"},
		{[]string{"--background", "keys=100"}, "--background: \"keys=100\" gives no command a rate"},
		{[]string{"--background", "get=100/s", "--strategy", "zk"}, "--background loads the lock's Redis server; zk keeps its lock in"},
	} {
		args := append([]string{"run", "--strategy", "atomic", "--driver", "goredis", "--workload", "lock-cycle", "--out", filepath.Join(dir, "x.json")}, c.args...)
		r := lockbench(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
