package compose

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// load reads one compose file with compose-go's loader, schema validation
// and consistency checks on (the loader's defaults), with an empty
// environment so that nothing of this machine's leaks in.
func load(t *testing.T, path string) (*types.Project, error) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs}},
		Environment: types.Mapping{},
	})
}

// layouts are the Redis layouts and their service counts.
var layouts = map[string]int{
	"standalone.yaml": 1, // redis
	"masters.yaml":    5, // five independent masters (Redlock)
	"sentinel.yaml":   5, // master, replica, three Sentinels
	"cluster.yaml":    7, // six nodes and the one-shot cluster-init
}

func TestComposeFilesLoadAndPublishOnLoopbackOnly(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"monitoring.yaml":  2, // Prometheus and Grafana
		"distributed.yaml": 6, // redis, lockbench-1..4, lockbench-merge (distributed_test.go)
	}
	for f, n := range layouts {
		want[f] = n
	}
	var names []string
	for f := range want {
		names = append(names, f)
	}
	slices.Sort(names)
	slices.Sort(files)
	if !slices.Equal(files, names) {
		t.Fatalf("compose files %v, want exactly %v (add a new file to this test)", files, names)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			p, err := load(t, f)
			if err != nil {
				t.Fatalf("load %s: %v", f, err)
			}
			if len(p.Services) != want[f] {
				t.Errorf("%s has %d services (%v), want %d", f, len(p.Services), p.ServiceNames(), want[f])
			}
			for _, problem := range check(p) {
				t.Error(problem)
			}
		})
	}
}

// check returns what is wrong with a project's publishing: a port not on
// 127.0.0.1, a host port that differs from the container port (clients
// outside Docker are told the container's port by Sentinel and Cluster),
// or a Redis process whose port nobody publishes.
func check(p *types.Project) []string {
	var out []string
	published := map[string]map[uint32]bool{} // service owning a netns -> ports
	for _, s := range p.Services {
		for _, port := range s.Ports {
			if port.HostIP != "127.0.0.1" {
				out = append(out, s.Name+": port "+strconv.Itoa(int(port.Target))+" is published on "+strconv.Quote(port.HostIP)+", want 127.0.0.1 only")
			}
			if port.Published != strconv.Itoa(int(port.Target)) {
				out = append(out, s.Name+": host port "+port.Published+" differs from container port "+strconv.Itoa(int(port.Target)))
			}
			if published[s.Name] == nil {
				published[s.Name] = map[uint32]bool{}
			}
			published[s.Name][port.Target] = true
		}
	}
	for _, s := range p.Services {
		owner := s.Name
		if strings.HasPrefix(s.NetworkMode, types.NetworkModeServicePrefix) {
			owner = strings.TrimPrefix(s.NetworkMode, types.NetworkModeServicePrefix)
			if len(s.Ports) > 0 {
				out = append(out, s.Name+": shares "+owner+"'s network and cannot publish ports itself")
			}
		}
		if port := listenPort(s.Command); port > 0 && !published[owner][uint32(port)] {
			out = append(out, s.Name+": listens on "+strconv.Itoa(port)+", which "+owner+" does not publish")
		}
	}
	return out
}

var sentinelPort = regexp.MustCompile(`(?:^|\\n|')port (\d+)`)

// listenPort is the port a service's Redis process listens on: the
// value of --port, or a Sentinel configuration's "port N"; 0 for others.
func listenPort(cmd types.ShellCommand) int {
	if i := slices.Index(cmd, "--port"); i >= 0 && i+1 < len(cmd) {
		n, _ := strconv.Atoi(cmd[i+1])
		return n
	}
	if m := sentinelPort.FindStringSubmatch(strings.Join(cmd, " ")); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func arg(cmd types.ShellCommand, flag string) string {
	if i := slices.Index(cmd, flag); i >= 0 && i+1 < len(cmd) {
		return cmd[i+1]
	}
	return ""
}

func TestClusterAnnouncesPublishedAddresses(t *testing.T) {
	p, err := load(t, "cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, s := range p.Services {
		if arg(s.Command, "--cluster-enabled") != "yes" {
			continue
		}
		port := arg(s.Command, "--port")
		nodes = append(nodes, "127.0.0.1:"+port)
		if ip := arg(s.Command, "--cluster-announce-ip"); ip != "127.0.0.1" {
			t.Errorf("%s: cluster-announce-ip %q, want 127.0.0.1", s.Name, ip)
		}
		if ap := arg(s.Command, "--cluster-announce-port"); ap != port {
			t.Errorf("%s: cluster-announce-port %s, want the published port %s", s.Name, ap, port)
		}
		if bus, abus := arg(s.Command, "--cluster-port"), arg(s.Command, "--cluster-announce-bus-port"); bus == "" || bus != abus {
			t.Errorf("%s: bus port %q announced as %q", s.Name, bus, abus)
		}
	}
	if len(nodes) != 6 {
		t.Fatalf("%d cluster nodes, want 6", len(nodes))
	}
	init, err := p.GetService("cluster-init")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(nodes)
	var created []string
	for _, a := range init.Command {
		if strings.HasPrefix(a, "127.0.0.1:") {
			created = append(created, a)
		}
	}
	slices.Sort(created)
	if !slices.Equal(created, nodes) || arg(init.Command, "--cluster-replicas") != "1" || !slices.Contains(init.Command, "--cluster-yes") {
		t.Errorf("cluster-init command %q, want --cluster create over %v with --cluster-replicas 1 --cluster-yes", init.Command, nodes)
	}
	if len(init.DependsOn) != 6 {
		t.Errorf("cluster-init waits for %d nodes, want 6", len(init.DependsOn))
	}
	if init.Restart != "no" {
		t.Errorf("cluster-init restart %q, want no (one shot)", init.Restart)
	}
}

func TestSentinelsMonitorAndAnnounceLoopback(t *testing.T) {
	p, err := load(t, "sentinel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	master, err := p.GetService("redis-master")
	if err != nil {
		t.Fatal(err)
	}
	replica, err := p.GetService("redis-replica")
	if err != nil {
		t.Fatal(err)
	}
	mport := arg(master.Command, "--port")
	if got := arg(replica.Command, "--replicaof"); got != "127.0.0.1" || !slices.Contains(replica.Command, mport) {
		t.Errorf("replica command %q, want --replicaof 127.0.0.1 %s", replica.Command, mport)
	}
	n := 0
	for _, s := range p.Services {
		conf := strings.Join(s.Command, " ")
		if !strings.Contains(conf, "--sentinel") {
			continue
		}
		n++
		for _, want := range []string{"sentinel monitor lockbench 127.0.0.1 " + mport + " 2", "sentinel announce-ip 127.0.0.1"} {
			if !strings.Contains(conf, want) {
				t.Errorf("%s: configuration lacks %q", s.Name, want)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d Sentinels, want 3", n)
	}
}

func TestCheckCatchesBadPublishing(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(`name: bad
services:
  open:
    image: redis:7.4
    command: ["redis-server", "--port", "6379"]
    ports: ["6379:6379"]
  moved:
    image: redis:7.4
    command: ["redis-server", "--port", "6380"]
    ports: ["127.0.0.1:16380:6380"]
  hidden:
    image: redis:7.4
    network_mode: service:open
    command: ["redis-server", "--port", "6381"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := load(t, bad)
	if err != nil {
		t.Fatal(err)
	}
	got := check(p)
	if len(got) != 3 {
		t.Fatalf("check found %d problems, want 3 (all interfaces, host port != container port, unpublished port): %q", len(got), got)
	}
	for i, want := range []string{"published on", "differs from container port", "does not publish"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("problem %d %q not reported: %q", i, want, got)
		}
	}
}

func TestLoaderValidates(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nservices:\n  r:\n    image: redis:7.4\n    portz: [\"127.0.0.1:1:1\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := load(t, bad); err == nil || !strings.Contains(err.Error(), "portz") {
		t.Fatalf("a file with an unknown key loaded (err %v); validation is off", err)
	}
}

func TestReadmeHasALinePerFile(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.yaml")
	for _, f := range files {
		if !strings.Contains(string(b), "compose/"+f) {
			t.Errorf("README.md does not mention compose/%s", f)
		}
	}
}
