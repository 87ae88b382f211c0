package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// Validate reports every reason sc cannot run, all at once, without
// changing sc: an unknown strategy, workload or driver (with the nearest
// name), a pair that does not run
// together, a fault or write guard the strategy cannot take, a value of a
// plugin parameter (sc.Options) that its declaration refuses, and a layout
// of nodes Redis servers too small for the strategy (nodes <= 0: not
// checked). Run calls it first; the command line calls it for every
// scenario of its matrix before it starts a server.
func Validate(sc Scenario, nodes int) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	info, err := strategies.Lookup(sc.Strategy)
	if err != nil {
		errs = append(errs, err)
	}
	wparams, err := workloads.Lookup(sc.Workload)
	if err != nil {
		errs = append(errs, err)
	}
	if err := drivers.Lookup(sc.Driver); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errs
	}
	if !strategies.RunsWith(sc.Strategy, sc.Workload) {
		bad("strategy %s does not run workload %s (it runs %s)", sc.Strategy, sc.Workload, strings.Join(info.Workloads, ", "))
	}
	if info.Backend != strategies.NoBackend && len(sc.Faults) > 0 {
		bad("--fault acts on Redis servers and Redis locks; %s keeps its lock or data in %s", sc.Strategy, info.Backend)
	}
	if info.Backend == strategies.MariaDB && sc.Guard != "" && sc.Guard != "auto" {
		bad("--guard %s: %s writes its own way (sql-rowlock: a plain UPDATE under the row lock; sql-guard: the conditional UPDATE); leave --guard auto", sc.Guard, sc.Strategy)
	}
	if sc.ConstantToken && !info.ConstantToken {
		bad("--token constant: strategy %q keeps its own token (constant applies to %s)", sc.Strategy, strings.Join(constantTokenStrategies(), ", "))
	}
	for _, f := range sc.Faults {
		if f.Name == "failover" && info.Topology == strategies.Masters {
			bad("fault failover needs a master with a replica; %s runs on independent masters", sc.Strategy)
		}
	}
	if nodes > 0 {
		if err := info.CheckNodes(sc.Strategy, nodes); err != nil {
			errs = append(errs, err)
		}
	}
	sp := registry.Pick(strategies.ParamsOf(sc.Strategy), sc.Options)
	wp := registry.Pick(wparams, sc.Options)
	errs = append(errs, registry.Check("--", strategies.ParamsOf(sc.Strategy), sp)...)
	errs = append(errs, registry.Check("--", wparams, wp)...)
	if seg, stock := sp.Int("segments"), wp.Int64("stock"); seg > 0 && stock > 0 && int64(seg) > stock {
		bad("--segments %d exceeds --stock %d: segments would start empty", seg, stock)
	}
	return errs
}

// validate is Validate as one error, for Run.
func validate(sc Scenario) error { return errors.Join(Validate(sc, 0)...) }

func constantTokenStrategies() []string {
	var out []string
	for _, e := range strategies.Entries() {
		if e.Value.ConstantToken {
			out = append(out, e.Name)
		}
	}
	return out
}
