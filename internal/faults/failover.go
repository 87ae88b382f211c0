package faults

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies"
)

// failover:hold=D — on a master with a replica: the replica is cut off so
// that it keeps what it had and misses what clients do on the master for D
// (default 2 x the TTL), as a lagging asynchronous replica would; then the
// master is killed. By hand (--topology replica): the replica was cut off
// with REPLICAOF NO ONE and every client is switched to it. Through
// Sentinel (--topology sentinel): the replication link, which runs through
// an in-process proxy (Env.ReplLink), is cut; the Sentinels promote the
// replica (about 1 to 2 s after the kill) and the clients follow them.
// Keep hold under 5 s there: Sentinel will not promote a replica cut off
// for longer than 10 x down-after-milliseconds (500 ms).
func init() {
	Register("failover", Info{
		Desc:   "cut the replica off for hold, kill the master; clients switched by hand or by Sentinel",
		Params: []registry.Param{Span("hold", "how long the replica misses the master's writes; 0 = 2 x the TTL", 0)},
		Needs:  NeedsReplica,
	}, func(v registry.Values) (Fault, error) { return failover{hold: v.Duration("hold")}, nil })
}

// failover is the failover fault's config.
type failover struct {
	hold time.Duration // the replica cut off before the kill; 0 = 2 x the TTL
}

// Check refuses a strategy on independent masters, a hold Sentinel would
// not promote after, and a layout without a replica (lockbench's own
// servers only: the user's may be anything).
func (f failover) Check(l Layout) []error {
	switch k := l.kind(); {
	case strategies.TopologyOf(l.Strategy) == strategies.Masters:
		return []error{fmt.Errorf("fault failover needs a master with a replica; %s runs on independent masters", l.Strategy)}
	case k == strategies.Sentinel && f.hold >= 5*time.Second:
		return []error{fmt.Errorf("fault failover through Sentinel: hold=%v is too long; Sentinel does not promote a replica cut off for 5 s or more", f.hold)}
	case k != strategies.Replicated && k != strategies.Sentinel && !l.External:
		return []error{fmt.Errorf("fault failover needs --topology replica (by hand) or sentinel, not %s", k)}
	}
	return nil
}

func (f failover) Act(ctx context.Context, a *Action) {
	a.Begin()
	hold := f.hold
	if hold == 0 {
		hold = 2 * a.Env().TTL
	}
	if len(a.Env().Sentinels) > 0 {
		a.End(sentinelFailover(ctx, a, hold))
	} else {
		a.End(handFailover(ctx, a, hold))
	}
}

// handFailover cuts the replica off, lets clients work on the master alone
// for the hold time, kills the master, and switches every client to the
// replica.
func handFailover(ctx context.Context, a *Action, hold time.Duration) string {
	env := a.Env()
	if len(env.Servers) < 2 || len(env.Switches) < 1 {
		return "not done: failover needs a master and a replica"
	}
	master, replica := env.Servers[0], env.Servers[1]
	// Cut the replication link first: a frozen process would still find
	// the master's stream in its socket buffer when thawed. From here the
	// replica keeps what it had and hears nothing more.
	if _, err := topology.Command(replica.Addr, replica.Password, 5*time.Second, "REPLICAOF", "NO", "ONE"); err != nil {
		return "cutting the replica off failed: " + err.Error()
	}
	if hold > 0 {
		Wait(ctx, hold)
	}
	master.Kill()
	d, err := env.Open(replica.Addr, replica.Password)
	if err != nil {
		return "cannot connect to the promoted replica: " + err.Error()
	}
	a.Retire(env.Switches[0].Set(d))
	return fmt.Sprintf("replica %s cut off and promoted; master %s killed %v later; clients switched", replica.Addr, master.Addr, hold)
}

// sentinelFailover cuts the replica's link (its proxy), lets clients work
// on the master for the hold time, kills the master, and waits (at most
// 15 s) for the Sentinels to promote the replica; the clients follow the
// Sentinels by themselves.
func sentinelFailover(ctx context.Context, a *Action, hold time.Duration) string {
	env := a.Env()
	if !env.ReplLink.Started() || len(env.Servers) < 2 {
		return "not done: a Sentinel failover needs the replica's link through a proxy"
	}
	master, replica := env.Servers[0], env.Servers[1]
	env.ReplLink.Cut()
	if hold > 0 {
		Wait(ctx, hold)
	}
	master.Kill()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range env.Sentinels {
			info, err := topology.Command(s, env.SentinelPassword, time.Second, "INFO", "sentinel")
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
