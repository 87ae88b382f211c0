package topology

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStartMastersAndStop(t *testing.T) {
	t.Parallel()
	topo, err := Start(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Servers) != 3 || len(topo.Addrs()) != 3 {
		t.Fatalf("%d servers, want 3", len(topo.Servers))
	}
	seen := map[string]bool{}
	for _, s := range topo.Servers {
		if seen[s.Addr] {
			t.Fatalf("two servers on %s", s.Addr)
		}
		seen[s.Addr] = true
		if err := Ping(s.Addr, s.Password, time.Second); err != nil {
			t.Fatalf("PING %s: %v", s.Addr, err)
		}
		// requirepass is on: no password, no PONG.
		if err := Ping(s.Addr, "", time.Second); err == nil {
			t.Fatalf("%s answered PING without AUTH", s.Addr)
		}
		if !Alive(s.Pid) {
			t.Fatalf("pid %d not alive", s.Pid)
		}
	}
	topo.Stop()
	topo.Stop() // idempotent
	for _, s := range topo.Servers {
		if Alive(s.Pid) {
			t.Errorf("pid %d still alive after Stop", s.Pid)
		}
		if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
			t.Errorf("dir %s not removed: %v", s.Dir, err)
		}
		if err := Ping(s.Addr, s.Password, 200*time.Millisecond); err == nil {
			t.Errorf("%s still answers after Stop", s.Addr)
		}
	}
}

func TestKillAll(t *testing.T) {
	topo, err := Start(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	KillAll()
	for _, s := range topo.Servers {
		select {
		case <-s.Exited():
		case <-time.After(5 * time.Second):
			t.Fatalf("pid %d survived KillAll", s.Pid)
		}
	}
	topo.Stop()
}

func TestNoRedisServerOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), 1)
	if !errors.Is(err, ErrNoRedisServer) {
		t.Fatalf("err = %v, want ErrNoRedisServer", err)
	}
}

func TestBadCount(t *testing.T) {
	if _, err := Start(context.Background(), 0); err == nil {
		t.Fatal("Start(0) succeeded")
	}
}

func TestStartReplicated(t *testing.T) {
	t.Parallel()
	topo, err := StartReplicated(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	m, r := topo.Servers[0], topo.Servers[1]
	if m.Password != r.Password {
		t.Fatal("master and replica passwords differ")
	}
	if _, err := Command(m.Addr, m.Password, time.Second, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if n, err := Command(m.Addr, m.Password, 3*time.Second, "WAIT", "1", "2000"); err != nil || n != "1" {
		t.Fatalf("WAIT 1 = %q, %v; want 1 replica", n, err)
	}
	if v, err := Command(r.Addr, r.Password, time.Second, "GET", "k"); err != nil || v != "v" {
		t.Fatalf("replica GET = %q, %v", v, err)
	}
	if _, err := Command(r.Addr, r.Password, time.Second, "SET", "k", "w"); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("write to replica: %v, want READONLY", err)
	}
}

func TestSweepStale(t *testing.T) {
	stale, _ := os.MkdirTemp("", "lockbench-redis-")
	live, _ := os.MkdirTemp("", "lockbench-redis-")
	defer os.RemoveAll(live)
	os.WriteFile(filepath.Join(stale, "owner.pid"), []byte("999999999"), 0o644)
	os.WriteFile(filepath.Join(live, "owner.pid"), []byte(strconv.Itoa(os.Getppid())), 0o644)
	SweepStale()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("directory of a dead lockbench not removed")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("directory of a live process removed")
	}
}

func TestRestartForgetsAndPause(t *testing.T) {
	topo, err := Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	if _, err := Command(s.Addr, s.Password, time.Second, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	old := s.Pid
	if err := s.Restart(context.Background(), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if s.Pid == old || Alive(old) {
		t.Fatalf("pid %d -> %d: not a new process", old, s.Pid)
	}
	if v, err := Command(s.Addr, s.Password, time.Second, "EXISTS", "k"); err != nil || v != "0" {
		t.Fatalf("after restart EXISTS k = %q, %v; want 0 (no persistence)", v, err)
	}
	s.Freeze()
	if err := Ping(s.Addr, s.Password, 100*time.Millisecond); err == nil {
		t.Fatal("a frozen server answered")
	}
	s.Thaw()
	if err := Ping(s.Addr, s.Password, time.Second); err != nil {
		t.Fatalf("after the thaw: %v", err)
	}
	s.Kill()
	if Alive(s.Pid) {
		t.Fatal("killed server alive")
	}
}

func TestStartSentinel(t *testing.T) {
	t.Parallel()
	topo, err := StartSentinel(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	if len(topo.Servers) != 2 || len(topo.Sentinels) != 3 {
		t.Fatalf("%d servers, %d sentinels", len(topo.Servers), len(topo.Sentinels))
	}
	info, err := Command(topo.Sentinels[1].Addr, topo.SentinelPassword(), time.Second, "INFO", "sentinel")
	if err != nil || !strings.Contains(info, topo.Servers[0].Addr) {
		t.Fatalf("sentinel does not monitor the master %s: %q %v", topo.Servers[0].Addr, info, err)
	}
	pids := []int{topo.Sentinels[0].Pid, topo.Sentinels[1].Pid, topo.Sentinels[2].Pid}
	topo.Stop()
	for _, p := range pids {
		if Alive(p) {
			t.Fatalf("sentinel %d alive after Stop", p)
		}
	}
}

func TestStartCluster(t *testing.T) {
	t.Parallel()
	topo, err := StartCluster(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Stop()
	s := topo.Servers[0]
	// {a} hashes to slot 15495, on the last node: the first redirects.
	if _, err := Command(s.Addr, s.Password, time.Second, "SET", "{a}x", "1"); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Fatalf("SET on the wrong node: %v, want MOVED", err)
	}
	last := topo.Servers[2]
	if _, err := Command(last.Addr, last.Password, time.Second, "SET", "{a}x", "1"); err != nil {
		t.Fatal(err)
	}
}
