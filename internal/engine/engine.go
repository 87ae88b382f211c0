// Package engine runs one scenario (a strategy, a driver, a workload and
// a retry policy on a set of Redis nodes) and measures it: Run.
//
// A scenario has Clients workers, one goroutine each, every one running
// the workload's operation (acquire the lock, the critical section,
// release) through the strategy. In a closed loop (Rate 0) a worker starts
// its next operation as soon as its last one ends (or, with a think time,
// Think, once it has waited one after it), so the offered load is
// whatever the system under test lets through. In an open loop (Rate > 0)
// a scheduler hands intended start times to free workers, at a constant
// rate or on an arrival shape (Shape, internal/arrival), evenly spaced or
// Poisson: latency is measured from the intended start (coordinated
// omission corrected) and service time from the actual one, and an
// arrival that finds no worker free within DropAfter is dropped and
// counted, never silently delayed. Either loop runs for Warmup, then the
// measured window of Duration, and ends earlier when the workload has
// nothing left to do, when ctx is cancelled, or when its operations do
// nothing but fail (ErrorStreak, MaxConsecutiveErrors).
//
// What a scenario measures (report.Scenario): per operation, latency
// histograms of the whole operation, the acquire, the release, the
// critical section, the service time and failed acquires, and counters
// (operations, acquire attempts, failures, timeouts, errors by kind);
// over the measured window, throughput, fairness between clients, the
// servers' commands per operation (INFO commandstats before and after),
// lockbench's CPU per operation, the lock-bound ceiling, a timeline of
// one entry per Interval and, when asked, the servers' command rate over
// time (LoadSample); and safety, over the whole run: overlapping holders
// counted in process by the oracle (internal/metrics), foreign releases
// and false extends from its holder registry, the workload's end check
// (oversell, lost updates), locks left without a TTL, and the liveness
// oracle's orphaned locks (internal/liveness). Figures from the warm-up
// are discarded; safety counts cover it too.
//
// Run's phases are prepare (prepare.go: drivers, locker, workload,
// recorders, fault proxies), measure (measure.go: the clocked part, with
// the fault injector, the timeline's sampler and the open loop's
// scheduler), summarize (summarize.go) and verify (verify.go). Validate
// checks a scenario and its Layout before any server starts.
//
// Stopping has two phases (as k6 does): the run context stops new
// operations and acquire waits at once, while an operation already inside
// its critical section finishes its writes and its release on a context the
// stop cannot cancel (bounded by a per-call timeout), so stopping never
// manufactures a violation. A client whose release call has not returned
// when the grace period ends is counted (counters.hung_releases) and no
// longer waited for.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// Grace is how long a stopping scenario lets operations already inside a
// critical section finish before their work and Redis calls are cut short.
var Grace = 10 * time.Second

// A scenario whose operations keep failing (a server gone, a wrong
// password) stops with a clear error instead of measuring failures: after
// MaxConsecutiveErrors failed operations in a row across all clients, or
// after MaxErrorStreak of nothing but failures (at least 10 of them).
var (
	MaxConsecutiveErrors int64 = 1000
	MaxErrorStreak             = 5 * time.Second
)

// Node is one Redis server to run against: drivers.Endpoint, the one type
// of connection settings.
type Node = drivers.Endpoint

// Scenario is one cell of a run's matrix: its Spec, what is measured,
// and its Env, where and how this process runs it.
//
// The rule for which field goes where: a field is in Spec when it changes
// what the scenario measures or what its result says about it (the
// result's identity, params and figures): it comes from the plan (flags,
// a scenario file), and is the same in every process and on every
// machine that runs the scenario. A field is in Env when it says where
// the scenario runs (the servers lockbench started, the baseline
// backends, the replication link a failover cuts, the layout's name),
// how this process takes part in it (a segment's sync, follower role and
// client offset; a --procs child's number and kill hook), or what the
// caller attaches to it (Prometheus, the progress callback, the history
// file, keeping the keys). The same Spec run with another Env measures the
// same thing. The Redis nodes themselves (Sentinels included:
// Node.Sentinels, Node.SentinelPassword) are Run's nodes argument.
type Scenario struct {
	Spec
	Env Env
}

// totalClients is the scenario's clients in every segment together:
// Env.ScenarioClients, or Spec.Clients when that is 0 (a scenario of this
// process alone). A mix's roles are spread over them (Spec.Mix).
func (sc *Scenario) totalClients() int {
	if sc.Env.ScenarioClients > 0 {
		return sc.Env.ScenarioClients
	}
	return sc.Clients
}

// Spec is what a scenario measures (see Scenario for the rule).
type Spec struct {
	Strategy string
	Driver   string
	Workload string
	Retry    *retry.Policy
	// Clients is the number of concurrent workers (>= 1); in an open
	// loop, the most operations in progress at once. With ClientShape,
	// the most clients the ramp reaches (MaxClientsOf).
	Clients int
	// ClientShape, when set, is a client ramp (--clients ramp:...,
	// stages:...), closed loop only: the number of clients running
	// operations over time, on the scenario's clock (warm-up included);
	// worker i runs while ClientsAt(ClientShape, t) > i (ramp.go). The
	// result's params record it as clients_shape, each timeline entry
	// its clients, and Clients is its maximum. nil: Clients throughout.
	ClientShape *arrival.Shape
	// Duration is the measured window after the warm-up; the scenario may
	// end earlier when the workload is done (stock sold out). Must be > 0.
	Duration time.Duration
	// Warmup runs before the measured window; its figures are discarded.
	Warmup time.Duration
	// TTL is the lock lease time.
	TTL time.Duration
	// AcquireTimeout bounds one acquire including retries; 0: no bound.
	AcquireTimeout time.Duration
	// Think is each client's think time (--think), closed loop only
	// (Validate refuses it with Rate > 0): after each of its operations
	// ends, and before its next begins, a client waits a time drawn from
	// Think with a random source of its own (seeded from Seed: the same
	// seed, the same waits), outside any lock and outside every latency.
	// A stop during the wait ends the client at once. The zero Dist (and
	// any fixed 0) is no think time; the result's params record a think
	// time (think) only when one is given.
	Think workloads.Dist
	// Background, when set, is non-lock traffic on the lock's servers
	// (--background; see Background): from the scenario's start, warm-up
	// included, to its stop, on connections and keys of its own (under
	// the run's prefix, deleted with the scenario's), its figures the
	// measured window's (report.Scenario.Background). In a run of
	// execution segments the leading segment alone sends it. The
	// result's params record it (background) only when given; Validate
	// refuses it on Sentinel and Cluster layouts and for a lock kept
	// outside Redis.
	Background *Background
	// Params are the settings every workload takes (Work; Guard and
	// Segments are filled in from Guard and the strategy).
	Params workloads.Params
	// Options are the values of the strategy's and the workload's own
	// parameters (strategies.ParamsOf, workloads.ParamsOf), by name: each
	// plugin takes the ones it declared, defaults for those missing, and
	// the result's params record them. nil: every default.
	Options registry.Values
	// Seed seeds each worker's random source (worker i uses seed, i).
	Seed uint64
	// Guard is the workload's write guard: "auto" (or "") takes the one the
	// strategy asks for (fencing: fence; multilevel: cas; redis-guard and
	// sql-guard: decr, on the counter workloads incr) where the workload
	// runs it, else none; "none", "cas" or "decr" force one, on the
	// workloads that run it (workloads.Guards: cas on flash-sale, hot-key,
	// long-task and nested, decr on flash-sale). The result's params
	// record the guard in force.
	Guard string
	// Resource is where the workload's protected data lives (--resource):
	// "" or ResourceLock, on the lock's first node, beside the lock keys;
	// ResourceSeparate, on a Redis server of its own (Env.Resource), the
	// storage service of Kleppmann's "How to do distributed locking"
	// (2016): the lock's servers hold only the locks, and with the fence
	// guard the resource's own scripts refuse a fencing token below the
	// highest they saw and count each refusal, which the result's figures
	// give as resource_rejected. The result's params record it (resource)
	// when separate.
	Resource string
	// Slowdown, for tests of regression gates only, adds this much to
	// every critical section (Params.Work must be a fixed duration) without
	// recording it in the result's params: the same scenario, slower.
	Slowdown time.Duration
	// SlowdownShare, for tests of regression gates only (0 < share < 1),
	// makes each client wait, after every completed operation and outside
	// it, share/(1-share) of that operation's time (summed, and slept once
	// 1 ms is owed): a client's ops/s falls by share (10 % for 0.1) when
	// clients do not wait for one another (lock-cycle --own-keys);
	// latencies are unchanged. Unrecorded, as Slowdown.
	SlowdownShare float64
	// LoadSample, when > 0, samples the servers' command rate at this
	// interval during the run (ServerLoad in the result).
	LoadSample time.Duration
	// ConstantToken makes every lease store the same value ("1") instead
	// of a random token (claim S4; naive, atomic, watchdog, redlock).
	ConstantToken bool
	// Rate, when > 0, makes the run an open loop at Rate ops/s: operations
	// start at intended times (Poisson arrivals when Poisson is set) on up
	// to Clients workers; latency is measured from the intended start, and
	// an arrival that finds no free worker within DropAfter (default 100 ms)
	// is dropped. 0: closed loop.
	Rate      float64
	Poisson   bool
	DropAfter time.Duration
	// Shape, when set (with Rate > 0), is the open loop's arrival rate
	// over time (arrival.Parse: a ramp, a sine, k6-style stages), its
	// clock the scenario's (warm-up included); Rate is then its mean over
	// the measured window (the result's offered_rate) and the result's
	// params record it as rate_shape. nil: a constant Rate.
	Shape *arrival.Shape
	// Faults to inject; the servers they act on are Env.Servers, and the
	// proxies some act through are the faults package's
	// (faults.ProxyNodes, faults.ReplLink).
	Faults []faults.Spec
	// Interval is the length of each timeline entry (--interval): 0 takes
	// DefaultInterval (1 s); Validate refuses less than MinInterval
	// (100 ms). The result's params record it as interval_s.
	Interval time.Duration
	// Client holds the Redis driver's settings (--pool-size,
	// --dial-timeout, --read-timeout, --write-timeout); zero fields take
	// the defaults.
	Client Client
	// Liveness is the liveness oracle's read interval (internal/liveness):
	// 0 takes liveness.DefaultInterval (5 ms), a negative value turns the
	// oracle off (the result then has no liveness figures).
	Liveness time.Duration
	// ErrorStreak stops the scenario, keeping what it measured (stop
	// reason "aborted"), after this long of nothing but failed operations
	// (at least 10), or MaxConsecutiveErrors of them in a row: 0 takes
	// MaxErrorStreak (5 s), a negative value turns the guard off (outage
	// experiments: the run goes on for its duration).
	ErrorStreak time.Duration
	// VerifyAcquire is the ownership check after acquire (--verify-acquire):
	// each client reads the lock key after every VerifyAcquire-th granted
	// exclusive acquire and counts violations.false_acquires when it does
	// not hold the lease's token; 0: off (the zero Spec's). Where the key's
	// value is no single server's token it is not run: a constant token,
	// a lock outside Redis (zk, etcd), a lock on several masters
	// (Redlock). The result's params record it as verify_acquire when not
	// DefaultVerifyAcquire.
	VerifyAcquire int
	// Mix, when set, gives the clients roles (--mix; workloads.Mix): a
	// fixed share of the scenario's clients are readers, writers or
	// nested holders for the whole run (Mix.Assign over every segment's
	// clients), and the result has each role's figures (report.Scenario.
	// Roles). Validate refuses a role the strategy or the workload does
	// not run and a role that gets no client. The result's params record
	// it (mix) only when given. nil: every client writes.
	Mix *workloads.Mix
}

// Where the workload's data lives (Spec.Resource).
const (
	ResourceLock     = "lock"     // on the lock's first node (the default)
	ResourceSeparate = "separate" // on a Redis server of its own (Env.Resource)
)

// ResourceRejected is the workload figure of the separate resource's
// refusals: the fence guard's reads and writes whose fencing token was
// below the highest the resource had seen, counted by the resource's own
// scripts (workloads.Env.Rejections) and read at the end check.
const ResourceRejected = "resource_rejected"

// separate reports whether the workload's data lives on a separate
// resource.
func (s Spec) separate() bool { return s.Resource == ResourceSeparate }

// DefaultVerifyAcquire is the command line's --verify-acquire: one
// granted acquire in 100 of each client is checked, about 0.01 reads per
// operation (one GET each, HEXISTS besides for a hash lock).
const DefaultVerifyAcquire = 100

// Env is where and how this process runs a scenario (see Scenario for
// the rule). The zero Env runs it alone, on the nodes Run is given, with
// no server lockbench can act on, nothing attached, and its keys deleted
// afterwards.
type Env struct {
	// Topology names the server layout, for the result file.
	Topology string
	// Servers are the servers the faults act on: the scenario's
	// topology, replica included (nil with --addr). For a failover,
	// Servers[0] is the master and Servers[1] its replica.
	Servers []*topology.Server
	// ReplLink is the replica's replication link on a Sentinel layout
	// (faults.NewReplLink, handed to topology.StartSentinel), which the
	// failover fault cuts; nil: none.
	ReplLink *faults.ReplLink
	// Backends are the servers of the baseline strategies, besides the
	// Redis nodes: Backends.MySQL for sql-rowlock and sql-guard (their data
	// lives there; Redis is not used), Backends.ZooKeeper for zk,
	// Backends.Etcd for etcd (their data stays in Redis).
	// topology.StartMariaDB, StartZooKeeper and StartEtcd start them;
	// strategies.InfoOf(name).Backend says which a strategy needs.
	Backends strategies.Backends
	// BackendServer is the server of Backends the scenario's strategy uses
	// when lockbench started it (StartBackend): its process's CPU time
	// (user + system) is read at the start and end of the cost window,
	// beside the Redis nodes' INFO cpu, into one raw.cost entry of its
	// own (report.ServerCost without command counts). nil: a server
	// lockbench did not start, whose CPU it cannot read (not measured).
	BackendServer *topology.Server
	// Resource is the separate resource's Redis server (Spec.Resource
	// ResourceSeparate): one standalone server that holds the workload's
	// data and no lock key, started by lockbench (bound to 127.0.0.1,
	// with a password of its own) or given with --resource-addr. Its
	// commands count in the scenario's cost. nil: none.
	Resource *Node
	// KeepKeys leaves the scenario's keys in Redis after the run.
	KeepKeys bool
	// Prom, when set, publishes the scenario's figures as it runs.
	Prom *export.Prom
	// Number is the scenario's number in the run's plan, from 1: the
	// scenario label of its Prometheus series (export.Labels) and its
	// number in the history file. 0: none given.
	Number int
	// OnSecond, when set, is called with each whole interval of the
	// measured window's timeline as the sampler reads it (from the
	// sampler's goroutine; it must not block). Live progress displays use
	// it.
	OnSecond func(report.Second)
	// History, when set, keeps this process's critical-section history
	// (internal/history): every section of every worker, warm-up
	// included, is added to it as one scenario at the scenario's end,
	// with the Redis server's clock offset measured (TIME round trips)
	// before and after the run. nil: no history, no cost.
	History *history.Writer
	// Sync, when set, makes the scenario one execution segment of several
	// processes (internal/segment): the clock starts at Sync.Start's
	// moment, common to every segment, and after the measured window
	// Sync.End pools the workload's acknowledged counts (workloads.Pooled)
	// and, for the leader, waits for every segment to finish before the
	// end check. nil: a scenario of this process alone.
	Sync Sync
	// Follower marks a follower segment (2..N): the leader writes the
	// workload's data and checks and deletes it, so a follower writes no
	// data in Setup, runs no end check (its result has no figures and no
	// end-check violations; stuck locks are the leader's too) and deletes
	// no key.
	Follower bool
	// ClientOffset is the number of the scenario's clients that other
	// segments run before this one's (segment.Offset): client i here is
	// client ClientOffset+i of the whole scenario, for its random seed
	// and its owner name, so that no two processes share one.
	ClientOffset int
	// ScenarioClients is the scenario's clients in every segment together
	// (the roles of Spec.Mix are spread over them); 0: Spec.Clients (a
	// scenario of this process alone).
	ScenarioClients int
	// Proc is this process's number among the children of lockbench run
	// --procs (1-based; 0: not such a child): the proc-kill fault naming
	// it is armed here (faults.Env.Proc). BeforeKill, when set, runs right
	// before that fault's SIGKILL.
	Proc       int
	BeforeKill func()
	// Shared marks a scenario run at the same time as others on the same
	// servers in this process (a concurrent scenario file): its result's
	// cost is marked shared (report.Raw.SharedCost: no cost per operation)
	// and its measured window's wall-clock times are recorded
	// (report.Scenario.MeasuredAt).
	Shared bool
}

// Sync is how one execution segment meets the other processes of its
// scenario (internal/segment implements it with a barrier in Redis).
type Sync interface {
	// Start blocks until every segment is ready and returns the moment,
	// on the local clock, at which all start the scenario's clock.
	// Errors: a segment missing at the timeout, a cancelled ctx.
	Start(ctx context.Context) (time.Time, error)
	// End reports this segment's end with its acknowledged counts and
	// returns the sums over every segment, after all have ended (the
	// leader waits; a follower returns at once with nil).
	End(ctx context.Context, counts map[string]int64) (map[string]int64, error)
}

// Client is the Redis driver's settings for a scenario. A zero field
// takes its default: PoolSize clients + 4, the timeouts
// drivers.DefaultTimeout (5 s). drivers.Options says what each becomes
// in go-redis and rueidis.
type Client struct {
	PoolSize                               int
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
}

// options is c as drivers.Options for a scenario of clients workers.
func (c Client) options(n Node, clients int) drivers.Options {
	pool := c.PoolSize
	if pool <= 0 {
		pool = clients + 4
	}
	return drivers.Options{Endpoint: n, PoolSize: pool, DialTimeout: c.DialTimeout,
		ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout}
}

// params adds the settings given (non-zero) to m: pool_size,
// dial_timeout, read_timeout, write_timeout.
func (c Client) params(m map[string]string) {
	if c.PoolSize > 0 {
		m["pool_size"] = strconv.Itoa(c.PoolSize)
	}
	for k, d := range map[string]time.Duration{"dial_timeout": c.DialTimeout, "read_timeout": c.ReadTimeout, "write_timeout": c.WriteTimeout} {
		if d > 0 {
			m[k] = d.String()
		}
	}
}

// ParamsMap is the scenario's parameters as strings, for result files:
// the settings every scenario has, and the values of the strategy's and
// the workload's own parameters (keys with underscores: wait_timeout).
func (s Spec) ParamsMap() map[string]string {
	m := map[string]string{
		"ttl":             s.TTL.String(),
		"work":            s.Params.Work.String(),
		"acquire_timeout": s.AcquireTimeout.String(),
		"duration":        s.Duration.String(),
		"warmup":          s.Warmup.String(),
		"seed":            strconv.FormatUint(s.Seed, 10),
		"guard":           s.guard(),
		"token":           map[bool]string{false: "random", true: "constant"}[s.ConstantToken],
		"interval_s":      strconv.FormatFloat(s.interval().Seconds(), 'f', -1, 64),
	}
	if s.Shape != nil && s.Rate > 0 { // absent: a constant rate or a closed loop
		m["rate_shape"] = s.Shape.String()
	}
	if s.ClientShape != nil { // absent: a constant client count
		m["clients_shape"] = s.ClientShape.String()
	}
	if s.Params.Release == workloads.ReleaseCaller { // absent: detached
		m["release"] = s.Params.Release
	}
	if s.VerifyAcquire != DefaultVerifyAcquire { // absent: the default
		m["verify_acquire"] = strconv.Itoa(s.VerifyAcquire)
	}
	if !s.Think.IsZero() { // absent: no think time
		m["think"] = s.Think.String()
	}
	if s.separate() { // absent: the data beside the locks
		m["resource"] = ResourceSeparate
	}
	if s.Background != nil { // absent: no background traffic
		m["background"] = s.Background.String()
	}
	if s.Mix != nil { // absent: no client roles
		m["mix"] = s.Mix.String()
	}
	s.Client.params(m) // only the driver settings given: a default adds no key
	for _, ps := range [][]registry.Param{strategies.ParamsOf(s.Strategy), workloads.ParamsOf(s.Workload)} {
		v := registry.Pick(ps, s.Options)
		for _, p := range ps {
			m[p.ResultKey()] = registry.Format(v[p.Name])
		}
	}
	return m
}

// interval is the timeline's interval in force: Interval, or
// DefaultInterval for 0.
func (s Spec) interval() time.Duration {
	if s.Interval <= 0 {
		return DefaultInterval
	}
	return s.Interval
}

// guard is the write guard in force: Guard (Validate refuses one the
// workload does not run), or with "auto" (or "") the one the workload runs
// for the strategy's own (strategies.Info.Guard; see workloads.AutoGuard):
// none where the workload writes no data, incr for a lock-free strategy
// on a counter workload.
func (s Spec) guard() string {
	if s.Guard != "" && s.Guard != "auto" {
		return s.Guard
	}
	return workloads.AutoGuard(s.Workload, strategies.InfoOf(s.Strategy).Guard)
}

// Open opens one driver per node, with a pool sized for clients, and
// checks that each node answers PING within 5 s. On error every driver
// opened is closed; the error names the unreachable node.
func Open(ctx context.Context, driver string, nodes []Node, clients int) ([]drivers.Driver, error) {
	return OpenClient(ctx, driver, nodes, clients, Client{})
}

// OpenClient is Open with the driver settings c (zero fields: defaults).
func OpenClient(ctx context.Context, driver string, nodes []Node, clients int, c Client) ([]drivers.Driver, error) {
	var out []drivers.Driver
	closeAll := func() {
		for _, d := range out {
			d.Close()
		}
	}
	for _, n := range nodes {
		d, err := drivers.Open(driver, c.options(n, clients))
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("cannot connect to Redis at %s with %s: %w", n.Addr, driver, err)
		}
		out = append(out, d)
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = d.Do(pctx, "PING")
		cancel()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("cannot reach Redis at %s with %s: %w", n.Addr, driver, err)
		}
	}
	return out, nil
}

// Run executes sc against nodes, keeping every key it writes under prefix,
// and deletes those keys afterwards. When ctx is cancelled (Ctrl-C) it
// stops early and still returns the figures measured, with StopReason
// "interrupted". Errors: a connection, setup or verification failure, or
// a run that stopped because its operations only failed (StopReason
// "aborted"; the figures measured are returned with it), or what
// Validate reports.
//
// Its phases are prepare, measure, summarize and verify; what each opens
// is closed when Run returns, last opened first.
func Run(ctx context.Context, sc Scenario, nodes []Node, prefix string) (report.Scenario, error) {
	r := &run{sc: sc, nodes: nodes, prefix: prefix, ctx: ctx, bg: context.WithoutCancel(ctx)}
	r.out = report.Scenario{
		Strategy: sc.Strategy, Driver: sc.Driver, Workload: sc.Workload,
		Retry: sc.Retry.String(), Clients: sc.Clients, Params: sc.ParamsMap(),
	}
	defer r.close()
	if err := validate(sc, nodes); err != nil {
		return r.out, err
	}
	if err := r.prepare(); err != nil {
		return r.out, err
	}
	r.clockBefore = r.historyClock()
	if err := r.measure(); err != nil {
		return r.out, err
	}
	if err := r.endSegment(); err != nil {
		return r.out, err
	}
	all := r.summarize()
	if err := r.writeHistory(); err != nil {
		return r.out, err
	}
	err := r.verify(all)
	if r.out.StopReason == "aborted" {
		// Stopped on failures alone: what was measured is kept, with why.
		aerr := r.abortError()
		r.out.StopError = aerr.Error()
		if err != nil {
			r.out.VerifyError = err.Error()
		}
		return r.out, aerr
	}
	return r.out, err
}

// endSegment, for an execution segment (Sync set), reports the end of
// this segment's measured window with its acknowledged counts and, on the
// leader, sets the workload's counts to the sums over every segment once
// all have ended, so that the end check covers the whole run.
func (r *run) endSegment() error {
	if r.sc.Env.Sync == nil {
		return nil
	}
	var counts map[string]int64
	pooled, ok := r.wl.(workloads.Pooled)
	if ok {
		counts = pooled.Counts()
	}
	sums, err := r.sc.Env.Sync.End(r.bg, counts)
	if err != nil {
		return err
	}
	if ok && sums != nil && !r.sc.Env.Follower {
		pooled.SetCounts(sums)
	}
	return nil
}

// StartBackend starts the server a baseline strategy needs besides Redis
// (strategies.InfoOf(name).Backend) on a free loopback port and returns
// it with the Backends to put in Env.Backends; stop it with Stop when
// the scenarios are done (KillAll and the parent-death signal also end
// it). Errors: topology.ErrNoMariaDB, ErrNoZooKeeper or ErrNoEtcd when the
// server is not installed (skip the strategy), a start failure, or an
// unknown backend.
func StartBackend(ctx context.Context, kind strategies.Backend) (*topology.Server, strategies.Backends, error) {
	var b strategies.Backends
	var s *topology.Server
	var err error
	switch kind {
	case strategies.MariaDB:
		if s, err = topology.StartMariaDB(ctx); err == nil {
			b.MySQL = s.MySQLDSN()
		}
	case strategies.ZooKeeper:
		if s, err = topology.StartZooKeeper(ctx); err == nil {
			b.ZooKeeper, b.ZooKeeperAuth = []string{s.Addr}, s.ZooKeeperAuth()
		}
	case strategies.Etcd:
		if s, err = topology.StartEtcd(ctx); err == nil {
			b.Etcd, b.EtcdUser, b.EtcdPassword = []string{s.EtcdEndpoint()}, topology.EtcdUser, s.Password
		}
	default:
		err = fmt.Errorf("engine: no server to start for backend %q", kind)
	}
	return s, b, err
}

// Missing reports whether err says a baseline server is not installed.
func Missing(err error) bool {
	return errors.Is(err, topology.ErrNoMariaDB) || errors.Is(err, topology.ErrNoZooKeeper) || errors.Is(err, topology.ErrNoEtcd)
}

// arrivals is the open loop's arrival shape: Shape, or a constant Rate.
func (s Spec) arrivals() *arrival.Shape {
	if s.Shape != nil {
		return s.Shape
	}
	return arrival.Constant(s.Rate)
}
