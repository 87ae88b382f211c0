package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/topology"
)

// Issue 38, item 6: rediss:// against a plain server says that the server
// does not speak TLS (it said only "connection pool timeout"), exit 2,
// with both drivers; redis:// to the same server runs (exit 0).
func TestTLSToPlainServer(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	s := oneServer(t)
	dir := t.TempDir()
	pw := passwordFile(t, dir, s)
	// Both drivers at once: each waits out its 5 s PING before the probe.
	drivers := []string{"goredis", "rueidis"}
	outs := make([][]byte, len(drivers))
	codes := make([]int, len(drivers))
	var wg sync.WaitGroup
	for i, driver := range drivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "run", "-q", "--addr", "rediss://"+s.Addr, "--password-file", pw, "--strategy", "atomic", "--driver", driver,
				"--clients", "1", "--duration", "100ms", "--out", filepath.Join(dir, driver+".json"))
			outs[i], _ = cmd.CombinedOutput()
			codes[i] = cmd.ProcessState.ExitCode()
		}()
	}
	wg.Wait()
	want := "the server at " + s.Addr + " does not speak TLS: it answers PING in plain text (drop --tls / use redis://)"
	for i, driver := range drivers {
		if codes[i] != 2 || !strings.Contains(string(outs[i]), want) {
			t.Errorf("%s: rediss:// to a plain server: exit %d, want 2 and %q:\n%s", driver, codes[i], want, outs[i])
		}
	}
	r := lockbench(t, "run", "-q", "--addr", "redis://"+s.Addr, "--password-file", pw, "--strategy", "atomic", "--driver", "rueidis",
		"--clients", "1", "--duration", "100ms", "--out", filepath.Join(dir, "plain.json"))
	if r.code != 0 {
		t.Errorf("redis:// to the same server: exit %d, want 0:\n%s", r.code, r.stderr)
	}
}

// Issue 38, item 6: a run refused or failed before it wrote anything
// leaves no directory it made for --out (five such cases left an empty
// results/): a refusal that needs no server (exit 2, before any server
// starts: no redis-server on PATH is needed), a run whose servers cannot
// start (exit 1), one refused by its server (--cluster on a plain server,
// exit 2); a run that writes keeps its directory.
func TestRefusalLeavesNoDirectory(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	s := oneServer(t)
	dir := t.TempDir()
	pw := passwordFile(t, dir, s)
	base := []string{"run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--clients", "1", "--duration", "100ms"}
	cases := []struct {
		args   []string
		path   string // PATH: "" has no redis-server
		code   int
		want   string
		writes bool
	}{
		{args: []string{"--columns", "bogus"}, code: 2, want: `--columns: unknown column "bogus"`},
		{args: []string{"--addr", ""}, code: 2, want: `--addr "" gives no server`},
		{args: nil, code: 1, want: "redis-server not found on PATH"},
		{args: []string{"--addr", s.Addr, "--password-file", pw, "--cluster"}, path: os.Getenv("PATH"), code: 2, want: "is not a Cluster node"},
		{args: []string{"--addr", s.Addr, "--password-file", pw}, path: os.Getenv("PATH"), code: 0, writes: true},
	}
	for i, c := range cases {
		sub := filepath.Join(dir, "case"+string(rune('a'+i)))
		args := append(append(append([]string{}, base...), c.args...), "--out", filepath.Join(sub, "results", "r.json"))
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HOME=" + dir, "PATH=" + c.path}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("lockbench %q: exit %d, want %d and %q:\n%s", args, code, c.code, c.want, out)
		}
		_, serr := os.Stat(sub)
		if exists := serr == nil; exists != c.writes {
			t.Errorf("lockbench %q: %s exists: %v, want %v", args, sub, exists, c.writes)
		}
	}
}

// Issue 38, item 6: a signal that arrives while the results are written
// (here SIGTERM, just before the write) lets the write complete and makes
// the exit 143 (errInterrupted with interruptCode 143), not 0; the file
// is whole. Not parallel: the signal goes to the whole test process, and
// only this run may be watching for it.
func TestSignalDuringWrite(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	defer interruptCode.Store(interruptCode.Load())
	testHookBeforeWrite = func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond) // the handler records it
	}
	defer func() { testHookBeforeWrite = nil }()
	out := filepath.Join(t.TempDir(), "r.json")
	_, err := inProcess(t, "run", "-q", "--strategy", "atomic", "--driver", "rueidis", "--clients", "1", "--duration", "100ms", "--out", out)
	if !errors.Is(err, errInterrupted) || interruptCode.Load() != 143 {
		t.Errorf("SIGTERM during the write: error %v, exit code %d; want errInterrupted and 143", err, interruptCode.Load())
	}
	if r := readRun(t, out); len(r.Scenarios) != 1 {
		t.Errorf("the result file has %d scenarios, want 1", len(r.Scenarios))
	}
}

// oneServer starts one redis-server (a password, 127.0.0.1) for t and
// stops it when t ends.
func oneServer(t *testing.T) *topology.Server {
	t.Helper()
	topo, err := topology.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Stop)
	return topo.Servers[0]
}

// passwordFile writes s's password to dir/pw (0600), for --password-file.
func passwordFile(t *testing.T, dir string, s *topology.Server) string {
	t.Helper()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pw
}
