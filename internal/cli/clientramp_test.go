package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --clients ramp:from=2,to=8,over=2s runs on a real redis-server: the
// result's clients is the ramp's maximum (8), its params record the shape
// (clients_shape), and the table is followed by one line per interval of
// the timeline with the clients at its end (the shape's value there,
// rounded: 3 at 0.25 s of a 250 ms interval, 8 from 2 s), ops/s, p99 and
// efficiency; lockbench show prints the same lines. A scenario file's
// clients: takes a ramp too. With --rate, --procs or --segment, or a shape
// that does not parse, it exits 2 naming --clients.
func TestClientsRampFlag(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, run := runAndRead(t, out, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--own-keys",
		"--work", "1ms", "--ttl", "1s", "--clients", "ramp:from=2,to=8,over=2s", "--duration", "2500ms", "--interval", "250ms", "--out", out)
	s := run.Scenarios[0]
	if s.Clients != 8 || s.Params["clients_shape"] != "ramp:from=2,to=8,over=2s" {
		t.Fatalf("clients %d, params %v: want 8 and clients_shape=ramp:from=2,to=8,over=2s", s.Clients, s.Params)
	}
	if len(s.Timeline) < 9 || s.Timeline[0].Clients != 3 || s.Timeline[len(s.Timeline)-1].Clients != 8 {
		t.Fatalf("timeline %+v: want clients 3 at 0.25 s rising to 8", s.Timeline)
	}
	lines := rampLines(r.stdout)
	if !strings.Contains(r.stdout, "clients ramp:from=2,to=8,over=2s, per interval") || len(lines) != len(s.Timeline) {
		t.Fatalf("stdout has %d interval lines for %d timeline entries:\n%s", len(lines), len(s.Timeline), r.stdout)
	}
	if f := strings.Fields(lines[0]); f[0] != "0.25" || f[1] != "3" {
		t.Errorf("first interval line %q: want t_s 0.25, clients 3", lines[0])
	}
	if f := strings.Fields(lines[len(lines)-1]); f[1] != "8" || f[5] == "-" {
		t.Errorf("last interval line %q: want clients 8 and an efficiency", lines[len(lines)-1])
	}
	t.Logf("interval lines:\n%s", strings.Join(lines, "\n"))
	shown := lockbench(t, "show", out)
	if shown.code != 0 || strings.Join(rampLines(shown.stdout), "\n") != strings.Join(lines, "\n") {
		t.Errorf("show: exit %d, interval lines differ from the run's:\n%s", shown.code, shown.stdout)
	}

	path := filepath.Join(dir, "ramp.yaml")
	body := "strategy: atomic\ndriver: rueidis\nworkload: lock-cycle\nown-keys: true\nclients: stages:start=1,200ms=3\nduration: 300ms\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r = lockbench(t, "run", "-q", "-f", path, "--force", "--out", out)
	if r.code != 0 {
		t.Fatalf("scenario file: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run = readRun(t, out)
	if s := run.Scenarios[0]; s.Params["clients_shape"] != "stages:start=1,200ms=3" || s.Clients != 3 || s.Ops == 0 {
		t.Fatalf("scenario file clients: stages: params %v, clients %d, %d ops", s.Params, s.Clients, s.Ops)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--clients", "ramp:from=2,to=8,over=2s", "--rate", "100"}, []string{"--clients: a client ramp goes with a closed loop"}},
		{[]string{"--clients", "ramp:from=2,to=8,over=2s", "--procs", "2"}, []string{"--clients ramp:from=2,to=8,over=2s: a client ramp runs in one process", "--procs"}},
		{[]string{"--clients", "ramp:from=2,to=8"}, []string{`"--clients" flag`, "over missing"}},
		{[]string{"--clients", "ramp:from=2,to=8,over=0s"}, []string{`"--clients" flag`, "over=0s"}},
		{[]string{"--clients", "sine:mean=5,amp=2,period=1s"}, []string{`"--clients" flag`, "want a client count"}},
		{[]string{"--clients", "ten"}, []string{`"--clients" flag`, "want a client count"}},
		{[]string{"--clients", "ramp:from=0.2,to=0.4,over=1s"}, []string{`"--clients" flag`, "reaches 0"}},
		{[]string{"--clients", "ramp:from=1,to=200000,over=1s"}, []string{`"--clients" flag`, "reaches 200000"}},
	} {
		args := append([]string{"run", "--strategy", "atomic", "--driver", "rueidis", "--workload", "lock-cycle", "--addr", "127.0.0.1:1", "--out", filepath.Join(dir, "x.json")}, c.args...)
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
		if strings.Count(r.stderr, "a client ramp goes with") > 1 {
			t.Errorf("%v: the refusal is reported more than once:\n%s", c.args, r.stderr)
		}
	}
}

// rampLines are the per-interval lines report.WriteRampTimelines wrote in out
// (those after its header line of column names).
func rampLines(out string) []string {
	var lines []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "t_s":
			in = true
		case in && len(f) == 6:
			lines = append(lines, l)
		default:
			in = false
		}
	}
	return lines
}
