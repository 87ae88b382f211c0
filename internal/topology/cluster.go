package topology

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StartCluster launches an n-master Redis Cluster (n >= 3, no replicas)
// on loopback: each node with cluster-enabled, a cluster bus port of its
// own, the 16384 slots split in equal ranges, all nodes met, and one
// random password for all. It waits until every node reports
// cluster_state:ok.
func StartCluster(ctx context.Context, n int) (*Topology, error) {
	if n < 3 {
		return nil, fmt.Errorf("topology: a cluster needs at least 3 masters, got %d", n)
	}
	bin, err := redisServer()
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	fail := func(err error) (*Topology, error) {
		t.Stop()
		return nil, err
	}
	// One password for all nodes (requirepass, and masterauth should a
	// node become a replica), set from the first start so that a Restart
	// keeps it.
	pw := randomHex(16)
	for i := 0; i < n; i++ {
		bus, err := freePort()
		if err != nil {
			return fail(err)
		}
		s, err := startWithPassword(ctx, bin, pw, "--masterauth", pw, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-node-timeout", "2000", "--cluster-config-file", "nodes.conf")
		if err != nil {
			return fail(err)
		}
		t.Servers = append(t.Servers, s)
		t.busPorts = append(t.busPorts, bus)
	}
	per := 16384 / n
	for i, s := range t.Servers {
		lo, hi := i*per, (i+1)*per-1
		if i == n-1 {
			hi = 16383
		}
		if _, err := Command(s.Addr, pw, 2*time.Second, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fail(fmt.Errorf("topology: assign slots %d-%d to %s: %w", lo, hi, s.Addr, err))
		}
	}
	for i, s := range t.Servers[1:] {
		if _, err := Command(t.Servers[0].Addr, pw, 2*time.Second, "CLUSTER", "MEET", "127.0.0.1", portOf(s.Addr), strconv.Itoa(t.busPorts[i+1])); err != nil {
			return fail(fmt.Errorf("topology: cluster meet %s: %w", s.Addr, err))
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range t.Servers {
		for {
			info, err := Command(s.Addr, pw, time.Second, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				break
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("topology: cluster node %s not ok within 20 s: %v", s.Addr, err))
			}
			select {
			case <-ctx.Done():
				return fail(ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return t, nil
}

func portOf(addr string) string {
	return addr[strings.LastIndexByte(addr, ':')+1:]
}
