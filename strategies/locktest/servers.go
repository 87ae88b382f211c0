package locktest

import (
	"context"
	"fmt"
	"sync"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// Masters is the number of independent redis-server masters of the
// strategies.Masters layout (redlock's).
const Masters = 5

// Servers are the redis-server processes a Suite runs against, one layout
// per strategies.Topology, each started on first use: Standalone (one
// server), Masters (Masters independent servers) and Replicated (a master
// and one replica). Every server binds 127.0.0.1 on a free port, requires
// a random password, keeps no data on disk, and gets SIGKILL from the
// kernel if the test process dies (Linux). redis-server must be on PATH.
// A Servers is safe for concurrent use; Close stops them all.
type Servers struct {
	mu    sync.Mutex
	topos map[strategies.Topology]*topology.Topology
	errs  map[strategies.Topology]error // a failed start is not retried
}

// NewServers returns a Servers with nothing started yet.
func NewServers() *Servers {
	return &Servers{topos: map[strategies.Topology]*topology.Topology{}, errs: map[strategies.Topology]error{}}
}

// Start starts the layouts named now instead of on first use (a TestMain
// that wants to fail at once without redis-server). Errors: the first
// layout that did not start (redis-server not on PATH, a server that did
// not answer within 10 s, a layout the suite has none of: Sentinel,
// Cluster).
func (s *Servers) Start(kinds ...strategies.Topology) error {
	for _, k := range kinds {
		if _, err := s.layout(k); err != nil {
			return err
		}
	}
	return nil
}

// layout returns the started layout kind, starting it on first use.
func (s *Servers) layout(kind strategies.Topology) (*topology.Topology, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.topos[kind]; ok {
		return t, nil
	}
	if err, ok := s.errs[kind]; ok {
		return nil, err
	}
	ctx := context.Background()
	var t *topology.Topology
	var err error
	switch kind {
	case strategies.Standalone:
		t, err = topology.Start(ctx, 1)
	case strategies.Masters:
		t, err = topology.Start(ctx, Masters)
	case strategies.Replicated:
		t, err = topology.StartReplicated(ctx)
	default:
		err = fmt.Errorf("locktest has no %s layout (it starts %s, %s and %s)", kind, strategies.Standalone, strategies.Masters, strategies.Replicated)
	}
	if err != nil {
		err = fmt.Errorf("locktest: starting the %s servers: %w", kind, err)
		s.errs[kind] = err
		return nil, err
	}
	s.topos[kind] = t
	return t, nil
}

// Nodes returns the servers that clients of strategy use, with their
// passwords: its layout (strategies.TopologyOf), started if it is not
// yet, without the replica of the Replicated layout (clients use the
// master only). Errors: as Start's.
func (s *Servers) Nodes(strategy string) ([]drivers.Endpoint, error) {
	kind := strategies.TopologyOf(strategy)
	t, err := s.layout(kind)
	if err != nil {
		return nil, err
	}
	var out []drivers.Endpoint
	for _, srv := range t.Servers {
		out = append(out, drivers.Endpoint{Addr: srv.Addr, Password: srv.Password})
	}
	if kind == strategies.Replicated {
		out = out[:1]
	}
	return out, nil
}

// Close stops every server started (SIGTERM, then SIGKILL after 3 s) and
// removes their directories. It is safe to call more than once.
func (s *Servers) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, t := range s.topos {
		t.Stop()
		delete(s.topos, k)
	}
}
