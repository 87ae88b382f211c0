// Package engine runs one scenario — a strategy, a driver, a workload and a
// retry policy — as a closed loop: --clients goroutines, each starting its
// next operation as soon as the last one ends, for --warmup then
// --duration, or until the workload has nothing left to do. Figures from
// the warm-up are discarded; safety counts cover the whole run.
//
// Stopping has two phases (as k6 does): the run context stops new
// operations and acquire waits at once, while an operation already inside
// its critical section finishes its writes and its release on a context the
// stop cannot cancel (bounded by a per-call timeout), so stopping never
// manufactures a violation.
package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/export"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/redisadmin"
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

// Node is one Redis server to run against.
type Node struct {
	Addr     string
	Password string
	// Username, DB and TLS are as in drivers.Options: an ACL user, the
	// database to SELECT, and TLS (nil: plain TCP).
	Username string
	DB       int
	TLS      *tls.Config
	// Sentinels, when set, make the client find the master of MasterName
	// through them and follow failovers (Addr is then a label).
	Sentinels  []string
	MasterName string
	// SentinelPassword authenticates to the Sentinels (not the master).
	SentinelPassword string
	// Cluster makes the client a Redis Cluster client seeded with Addr
	// and Seeds.
	Cluster bool
	Seeds   []string
}

// Scenario is one cell of a run's matrix.
type Scenario struct {
	Strategy string
	Driver   string
	Workload string
	Retry    *retry.Policy
	// Clients is the number of concurrent closed-loop workers (>= 1).
	Clients int
	// Duration is the measured window after the warm-up; the scenario may
	// end earlier when the workload is done (stock sold out). Must be > 0.
	Duration time.Duration
	// Warmup runs before the measured window; its figures are discarded.
	Warmup time.Duration
	// TTL is the lock lease time.
	TTL time.Duration
	// AcquireTimeout bounds one acquire including retries; 0: no bound.
	AcquireTimeout time.Duration
	Params         workloads.Params
	// Seed seeds each worker's random source (worker i uses seed, i).
	Seed uint64
	// Guard is the workload's write guard: "auto" (or "") takes the one the
	// strategy asks for (fencing: fence; multilevel: cas), else none;
	// "none", "cas" or "decr" force one.
	Guard string
	// Segments for `segmented` (default 8); Instances for `multilevel`
	// (default 4); WaitTimeout for `wait-replicas` (default 50 ms).
	Segments, Instances int
	WaitTimeout         time.Duration
	// LoadSample, when > 0, samples the servers' command rate at this
	// interval during the run (ServerLoad in the result).
	LoadSample time.Duration
	// ConstantToken makes every lease store the same value ("1") instead
	// of a random token (claim S4; naive, atomic, watchdog, redlock).
	ConstantToken bool
	// Topology names the server layout, for the result file.
	Topology string
	// KeepKeys leaves the scenario's keys in Redis after the run.
	KeepKeys bool
	// Rate, when > 0, makes the run an open loop at Rate ops/s: operations
	// start at intended times (Poisson arrivals when Poisson is set) on up
	// to Clients workers; latency is measured from the intended start, and
	// an arrival that finds no free worker within DropAfter (default 100 ms)
	// is dropped. 0: closed loop.
	Rate      float64
	Poisson   bool
	DropAfter time.Duration
	// Prom, when set, publishes the scenario's figures as it runs.
	Prom *export.Prom
	// Faults to inject, and the servers they act on (the scenario's
	// topology, replica included; nil with --addr).
	Faults  []faults.Spec
	Servers []*topology.Server
	// Sentinels and ReplLink describe a Sentinel layout (for a failover
	// through Sentinel).
	Sentinels []string
	ReplLink  *faults.Proxies
	// OnSecond, when set, is called with each whole second of the measured
	// window's timeline as the sampler reads it (from the sampler's
	// goroutine; it must not block). Live progress displays use it.
	OnSecond func(report.Second)
	// Backends are the servers of the baseline strategies, besides the
	// Redis nodes: Backends.MySQL for sql-rowlock and sql-guard (their data
	// lives there; Redis is not used), Backends.ZooKeeper for zk,
	// Backends.Etcd for etcd (their data stays in Redis).
	// topology.StartMariaDB, StartZooKeeper and StartEtcd start them;
	// strategies.InfoOf(name).Backend says which a strategy needs.
	Backends strategies.Backends
}

// ParamsMap is the scenario's parameters as strings, for result files.
func (s Scenario) ParamsMap() map[string]string {
	return map[string]string{
		"ttl":             s.TTL.String(),
		"work":            s.Params.Work.String(),
		"stock":           strconv.FormatInt(s.Params.Stock, 10),
		"skus":            strconv.Itoa(s.Params.SKUs),
		"acquire_timeout": s.AcquireTimeout.String(),
		"duration":        s.Duration.String(),
		"warmup":          s.Warmup.String(),
		"seed":            strconv.FormatUint(s.Seed, 10),
		"guard":           s.Guard,
		"segments":        strconv.Itoa(s.Segments),
		"instances":       strconv.Itoa(s.Instances),
		"read_ratio":      strconv.FormatFloat(s.Params.ReadRatio, 'g', -1, 64),
		"keys":            strconv.Itoa(s.Params.Keys),
		"zipf":            strconv.FormatFloat(s.Params.Zipf, 'g', -1, 64),
		"nested_second":   strconv.FormatBool(s.Params.NestedSecond),
		"own_keys":        strconv.FormatBool(s.Params.OwnKeys),
		"token":           map[bool]string{false: "random", true: "constant"}[s.ConstantToken],
	}
}

// Open opens one driver per node, with a pool sized for clients, and
// checks that each node answers PING within 5 s. On error every driver
// opened is closed; the error names the unreachable node.
func Open(ctx context.Context, driver string, nodes []Node, clients int) ([]drivers.Driver, error) {
	var out []drivers.Driver
	closeAll := func() {
		for _, d := range out {
			d.Close()
		}
	}
	for _, n := range nodes {
		d, err := drivers.Open(driver, drivers.Options{Addr: n.Addr, Username: n.Username, Password: n.Password,
			DB: n.DB, TLS: n.TLS, PoolSize: clients + 4,
			Sentinels: n.Sentinels, MasterName: n.MasterName, SentinelPassword: n.SentinelPassword,
			Cluster: n.Cluster, Seeds: n.Seeds})
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
// "interrupted". Errors: a connection, setup or verification failure.
func Run(ctx context.Context, sc Scenario, nodes []Node, prefix string) (report.Scenario, error) {
	out := report.Scenario{
		Strategy: sc.Strategy, Driver: sc.Driver, Workload: sc.Workload,
		Retry: sc.Retry.String(), Clients: sc.Clients, Params: sc.ParamsMap(),
	}
	var proxies *faults.Proxies
	for _, f := range sc.Faults {
		if f.Name != "latency" || proxies != nil {
			continue
		}
		if len(nodes[0].Sentinels) > 0 {
			return out, errors.New("the latency fault cannot stand between clients and a Sentinel layout")
		}
		var ups []string
		for _, n := range nodes {
			ups = append(ups, n.Addr)
		}
		var err error
		if proxies, err = faults.StartProxies(ups); err != nil {
			return out, fmt.Errorf("latency proxies: %w", err)
		}
		defer proxies.Close()
		proxied := make([]Node, len(nodes))
		for i, n := range nodes {
			proxied[i] = n
			proxied[i].Addr = proxies.Addr(i)
			if n.TLS != nil && n.TLS.ServerName == "" {
				// TLS runs through the proxy: check the certificate
				// against the server's name, not the proxy's.
				proxied[i].TLS = n.TLS.Clone()
				proxied[i].TLS.ServerName, _, _ = net.SplitHostPort(n.Addr)
			}
		}
		nodes = proxied
	}
	ds, err := Open(ctx, sc.Driver, nodes, sc.Clients)
	if err != nil {
		return out, err
	}
	var switches []*drivers.Switch
	if len(sc.Faults) > 0 { // a failover repoints the clients' drivers
		for i, d := range ds {
			sw := drivers.NewSwitch(d)
			switches = append(switches, sw)
			ds[i] = sw
		}
	}
	defer func() {
		for _, d := range ds {
			d.Close()
		}
	}()
	// Setup, verification and clean-up must finish even after Ctrl-C.
	bg := context.WithoutCancel(ctx)
	defer func() {
		if sc.KeepKeys {
			return
		}
		cctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		for _, d := range ds {
			_, _ = redisadmin.DeleteKeys(cctx, d, prefix)
		}
	}()

	if !strategies.RunsWith(sc.Strategy, sc.Workload) {
		return out, fmt.Errorf("strategy %s does not run workload %s (it runs %s)", sc.Strategy, sc.Workload,
			strings.Join(strategies.InfoOf(sc.Strategy).Workloads, ", "))
	}
	if b := strategies.InfoOf(sc.Strategy).Backend; b != strategies.NoBackend && len(sc.Faults) > 0 {
		return out, fmt.Errorf("faults act on Redis servers and Redis locks; %s keeps its lock or data in %s", sc.Strategy, b)
	}
	locker, err := strategies.New(sc.Strategy, strategies.Config{
		Nodes: ds, TTL: sc.TTL, Segments: sc.Segments, Instances: sc.Instances, WaitTimeout: sc.WaitTimeout,
		ConstantToken: sc.ConstantToken,
		Backends:      sc.Backends, Clients: sc.Clients,
	})
	if err != nil {
		return out, err
	}
	if c, ok := locker.(io.Closer); ok { // baseline clients: sessions, pools
		defer c.Close()
	}
	if rs, ok := locker.(strategies.RowStore); ok {
		out.Driver = "mysql" // the data path is github.com/go-sql-driver/mysql, not the Redis driver
		if !sc.KeepKeys {
			defer func() {
				cctx, cancel := context.WithTimeout(bg, 30*time.Second)
				defer cancel()
				_ = rs.DropRows(cctx)
			}()
		}
	}
	wl, err := workloads.New(sc.Workload)
	if err != nil {
		return out, err
	}
	params := sc.Params
	if sg, ok := locker.(strategies.Segmented); ok {
		params.Segments = sg.Segments()
	}
	params.Guard = sc.Guard
	if params.Guard == "" || params.Guard == "auto" {
		params.Guard = workloads.GuardNone
		if g, ok := locker.(strategies.Guarded); ok {
			params.Guard = g.Guard()
		}
	}
	out.Params["guard"] = params.Guard
	out.Params["segments"] = strconv.Itoa(max(params.Segments, 1))
	env := &workloads.Env{
		Data: ds[0], Locker: locker, Prefix: prefix, Params: params,
		AcquireTimeout: sc.AcquireTimeout, Clients: sc.Clients, Cluster: nodes[0].Cluster,
		QuietIO: strategies.InfoOf(sc.Strategy).Backend == strategies.NoBackend &&
			!strategies.Blocks(locker) && !strategies.Blocks(strategies.ReadSide(locker)),
	}
	if sc.Prom != nil {
		env.Obs = sc.Prom.For(sc.Strategy, out.Driver, sc.Workload)
		env.Obs.TTL(sc.TTL)
	}
	var hub *strategies.Hub
	if sc.Retry.NeedsNotifier() {
		hctx, hcancel := context.WithCancel(bg)
		defer hcancel()
		if hub, err = strategies.NewHub(hctx, ds[0], prefix); err != nil {
			return out, fmt.Errorf("pubsub retry: %w", err)
		}
		env.Released = hub.Published
		_, hub.All = locker.(strategies.WakesAll)
	}
	sctx, cancel := context.WithTimeout(bg, 30*time.Second)
	err = wl.Setup(sctx, env)
	cancel()
	if err != nil {
		return out, fmt.Errorf("%s setup: %w", sc.Workload, err)
	}

	// Every client's recorders exist before the clock starts: allocating
	// and zeroing about 0.5 MB of histograms per client is not the run's
	// work, and must not count in its measured window or its CPU time.
	recs := make([]*metrics.Recorder, sc.Clients)
	scratch := make([]*metrics.Recorder, sc.Clients)
	for i := range recs {
		recs[i] = metrics.NewRecorder()
		if sc.Warmup > 0 { // warm-up figures go to a scratch recorder
			scratch[i] = metrics.NewRecorder()
		}
	}
	// Collect the garbage of earlier scenarios (and of this one's set-up)
	// before the clock starts, as Go's testing package does before each
	// benchmark: otherwise this scenario's window pays for sweeping their
	// heap (each client's histograms are about 0.5 MB).
	runtime.GC()
	before, err := commandStats(bg, ds)
	if err != nil {
		return out, fmt.Errorf("INFO commandstats: %w", err)
	}
	var ruBefore syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ruBefore)
	cpuStart := time.Now()

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// Phase two of a stop: Grace after the run context ends, work still in a
	// critical section is interrupted.
	hard, hardStop := context.WithCancel(bg)
	defer hardStop()
	env.Hard = hard
	go func() {
		select {
		case <-runCtx.Done():
		case <-hard.Done():
			return
		}
		t := time.NewTimer(Grace)
		defer t.Stop()
		select {
		case <-t.C:
			hardStop()
		case <-hard.Done():
		}
	}()
	errDuration := errors.New("duration")
	start := time.Now()
	warmEnd := start.Add(sc.Warmup)
	timer := time.AfterFunc(sc.Warmup+sc.Duration, func() { stop(errDuration) })
	defer timer.Stop()
	loadDone := make(chan []float64, 1)
	if sc.LoadSample > 0 {
		go func() { loadDone <- redisadmin.SampleLoad(runCtx, ds, sc.LoadSample) }()
	} else {
		loadDone <- nil
	}

	var streak errStreak // consecutive failed operations, all clients
	var lastErr atomic.Value
	abort := func(err error) {
		lastErr.CompareAndSwap(nil, err)
		stop(errAborted)
	}
	var inj *faults.Injector
	if len(sc.Faults) > 0 {
		inj = faults.New(sc.Faults, faults.Env{
			Servers: sc.Servers, Switches: switches, TTL: sc.TTL, CrashPoint: crashPoint(locker),
			Proxies: proxies, Sentinels: sc.Sentinels, ReplLink: sc.ReplLink,
			Stuck: func() (int64, error) {
				lk, ok := wl.(workloads.LockKeyer)
				if !ok {
					return -1, nil
				}
				cctx, cancel := context.WithTimeout(bg, 5*time.Second)
				defer cancel()
				return redisadmin.StuckLocks(cctx, ds, lk.LockKeys())
			},
			Open: func(addr, pw string) (drivers.Driver, error) {
				ds, err := Open(bg, sc.Driver, []Node{{Addr: addr, Password: pw}}, sc.Clients)
				if err != nil {
					return nil, err
				}
				return ds[0], nil
			},
		})
		env.Faults = inj
		inj.Start(runCtx)
	}
	// The timeline: workers count outcomes in their own slot, a sampler
	// reads the slots once a second.
	live := make([]liveSlot, sc.Clients)
	overlaps := func() int64 {
		if env.Oracle == nil {
			return 0
		}
		return env.Oracle.Overlaps()
	}
	smp := &sampler{slots: live, overlaps: overlaps, offset: sc.Warmup, onSecond: sc.OnSecond, scenarioStart: start}
	smpStop, smpDone := make(chan struct{}), make(chan struct{})
	go smp.run(smpStop, smpDone)
	var wg sync.WaitGroup
	var jobs chan time.Time
	var offered, dropped int64
	schedDone := make(chan struct{})
	if sc.Rate > 0 {
		jobs = make(chan time.Time)
		dropAfter := sc.DropAfter
		if dropAfter <= 0 {
			dropAfter = 100 * time.Millisecond
		}
		go func() {
			defer close(schedDone)
			offered, dropped = schedule(runCtx, NewPacer(start, sc.Rate, sc.Poisson, rand.New(rand.NewPCG(sc.Seed, 1<<40))), jobs, dropAfter)
		}()
	} else {
		close(schedDone)
	}
	for i := 0; i < sc.Clients; i++ {
		ws := &workerState{pcg: *rand.NewPCG(sc.Seed, uint64(i))}
		ws.rng = *rand.New(&ws.pcg)
		ws.w = workloads.Worker{ID: i, Env: env, Rng: &ws.rng, Backoff: sc.Retry.New(&ws.rng), Rec: recs[i]}
		w := &ws.w
		if sc.Warmup > 0 {
			w.Rec = scratch[i]
		}
		if hub != nil {
			w.Backoff = sc.Retry.NewNotified(hub, sc.TTL)
		}
		w.Gate = &strategies.Gate{}
		client := strategies.Client{ID: i, Owner: prefix + strconv.Itoa(i), Gate: w.Gate}
		if inj != nil {
			client.Hooks = inj
		}
		// Each client's context has a done channel of its own: a driver
		// call on it (without env.QuietIO) waits on that channel, and one
		// shared by every client would be a lock they all take on every
		// call (a select locks its channels).
		cctx, ccancel := context.WithCancel(runCtx)
		wctx := strategies.WithClient(cctx, client)
		wg.Add(1)
		go func(w *workloads.Worker, real *metrics.Recorder) {
			defer wg.Done()
			defer ccancel()
			loop(wctx, wl, w, real, warmEnd, func() { stop(workloads.ErrDone) }, &streak, abort, inj, jobs, &live[w.ID])
		}(w, recs[i])
	}
	wg.Wait()
	stop(nil)
	<-schedDone
	out.ServerLoad = summarizeLoad(<-loadDone, sc.LoadSample)
	end := time.Now()
	timer.Stop()
	close(smpStop)
	<-smpDone
	out.Timeline = smp.finish(end)
	hardStop()
	if sc.Rate > 0 {
		out.Loop = "open"
		out.OfferedRate = sc.Rate
		out.Dropped = dropped
		out.Offered = offered
	} else {
		out.Loop = "closed"
	}
	if inj != nil {
		stop(nil) // faults not yet triggered stay unarmed
		out.Faults = inj.Finish()
	}
	// A server that went away leaves the cost unknown (zero), not the run.
	var ruAfter syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ruAfter)
	cpuWall := time.Since(cpuStart)
	after, afterErr := commandStats(bg, ds)

	total := metrics.NewRecorder()
	for _, r := range recs {
		total.Merge(r)
	}
	// Safety counts cover the warm-up too.
	all := total
	if sc.Warmup > 0 {
		all = metrics.NewRecorder()
		all.Merge(total)
		for _, r := range scratch {
			all.Merge(r)
		}
	}
	measureStart := start
	if sc.Warmup > 0 {
		measureStart = warmEnd
	}
	window := end.Sub(measureStart)
	if window < 0 {
		window = 0
	}
	out.DurationS = window.Seconds()
	out.Ops = total.Ops
	if window > 0 {
		out.OpsPerSec = float64(total.Ops) / window.Seconds()
	}
	out.LatencyMS = metrics.Summarize(total.Op)
	if enc, err := total.Op.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		out.LatencyHist = string(enc)
	}
	out.AcquireMS = metrics.Summarize(total.Acquire)
	out.ReleaseMS = metrics.Summarize(total.Release)
	if sc.Rate > 0 {
		s := metrics.Summarize(total.Service)
		out.ServiceMS = &s
	}
	out.HoldMS = metrics.Summarize(total.Hold)
	out.Counters = report.Counters{
		Attempts: total.Attempts, Failures: total.Failures, Timeouts: total.Timeouts,
		NotOwner: total.NotOwner, Rejected: total.Rejected, Reads: total.Reads, Errors: total.ErrorTotal(), ErrorsByKind: total.Errors, ErrorSamples: total.Samples,
	}
	perClient := make([]int64, len(recs))
	for i, r := range recs {
		perClient[i] = r.Ops
	}
	out.Fairness = report.Fairness{JainIndex: metrics.Jain(perClient), LongestWaitMS: out.AcquireMS.Max}
	if afterErr == nil {
		out.RedisCost = redisadmin.CostDelta(before, after, all.Ops)
	}
	// Client side: lockbench's own CPU over the run (warm-up included).
	clientCPU := rusageCPU(ruAfter) - rusageCPU(ruBefore)
	out.ClientCPU = report.ClientCPU{CPUSeconds: clientCPU.Seconds()}
	if all.Ops > 0 {
		out.ClientCPU.CPUMicrosPerOp = float64(clientCPU.Microseconds()) / float64(all.Ops)
	}
	if budget := cpuWall.Seconds() * float64(runtime.GOMAXPROCS(0)); budget > 0 {
		out.ClientCPU.BudgetShare = clientCPU.Seconds() / budget
		out.ClientCPU.ClientBound = out.ClientCPU.BudgetShare > 0.9
	}
	if sr, ok := locker.(strategies.StatsReporter); ok {
		out.StrategyStats = sr.Stats()
	}
	out.Topology = sc.Topology
	if hold := total.Hold.Mean(); hold > 0 && env.Locks > 0 && total.Ops > 0 {
		out.CeilingOpsPerSec = float64(min(sc.Clients, env.Locks)) / (hold / 1e6)
		out.Efficiency = out.OpsPerSec / out.CeilingOpsPerSec
	}
	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, workloads.ErrDone):
		out.StopReason = "done"
	case errors.Is(cause, errDuration):
		out.StopReason = "duration"
	case errors.Is(cause, errAborted):
		out.StopReason = "aborted"
	default:
		out.StopReason = "interrupted"
	}

	if out.StopReason == "aborted" {
		e, _ := lastErr.Load().(error)
		return out, fmt.Errorf("stopped: only failed operations for %d in a row (%v); the last: %w", streak.n.Load(), time.Duration(time.Now().UnixNano()-streak.since.Load()).Round(time.Millisecond), e)
	}
	vctx, vcancel := context.WithTimeout(bg, 30*time.Second)
	defer vcancel()
	res, err := wl.Verify(vctx, env)
	if err != nil {
		if inj == nil {
			return out, fmt.Errorf("%s verify: %w", sc.Workload, err)
		}
		// A fault may have left the data unreachable (a killed data node):
		// keep what was measured and say why the end check is missing.
		out.VerifyError = err.Error()
	}
	out.Figures = res.Figures
	out.Violations = report.Violations{
		Oversell:        res.Violations["oversell"],
		LostAckedWrites: res.Violations["lost_acked_writes"],
		LostUpdates:     res.Violations["lost_updates"],
		Overlap:         env.Oracle.Overlaps(),
		ForeignReleases: all.ForeignReleases,
		LostLeases:      all.LostLeases,
		WorkedAfterLoss: all.WorkedAfterLoss,
	}
	defer func() {
		v := out.Violations
		env.Obs.Violations(map[string]int64{"oversell": v.Oversell, "overlap": v.Overlap, "lost_updates": v.LostUpdates,
			"stuck_locks": v.StuckLocks, "foreign_releases": v.ForeignReleases, "lost_leases": v.LostLeases,
			"worked_after_loss": v.WorkedAfterLoss, "lost_acked_writes": v.LostAckedWrites})
	}()
	if lk, ok := wl.(workloads.LockKeyer); ok {
		if out.Violations.StuckLocks, err = redisadmin.StuckLocks(vctx, ds, lk.LockKeys()); err != nil {
			if inj == nil {
				return out, fmt.Errorf("stuck-lock check: %w", err)
			}
			out.VerifyError = strings.TrimPrefix(out.VerifyError+"; ", "; ") + "stuck-lock check: " + err.Error()
		}
	}
	return out, nil
}

func commandStats(bg context.Context, ds []drivers.Driver) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	return redisadmin.CommandStats(ctx, ds)
}

func rusageCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

var errAborted = errors.New("aborted")

func crashPoint(l strategies.Locker) string {
	if cp, ok := l.(strategies.CrashPointer); ok {
		return cp.CrashPoint()
	}
	return "after-acquire"
}

// errStreak counts failed operations in a row and when the run of
// failures began.
type errStreak struct {
	n     atomic.Int64
	since atomic.Int64 // unix ns of the first failure in the streak
}

// fail records one failure and reports whether the run should give up.
func (s *errStreak) fail() bool {
	n := s.n.Add(1)
	if n == 1 {
		s.since.Store(time.Now().UnixNano())
	}
	return n >= MaxConsecutiveErrors ||
		(n >= 10 && time.Duration(time.Now().UnixNano()-s.since.Load()) >= MaxErrorStreak)
}

// ok ends a streak (one load, no write, in the common case).
func (s *errStreak) ok() {
	if s.n.Load() != 0 {
		s.n.Store(0)
	}
}

// outcome is how the worker loop (and the timeline) count an operation.
type outcome int

const (
	outOK          outcome = iota // completed
	outCrashed                    // the client died at a crash point
	outSkipped                    // did nothing (sold out) or its write was rejected
	outDone                       // nothing left to do
	outTimeout                    // the acquire timed out
	outNotAcquired                // the lock was busy and the retry policy gave up
	outStopping                   // cancelled because the run is stopping
	outError                      // any other error (Redis, network)
)

// classify sorts an Op's error into its outcome: the one rule the worker
// loop and the timeline both count by.
func classify(ctx context.Context, err error) outcome {
	switch {
	case err == nil:
		return outOK
	case errors.Is(err, strategies.ErrCrashed):
		return outCrashed
	case errors.Is(err, workloads.ErrSkip), errors.Is(err, workloads.ErrRejected):
		return outSkipped
	case errors.Is(err, workloads.ErrDone):
		return outDone
	case errors.Is(err, strategies.ErrAcquireTimeout):
		return outTimeout
	case errors.Is(err, strategies.ErrNotAcquired):
		return outNotAcquired
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return outStopping
	}
	return outError
}

// workerState is one client's Worker and random source in one
// allocation, padded so that two clients' per-operation writes (the
// Worker's timestamps, the generator's state) never share a cache line:
// clients on two cores would otherwise slow each other down.
type workerState struct {
	w   workloads.Worker
	pcg rand.PCG
	rng rand.Rand
	_   [64]byte
}

// loop is one worker: it starts operations back to back until ctx ends
// (closed loop) or one per arrival taken from jobs (open loop), recording
// into a scratch recorder during the warm-up and into real afterwards,
// and counting each measured operation's outcome in live for the
// timeline. With jobs, each operation waits for its intended start time
// from the scheduler; Op latency is then measured from that intended time
// (coordinated omission corrected) and Service from the actual start.
func loop(ctx context.Context, wl workloads.Workload, w *workloads.Worker, real *metrics.Recorder, warmEnd time.Time, done func(), streak *errStreak, abort func(error), inj *faults.Injector, jobs <-chan time.Time, live *liveSlot) {
	var pause time.Duration
	// Timestamps are metrics.Now (one monotonic clock read each).
	warm := metrics.Mono(warmEnd)
	// next is the end of the operation just completed (closed loop): the
	// next one starts then, as nothing but this loop's bookkeeping comes
	// between them, and the clock is not read again for it. 0: read it.
	var next time.Duration
	for ctx.Err() == nil {
		var intended time.Duration
		if jobs != nil {
			select {
			case at := <-jobs:
				intended = metrics.Mono(at)
			case <-ctx.Done():
				return
			}
		}
		t0 := next
		if t0 == 0 || jobs != nil {
			t0 = metrics.Now()
		}
		next = 0
		if jobs == nil {
			intended = t0
		}
		if w.Rec != real && intended >= warm {
			w.Rec = real
		}
		w.Begin(t0)
		err := wl.Op(ctx, w)
		rec := w.Rec
		out := classify(ctx, err)
		if rec == real {
			live.count(out)
		}
		switch out {
		case outOK:
			rec.Ops++
			now := metrics.Now()
			rec.Observe(metrics.Op, now-intended)
			if jobs != nil {
				rec.Observe(metrics.Service, now-t0)
			}
			next = now
			w.Env.Obs.Op()
		case outCrashed:
			return // this client is dead: it never runs again
		case outSkipped:
		case outDone:
			done()
			return
		case outTimeout:
			rec.Timeouts++
		case outNotAcquired:
			rec.Failures++
		case outStopping:
			return // the run is stopping; not an error of the lock
		default: // outError
			kind := drivers.ErrorKind(err)
			rec.Errors[kind]++
			if _, ok := rec.Samples[kind]; !ok {
				rec.Samples[kind] = err.Error()
			}
			if errors.Is(err, context.Canceled) {
				return
			}
			if streak.fail() {
				abort(err)
				return
			}
			// Back off on errors (a server gone, a timeout): 1 ms doubling
			// to 500 ms, so a failing node is not hammered in a tight loop.
			pause = min(max(2*pause, time.Millisecond), 500*time.Millisecond)
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		if rec.Due() {
			// The recorder's batch goes into its histograms here, between
			// two operations: the next one's start is read after it, so no
			// measured time includes it.
			rec.Flush()
			next = 0
		}
		pause = 0
		if err == nil {
			streak.ok()
		}
	}
}

// StartBackend starts the server a baseline strategy needs besides Redis
// (strategies.InfoOf(name).Backend) on a free loopback port and returns
// it with the Backends to put in Scenario.Backends; stop it with Stop when
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
			b.ZooKeeper = []string{s.Addr}
		}
	case strategies.Etcd:
		if s, err = topology.StartEtcd(ctx); err == nil {
			b.Etcd = []string{s.EtcdEndpoint()}
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
