// Package dockertopo starts lockbench's server layouts as Docker containers
// for `lockbench run --backend docker`, through testcontainers-go and its
// Redis module (github.com/testcontainers/testcontainers-go/modules/redis).
// It starts a standalone server, N independent masters (Redlock) and a
// master with a replica; Sentinel and Cluster layouts stay with the local
// backend (internal/topology), since their clients must reach the
// addresses the servers announce.
//
// Like internal/topology, every server requires a random password, keeps
// nothing on disk (no RDB, no AOF) and, on a local engine, is published on
// 127.0.0.1 only (on a random free port). Stop removes the containers; if
// lockbench dies first, testcontainers' reaper (Ryuk) removes them.
package dockertopo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// DefaultImage is the Redis image the containers run; $LOCKBENCH_REDIS_IMAGE
// overrides it.
const DefaultImage = "redis:7.4"

// Supported names the layouts Start accepts, as --topology spells them.
const Supported = "standalone, masters:N, replica"

// ErrNoEngine is returned by Check (and Start) when no Docker engine
// answers. Its message says what to do instead.
var ErrNoEngine = errors.New("no Docker engine answers (is the Docker daemon running, and DOCKER_HOST right?); use --backend local (the default, starts redis-server processes) or --addr host:port")

// ErrUnsupported is returned by Start for a layout the docker backend does
// not start.
var ErrUnsupported = errors.New("the docker backend starts " + Supported + " layouts only")

func init() {
	// testcontainers logs each container step to stderr; lockbench reports
	// errors itself and keeps its stderr for progress lines.
	// LOCKBENCH_DOCKER_DEBUG=1 keeps the log.
	if os.Getenv("LOCKBENCH_DOCKER_DEBUG") == "" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
}

// checkTimeout bounds Check: a daemon that does not answer within it is
// taken as absent.
const checkTimeout = 5 * time.Second

// Check asks the Docker engine for its info within 5 s. Errors: ErrNoEngine
// wrapping the client's error.
func Check(ctx context.Context) (err error) {
	defer func() {
		// testcontainers panics in some set-ups without an engine.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrNoEngine, r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		p, err := testcontainers.NewDockerProvider()
		if err != nil {
			done <- err
			return
		}
		done <- p.Health(ctx) // Health closes the provider
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("%w (testcontainers: %v)", ErrNoEngine, err)
	}
	return nil
}

// Server is one Redis container.
type Server struct {
	// Addr is host:port as reached from this machine (127.0.0.1:<random>
	// on a local engine).
	Addr string
	// Password is the server's requirepass (random hex, 32 chars).
	Password string
	// ID is the container id.
	ID string

	ctr testcontainers.Container
}

// Layout is a set of containers started together.
type Layout struct {
	// Servers in start order; for a replica layout Servers[0] is the
	// master and Servers[1] its replica.
	Servers []*Server
	network *testcontainers.DockerNetwork
	once    sync.Once
}

// live holds every layout not yet stopped, for KillAll.
var (
	liveMu sync.Mutex
	live   = map[*Layout]struct{}{}
)

// Start starts a layout: strategies.Standalone (n ignored),
// strategies.Masters (n independent masters, 1..64) or strategies.Replicated
// (a master and one replica, linked before Start returns). It waits until
// each server is ready (the Redis module's wait: listening port and "Ready
// to accept connections", 10 s). The image is pulled when missing. On any
// error the containers already started are removed. Errors:
// ErrUnsupported (Sentinel, Cluster), ErrNoEngine, a container's start
// failure, or ctx's error.
func Start(ctx context.Context, kind strategies.Topology, n int) (*Layout, error) {
	switch kind {
	case strategies.Standalone:
		n = 1
	case strategies.Masters:
		if n < 1 || n > 64 {
			return nil, fmt.Errorf("dockertopo: masters: want 1 to 64 servers, got %d", n)
		}
	case strategies.Replicated:
	default:
		return nil, fmt.Errorf("%w; %s needs --backend local", ErrUnsupported, kind)
	}
	if err := Check(ctx); err != nil {
		return nil, err
	}
	l := &Layout{}
	liveMu.Lock()
	live[l] = struct{}{}
	liveMu.Unlock()
	fail := func(err error) (*Layout, error) {
		l.Stop()
		return nil, err
	}
	if kind != strategies.Replicated {
		for i := 0; i < n; i++ {
			s, err := startOne(ctx, randomHex(16))
			if err != nil {
				return fail(err)
			}
			l.Servers = append(l.Servers, s)
		}
		return l, nil
	}
	nw, err := tcnetwork.New(ctx)
	if err != nil {
		return fail(fmt.Errorf("dockertopo: create a network: %w", err))
	}
	l.network = nw
	pw := randomHex(16)
	m, err := startOne(ctx, pw, tcnetwork.WithNetwork([]string{"master"}, nw))
	if err != nil {
		return fail(err)
	}
	l.Servers = append(l.Servers, m)
	r, err := startOne(ctx, pw, tcnetwork.WithNetwork([]string{"replica"}, nw),
		testcontainers.WithCmdArgs("--replicaof", "master", "6379", "--masterauth", pw))
	if err != nil {
		return fail(err)
	}
	l.Servers = append(l.Servers, r)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := topology.Command(r.Addr, pw, time.Second, "INFO", "replication")
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return l, nil
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("dockertopo: replica %s did not link to its master within 10 s (%v)", r.Addr, err))
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startOne runs one Redis container with password pw and no persistence.
func startOne(ctx context.Context, pw string, opts ...testcontainers.ContainerCustomizer) (*Server, error) {
	img := DefaultImage
	if v := os.Getenv("LOCKBENCH_REDIS_IMAGE"); v != "" {
		img = v
	}
	all := []testcontainers.ContainerCustomizer{
		testcontainers.WithCmdArgs("--requirepass", pw, "--save", "", "--appendonly", "no"),
		testcontainers.WithLabels(map[string]string{"org.lockbench": "server"}),
	}
	if localEngine() {
		all = append(all, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = mobynet.PortMap{mobynet.MustParsePort("6379/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
		}))
	}
	c, err := tcredis.Run(ctx, img, append(all, opts...)...)
	if err != nil {
		if c != nil {
			_ = c.Terminate(context.Background())
		}
		return nil, fmt.Errorf("dockertopo: start %s: %w", img, err)
	}
	host, err := c.Host(ctx)
	if err == nil && (host == "localhost" || host == "") {
		host = "127.0.0.1"
	}
	var port mobynet.Port
	if err == nil {
		port, err = c.MappedPort(ctx, "6379/tcp")
	}
	if err != nil {
		_ = c.Terminate(context.Background())
		return nil, fmt.Errorf("dockertopo: address of %s: %w", img, err)
	}
	return &Server{Addr: net.JoinHostPort(host, port.Port()), Password: pw, ID: c.GetContainerID(), ctr: c}, nil
}

// localEngine reports whether the Docker engine runs on this machine
// (DOCKER_HOST unset, a unix socket, or a loopback tcp address): then ports
// are published on 127.0.0.1 only.
func localEngine() bool {
	h := os.Getenv("DOCKER_HOST")
	if h == "" {
		return true
	}
	u, err := url.Parse(h)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "unix", "npipe":
		return true
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return u.Hostname() == "localhost" || (err == nil && ip.IsLoopback())
}

// Stop removes every container of the layout and its network (10 s at
// most). Safe to call twice.
func (l *Layout) Stop() {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for _, s := range l.Servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = s.ctr.Terminate(ctx)
			}()
		}
		wg.Wait()
		if l.network != nil {
			_ = l.network.Remove(ctx)
		}
		liveMu.Lock()
		delete(live, l)
		liveMu.Unlock()
	})
}

// KillAll removes every layout not yet stopped, for a signal handler.
func KillAll() {
	liveMu.Lock()
	ls := make([]*Layout, 0, len(live))
	for l := range live {
		ls = append(ls, l)
	}
	liveMu.Unlock()
	for _, l := range ls {
		l.Stop()
	}
}

// Addrs returns the servers' addresses in start order.
func (l *Layout) Addrs() []string {
	out := make([]string, len(l.Servers))
	for i, s := range l.Servers {
		out[i] = s.Addr
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
