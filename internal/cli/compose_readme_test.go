package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// TestComposeReadmeCommands runs every `lockbench run ...` line of
// compose/README.md against redis-server processes standing in for the
// compose layout (the same shape, on free ports instead of the published
// ones, one password): the command lines must parse and work, and each
// result has the shape the README gives it: the strategies of its
// --strategy (else the default ones) on the flash-sale default, each
// selling its stock without error, on the topology named ("external" for
// --addr, with no server started; "sentinel" with its master, replica and
// three Sentinels; a started standalone server otherwise); Redlock on the
// five masters with quorum 3; wait-replicas acknowledged by the Sentinel
// layout's replica; --metrics-addr serving Prometheus metrics.
func TestComposeReadmeCommands(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "compose", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile("`(lockbench run [^`]+)`").FindAllStringSubmatch(string(b), -1)
	seen := map[string]bool{}
	addrRE := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	ran := 0
	for _, m := range lines {
		line := m[1]
		if seen[line] {
			continue
		}
		seen[line] = true
		t.Run(line, func(t *testing.T) {
			args := strings.Fields(strings.TrimPrefix(line, "lockbench "))
			addrs := addrRE.FindAllString(line, -1)
			if strings.Contains(line, "--addr") {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var topo *topology.Topology
				var err error
				if strings.Contains(line, "wait-replicas") {
					topo, err = topology.StartReplicated(ctx)
				} else {
					topo, err = topology.Start(ctx, len(addrs))
				}
				if err != nil {
					t.Fatal(err)
				}
				defer topo.Stop()
				pw := topo.Servers[0].Password
				for _, s := range topo.Servers[1:] {
					if _, err := topology.Command(s.Addr, s.Password, time.Second, "CONFIG", "SET", "requirepass", pw); err != nil {
						t.Fatal(err)
					}
				}
				for i := range args {
					for j, addr := range addrs {
						args[i] = strings.ReplaceAll(args[i], addr, topo.Servers[j].Addr)
					}
				}
				args = append(args, "--password", pw)
			}
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], ":9091", "127.0.0.1:0")
			}
			out := filepath.Join(t.TempDir(), "r.json")
			// Each run ends when its stock of 100 is sold; the 30 s bound only
			// keeps a slow machine from cutting it short (the checks want the
			// whole stock sold). A 5 s lease: the checks want no oversell
			// but naive's, and the default lease (100 ms with 1 ms of work)
			// lapses under a stall of a loaded machine (wait-replicas sold
			// 101 in one of four runs at a load average of 12).
			args = append(args, "-q", "--driver", "rueidis", "--duration", "30s", "--stock", "100", "--ttl", "5s", "--out", out)
			r := lockbench(t, args...)
			if r.code != 0 {
				t.Fatalf("lockbench %v: exit %d\n%s", args, r.code, r.stderr)
			}
			run, err := report.ReadFile(out)
			if err != nil {
				t.Fatalf("no result file: %v", err)
			}
			checkComposeShape(t, line, r, run)
			ran++
		})
	}
	if ran < 5 {
		t.Errorf("ran %d README commands, want at least 5 (standalone, masters, sentinel, monitoring, --topology sentinel)", ran)
	}
}

// checkComposeShape checks that the result of one compose/README.md
// command line has the shape the README documents for it.
func checkComposeShape(t *testing.T, line string, r result, run *report.Run) {
	t.Helper()
	fields := strings.Fields(line)
	flag := func(name string) string {
		for i, f := range fields {
			if f == name && i+1 < len(fields) {
				return fields[i+1]
			}
		}
		return ""
	}
	strats := splitList(flag("--strategy"))
	if len(strats) == 0 {
		strats = splitList(newRunCmd().Flags().Lookup("strategy").DefValue)
	}
	var want, got []string
	for _, st := range strats {
		want = append(want, st+"/rueidis/flash-sale")
	}
	for _, sc := range run.Scenarios {
		got = append(got, sc.Strategy+"/"+sc.Driver+"/"+sc.Workload)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	wantTopo, wantServers := "standalone", 1
	switch {
	case flag("--addr") != "":
		wantTopo, wantServers = "external", 0
	case flag("--topology") == "sentinel":
		wantTopo, wantServers = "sentinel", 5 // master, replica, three Sentinels
	}
	if run.Meta.Topology != wantTopo || len(run.Meta.Servers) != wantServers {
		t.Errorf("meta topology %q with %d servers started, want %q with %d", run.Meta.Topology, len(run.Meta.Servers), wantTopo, wantServers)
	}
	for _, sc := range run.Scenarios {
		name := sc.Strategy + "/" + sc.Driver
		if sc.Topology != wantTopo {
			t.Errorf("%s: topology %q, want %q", name, sc.Topology, wantTopo)
		}
		// naive, the broken baseline, may oversell (its lease can lapse
		// under a stall): what it sold beyond the stock is its oversell.
		if sold := sc.Figures["sold"]; sc.Counters.Errors != 0 || sold < 100 || sold-100 != sc.Violations.Oversell || (sold > 100 && sc.Strategy != "naive") {
			t.Errorf("%s: errors %d %v, sold %d, oversell %d; want no error and the stock of 100 sold (beyond it only by naive, as its oversell)", name, sc.Counters.Errors, sc.Counters.ErrorSamples, sold, sc.Violations.Oversell)
		}
		switch sc.Strategy {
		case "redlock": // five independent masters, quorum 3
			if q := sc.StrategyStats["quorum"]; q != 3 {
				t.Errorf("redlock: quorum %v, want 3", q)
			}
			for i := 0; i < 5; i++ {
				if n := sc.StrategyStats[fmt.Sprintf("node%d_acquired", i)]; n == 0 {
					t.Errorf("redlock: node %d acquired nothing, want all five masters used: %v", i, sc.StrategyStats)
				}
			}
			if _, ok := sc.StrategyStats["node5_acquired"]; ok {
				t.Errorf("redlock: a sixth node: %v", sc.StrategyStats)
			}
		case "wait-replicas": // the master has its replica attached
			if sc.Ops == 0 {
				t.Errorf("wait-replicas: no operation (not_replicated %v): the replica did not acknowledge", sc.StrategyStats["not_replicated"])
			}
		}
	}
	if flag("--metrics-addr") != "" && !regexp.MustCompile(`Prometheus metrics on http://127\.0\.0\.1:\d+/metrics`).MatchString(r.stderr) {
		t.Errorf("--metrics-addr: no \"Prometheus metrics on\" line on stderr:\n%s", r.stderr)
	}
}
