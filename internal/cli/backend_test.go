package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackendDockerWithoutEngine runs `lockbench run --backend docker` with
// DOCKER_HOST on a socket nobody serves, as on a machine with only the
// docker client: it must fail at once with exit 1, say why and what to do,
// start nothing and write no result file.
func TestBackendDockerWithoutEngine(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	cmd := exec.Command(bin, "run", "--backend", "docker", "--strategy", "redlock", "--duration", "1s", "--out", out)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+filepath.Join(dir, "no-docker.sock"), "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Fatalf("exit %v, want %d\nstderr: %s", err, exitFailure, stderr.String())
	}
	for _, want := range []string{"--backend docker", "no Docker engine answers", "--backend local"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("panicked:\n%s", stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("result file written without servers (%v)", err)
	}
}

func TestBackendUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--backend", "podman"}, `--backend "podman" is not local or docker`},
		{[]string{"run", "--backend", "docker", "--addr", "127.0.0.1:6379"}, "--backend docker starts servers; it cannot be used with --addr"},
		{[]string{"run", "--backend", "docker", "--topology", "cluster"}, "--topology cluster needs --backend local"},
		{[]string{"run", "--backend", "docker", "--topology", "sentinel"}, "--topology sentinel needs --backend local"},
		{[]string{"run", "--backend", "docker", "--strategy", "redlock", "--fault", "node-kill:node=1"}, "fault node-kill acts on redis-server processes; it needs --backend local"},
		{[]string{"run", "--backend", "docker", "--fault", "failover"}, "fault failover acts on redis-server processes"},
	}
	for _, c := range cases {
		r := lockbench(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("lockbench %v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
}
