package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// prepare readies everything the measured window needs, none of it
// clocked: the latency proxies (with a latency fault), one driver per
// node (wrapped in a Switch with faults), the locker, the workload and
// its Env, the pubsub hub or the csc tracking hub, the workload's Setup, and every client's
// recorders. Each thing it opens gets its clean-up in r.undo (the
// drivers' keys deleted unless KeepKeys). Errors: a proxy that cannot
// start, a connection failure, the strategy's or workload's construction,
// a hub, the workload's Setup (Run has validated the scenario before).
func (r *run) prepare() error {
	sc := &r.sc
	if err := r.startProxies(); err != nil {
		return err
	}
	ds, err := OpenClient(r.ctx, sc.Driver, r.nodes, sc.Clients, sc.Client)
	if err != nil {
		return err
	}
	r.ds = ds
	if len(sc.Faults) > 0 { // a failover repoints the clients' drivers
		for i, d := range ds {
			sw := drivers.NewSwitch(d)
			r.switches = append(r.switches, sw)
			ds[i] = sw
		}
	}
	r.deferred(func() {
		for _, d := range ds {
			d.Close()
		}
	})
	r.deferred(func() {
		if sc.Env.KeepKeys || sc.Env.Follower { // the leading segment deletes them
			return
		}
		cctx, cancel := context.WithTimeout(r.bg, 30*time.Second)
		defer cancel()
		for _, d := range ds {
			_, _ = redisadmin.DeleteKeys(cctx, d, r.prefix)
		}
	})

	if sc.separate() {
		if err := r.openResource(); err != nil {
			return err
		}
	}

	// The liveness oracle's registry learns every token the strategy may
	// store; a constant token shared by every client cannot be told apart.
	var tokens strategies.TokenTracker
	if sc.Liveness >= 0 && !sc.ConstantToken {
		r.tracker = liveness.NewTracker(sc.Clients, sc.TTL)
		r.tracker.MultiNode = strategies.TopologyOf(sc.Strategy) == strategies.Masters
		tokens = r.tracker
	}
	locker, err := strategies.New(sc.Strategy, strategies.Config{
		Nodes: ds, TTL: sc.TTL, Params: sc.Options,
		ConstantToken: sc.ConstantToken,
		Backends:      sc.Env.Backends, Clients: sc.Clients,
		Tokens: tokens, Prefix: r.prefix, Wake: wakeOf(sc.Retry),
		KeyTTL: sc.Warmup + sc.Duration + workloads.SafetyMargin,
	})
	if err != nil {
		return err
	}
	r.locker = locker
	if name, version := strategies.LibraryOf(locker); name != "" {
		r.out.Library = &report.Library{Name: name, Version: version}
		if rt, ok := locker.(interface{ Runtime() string }); ok {
			r.out.Library.Runtime = rt.Runtime()
		}
	}
	if c, ok := locker.(io.Closer); ok { // baseline clients: sessions, pools
		r.deferred(func() { c.Close() })
	}
	if rs, ok := locker.(strategies.RowStore); ok {
		r.out.Driver = "mysql" // the data path is github.com/go-sql-driver/mysql, not the Redis driver
		if !sc.Env.KeepKeys {
			r.deferred(func() {
				cctx, cancel := context.WithTimeout(r.bg, 30*time.Second)
				defer cancel()
				_ = rs.DropRows(cctx)
			})
		}
	}
	if r.wl, err = workloads.New(sc.Workload, sc.Options); err != nil {
		return err
	}
	if err := workloads.CheckPermits(sc.Workload, r.wl, sc.Strategy, strategies.PermitsOf(locker)); err != nil {
		return err
	}
	params := sc.Params
	if sg, ok := locker.(strategies.Segmented); ok {
		params.Segments = sg.Segments()
	}
	params.Guard = sc.guard()
	if sc.Slowdown > 0 {
		params.Work = workloads.Fixed(params.Work.Mean() + sc.Slowdown)
	}
	env := &workloads.Env{
		Data: ds[0], Locker: locker, Prefix: r.prefix, Params: params,
		AcquireTimeout: sc.AcquireTimeout, Clients: sc.Clients, ClientOffset: sc.Env.ClientOffset, Cluster: r.nodes[0].Cluster,
		KeyTTL: sc.Warmup + sc.Duration + workloads.SafetyMargin, Follower: sc.Env.Follower,
		QuietIO: strategies.InfoOf(sc.Strategy).Backend == strategies.NoBackend &&
			!strategies.Blocks(locker) && !strategies.Blocks(strategies.ReadSide(locker)),
	}
	if r.resource != nil { // the data on the resource, the locks where they were
		env.Data, env.LockNode, env.Cluster = r.resource, ds[0], false
		env.Rejections = r.prefix + "resource:rejected"
	}
	r.env = env
	// Renewal margins (metrics.Margins): the locker's own renewals, when
	// it reports them (strategies.RenewalMargins), and the worker's
	// extends of Extender leases. Measured (present) only for a strategy
	// that renews; one whose leases extend (strategies.Extends) is marked
	// here, before any extend, so that a process whose clients never
	// extended reports renewals 0, not nothing (which would drop the
	// figure from a --procs result, report.Combine).
	env.Margins = metrics.NewMargins(sc.TTL)
	if rm, ok := locker.(strategies.RenewalMargins); ok && rm.RenewalMargins(env.Margins.Renewed) {
		env.Margins.Renews()
	}
	if strategies.Extends(locker) {
		env.Margins.Renews()
	}
	if verifiable(sc, locker) {
		env.VerifyAcquire, env.VerifyTTL = sc.VerifyAcquire, sc.TTL
		r.verifyCost = &workloads.VerifyCost{}
		env.VerifyCost = r.verifyCost
	}
	if r.tracker != nil {
		env.Live = r.tracker
	}
	if sc.Env.Prom != nil {
		r.prom = sc.Env.Prom.For(export.Labels{Strategy: sc.Strategy, Driver: r.out.Driver, Workload: sc.Workload,
			Retry: r.out.Retry, Clients: sc.Clients, Scenario: sc.Env.Number})
		r.prom.TTL(sc.TTL)
		r.deferred(r.prom.Stop) // a run that ends without its end check
	}
	if sc.Retry.NeedsNotifier() {
		hctx, hcancel := context.WithCancel(r.bg)
		r.deferred(hcancel)
		if r.hub, err = strategies.NewHub(hctx, ds[0], r.prefix); err != nil {
			return fmt.Errorf("pubsub retry: %w", err)
		}
		if _, self := locker.(strategies.WakesOnRelease); !self { // its release script publishes
			env.Released = r.hub.Published
		}
	}
	if sc.Retry.NeedsTracking() { // csc: invalidations of the lock keys, nothing published
		tctx, tcancel := context.WithCancel(r.bg)
		if r.hub, err = strategies.NewTrackingHub(tctx, ds[0], r.prefix); err != nil {
			tcancel()
			return err
		}
		hub := r.hub
		r.deferred(func() { tcancel(); <-hub.Done() }) // its client closed
	}
	sctx, cancel := context.WithTimeout(r.bg, 30*time.Second)
	err = r.wl.Setup(sctx, env)
	cancel()
	if err == nil && env.Rejections != "" { // the resource's count of refusals, with the safety TTL
		sctx, cancel := context.WithTimeout(r.bg, 30*time.Second)
		err = workloads.SetData(sctx, env, []string{env.Rejections}, []string{"0"})
		cancel()
	}
	if err != nil {
		return fmt.Errorf("%s setup: %w", sc.Workload, err)
	}
	if env.Locks > 0 && env.Locks <= metrics.HandoverMaxLocks && sc.Env.Sync == nil && env.Permits() == 1 {
		// Hand-over gaps and FIFO order (metrics.Handover): one process's
		// clients see every grant only when no other process runs the
		// scenario's clients too, so a segment measures none; nor does a
		// workload of over HandoverMaxLocks locks (its memory), nor a
		// semaphore of several permits (a release frees one of them).
		_, fifo := locker.(strategies.FIFO)
		env.Handover = metrics.NewHandover(env.Locks, sc.TTL, fifo)
	}
	if env.Oracle != nil { // its overlaps, live at each scrape
		r.prom.Overlaps(env.Oracle.Overlaps)
	}
	r.liveSampler()
	if sc.Background != nil && !sc.Env.Follower { // the leading segment sends it
		if r.background, err = r.openBackground(); err != nil {
			return err
		}
		r.deferred(r.background.close)
	}

	// Every client's recorders exist before the clock starts: allocating
	// and zeroing the histograms (about 1.1 MB per shard, interval histograms
	// included) is not the run's
	// work, and must not count in its measured window or its CPU time.
	// With client roles, each role's clients record into shards of their
	// own (the role's figures).
	r.role = make([]int, sc.Clients)
	if err := r.assignRoles(); err != nil {
		return err
	}
	r.recs = metrics.NewGroupedSet(r.role)
	// Interval histograms: the timeline's latency and the .hlog file. Each
	// client's values go to the histograms in batches; at an interval's
	// end the sampler takes those of the operations that ended before it
	// from a client that is still in an operation (metrics.Set.Settle).
	r.recs.TrackIntervals()
	if sc.Warmup > 0 { // warm-up figures go to a scratch set
		r.scratch = metrics.NewGroupedSet(r.role)
	}
	return nil
}

// assignRoles gives this process's clients their roles (Spec.Mix): the
// mix's assignment over every segment's clients (workloads.Mix.Assign),
// from client Env.ClientOffset on. Nothing without a mix.
func (r *run) assignRoles() error {
	sc := &r.sc
	if sc.Mix == nil {
		return nil
	}
	total := sc.totalClients()
	all, err := sc.Mix.Assign(total)
	if err != nil {
		return err
	}
	if sc.Env.ClientOffset+sc.Clients > len(all) {
		return fmt.Errorf("--mix: clients %d..%d of a scenario of %d", sc.Env.ClientOffset, sc.Env.ClientOffset+sc.Clients-1, total)
	}
	r.roles = sc.Mix.Roles()
	for i := range r.role {
		r.role[i] = slices.Index(r.roles, all[sc.Env.ClientOffset+i])
	}
	return nil
}

// openResource opens the separate resource's driver (Env.Resource) into
// r.resource, closed when the run ends, and deletes the scenario's keys
// there afterwards unless KeepKeys. Errors: the server cannot be reached.
func (r *run) openResource() error {
	sc := &r.sc
	rs, err := OpenClient(r.ctx, sc.Driver, []Node{*sc.Env.Resource}, sc.Clients, sc.Client)
	if err != nil {
		return fmt.Errorf("the separate resource: %w", err)
	}
	r.resource = rs[0]
	r.deferred(func() { rs[0].Close() })
	r.deferred(func() {
		if sc.Env.KeepKeys {
			return
		}
		cctx, cancel := context.WithTimeout(r.bg, 30*time.Second)
		defer cancel()
		_, _ = redisadmin.DeleteKeys(cctx, rs[0], r.prefix)
	})
	return nil
}

// startProxies puts the faults' proxies in front of the nodes when the
// scenario has a fault that acts through them (faults.ProxyNodes), and
// points r.nodes at them; they stop when the run ends. Errors: a proxy
// that cannot start.
func (r *run) startProxies() error {
	nodes, proxies, err := faults.ProxyNodes(r.sc.Faults, r.nodes)
	if err != nil || proxies == nil {
		return err
	}
	r.proxies = proxies
	r.deferred(proxies.Close)
	r.nodes = nodes
	return nil
}

// verifiable reports whether the ownership check after acquire
// (Spec.VerifyAcquire) runs for sc: on, with a token of each lease's own,
// and a lock the check can judge (workloads.OwnershipCheckable: one Redis
// server's lock key; not zk, etcd or a SQL row lock's, nor Redlock's on
// several masters, nor a lock kept in keys other than its lock key,
// strategies.Stored: rueidislock's 2N-1 keys).
func verifiable(sc *Scenario, l strategies.Locker) bool {
	return sc.VerifyAcquire > 0 && !sc.ConstantToken && workloads.OwnershipCheckable(sc.Strategy, l)
}

// liveSampler makes the liveness oracle's sampler (r.live) for the lock
// keys of the workload, on the nodes that hold them: every master for a
// strategy on independent masters (a quorum of them makes a lock held),
// else the first node. Without a registry, or lock keys to read, or for
// a lock kept elsewhere than its lock key (keptApart), there is none.
func (r *run) liveSampler() {
	lk, ok := r.wl.(workloads.LockKeyer)
	if r.tracker == nil || !ok || strategies.InfoOf(r.sc.Strategy).Backend == strategies.ZooKeeper ||
		strategies.InfoOf(r.sc.Strategy).Backend == strategies.Etcd {
		return
	}
	if keys := lk.LockKeys(); len(keys) > 0 && keptApart(r.locker, keys[0]) {
		r.liveApart = true
		return
	}
	nodes, quorum := r.ds[:1], 1
	if strategies.TopologyOf(r.sc.Strategy) == strategies.Masters {
		nodes, quorum = r.ds, len(r.ds)/2+1
	}
	r.live = &liveness.Sampler{T: r.tracker, Nodes: nodes, Quorum: quorum, Keys: lk.LockKeys(),
		Cluster: r.nodes[0].Cluster, Interval: r.sc.Liveness, Foreign: r.sc.Env.Sync != nil,
		NotTokens: strategies.NonTokenFieldsOf(r.locker)}
}

// keptApart reports whether l keeps lock key in keys that do not include
// the key itself (strategies.Stored: rueidislock's 2N-1 keys). The
// liveness reader reads the lock keys only: for such a lock it would find
// no token stored and count every holder's exit freed at its first read
// and no orphan, so its liveness figures are not measured instead.
func keptApart(l strategies.Locker, key string) bool {
	_, ok := l.(strategies.Stored)
	return ok && !slices.Contains(strategies.StoredKeys(l, key), key)
}

// wakeOf is how a WaitQueue locker's release wakes its next waiter under
// policy p: by PUBLISH (pubsub), by a key's invalidation (csc), or not at
// all (a polling policy, which nobody listens to).
func wakeOf(p *retry.Policy) strategies.Wake {
	switch {
	case p.NeedsNotifier():
		return strategies.WakePublish
	case p.NeedsTracking():
		return strategies.WakeKey
	}
	return strategies.WakeNone
}
