package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --think runs on a real redis-server and is recorded in the result's
// params (think=20ms), as is a scenario file's think: field; a client
// with a 20 ms think time makes at most floor(D/T)+1 operations in the
// window. A think time with --rate, or a value that is no distribution,
// exits 2 naming --think.
func TestThinkFlag(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, run := runAndRead(t, out, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--own-keys",
		"--clients", "2", "--duration", "500ms", "--think", "20ms", "--out", out)
	s := run.Scenarios[0]
	if s.Params["think"] != "20ms" {
		t.Fatalf("params %v: want think=20ms", s.Params)
	}
	for i, n := range s.Raw.ClientOps {
		if n < 1 || n > 500/20+1 {
			t.Errorf("client %d: %d operations in 500ms with a 20ms think time, want 1 to 26", i, n)
		}
	}

	path := filepath.Join(dir, "think.yaml")
	body := "strategy: atomic\ndriver: rueidis\nworkload: lock-cycle\nown-keys: true\nclients: 2\nduration: 300ms\nthink: exp:mean=10ms\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r = lockbench(t, "run", "-q", "-f", path, "--force", "--out", out)
	if r.code != 0 {
		t.Fatalf("scenario file: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run = readRun(t, out)
	if s := run.Scenarios[0]; s.Params["think"] != "exp:mean=10ms" || s.Ops == 0 {
		t.Fatalf("scenario file think: exp:mean=10ms: params %v, %d ops", s.Params, s.Ops)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--think", "20ms", "--rate", "100"}, []string{"--think goes with a closed loop", "drop --think or --rate"}},
		{[]string{"--think", "exp:mean=20ms", "--rate", "ramp:from=10,to=100,over=1s"}, []string{"--think goes with a closed loop"}},
		{[]string{"--think", "exp:mean=-1s"}, []string{"--think", `"exp:mean=-1s": want mean > 0`}},
		{[]string{"--think", "bogus"}, []string{"--think", `"bogus" is not a duration`}},
		{[]string{"--think", "-5ms"}, []string{"--think", "negative"}},
		{[]string{"--think", "2h"}, []string{"--think must stay within 1h"}},
	} {
		args := append([]string{"run", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--out", filepath.Join(dir, "x.json")}, c.args...)
		r := lockbench(t, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", c.args, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, r.stderr, w)
			}
		}
		if strings.Count(r.stderr, "--think goes with") > 1 {
			t.Errorf("%v: the refusal is reported more than once:\n%s", c.args, r.stderr)
		}
	}
}
