package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// Env is what an Injector's faults act on.
type Env struct {
	// Servers of the scenario (nil with --addr). For failover, Servers[0]
	// is the master and Servers[1] its replica.
	Servers []*topology.Server
	// Switches are the scenario's node drivers (failover repoints [0]).
	Switches []*drivers.Switch
	// Open opens a driver for a promoted replica.
	Open func(addr, password string) (drivers.Driver, error)
	// TTL is the scenario's lease, for default pause and hold lengths.
	TTL time.Duration
	// CrashPoint is where crash-after-setnx strikes: "after-setnx" for
	// naive, "after-acquire" for the others.
	CrashPoint string
	// Proxies stand between the clients and the nodes (the faults with
	// Info.Proxy); nil when the scenario has none of them.
	Proxies *Proxies
	// Sentinels and SentinelPassword are set on a Sentinel layout, from
	// the scenario's node (drivers.Endpoint.Sentinels and
	// .SentinelPassword): the Sentinels' addresses and their own password
	// (AUTH before INFO sentinel; "" for none). ReplLink is the link the
	// replica replicates through there (nil or not started: none).
	Sentinels        []string
	SentinelPassword string
	ReplLink         *ReplLink
	// Stuck, when set, counts lock keys left with no TTL; it runs right
	// after each fault acted (Action.End).
	Stuck func() (int64, error)
	// Proc is this process's number among the children of lockbench run
	// --procs (1-based; 0: not such a child). A ProcFault acts here only
	// when it says so (ProcFault.InChild) and names this child.
	Proc int
	// BeforeDeath, when set, runs right before Die's SIGKILL (to tell the
	// parent the kill is its own).
	BeforeDeath func()
	// Role, when set, is each client's role (--mix; workloads.Roles), by
	// its number in this process (strategies.Client.ID): a fault with
	// role= takes only a client of that role. Nil: no roles.
	Role func(client int) string
}

// The client hooks: a fault that acts through a client arms one
// (Action.Arm) and the Injector asks it at the client's point; the first
// hook that claims the client wins. Each is called from the clients'
// goroutines, concurrently, and must not block unless it claims.

// Pauser stops a client inside its critical section.
type Pauser interface {
	// Pause is called by client at point (PointWork: before its
	// critical-section work; PointWrite: after its loss check, right
	// before its write) with the gate its worker and renewal loops wait
	// on. It reports whether it claimed the client, and returns once the
	// client may go on.
	Pause(client int, g *strategies.Gate, point string) bool
}

// The points where Pause is called.
const (
	PointWork  = "work"
	PointWrite = "write"
)

// Crasher makes a client die at a crash point ("after-setnx" in naive,
// "after-acquire" after any acquire; strategies.Hooks).
type Crasher interface {
	// Crash reports whether client dies at point: it never releases.
	Crash(client int, point string) bool
}

// Canceller cancels the caller's context of a critical section.
type Canceller interface {
	// Cancels reports whether this critical section of client is to be
	// cancelled and at which share (0..1) of its work.
	Cancels(client int) (at float64, ok bool)
}

// Killer makes a client kill its own process inside its critical section.
type Killer interface {
	// Kills reports whether client, starting its critical-section work,
	// is to kill the process (Injector.Die) and at which share (0..1) of
	// its work.
	Kills(client int) (at float64, ok bool)
}

// hookSet are the armed hooks, copied on every change (the clients read
// it without a lock).
type hookSet struct {
	pausers    []Pauser
	crashers   []Crasher
	cancellers []Canceller
	killers    []Killer
}

// Injector runs the faults of one scenario. Clients call Acquired for each
// lock granted, Paused and PausedBeforeWrite at the pause points of their
// critical section, Cancels and Kills as it starts, and Crash (through
// strategies.Hooks) at crash points.
type Injector struct {
	specs []Spec
	env   Env
	start time.Time

	ops   atomic.Int64
	hooks atomic.Pointer[hookSet] // nil: none armed

	mu      sync.Mutex
	windows []Window
	fired   []bool           // per spec: its trigger came
	retired []drivers.Driver // replaced by a failover; closed at the end
	wg      sync.WaitGroup
}

// New returns an Injector for specs; Start arms it.
func New(specs []Spec, env Env) *Injector {
	return &Injector{specs: specs, env: env}
}

// Start arms every fault; each acts once when its trigger comes, until ctx
// ends.
func (in *Injector) Start(ctx context.Context) {
	in.start = time.Now()
	in.fired = make([]bool, len(in.specs))
	for k, sp := range in.specs {
		if !sp.actsIn(in.env.Proc) {
			in.fired[k] = true // not this process's: no window here
			continue
		}
		in.wg.Add(1)
		go func(k int, sp Spec) {
			defer in.wg.Done()
			if !in.await(ctx, sp) {
				return
			}
			in.mu.Lock()
			in.fired[k] = true
			in.mu.Unlock()
			sp.fault.Act(ctx, &Action{in: in, i: in.open(sp)})
		}(k, sp)
	}
}

// await waits for the trigger; false when ctx ended first.
func (in *Injector) await(ctx context.Context, sp Spec) bool {
	if sp.After > 0 {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for in.ops.Load() < sp.After {
			select {
			case <-ctx.Done():
				return false
			case <-t.C:
			}
		}
		return true
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(in.start.Add(sp.At))):
		return true
	}
}

func (in *Injector) ms(t time.Time) float64 { return float64(t.Sub(in.start).Microseconds()) / 1000 }

// millis is d in ms, to the µs.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// open records that a fault was armed and returns its window's index.
func (in *Injector) open(sp Spec) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	now := in.ms(time.Now())
	in.windows = append(in.windows, Window{Fault: sp.String(), ArmedMS: now, StartMS: -1, EndMS: -1})
	return len(in.windows) - 1
}

// Action is one fault acting in one scenario: its window in the result
// file, and what it acts on. Its methods are safe for concurrent use.
type Action struct {
	in *Injector
	i  int // the window's index
}

// Env is what the fault acts on. It must not be changed.
func (a *Action) Env() *Env { return &a.in.env }

// Begin records that the fault acts now: its window starts, and the locks
// granted so far are its ops_before. A second call moves the start.
func (a *Action) Begin() {
	in := a.in
	in.mu.Lock()
	defer in.mu.Unlock()
	in.windows[a.i].StartMS = in.ms(time.Now())
	in.windows[a.i].OpsBefore = in.ops.Load()
}

// End records that the fault is done: its window ends now, with note (""
// keeps the note as it was) and the lock keys then left with no TTL
// (Env.Stuck; -1 when unknown). A window ended without Begin keeps no
// start (start_ms -1): the fault forgot to say when it acted.
func (a *Action) End(note string) {
	in := a.in
	end := in.ms(time.Now())
	stuck := int64(-1)
	if in.env.Stuck != nil {
		if n, err := in.env.Stuck(); err == nil {
			stuck = n
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.windows[a.i].EndMS = end
	in.windows[a.i].StuckAfter = stuck
	if note != "" {
		in.windows[a.i].Note = note
	}
}

// Server returns server node of the scenario. Errors: no such server
// ("no server 2 (the scenario has 1)"; none with --addr).
func (a *Action) Server(node int) (*topology.Server, error) {
	if node < 0 || node >= len(a.in.env.Servers) {
		return nil, fmt.Errorf("no server %d (the scenario has %d)", node, len(a.in.env.Servers))
	}
	return a.in.env.Servers[node], nil
}

// Retire hands over a driver the fault replaced (Switch.Set): it is closed
// when the scenario's faults finish.
func (a *Action) Retire(d drivers.Driver) {
	a.in.mu.Lock()
	defer a.in.mu.Unlock()
	a.in.retired = append(a.in.retired, d)
}

// Arm makes the clients call h at its points until Disarm: h implements
// one or more of Pauser, Crasher, Canceller and Killer. It panics when h
// implements none of them.
func (a *Action) Arm(h any) {
	a.in.changeHooks(func(hs *hookSet) {
		ok := false
		if p, is := h.(Pauser); is {
			hs.pausers, ok = append(hs.pausers, p), true
		}
		if c, is := h.(Crasher); is {
			hs.crashers, ok = append(hs.crashers, c), true
		}
		if c, is := h.(Canceller); is {
			hs.cancellers, ok = append(hs.cancellers, c), true
		}
		if k, is := h.(Killer); is {
			hs.killers, ok = append(hs.killers, k), true
		}
		if !ok {
			panic(fmt.Sprintf("faults: Arm(%T): not a Pauser, Crasher, Canceller or Killer", h))
		}
	})
}

// Disarm stops the clients calling h (armed by Arm); no-op if it is not
// armed.
func (a *Action) Disarm(h any) {
	a.in.changeHooks(func(hs *hookSet) {
		hs.pausers = without(hs.pausers, h)
		hs.crashers = without(hs.crashers, h)
		hs.cancellers = without(hs.cancellers, h)
		hs.killers = without(hs.killers, h)
	})
}

func without[T any](s []T, h any) []T {
	var out []T
	for _, x := range s {
		if any(x) != h {
			out = append(out, x)
		}
	}
	return out
}

// changeHooks applies f to a copy of the armed hooks and publishes it.
func (in *Injector) changeHooks(f func(*hookSet)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	var hs hookSet
	if old := in.hooks.Load(); old != nil {
		hs = hookSet{pausers: append([]Pauser(nil), old.pausers...), crashers: append([]Crasher(nil), old.crashers...),
			cancellers: append([]Canceller(nil), old.cancellers...), killers: append([]Killer(nil), old.killers...)}
	}
	f(&hs)
	if len(hs.pausers)+len(hs.crashers)+len(hs.cancellers)+len(hs.killers) == 0 {
		in.hooks.Store(nil)
		return
	}
	in.hooks.Store(&hs)
}

// Wait waits d, or until the scenario ends when d is 0, or until ctx ends
// first; it reports whether ctx ended (the scenario stopped) first.
func Wait(ctx context.Context, d time.Duration) (ended bool) {
	if d == 0 {
		<-ctx.Done()
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-ctx.Done():
		return true
	}
}

// Acquired counts one lock granted. Fault windows and the after=N trigger
// count acquisitions: an operation that began before a fault but finished
// after it does not count as after it.
func (in *Injector) Acquired() { in.ops.Add(1) }

// Paused is called by a client inside its critical section, before its
// work; it blocks while an armed Pauser pauses it.
func (in *Injector) Paused(client int, g *strategies.Gate) { in.pause(client, g, PointWork) }

// PausedBeforeWrite is called by a client after its loss check, right
// before it writes; it blocks while an armed Pauser pauses it.
func (in *Injector) PausedBeforeWrite(client int, g *strategies.Gate) {
	in.pause(client, g, PointWrite)
}

func (in *Injector) pause(client int, g *strategies.Gate, point string) {
	hs := in.hooks.Load()
	if hs == nil {
		return
	}
	for _, p := range hs.pausers {
		if p.Pause(client, g, point) {
			return
		}
	}
}

// Crash implements strategies.Hooks: whether client dies at point (an
// armed Crasher claims it).
func (in *Injector) Crash(client int, point string) bool {
	hs := in.hooks.Load()
	if hs == nil {
		return false
	}
	for _, c := range hs.crashers {
		if c.Crash(client, point) {
			return true
		}
	}
	return false
}

var _ strategies.Hooks = (*Injector)(nil)

// Cancels implements workloads.FaultHooks: whether an armed Canceller
// cancels this critical section of client, and at which share (0..1) of
// its work.
func (in *Injector) Cancels(client int) (at float64, ok bool) {
	hs := in.hooks.Load()
	if hs == nil {
		return 0, false
	}
	for _, c := range hs.cancellers {
		if at, ok := c.Cancels(client); ok {
			return at, true
		}
	}
	return 0, false
}

// Kills implements workloads.FaultHooks: whether an armed Killer has
// client kill this process (Die) inside the critical section it starts,
// and at which share (0..1) of its work.
func (in *Injector) Kills(client int) (at float64, ok bool) {
	hs := in.hooks.Load()
	if hs == nil {
		return 0, false
	}
	for _, k := range hs.killers {
		if at, ok := k.Kills(client); ok {
			return at, true
		}
	}
	return 0, false
}

// Finish waits for the faults to finish acting (ctx must be done), closes
// drivers a failover replaced, and returns the windows with OpsAfter
// filled from the final operation count: a fault whose trigger never came
// has a window noted "not triggered", one armed whose client never came
// a window of length 0 at its arming.
func (in *Injector) Finish() []Window {
	in.wg.Wait()
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, d := range in.retired {
		d.Close()
	}
	in.retired = nil
	total := in.ops.Load()
	for k, sp := range in.specs { // faults whose trigger never came
		if !in.fired[k] {
			in.windows = append(in.windows, Window{Fault: sp.String(), ArmedMS: -1, StartMS: -1, EndMS: -1,
				OpsBefore: total, StuckAfter: -1, Note: "not triggered: the scenario ended first"})
		}
	}
	out := make([]Window, len(in.windows))
	for i, w := range in.windows {
		if w.StartMS < 0 && w.EndMS < 0 && w.ArmedMS >= 0 { // armed, never acted
			w.StartMS, w.EndMS, w.OpsBefore, w.StuckAfter = w.ArmedMS, w.ArmedMS, total, -1
			if w.Note == "" {
				w.Note = "armed, but no client reached its point before the end"
			}
		}
		w.OpsAfter = total - w.OpsBefore
		out[i] = w
	}
	return out
}
