package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/topology"
)

// TestComposeReadmeCommands runs every `lockbench run ...` line of
// compose/README.md against redis-server processes standing in for the
// compose layout (the same shape, on free ports instead of the published
// ones, one password): the command lines must parse and work.
func TestComposeReadmeCommands(t *testing.T) {
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
			args = append(args, "-q", "--driver", "rueidis", "--duration", "1s", "--stock", "100", "--out", out)
			r := lockbench(t, args...)
			if r.code != 0 {
				t.Fatalf("lockbench %v: exit %d\n%s", args, r.code, r.stderr)
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatalf("no result file: %v", err)
			}
			ran++
		})
	}
	if ran < 4 {
		t.Errorf("ran %d README commands, want at least 4 (standalone, masters, sentinel, monitoring)", ran)
	}
}
