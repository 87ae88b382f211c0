package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// Why a run stopped, as the cause of its run context (besides
// workloads.ErrDone, and the caller's cancellation).
var (
	errDuration = errors.New("duration")
	errAborted  = errors.New("aborted")
)

// measure runs the clocked part of the scenario: it takes the servers'
// command counts, the baseline server's process CPU time (when lockbench
// started it: Env.BackendServer) and lockbench's CPU time before and
// after, and in between runs the warm-up and the measured window: the run
// context (stopped by the duration's timer, the workload running out of
// work, MaxConsecutiveErrors / MaxErrorStreak, or ctx), the grace period
// after it, the load sampler, the fault injector, the timeline's sampler,
// the open loop's scheduler, and one goroutine per client, which it waits
// for. It fills the fields under "measure" in run. Errors: the first INFO
// commandstats read failed (the run did not start).
func (r *run) measure() error {
	sc := &r.sc
	ds, env := r.ds, r.env
	// Collect the garbage of earlier scenarios (and of this one's set-up)
	// before the clock starts, as Go's testing package does before each
	// benchmark: otherwise this scenario's window pays for sweeping their
	// heap (each shard's histograms are about 0.5 MB).
	runtime.GC()
	if sc.Env.Sync != nil {
		// Execution segments: every process starts its clock at the
		// common moment of the barrier.
		at, err := sc.Env.Sync.Start(r.ctx)
		if err != nil {
			return err
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return r.ctx.Err()
		}
	}
	before, err := commandStats(r.bg, r.costNodes())
	if err != nil {
		return fmt.Errorf("INFO commandstats: %w", err)
	}
	r.before = before
	r.procBefore, r.procErr = backendCPU(sc.Env.BackendServer)
	if r.live != nil {
		r.live.Start(r.bg)
	}
	r.streak.limit = sc.ErrorStreak
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r.ruBefore)
	cpuStart := time.Now()

	runCtx, stop := context.WithCancelCause(r.ctx)
	r.runCtx = runCtx
	r.deferred(func() { stop(nil) })
	// Phase two of a stop: Grace after the run context ends, work still in a
	// critical section is interrupted.
	hard, hardStop := context.WithCancel(r.bg)
	r.deferred(hardStop)
	env.Hard = hard
	go func() {
		select {
		case <-runCtx.Done():
			// The renewal margins' window ends with the run (its duration,
			// a workload with nothing left to do, an abort): renewals in
			// the drain do not count.
			env.Margins.End(time.Now())
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
	start := time.Now()
	warmEnd := start.Add(sc.Warmup)
	r.start, r.warmEnd = start, warmEnd
	if r.env != nil {
		r.env.Handover.Start(metrics.Mono(warmEnd))
		// The margins' window: the measured duration, split at its middle;
		// without a duration it has no middle, and its end is the stop's
		// (End above), as is that of a run that stops early.
		var end time.Time
		if sc.Duration > 0 {
			end = warmEnd.Add(sc.Duration)
		}
		r.env.Margins.Start(warmEnd, warmEnd.Add(sc.Duration/2), end)
	}
	timer := time.AfterFunc(sc.Warmup+sc.Duration, func() { stop(errDuration) })
	r.deferred(func() { timer.Stop() })
	loadDone := make(chan []float64, 1)
	if sc.LoadSample > 0 {
		go func() { loadDone <- redisadmin.SampleLoad(runCtx, ds, sc.LoadSample, warmEnd) }()
	} else {
		loadDone <- nil
	}

	abort := func(err error) {
		r.lastErr.CompareAndSwap(nil, err)
		stop(errAborted)
	}
	inj := r.injector()
	if inj != nil {
		env.Faults = inj
		inj.Start(runCtx)
	}
	// The timeline: workers count outcomes in their own slot, a sampler
	// reads the slots, and takes the interval histograms of r.recs, once
	// an interval.
	live := make([]liveSlot, sc.Clients)
	overlaps := func() int64 {
		if env.Oracle == nil {
			return 0
		}
		if so, ok := env.Oracle.(semOracle); ok && so.Permits() > 1 {
			return so.Capacity() // a semaphore's: its capacity violations
		}
		return env.Oracle.Overlaps()
	}
	var liveDropped atomic.Int64
	smp := &sampler{slots: live, overlaps: overlaps, offset: sc.Warmup, interval: sc.Interval, onSecond: sc.Env.OnSecond,
		recs: r.recs, scenarioStart: start}
	if sc.Rate > 0 {
		smp.dropped = &liveDropped
	}
	smpStop, smpDone := make(chan struct{}), make(chan struct{})
	go smp.run(smpStop, smpDone)
	if r.background != nil {
		dropAfter := sc.DropAfter
		if dropAfter <= 0 {
			dropAfter = 100 * time.Millisecond
		}
		r.background.start(runCtx, start, warmEnd, start.Add(sc.Warmup+sc.Duration), sc.Poisson, sc.Seed, dropAfter)
	}
	var wg sync.WaitGroup
	releases := workloads.NewReleaseWatch(sc.Clients)
	env.Releases = releases
	var jobs chan time.Time
	schedDone := make(chan struct{})
	var schedEnd time.Duration // when the scheduler stopped, after start
	if sc.Rate > 0 {
		jobs = make(chan time.Time)
		dropAfter := sc.DropAfter
		if dropAfter <= 0 {
			dropAfter = 100 * time.Millisecond
		}
		go func() {
			defer close(schedDone)
			p := NewShapePacer(start, sc.arrivals(), sc.Poisson, rand.New(rand.NewPCG(sc.Seed, 1<<40)))
			t := schedule(runCtx, p, start.Add(sc.Warmup+sc.Duration), jobs, dropAfter, &liveDropped)
			r.offered, r.dropped, r.undecided = t.Offered, t.Dropped, t.Undecided
			schedEnd = t.Stop.Sub(start)
		}()
	} else {
		close(schedDone)
	}
	var ramp *clientRamp // nil: every client throughout
	if sc.ClientShape != nil && sc.Rate <= 0 {
		ramp = newClientRamp(sc.ClientShape, start)
		go ramp.run(runCtx)
	}
	for i := 0; i < sc.Clients; i++ {
		ws := &workerState{pcg: *rand.NewPCG(sc.Seed, uint64(sc.Env.ClientOffset+i))}
		ws.rng = *rand.New(&ws.pcg)
		ws.obs.init(r.recs.Client(i), r.scratch.Client(i), &live[i], r.prom)
		ws.obs.holds = ramp != nil
		if sh := sc.SlowdownShare; sh > 0 && sh < 1 {
			ws.obs.slow = sh / (1 - sh)
		}
		ws.w = workloads.Worker{ID: i, Env: env, Rng: &ws.rng, Backoff: sc.Retry.New(&ws.rng), Obs: &ws.obs}
		if r.roles != nil {
			ws.w.Role = r.roles[r.role[i]]
		}
		var think *thinker // nil: none (Validate refuses one in an open loop)
		if !sc.Think.IsZero() && sc.Rate <= 0 {
			ws.think.init(sc.Think, sc.Seed, thinkStream(sc.Env.ClientOffset+i))
			think = &ws.think
		}
		if b := r.hist.Worker(i); b != nil {
			ws.w.Hist = b // a nil *Buf in the interface would not read as nil
		}
		w := &ws.w
		if r.hub != nil {
			w.Backoff = sc.Retry.NewNotified(r.hub, sc.TTL)
		}
		w.Gate = &strategies.Gate{}
		client := strategies.Client{ID: i, Owner: r.prefix + strconv.Itoa(sc.Env.ClientOffset+i), Gate: w.Gate}
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
		go func(id int, w *workloads.Worker, o *observer, think *thinker) {
			defer func() {
				// A client given up as hung (below) is no longer waited
				// for: Abandon took it off the group already.
				if !releases.Hung(id) {
					wg.Done()
				}
			}()
			defer ccancel()
			loop(wctx, r.wl, w, o, warmEnd, func() { stop(workloads.ErrDone) }, &r.streak, abort, inj, jobs, think, ramp)
		}(i, w, &ws.obs, think)
	}
	// Wait for every client; once the grace period has ended (hard), a
	// client still inside its release call is counted hung and no longer
	// waited for (it ends without recording anything if the call ever
	// returns): the run ends near its grace period and says so, instead
	// of waiting on (or silently cutting) a release that loops or hangs.
	clientsDone := make(chan struct{})
	go func() { wg.Wait(); close(clientsDone) }()
	select {
	case <-clientsDone:
	case <-hard.Done():
		n := releases.Abandon()
		r.hungReleases = int64(n)
		wg.Add(-n)
		<-clientsDone
	}
	stop(nil)
	if r.background != nil {
		r.background.wait() // every command sent has ended
	}
	<-schedDone
	r.loadRates = <-loadDone
	r.end = time.Now()
	timer.Stop()
	close(smpStop)
	<-smpDone
	r.timeline = smp.finish(r.end)
	r.ivOp, r.ivAcq = smp.intervals()
	if ramp != nil {
		fillClients(r.timeline, sc.ClientShape, sc.Warmup.Seconds())
	}
	if sc.Rate > 0 {
		// The arrivals due up to the scheduler's stop, and not the one due
		// on the duration's last instant (never offered).
		fillOffered(r.timeline, sc.arrivals(), sc.Warmup.Seconds(), min(schedEnd, sc.Warmup+sc.Duration).Seconds())
	}
	hardStop()
	if inj != nil {
		stop(nil) // faults not yet triggered stay unarmed
		r.faultWindows = inj.Finish()
	}
	// A server that went away leaves the cost unknown (zero), not the run.
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r.ruAfter)
	r.cpuWall = time.Since(cpuStart)
	if r.live != nil {
		r.live.Stop() // its reads are left out of the cost below
	}
	r.after, r.afterErr = commandStats(r.bg, r.costNodes())
	if r.procErr == nil {
		r.procAfter, r.procErr = backendCPU(sc.Env.BackendServer)
	}
	return nil
}

// errNoBackendServer: Env.BackendServer is nil, so no baseline server's
// CPU is read.
var errNoBackendServer = errors.New("no baseline server of lockbench's")

// backendCPU reads s's process CPU time (errNoBackendServer for nil).
func backendCPU(s *topology.Server) (topology.ProcCPU, error) {
	if s == nil {
		return topology.ProcCPU{}, errNoBackendServer
	}
	return s.CPU()
}

// injector returns the scenario's fault injector (nil without faults),
// not yet started; r.inj is set to it.
func (r *run) injector() *faults.Injector {
	sc := &r.sc
	if len(sc.Faults) == 0 {
		return nil
	}
	ds, wl, bg := r.ds, r.wl, r.bg
	r.inj = faults.New(sc.Faults, faults.Env{
		Servers: sc.Env.Servers, Switches: r.switches, TTL: sc.TTL, CrashPoint: crashPoint(r.locker),
		Proxies: r.proxies, Sentinels: r.nodes[0].Sentinels, SentinelPassword: r.nodes[0].SentinelPassword, ReplLink: sc.Env.ReplLink,
		Proc: sc.Env.Proc, BeforeDeath: sc.Env.BeforeKill, Role: r.roleOf(),
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
	return r.inj
}

// costNodes are the servers whose commands and CPU the scenario's cost
// counts: the lock's nodes, and the separate resource (whose commands
// are the workload's data writes).
func (r *run) costNodes() []drivers.Driver {
	if r.resource == nil {
		return r.ds
	}
	return append(slices.Clip(r.ds), r.resource)
}

// commandStats is redisadmin.CommandStats within 10 s.
func commandStats(bg context.Context, ds []drivers.Driver) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	return redisadmin.CommandStats(ctx, ds)
}

func rusageCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func crashPoint(l strategies.Locker) string {
	if cp, ok := l.(strategies.CrashPointer); ok {
		return cp.CrashPoint()
	}
	return "after-acquire"
}

// roleOf is each local client's role (Spec.Mix) for the faults; nil
// without roles.
func (r *run) roleOf() func(client int) string {
	if r.roles == nil {
		return nil
	}
	roles, role := r.roles, r.role
	return func(client int) string {
		if client < 0 || client >= len(role) {
			return ""
		}
		return roles[role[client]]
	}
}
