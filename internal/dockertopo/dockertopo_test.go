package dockertopo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// requireEngine skips a test when no Docker engine answers, as on a machine
// with only the docker client.
func requireEngine(t *testing.T) {
	t.Helper()
	if err := Check(context.Background()); err != nil {
		t.Skipf("skipped: needs a running Docker engine (%v)", err)
	}
	testcontainers.SkipIfProviderIsNotHealthy(t)
}

// TestCheckWithoutEngine points DOCKER_HOST at a socket nobody serves, in
// a child process: testcontainers reads the Docker host once per process.
func TestCheckWithoutEngine(t *testing.T) {
	if os.Getenv("DOCKERTOPO_NO_ENGINE_CHILD") == "1" {
		err := Check(context.Background())
		if !errors.Is(err, ErrNoEngine) {
			t.Fatalf("Check with no engine: %v, want ErrNoEngine", err)
		}
		if !strings.Contains(err.Error(), "--backend local") {
			t.Errorf("error %q does not say what to use instead", err)
		}
		if _, err := Start(context.Background(), strategies.Masters, 3); !errors.Is(err, ErrNoEngine) {
			t.Errorf("Start with no engine: %v, want ErrNoEngine", err)
		}
		fmt.Println("child checked")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckWithoutEngine$", "-test.v")
	cmd.Env = append(os.Environ(), "DOCKERTOPO_NO_ENGINE_CHILD=1",
		"DOCKER_HOST=unix://"+t.TempDir()+"/no-docker.sock", "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child checked") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestUnsupportedLayouts(t *testing.T) {
	for _, k := range []strategies.Topology{strategies.Sentinel, strategies.Cluster} {
		_, err := Start(context.Background(), k, 3)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), string(k)) || !strings.Contains(err.Error(), Supported) {
			t.Errorf("Start(%s): %v, want ErrUnsupported naming %s and the supported layouts", k, err, k)
		}
	}
	if _, err := Start(context.Background(), strategies.Masters, 0); err == nil {
		t.Error("Start(masters, 0) succeeded")
	}
}

func TestLocalEngine(t *testing.T) {
	for h, want := range map[string]bool{
		"": true, "unix:///var/run/docker.sock": true, "tcp://127.0.0.1:2375": true,
		"tcp://localhost:2376": true, "tcp://10.0.0.5:2376": false, "ssh://me@box": false,
	} {
		t.Setenv("DOCKER_HOST", h)
		if got := localEngine(); got != want {
			t.Errorf("DOCKER_HOST=%q: localEngine %v, want %v", h, got, want)
		}
	}
}

func TestStartMastersInDocker(t *testing.T) {
	requireEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := Start(ctx, strategies.Masters, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	if len(l.Servers) != 3 {
		t.Fatalf("%d servers, want 3", len(l.Servers))
	}
	seen := map[string]bool{}
	for _, s := range l.Servers {
		if seen[s.Addr] {
			t.Errorf("address %s twice", s.Addr)
		}
		seen[s.Addr] = true
		if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
			t.Errorf("server published on %s, want 127.0.0.1", s.Addr)
		}
		if err := topology.Ping(s.Addr, "wrong", 2*time.Second); err == nil {
			t.Errorf("%s accepted a wrong password", s.Addr)
		}
		if out, err := topology.Command(s.Addr, s.Password, 2*time.Second, "CONFIG", "GET", "appendonly"); err != nil || !strings.Contains(out, "no") {
			t.Errorf("%s: appendonly %q (%v), want no", s.Addr, out, err)
		}
	}
	l.Stop()
	for _, s := range l.Servers {
		if err := topology.Ping(s.Addr, s.Password, time.Second); err == nil {
			t.Errorf("%s still answers after Stop", s.Addr)
		}
	}
}

func TestStartReplicaInDocker(t *testing.T) {
	requireEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := Start(ctx, strategies.Replicated, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	if len(l.Servers) != 2 {
		t.Fatalf("%d servers, want master and replica", len(l.Servers))
	}
	m := l.Servers[0]
	info, err := topology.Command(m.Addr, m.Password, 2*time.Second, "INFO", "replication")
	if err != nil || !strings.Contains(info, "connected_slaves:1") {
		t.Fatalf("master INFO replication %q (%v), want connected_slaves:1", info, err)
	}
}
