package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/dockertopo"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// topologies starts each server layout the first time a scenario needs it
// and keeps it for the rest of the matrix — except when the scenario's
// faults damage servers (node-*, failover): then it gets a fresh layout,
// stopped after it.
type topologies struct {
	plan    *plan
	started map[strategies.Topology]*topology.Topology
	order   []strategies.Topology
	checked map[string]bool // external addresses already checked
	fresh   []*topology.Topology
	linker  func(master string) (string, error)
	docker  map[strategies.Topology]*dockertopo.Layout // --backend docker
	// backends are the baseline servers started so far (MariaDB,
	// ZooKeeper, etcd), one of each for the whole matrix.
	backends map[strategies.Backend]backend
	border   []strategies.Backend
	// resource is the separate resource's redis-server (--resource
	// separate without --addr), started once for the whole matrix; nil:
	// none started. resourceChecked: the --resource-addr server checked.
	resource        *topology.Topology
	resourceChecked bool
}

// errSkip marks a scenario skipped because its server is not installed.
type errSkip struct{ err error }

func (e errSkip) Error() string { return e.err.Error() }

func (e errSkip) Unwrap() error { return e.err }

// backendsFor starts (once) the server the scenario's strategy needs
// besides Redis and returns it (nil for none) with the Backends to put in
// the scenario. A server that is not installed gives errSkip.
func (t *topologies) backendsFor(ctx context.Context, sc engine.Scenario) (*topology.Server, strategies.Backends, error) {
	var b strategies.Backends
	kind := strategies.InfoOf(sc.Strategy).Backend
	if kind == strategies.NoBackend {
		return nil, b, nil
	}
	if t.backends == nil {
		t.backends = map[strategies.Backend]backend{}
	}
	if be, ok := t.backends[kind]; ok {
		return be.s, be.b, nil
	}
	s, b, err := engine.StartBackend(ctx, kind)
	if engine.Missing(err) {
		return nil, b, errSkip{err}
	}
	if err != nil {
		return nil, b, err
	}
	t.backends[kind] = backend{s, b}
	t.border = append(t.border, kind)
	return s, b, nil
}

// resourceFor is the separate resource's server for sc (--resource
// separate; nil otherwise): the --resource-addr server, checked once as
// the --addr servers are (an empty database unless --allow-nonempty, not
// a Cluster node), or a standalone redis-server started once for the
// whole matrix (127.0.0.1, a random password; stopped with the others).
func (t *topologies) resourceFor(ctx context.Context, sc engine.Scenario) (*engine.Node, error) {
	if sc.Resource != engine.ResourceSeparate {
		return nil, nil
	}
	if n := t.plan.resource; n != nil {
		if !t.resourceChecked {
			if err := t.checkResource(ctx, *n); err != nil {
				return nil, err
			}
			t.resourceChecked = true
		}
		return n, nil
	}
	if t.resource == nil {
		topo, err := topology.Start(ctx, 1)
		if err != nil {
			return nil, fmt.Errorf("start the separate resource's redis-server: %w", err)
		}
		t.resource = topo
	}
	s := t.resource.Servers[0]
	return &engine.Node{Addr: s.Addr, Password: s.Password}, nil
}

// checkResource refuses a --resource-addr server that is a Cluster node
// or, unless --allow-nonempty, whose database holds keys.
func (t *topologies) checkResource(ctx context.Context, n engine.Node) error {
	ds, err := engine.Open(ctx, t.plan.scenarios[0].Driver, []engine.Node{n}, 1)
	if err != nil {
		return fmt.Errorf("--resource-addr: %w", tlsHint(err, n))
	}
	d := ds[0]
	defer d.Close()
	if r, err := d.Do(ctx, "INFO", "cluster"); err == nil && strings.Contains(r.Str, "cluster_enabled:1") {
		return usageError{fmt.Errorf("--resource-addr %s is a Redis Cluster node: the resource is one standalone server", n.Addr)}
	}
	if t.plan.allowNonempty {
		return nil
	}
	keys, err := redisadmin.KeyCount(ctx, d)
	if err != nil {
		return fmt.Errorf("count the keys on the resource %s to check that its database is empty (--allow-nonempty skips the check): %w", n.Addr, err)
	}
	if keys > 0 {
		return usageError{fmt.Errorf("refusing to run on the resource %s: its database already holds %s; lockbench only ever touches keys under lockbench:<run-id>:, but pass --allow-nonempty to confirm", n.Addr, keysText(keys))}
	}
	return nil
}

// backend is a started baseline server and what clients use to reach it.
type backend struct {
	s *topology.Server
	b strategies.Backends
}

// kindFor is the layout a scenario runs on: the strategy's own need
// (redlock: masters; wait-replicas: replica), else --topology, else a
// replica when a fault needs one, else standalone.
func (t *topologies) kindFor(sc engine.Scenario) strategies.Topology {
	return layoutKind(sc, t.plan.topology)
}

func damaging(sc engine.Scenario) bool {
	for _, f := range sc.Faults {
		if f.Needs() != faults.NeedsNothing {
			return true
		}
	}
	return false
}

// layout is where a scenario runs.
type layout struct {
	nodes   []engine.Node      // what clients connect to
	servers []*topology.Server // every server (replica included)
	link    *faults.ReplLink   // the replica's link on a Sentinel layout with a failover
	name    string
	release func() // call after the scenario
	// backends are the baseline strategies' servers besides Redis;
	// backend is the one lockbench started for the scenario's strategy
	// (its process CPU is measured: engine.Env.BackendServer), nil: none.
	backends strategies.Backends
	backend  *topology.Server
	// resource is the separate resource's server (--resource separate),
	// nil: the data lives beside the locks.
	resource *engine.Node
}

// layoutFor starts or reuses the scenario's layout.
func (t *topologies) layoutFor(ctx context.Context, sc engine.Scenario) (layout, error) {
	var link *faults.ReplLink
	if t.kindFor(sc) == strategies.Sentinel {
		// With a fault that damages a server, the replica replicates
		// through the faults' proxy, which the failover cuts.
		link = faults.NewReplLink(sc.Faults)
	}
	t.linker = link.Linker()
	backend, backends, err := t.backendsFor(ctx, sc)
	if err != nil {
		return layout{release: func() {}}, err
	}
	resource, err := t.resourceFor(ctx, sc)
	if err != nil {
		return layout{release: func() {}}, err
	}
	nodes, servers, name, release, err := t.nodes(ctx, sc)
	if err != nil || !link.Started() {
		link.Close()
		link = nil
	}
	l := layout{nodes: nodes, servers: servers, name: name, release: release, link: link, backends: backends, backend: backend, resource: resource}
	if link != nil {
		l.release = func() { release(); link.Close() }
	}
	return l, err
}

// nodes returns the client-facing nodes for a scenario, every server of
// its layout (replica included), the layout's name, and a release
// function to call after the scenario.
func (t *topologies) nodes(ctx context.Context, sc engine.Scenario) ([]engine.Node, []*topology.Server, string, func(), error) {
	kind := t.kindFor(sc)
	none := func() {}
	if len(t.plan.addrs) > 0 {
		nodes := t.plan.external(kind)
		if err := t.checkExternal(ctx, nodes, kind); err != nil {
			return nil, nil, "", none, err
		}
		return nodes, nil, t.plan.externalName(), none, nil
	}
	if t.plan.docker {
		return t.dockerNodes(ctx, kind)
	}
	start := func() (*topology.Topology, error) {
		switch kind {
		case strategies.Masters:
			return topology.Start(ctx, t.plan.nodes)
		case strategies.Replicated:
			return topology.StartReplicated(ctx)
		case strategies.Sentinel:
			return topology.StartSentinel(ctx, t.linker)
		case strategies.Cluster:
			return topology.StartCluster(ctx, 3)
		}
		return topology.Start(ctx, 1)
	}
	release := none
	topo, ok := t.started[kind]
	switch {
	case damaging(sc):
		var err error
		if topo, err = start(); err != nil {
			return nil, nil, "", none, err
		}
		t.fresh = append(t.fresh, topo)
		release = topo.Stop
	case !ok:
		var err error
		if topo, err = start(); err != nil {
			return nil, nil, "", none, err
		}
		t.started[kind] = topo
		t.order = append(t.order, kind)
	}
	var nodes []engine.Node
	for _, s := range topo.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	switch kind {
	case strategies.Masters:
		return nodes, topo.Servers, fmt.Sprintf("masters:%d", len(nodes)), release, nil
	case strategies.Replicated:
		return nodes[:1], topo.Servers, "replica", release, nil // clients use the master
	case strategies.Cluster:
		n := engine.Node{Addr: topo.Servers[0].Addr, Password: topo.Servers[0].Password, Cluster: true}
		return []engine.Node{n}, topo.Servers, "cluster", release, nil
	case strategies.Sentinel:
		n := engine.Node{Addr: "sentinel:" + topology.MasterName, Password: topo.Servers[0].Password,
			Sentinels: topo.SentinelAddrs(), SentinelPassword: topo.SentinelPassword(), MasterName: topology.MasterName}
		return []engine.Node{n}, topo.Servers, "sentinel", release, nil
	}
	return nodes, topo.Servers, "standalone", release, nil
}

// dockerNodes starts (once) or reuses a layout in containers. validate
// has refused the faults that damage servers and the layouts the docker
// backend does not start.
func (t *topologies) dockerNodes(ctx context.Context, kind strategies.Topology) ([]engine.Node, []*topology.Server, string, func(), error) {
	l, ok := t.docker[kind]
	if !ok {
		var err error
		if l, err = dockertopo.Start(ctx, kind, t.plan.nodes); err != nil {
			return nil, nil, "", func() {}, fmt.Errorf("--backend docker: %w", err)
		}
		if t.docker == nil {
			t.docker = map[strategies.Topology]*dockertopo.Layout{}
		}
		t.docker[kind] = l
		t.order = append(t.order, kind)
	}
	var nodes []engine.Node
	for _, s := range l.Servers {
		nodes = append(nodes, engine.Node{Addr: s.Addr, Password: s.Password})
	}
	name := "docker:" + string(kind)
	switch kind {
	case strategies.Masters:
		name = fmt.Sprintf("docker:masters:%d", len(nodes))
	case strategies.Replicated:
		nodes = nodes[:1] // clients use the master
	}
	return nodes, nil, name, func() {}, nil
}

// checkExternal refuses a user's server that holds keys (unless
// --allow-nonempty) and, for wait-replicas, a master without a replica.
// Each address is checked once.
func (t *topologies) checkExternal(ctx context.Context, nodes []engine.Node, kind strategies.Topology) error {
	if t.checked == nil {
		t.checked = map[string]bool{}
	}
	for _, n := range nodes {
		key := n.Addr + "/" + string(kind)
		if t.checked[key] {
			continue
		}
		if n.Cluster && !t.checked[n.Addr] {
			// --cluster on a server that is not a Cluster node would run
			// as one server labelled external-cluster: refused.
			if err := t.checkClusterMode(ctx, n); err != nil {
				return err
			}
		}
		ds, err := engine.Open(ctx, t.plan.scenarios[0].Driver, []engine.Node{n}, 1)
		if err != nil {
			return tlsHint(err, n)
		}
		d := ds[0]
		if !n.Cluster && n.MasterName == "" && !t.checked[n.Addr] {
			if r, err := d.Do(ctx, "INFO", "cluster"); err == nil && strings.Contains(r.Str, "cluster_enabled:1") {
				d.Close()
				return usageError{fmt.Errorf("%s is a Redis Cluster node (INFO cluster: cluster_enabled:1): add --cluster", n.Addr)}
			}
		}
		if !t.plan.allowNonempty && !t.checked[n.Addr] {
			keys, err := redisadmin.KeyCount(ctx, d)
			if err != nil {
				d.Close()
				return fmt.Errorf("count the keys on %s to check that its database is empty (--allow-nonempty skips the check): %w", n.Addr, err)
			}
			keys -= ourKeys(ctx, d, t.plan.segRunID) // the other segments' of this run
			if keys > 0 {
				d.Close()
				return usageError{fmt.Errorf("refusing to run on %s: its database already holds %s; lockbench only ever touches keys under lockbench:<run-id>:, but pass --allow-nonempty to confirm", n.Addr, keysText(keys))}
			}
		}
		if kind == strategies.Replicated {
			r, err := d.Do(ctx, "INFO", "replication")
			if err == nil && strings.Contains(r.Str, "connected_slaves:0") {
				d.Close()
				return usageError{fmt.Errorf("wait-replicas needs a master with a replica, and %s has none connected (connected_slaves:0)", n.Addr)}
			}
		}
		d.Close()
		t.checked[key], t.checked[n.Addr] = true, true
	}
	return nil
}

// checkClusterMode refuses --cluster when a seed node says cluster mode
// is off (INFO cluster: cluster_enabled:0; CLUSTER INFO is refused on such
// a server), asking each seed on a plain connection of its own.
func (t *topologies) checkClusterMode(ctx context.Context, n engine.Node) error {
	for _, a := range append([]string{n.Addr}, n.Seeds...) {
		one := n
		one.Addr, one.Seeds, one.Cluster = a, nil, false
		ds, err := engine.Open(ctx, t.plan.scenarios[0].Driver, []engine.Node{one}, 1)
		if err != nil {
			return tlsHint(err, one)
		}
		r, err := ds[0].Do(ctx, "INFO", "cluster")
		ds[0].Close()
		if err == nil && strings.Contains(r.Str, "cluster_enabled:0") {
			return usageError{fmt.Errorf("--cluster, but %s is not a Cluster node (INFO cluster: cluster_enabled:0, cluster mode is off): drop --cluster to run on it as one server", a)}
		}
	}
	return nil
}

// describe names the layouts used and lists the servers started.
func (t *topologies) describe() (string, []report.ServerInfo) {
	if len(t.plan.addrs) > 0 {
		return t.plan.externalName(), nil
	}
	var names []string
	var servers []report.ServerInfo
	for _, k := range t.order {
		if l, ok := t.docker[k]; ok {
			name := "docker:" + string(k)
			if k == strategies.Masters {
				name = fmt.Sprintf("docker:masters:%d", len(l.Servers))
			}
			names = append(names, name)
			for _, s := range l.Servers {
				servers = append(servers, report.ServerInfo{Addr: s.Addr})
			}
			continue
		}
		topo := t.started[k]
		name := string(k)
		if k == strategies.Masters {
			name = fmt.Sprintf("masters:%d", len(topo.Servers))
		}
		names = append(names, name)
		servers = append(servers, serverInfo(topo)...)
	}
	for _, topo := range t.fresh {
		servers = append(servers, serverInfo(topo)...)
	}
	for _, k := range t.border {
		names = append(names, string(k))
		s := t.backends[k].s
		servers = append(servers, report.ServerInfo{Addr: s.Addr, Pid: s.Pid})
	}
	if len(t.fresh) > 0 {
		names = append(names, fmt.Sprintf("%d fresh for faults", len(t.fresh)))
	}
	if t.resource != nil {
		names = append(names, "resource")
		servers = append(servers, serverInfo(t.resource)...)
	}
	return strings.Join(names, ","), servers
}

func serverInfo(topo *topology.Topology) []report.ServerInfo {
	var out []report.ServerInfo
	for _, s := range append(append([]*topology.Server(nil), topo.Servers...), topo.Sentinels...) {
		out = append(out, report.ServerInfo{Addr: s.Addr, Pid: s.Pid})
	}
	return out
}

func (t *topologies) stop() {
	for _, topo := range t.started {
		topo.Stop()
	}
	for _, topo := range t.fresh {
		topo.Stop()
	}
	for _, l := range t.docker {
		l.Stop()
	}
	for _, be := range t.backends {
		be.s.Stop()
	}
	if t.resource != nil {
		t.resource.Stop()
	}
}

// cleanExternal deletes the run's keys on the user's servers, within 2 s
// (the quit-now path of a second Ctrl-C).
func cleanExternal(p *plan, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	nodes := p.external(strategies.Masters)
	if p.resource != nil {
		nodes = append(nodes, *p.resource)
	}
	for _, n := range nodes {
		ds, err := engine.Open(ctx, p.scenarios[0].Driver, []engine.Node{n}, 1)
		if err != nil {
			continue
		}
		_, _ = redisadmin.DeleteKeys(ctx, ds[0], prefix)
		ds[0].Close()
	}
}

func probeVersion(ctx context.Context, driver string, nodes []engine.Node) (string, error) {
	ds, err := engine.Open(ctx, driver, nodes[:1], 1)
	if err != nil {
		return "", err
	}
	defer ds[0].Close()
	v, err := redisadmin.ServerVersion(ctx, ds[0])
	if err != nil {
		return "", fmt.Errorf("read the Redis version from %s: %w", nodes[0].Addr, err)
	}
	return v, nil
}

// keysText is n keys in words: "1 key", "2 keys".
func keysText[N int | int64](n N) string {
	if n == 1 {
		return "1 key"
	}
	return fmt.Sprintf("%d keys", n)
}
