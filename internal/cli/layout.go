package cli

import (
	"fmt"
	"github.com/lockbench/lockbench/internal/faults"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/strategies"
)

// layoutOf is the layout scenario sc will run on, as the flags say: the
// user's servers (--addr, as a Cluster or behind Sentinels), or what
// lockbench starts (layoutKind). masters is the
// number of independent masters to start (--nodes or masters:N), addrs
// the number of --addr servers.
func layoutOf(f *runFlags, sc engine.Scenario, topo strategies.Topology, masters, addrs int) engine.Layout {
	kind := strategies.TopologyOf(sc.Strategy)
	if f.addr != "" {
		switch {
		case f.cluster:
			return engine.Layout{Kind: strategies.Cluster, External: true}
		case f.sentinelMaster != "":
			return engine.Layout{Kind: strategies.Sentinel, External: true}
		case kind == strategies.Masters:
			return engine.Layout{Kind: kind, Servers: addrs, External: true}
		}
		return engine.Layout{Kind: strategies.Standalone, External: true}
	}
	kind = layoutKind(sc, topo)
	servers := map[strategies.Topology]int{strategies.Standalone: 1, strategies.Masters: masters,
		strategies.Replicated: 2, strategies.Sentinel: 2, strategies.Cluster: 3}[kind]
	return engine.Layout{Kind: kind, Servers: servers}
}

// parseRate reads --rate (f.rateSpec): a constant from 0 (closed loop)
// to arrival.MaxRate ops/s (shape nil), or an arrival shape
// (arrival.Parse), whose rate is its mean over the measured window
// (--warmup to --warmup + --duration on the shape's clock, which starts
// with the scenario). Errors: a constant out of range, a shape that does
// not parse, or one with no arrival due in the measured window.
func parseRate(f *runFlags) (rate float64, shape *arrival.Shape, err error) {
	spec := strings.TrimSpace(f.rateSpec)
	if r, err := strconv.ParseFloat(spec, 64); err == nil {
		if r < 0 || r > arrival.MaxRate || r != r {
			return 0, nil, fmt.Errorf("--rate must be from 0 (closed loop) to %d ops/s, got %v", arrival.MaxRate, r)
		}
		return r, nil, nil
	}
	sh, err := arrival.Parse(spec)
	if err != nil {
		return 0, nil, fmt.Errorf("--rate %q: %w", f.rateSpec, err)
	}
	if sh.IsConstant() {
		return sh.Rate(0), nil, nil
	}
	from := f.warmup.Seconds()
	mean := sh.Mean(from, from+f.duration.Seconds())
	if f.duration > 0 && mean <= 0 {
		return 0, nil, fmt.Errorf("--rate %q: no arrival is due in the measured window (--warmup %v to --warmup + --duration %v): the shape's rate is 0 there", f.rateSpec, f.warmup, f.warmup+f.duration)
	}
	return mean, sh, nil
}

// layoutKind is the layout lockbench starts for sc: the strategy's own,
// else topo (--topology), else a master with a replica when a fault needs
// one, else a standalone server.
func layoutKind(sc engine.Scenario, topo strategies.Topology) strategies.Topology {
	if k := strategies.TopologyOf(sc.Strategy); k != strategies.Standalone {
		return k
	}
	if topo != "" {
		return topo
	}
	for _, f := range sc.Faults {
		if f.Needs() == faults.NeedsReplica {
			return strategies.Replicated
		}
	}
	return strategies.Standalone
}
