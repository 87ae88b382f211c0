package topology

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MasterName is the name the Sentinels monitor.
const MasterName = "lockbench"

// StartSentinel launches a master, one replica and three Sentinels
// (redis-server --sentinel) monitoring the master with quorum 2,
// down-after-milliseconds 500 and failover-timeout 5000: a failover takes
// about a second. link, when not nil, gets the master's address and returns
// the address the replica replicates from (a proxy that a fault can cut);
// nil replicates directly. The Sentinels share a random password of their
// own (each Sentinel's Password; SentinelPassword), distinct from the
// master's. It waits until every Sentinel sees the replica
// and the other Sentinels. Servers are [master, replica]; Sentinels holds
// the three Sentinels.
func StartSentinel(ctx context.Context, link func(master string) (string, error)) (*Topology, error) {
	bin, err := redisServer()
	if err != nil {
		return nil, err
	}
	t := &Topology{}
	fail := func(err error) (*Topology, error) {
		t.Stop()
		return nil, err
	}
	m, err := startMaster(ctx, bin)
	if err != nil {
		return nil, err
	}
	t.Servers = append(t.Servers, m)
	src := m.Addr
	if link != nil {
		if src, err = link(m.Addr); err != nil {
			return fail(fmt.Errorf("topology: replication link: %w", err))
		}
	}
	r, err := startReplica(ctx, bin, src, m)
	if err != nil {
		return fail(err)
	}
	t.Servers = append(t.Servers, r)
	if err := waitLinked(ctx, r, 10*time.Second); err != nil {
		return fail(err)
	}
	mhost, mport, _ := net.SplitHostPort(m.Addr)
	spw := randomHex(16) // the Sentinels' own password, not the master's
	for i := 0; i < 3; i++ {
		s, err := startSentinel(ctx, bin, mhost, mport, m.Password, spw)
		if err != nil {
			return fail(err)
		}
		t.Sentinels = append(t.Sentinels, s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range t.Sentinels {
		for {
			info, err := Command(s.Addr, s.Password, time.Second, "INFO", "sentinel")
			if err == nil && strings.Contains(info, "status=ok") && strings.Contains(info, "slaves=1") && strings.Contains(info, "sentinels=3") {
				break
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("topology: sentinel %s did not see the replica and its peers within 20 s: %q %v", s.Addr, info, err))
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

// SentinelPassword is the Sentinels' own password (their requirepass),
// "" when the layout has no Sentinel.
func (t *Topology) SentinelPassword() string {
	if len(t.Sentinels) == 0 {
		return ""
	}
	return t.Sentinels[0].Password
}

// SentinelAddrs lists the Sentinels' addresses.
func (t *Topology) SentinelAddrs() []string {
	out := make([]string, len(t.Sentinels))
	for i, s := range t.Sentinels {
		out[i] = s.Addr
	}
	return out
}

// startMaster starts a master with a random requirepass and the same
// password as its masterauth, so that it can follow its replica if it is
// made one (a Sentinel reconfigures an old master that comes back).
func startMaster(ctx context.Context, bin string) (*Server, error) {
	pw := randomHex(16)
	return startWithPassword(ctx, bin, pw, "--masterauth", pw)
}

// startReplica starts a replica of m replicating from src (m's address or
// a proxy in front of it), with m's password for both directions.
func startReplica(ctx context.Context, bin, src string, m *Server) (*Server, error) {
	host, port, _ := net.SplitHostPort(src)
	// One password for the pair (requirepass and masterauth on both), so
	// that a client, a promoted replica or a Sentinel authenticates the
	// same way on both; the replica has it from its first start, so a
	// Restart keeps it.
	return startWithPassword(ctx, bin, m.Password, "--replicaof", host, port, "--masterauth", m.Password)
}

func waitLinked(ctx context.Context, r *Server, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		info, err := Command(r.Addr, r.Password, time.Second, "INFO", "replication")
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topology: replica %s did not link within %v (%v)", r.Addr, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startSentinel launches one Sentinel on a free loopback port with a
// config file in its own directory (Sentinel rewrites it): bound to
// 127.0.0.1, protected mode on, requirepass spw (clients and the other
// Sentinels, which use sentinel-pass spw, authenticate with it), and
// auth-pass pw for the master and its replica.
func startSentinel(ctx context.Context, bin, mhost, mport, pw, spw string) (*Server, error) {
	var lastErr error
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "lockbench-redis-")
		if err != nil {
			return nil, err
		}
		_ = os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		conf := filepath.Join(dir, "sentinel.conf")
		body := fmt.Sprintf(`port %d
bind 127.0.0.1
protected-mode yes
requirepass %s
sentinel sentinel-pass %s
dir %s
logfile %s
sentinel monitor %s %s %s 2
sentinel auth-pass %s %s
sentinel down-after-milliseconds %s 500
sentinel failover-timeout %s 5000
sentinel parallel-syncs %s 1
`, port, spw, spw, dir, filepath.Join(dir, "sentinel.log"), MasterName, mhost, mport, MasterName, pw, MasterName, MasterName, MasterName)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, err
		}
		s := &Server{
			Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Password: spw, Dir: dir,
			exited: make(chan struct{}), bin: bin, args: []string{conf, "--sentinel"},
			logFile: filepath.Join(dir, "sentinel.log"),
		}
		if err := s.spawn(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		liveMu.Lock()
		live[s] = struct{}{}
		liveMu.Unlock()
		if lastErr = s.waitReady(ctx, 10*time.Second); lastErr == nil {
			return s, nil
		}
		s.Stop()
	}
	return nil, fmt.Errorf("topology: sentinel did not start: %w", lastErr)
}
