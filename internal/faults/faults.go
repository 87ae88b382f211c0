// Package faults injects failures into a running scenario and records when
// each one acted, so that violations and latency can be put in its window.
//
// A fault is written NAME[:param=value,...]; every fault takes a trigger,
// at=DURATION (after the scenario started; default 1s) or after=N (once N
// locks have been granted):
//
//   - pause:for=D — the next client found inside a critical section stops
//     the world for D (default 2 x the TTL): its worker and its renewal
//     loops wait together, like a long GC pause.
//   - crash-after-setnx — the next client to acquire dies: naive between
//     SETNX and EXPIRE, the others right after acquiring; it never releases.
//   - node-kill:node=I — SIGKILL server I (default 0); it stays down.
//   - node-restart:node=I,down=D — kill server I and start it again after D
//     (default 0) on the same port, without persistence: it forgets every key.
//   - node-pause:node=I,for=D — SIGSTOP server I, SIGCONT after D (default
//     500ms) or when the scenario stops, whichever comes first.
//   - failover:hold=D — on a master with a replica: the replica is cut off
//     so that it keeps what it had and misses what clients do on the master
//     for D (default 2 x the TTL), as a lagging asynchronous replica would;
//     then the master is killed. By hand (--topology replica): the replica
//     was cut off with REPLICAOF NO ONE and every client is switched to it.
//     Through Sentinel (--topology sentinel): the replication link, which
//     runs through an in-process proxy, is cut; the Sentinels promote the
//     replica (about 1 to 2 s after the kill) and the clients follow them.
//     Keep hold under 5 s there: Sentinel will not promote a replica cut off
//     for longer than 10 x down-after-milliseconds (500 ms).
//   - cancel:p=P,for=F — a share P (default 0.1) of critical sections
//     have their caller's context cancelled at a random point of their
//     work, for F (default until the end): their calls fail, and with
//     --release caller so does their release (see Worker.Hold).
//   - latency:node=I,delay=D,jitter=J,for=F — add D (+-J) to every reply
//     from server I (default 50ms, 0, until the end), through an in-process
//     toxiproxy proxy that the clients of the scenario connect through.
//   - reply-loss:node=I,p=P,delay=D,for=F — through the same proxy, a share
//     P (default 0.1) of the reply chunks of server I is held for D
//     (default 10s, past the drivers' 5 s read timeout) before it goes on,
//     or with delay=0 the connection goes silent from that chunk on (a
//     reply dropped: TCP cannot lose bytes in the middle of a stream), for
//     F (default 0: until the end). Commands still reach the server and
//     run: the client times out on a command that was applied.
//   - blackhole:node=I,for=D — through the proxy, nothing flows either way
//     between the clients and server I for D (default 2s): calls hang until
//     their timeout, and new connections are accepted and then hang (never
//     refused). Then traffic flows again on connections opened after it.
//   - script-flush:node=I,every=D — SCRIPT FLUSH on server I once, or every
//     D until the end when every > 0 (drivers fall back to EVAL on
//     NOSCRIPT). Servers lockbench starts only: it would empty the script
//     cache of the user's server.
//   - client-pause:node=I,for=D,mode=M — CLIENT PAUSE D (default 500ms)
//     WRITE (default) or ALL on server I; CLIENT UNPAUSE when the scenario
//     ends first.
//   - clock-jump:node=I,count=N,by=D — the clocks of servers I..I+N-1
//     (count default 1) jump forward by D (default 2 x the TTL): every key
//     with a TTL loses D of it at once, and those with D or less left
//     expire (see clockjump.go for how this is done without faking the
//     server's clock).
package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// Spec is a parsed fault.
type Spec struct {
	Name string
	// At and After are the trigger: a time after the scenario's start, or
	// a number of completed operations (After > 0 wins).
	At    time.Duration
	After int64
	// For is the pause length (pause, node-pause, client-pause) or the
	// latency's, reply loss's or blackhole's duration, Down the downtime
	// (node-restart), Hold the cut-off-replica window (failover), Delay
	// and Jitter the added latency (Delay: how long reply-loss holds a
	// reply), Every the period of a repeated fault (script-flush), By the
	// clock jump.
	For, Down, Hold, Delay, Jitter, Every, By time.Duration
	// Node is the server index for node-* and the server faults; Count the
	// number of servers from Node on (clock-jump); Proc the --procs child
	// (1-based) of proc-pause and proc-kill.
	Node, Count, Proc int
	// P is the share of replies a reply-loss fault holds, or of critical
	// sections the cancel fault cancels (0..1).
	P float64
	// Mode is CLIENT PAUSE's mode: "write" or "all".
	Mode string
	// Point is where a pause strikes the holder: "work" (default: before
	// its critical-section work, so a watchdog or Redlock holder can still
	// learn of the loss before it writes) or "write" (after that check,
	// right before the write: a GC pause between check and act).
	Point string
	raw   string
}

// String is the spec as written.
func (s Spec) String() string { return s.raw }

// Needs says what a fault requires of the servers.
type Needs int

// Requirements.
const (
	NeedsNothing   Needs = iota
	NeedsOwnServer       // lockbench must have started the servers (no --addr)
	NeedsReplica         // a master with a replica, started by lockbench
)

// Trigger are the parameters every fault takes: when it acts.
var Trigger = []registry.Param{
	{Name: "at", Doc: "act this long after the scenario started", Default: time.Second, Check: registry.DurationBetween(0, time.Hour)},
	{Name: "after", Doc: "act once this many locks have been granted instead; 0 = use at", Default: int64(0), Check: registry.AtLeast(int64(0))},
}

var nodeParam = registry.Param{Name: "node", Doc: "server index in the layout (0 = the first; the master)", Default: 0,
	Check: func(v any) error {
		if n, _ := v.(int); n < 0 {
			return fmt.Errorf("%d is not a server index (0, 1, ...)", n)
		}
		return nil
	}}

func span(name, doc string, def time.Duration) registry.Param {
	return registry.Param{Name: name, Doc: doc, Default: def, Check: registry.DurationBetween(0, time.Hour)}
}

var reg = registry.New[Needs]("fault")

// Register makes a fault available under name, with its one-line
// description, what it needs of the servers, and its own parameters
// (Trigger is added to them). Spec's fields are filled from parameters of
// the same name (for, down, hold, delay, jitter, node, point). It panics
// on an empty or duplicate name or a badly declared parameter.
func Register(name, desc string, needs Needs, params ...registry.Param) {
	reg.Register(name, desc, append(append([]registry.Param{}, params...), Trigger...), needs)
}

func init() {
	Register("pause", "stop-the-world of one lock holder and its renewal loop", NeedsNothing,
		span("for", "pause length; 0 = 2 x the TTL", 0),
		registry.Param{Name: "point", Doc: "where it strikes: work (before the critical-section work) or write (after the loss check, right before the write)",
			Default: "work", Check: registry.OneOf("work", "write")})
	Register("crash-after-setnx", "a client dies between SETNX and EXPIRE (naive) or right after acquiring, never releasing", NeedsNothing)
	Register("node-kill", "SIGKILL a server; it stays down", NeedsOwnServer, nodeParam)
	Register("node-restart", "kill a server and restart it empty on the same port", NeedsOwnServer, nodeParam,
		span("down", "downtime before the restart", 0))
	Register("node-pause", "SIGSTOP a server, SIGCONT after for or at the scenario's end", NeedsOwnServer, nodeParam,
		span("for", "pause length", 500*time.Millisecond))
	Register("failover", "cut the replica off for hold, kill the master; clients switched by hand or by Sentinel", NeedsReplica,
		span("hold", "how long the replica misses the master's writes; 0 = 2 x the TTL", 0))
	Register("latency", "add delay (+-jitter) to every reply of one server, through an in-process toxiproxy proxy", NeedsNothing, nodeParam,
		span("delay", "added to every reply", 50*time.Millisecond),
		span("jitter", "random spread around delay (+-)", 0),
		span("for", "how long; 0 = until the end", 0))
	Register("reply-loss", "the server applies the command but a share p of its replies is held past the client's timeout (or dropped), through the proxy", NeedsNothing, nodeParam,
		registry.Param{Name: "p", Doc: "share of reply chunks held (0..1)", Default: 0.1, Check: registry.Between(0.0, 1.0)},
		span("delay", "how long a reply is held before it goes on (exceed the read timeout); 0 = dropped: the connection goes silent", 10*time.Second),
		span("for", "how long; 0 = until the end", 0))
	Register("blackhole", "no traffic between the clients and a server for a while, through the proxy: calls and new connections hang, never refused", NeedsNothing, nodeParam,
		span("for", "how long; 0 = until the scenario ends", 2*time.Second))
	Register("script-flush", "SCRIPT FLUSH on a server once, or every D until the end", NeedsOwnServer, nodeParam,
		span("every", "repeat every D until the end; 0 = once", 0))
	Register("client-pause", "CLIENT PAUSE a server's clients (mode write: only writes wait; all: every command)", NeedsOwnServer, nodeParam,
		registry.Param{Name: "for", Doc: "pause length (at least 1ms)", Default: 500 * time.Millisecond, Check: registry.DurationBetween(time.Millisecond, time.Hour)},
		registry.Param{Name: "mode", Doc: "write (writes and may-write scripts wait) or all", Default: "write", Check: registry.OneOf("write", "all")})
	Register("clock-jump", "a server's clock jumps forward by D: its keys' TTLs lose D at once, those with less left expire", NeedsOwnServer, nodeParam,
		registry.Param{Name: "count", Doc: "servers from node on whose clocks jump (3 = nodes 0, 1, 2 with node=0)", Default: 1, Check: registry.Between(1, 64)},
		span("by", "the jump; 0 = 2 x the TTL", 0))
}

// proxied are the faults that act through the proxies in front of the
// nodes (the clients connect through them).
var proxied = map[string]bool{"latency": true, "reply-loss": true, "blackhole": true}

// Proxied reports whether the fault acts through the proxies the clients
// connect through (latency, reply-loss, blackhole).
func Proxied(name string) bool { return proxied[name] }

// Names lists the faults, sorted.
func Names() []string { return reg.Names() }

// Entries lists the faults with their descriptions and parameters, sorted.
func Entries() []registry.Entry[Needs] { return reg.Entries() }

// Describe returns a fault's one-line description.
func Describe(name string) string { e, _ := reg.Get(name); return e.Desc }

// NeedsOf says what the fault requires.
func NeedsOf(name string) Needs { e, _ := reg.Get(name); return e.Value }

// ErrUnknown is wrapped by Parse for an unknown fault name.
var ErrUnknown = errors.New("unknown fault")

// Parse reads NAME[:param=value,...]. Errors list every bad parameter.
func Parse(s string) (Spec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	e, err := reg.Lookup(name, ErrUnknown)
	if err != nil {
		return Spec{}, err
	}
	v, err := registry.ParseArgs("fault", name, rest, e.Params)
	errs := []error{err}
	// Spec has a field for every fault's parameters: those this fault does
	// not declare read as their type's zero (the getters refuse a name
	// that is not present).
	for _, o := range reg.Entries() {
		for _, p := range o.Params {
			if !v.Has(p.Name) {
				v[p.Name] = p.Zero()
			}
		}
	}
	sp := Spec{Name: name, raw: strings.TrimSpace(s),
		At: v.Duration("at"), After: v.Int64("after"), For: v.Duration("for"), Down: v.Duration("down"),
		Hold: v.Duration("hold"), Delay: v.Duration("delay"), Jitter: v.Duration("jitter"),
		Node: v.Int("node"), Point: v.String("point"), Proc: v.Int("proc"),
		Every: v.Duration("every"), By: v.Duration("by"), Count: v.Int("count"), P: v.Float("p"), Mode: v.String("mode")}
	if sp.Jitter > sp.Delay {
		errs = append(errs, fmt.Errorf("fault latency: jitter=%v exceeds delay=%v (a reply cannot come early)", sp.Jitter, sp.Delay))
	}
	if strings.Contains(","+rest, ",at=") && strings.Contains(","+rest, ",after=") {
		errs = append(errs, fmt.Errorf("fault %s: give at= or after=, not both", name))
	}
	if err := errors.Join(errs...); err != nil {
		return Spec{}, err
	}
	return sp, nil
}

// Window is when a fault acted (the result file's type).
type Window = report.FaultWindow

// Env is what an Injector acts on.
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
	// Proxies stand between the clients and the nodes (latency).
	Proxies *Proxies
	// Sentinels, SentinelPassword and ReplLink are set on a Sentinel
	// layout: the Sentinels' addresses, their own password (AUTH before
	// INFO sentinel; "" for none) and the proxy the replica replicates
	// through.
	Sentinels        []string
	SentinelPassword string
	ReplLink         *Proxies
	// Stuck, when set, counts lock keys left with no TTL; it runs right
	// after each fault acted.
	Stuck func() (int64, error)
	// Proc is this process's number among the children of lockbench run
	// --procs (1-based; 0: not such a child). A proc-kill fault is armed
	// only in child Proc; proc-pause is the parent's, ignored here.
	Proc int
	// BeforeDeath, when set, runs right before a proc-kill fault's
	// SIGKILL (to tell the parent the kill is its own).
	BeforeDeath func()
}

// Injector runs the faults of one scenario. Clients call Acquired for each
// lock granted, Paused at the pause point of their critical
// section, and Crash (through strategies.Hooks) at crash points.
type Injector struct {
	specs []Spec
	env   Env
	start time.Time

	ops          atomic.Int64
	pendingPause atomic.Int64  // ns; 0 = none
	pauseIdx     atomic.Int64  // index of the pending pause's window
	pauseAtWrite atomic.Bool   // the pending pause strikes before a write
	pendingCrash atomic.Int64  // window index + 1; 0 = none
	cancelP      atomic.Uint64 // the acting cancel fault's p (float64 bits); 0 = none
	cancels      atomic.Int64  // critical sections it cancelled
	pendingKill  atomic.Int64  // proc-kill's window index + 1; 0 = none

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
		if !in.here(sp) {
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
			in.act(ctx, sp)
		}(k, sp)
	}
}

// here reports whether sp acts in this process: every fault but the
// process faults, and proc-kill in the child it names.
func (in *Injector) here(sp Spec) bool {
	switch sp.Name {
	case "proc-pause":
		return false
	case "proc-kill":
		return in.env.Proc > 0 && in.env.Proc == sp.Proc
	}
	return true
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

// open records that a fault was armed and returns its window's index.
func (in *Injector) open(sp Spec) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	now := in.ms(time.Now())
	in.windows = append(in.windows, Window{Fault: sp.String(), ArmedMS: now, StartMS: -1, EndMS: -1})
	return len(in.windows) - 1
}

// begin records that window i's fault acts now.
func (in *Injector) begin(i int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.windows[i].StartMS = in.ms(time.Now())
	in.windows[i].OpsBefore = in.ops.Load()
}

func (in *Injector) close(i int, note string) {
	end := in.ms(time.Now())
	stuck := int64(-1)
	if in.env.Stuck != nil {
		if n, err := in.env.Stuck(); err == nil {
			stuck = n
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.windows[i].EndMS = end
	in.windows[i].StuckAfter = stuck
	if note != "" {
		in.windows[i].Note = note
	}
}

func (in *Injector) node(sp Spec) (*topology.Server, error) {
	if sp.Node >= len(in.env.Servers) {
		return nil, fmt.Errorf("no server %d (the scenario has %d)", sp.Node, len(in.env.Servers))
	}
	return in.env.Servers[sp.Node], nil
}

func (in *Injector) act(ctx context.Context, sp Spec) {
	i := in.open(sp)
	if sp.Name != "pause" && sp.Name != "crash-after-setnx" && sp.Name != "proc-kill" {
		in.begin(i) // server faults act at once; client faults when a client comes
	}
	if in.actMore(ctx, sp, i) {
		return
	}
	switch sp.Name {
	case "pause":
		d := sp.For
		if d == 0 {
			d = 2 * in.env.TTL
		}
		in.pauseIdx.Store(int64(i))
		in.pauseAtWrite.Store(sp.Point == "write")
		in.pendingPause.Store(int64(d))
		// The window closes when a client takes the pause (Paused).
	case "crash-after-setnx":
		in.pendingCrash.Store(int64(i) + 1)
	case "proc-kill":
		in.procKill(i)
	case "cancel":
		in.cancelFault(ctx, sp, i)
	case "node-kill":
		s, err := in.node(sp)
		if err != nil {
			in.close(i, err.Error())
			return
		}
		s.Kill()
		in.close(i, fmt.Sprintf("node %d (%s) killed", sp.Node, s.Addr))
	case "node-restart":
		s, err := in.node(sp)
		if err != nil {
			in.close(i, err.Error())
			return
		}
		if err := s.Restart(ctx, sp.Down); err != nil {
			in.close(i, "restart failed: "+err.Error())
			return
		}
		in.close(i, fmt.Sprintf("node %d (%s) restarted empty", sp.Node, s.Addr))
	case "node-pause":
		s, err := in.node(sp)
		if err != nil {
			in.close(i, err.Error())
			return
		}
		d := sp.For
		if d == 0 {
			d = 500 * time.Millisecond
		}
		// The pause ends after d or when the scenario stops, whichever
		// comes first: a server still stopped after the end would hold up
		// the stop itself (calls in flight, the end-of-run INFO, the
		// check of the data) until d ran out.
		s.Freeze()
		began := time.Now()
		note := ""
		select {
		case <-time.After(d):
		case <-ctx.Done():
			note = fmt.Sprintf(" (of %v: the scenario ended)", d)
		}
		s.Thaw()
		in.close(i, fmt.Sprintf("node %d (%s) paused %v%s", sp.Node, s.Addr, time.Since(began).Round(time.Millisecond), note))
	case "failover":
		if len(in.env.Sentinels) > 0 {
			in.close(i, in.sentinelFailover(ctx, sp))
		} else {
			in.close(i, in.failover(ctx, sp))
		}
	case "latency":
		if in.env.Proxies == nil {
			in.close(i, "not done: no proxy in front of the nodes")
			return
		}
		if err := in.env.Proxies.AddLatency(sp.Node, sp.Delay, sp.Jitter); err != nil {
			in.close(i, "not done: "+err.Error())
			return
		}
		note := fmt.Sprintf("node %d: +%v (+-%v) on every reply", sp.Node, sp.Delay, sp.Jitter)
		if sp.For == 0 {
			<-ctx.Done()
		} else {
			select {
			case <-time.After(sp.For):
			case <-ctx.Done():
			}
		}
		_ = in.env.Proxies.RemoveLatency(sp.Node)
		in.close(i, note)
	}
}

// failover freezes the replica, lets clients work on the master alone for
// the hold time, kills the master, thaws and promotes the replica, and
// switches every client to it.
func (in *Injector) failover(ctx context.Context, sp Spec) string {
	if len(in.env.Servers) < 2 || len(in.env.Switches) < 1 {
		return "not done: failover needs a master and a replica"
	}
	master, replica := in.env.Servers[0], in.env.Servers[1]
	hold := sp.Hold
	if hold == 0 {
		hold = 2 * in.env.TTL
	}
	// Cut the replication link first: a frozen process would still find
	// the master's stream in its socket buffer when thawed. From here the
	// replica keeps what it had and hears nothing more.
	if _, err := topology.Command(replica.Addr, replica.Password, 5*time.Second, "REPLICAOF", "NO", "ONE"); err != nil {
		return "cutting the replica off failed: " + err.Error()
	}
	select {
	case <-time.After(hold):
	case <-ctx.Done():
	}
	master.Kill()
	d, err := in.env.Open(replica.Addr, replica.Password)
	if err != nil {
		return "cannot connect to the promoted replica: " + err.Error()
	}
	old := in.env.Switches[0].Set(d)
	in.mu.Lock()
	in.retired = append(in.retired, old)
	in.mu.Unlock()
	return fmt.Sprintf("replica %s cut off and promoted; master %s killed %v later; clients switched", replica.Addr, master.Addr, hold)
}

// sentinelFailover cuts the replica's link (its proxy), lets clients work
// on the master for the hold time, kills the master, and waits (at most
// 15 s) for the Sentinels to promote the replica; the clients follow the
// Sentinels by themselves.
func (in *Injector) sentinelFailover(ctx context.Context, sp Spec) string {
	if in.env.ReplLink == nil || len(in.env.Servers) < 2 {
		return "not done: a Sentinel failover needs the replica's link through a proxy"
	}
	master, replica := in.env.Servers[0], in.env.Servers[1]
	hold := sp.Hold
	if hold == 0 {
		hold = 2 * in.env.TTL
	}
	in.env.ReplLink.Close()
	select {
	case <-time.After(hold):
	case <-ctx.Done():
	}
	master.Kill()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range in.env.Sentinels {
			info, err := topology.Command(s, in.env.SentinelPassword, time.Second, "INFO", "sentinel")
			if err == nil && strings.Contains(info, "address="+replica.Addr) {
				return fmt.Sprintf("replica %s cut off; master %s killed %v later; Sentinel promoted the replica", replica.Addr, master.Addr, hold)
			}
		}
		select {
		case <-ctx.Done():
			return "run ended before Sentinel promoted the replica"
		case <-time.After(50 * time.Millisecond):
		}
	}
	return "Sentinel did not promote the replica within 15 s"
}

// Acquired counts one lock granted. Fault windows and the after=N trigger
// count acquisitions: an operation that began before a fault but finished
// after it does not count as after it.
func (in *Injector) Acquired() { in.ops.Add(1) }

// Paused is called by a client inside its critical section (before its
// write). When a pause is pending, the first client to come claims it:
// its gate closes for the pause and it waits there with its renewals.
func (in *Injector) Paused(client int, g *strategies.Gate) {
	if in.pauseAtWrite.Load() {
		return
	}
	in.pause(client, g, "inside its critical section")
}

// PausedBeforeWrite is called by a client after its loss check, right
// before it writes; it blocks when a pause with point=write is pending.
func (in *Injector) PausedBeforeWrite(client int, g *strategies.Gate) {
	if !in.pauseAtWrite.Load() {
		return
	}
	in.pause(client, g, "after its loss check, before its write")
}

func (in *Injector) pause(client int, g *strategies.Gate, where string) {
	d := in.pendingPause.Load()
	if d == 0 || !in.pendingPause.CompareAndSwap(d, 0) {
		return
	}
	i := int(in.pauseIdx.Load())
	in.begin(i)
	g.CloseFor(time.Duration(d))
	g.Wait()
	in.close(i, fmt.Sprintf("client %d paused %v %s", client, time.Duration(d), where))
}

// Crash implements strategies.Hooks: the first client at a crash point
// after the trigger dies there.
func (in *Injector) Crash(point string) bool {
	if point != in.env.CrashPoint {
		return false
	}
	w := in.pendingCrash.Load()
	if w == 0 || !in.pendingCrash.CompareAndSwap(w, 0) {
		return false
	}
	in.begin(int(w - 1))
	in.close(int(w-1), "a client crashed at "+point)
	return true
}

var _ strategies.Hooks = (*Injector)(nil)

// Finish waits for the faults to finish acting (ctx must be done), closes
// drivers a failover replaced, and returns the windows with OpsAfter
// filled from the final operation count.
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
		if w.StartMS < 0 && w.ArmedMS >= 0 { // armed, never acted
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
