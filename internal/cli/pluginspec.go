package cli

// The items of --strategy and --workload (NAME[:param=value,...]) and the
// checks of parameters that no selected plugin would read.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// unusedParams reports a plugin parameter that the command line or the
// scenario file set but that no selected strategy or workload declares,
// or that every one declaring it overrides with a value of its own
// (NAME:param=value): the value would be silently ignored.
func unusedParams(f *runFlags, stSpecs, wlSpecs []pluginSpec) []error {
	var errs []error
	for _, name := range specNames(stSpecs) {
		if !strategies.Known(name) {
			return nil // a misspelt name: its own error says more
		}
	}
	for _, name := range specNames(wlSpecs) {
		if _, err := workloads.Lookup(name); err != nil {
			return nil
		}
	}
	for _, pp := range pluginParams() {
		if !f.pluginSet[pp.Name] {
			continue
		}
		used, takers := false, []string{}
		for _, sp := range append(slices.Clone(stSpecs), wlSpecs...) {
			if !slices.Contains(pp.users, sp.name) {
				continue
			}
			takers = append(takers, sp.name)
			used = used || !sp.own.Has(pp.Name) // a value of its own overrides the flag
		}
		switch {
		case len(takers) == 0:
			errs = append(errs, fmt.Errorf("--%s goes with %s (not with the --strategy and --workload of this run)", pp.Name, strings.Join(pp.users, ", ")))
		case !used && len(takers) == 1:
			errs = append(errs, fmt.Errorf("--%s has no effect: %s gives its own (%s:%s=...); drop one of the two", pp.Name, takers[0], takers[0], pp.Name))
		case !used:
			errs = append(errs, fmt.Errorf("--%s has no effect: %s each give their own (NAME:%s=...); drop the flag or one of theirs", pp.Name, strings.Join(takers, ", "), pp.Name))
		}
	}
	return errs
}

// pluginSpec is one item of --strategy or --workload: a registered name
// and the parameters given to that plugin alone (NAME:param=value,...),
// which override the run flags' values (--param, matrix-wide defaults)
// for its scenarios.
type pluginSpec struct {
	name string
	own  registry.Values // only the parameters given after NAME:
}

// parsePluginSpecs reads a --strategy or --workload list (kind names the
// plugins in messages): comma-separated items NAME[:param=value,...], an
// item's parameters kept with it as --retry's are
// ("redsync:tries=3,retry-delay=10ms,atomic" is two items). Every problem is returned: an item
// whose parameter has no NAME: before it, a parameter the plugin does not
// declare (with those it does), a value of the wrong type or one its
// declaration refuses, and a plugin listed twice with parameters of its
// own (one matrix runs each plugin once). An unknown name is returned as
// it is, for the matrix's own check to name the valid ones.
func parsePluginSpecs(kind, list string, paramsOf func(string) []registry.Param, known func(string) bool) ([]pluginSpec, []error) {
	var specs []pluginSpec
	var errs []error
	given := map[string]string{} // name -> the first item that named it
	for _, item := range splitRetry(list) {
		name, args, scoped := strings.Cut(item, ":")
		name = strings.TrimSpace(name)
		if !scoped && strings.Contains(name, "=") {
			// "redlock,extend=on": the parameter joined the item before it.
			head, tail, _ := strings.Cut(name, ",")
			hint := kindExample(kind)
			if !strings.Contains(head, "=") {
				hint = head + ":" + tail
			}
			errs = append(errs, fmt.Errorf("--%s %q: a parameter goes after its %s's name and a colon, NAME:param=value (%s)", kind, item, kind, hint))
			if strings.Contains(head, "=") {
				continue
			}
			name = head
		}
		sp := pluginSpec{name: name, own: registry.Values{}}
		if scoped && known(name) {
			own, err := registry.ParseGiven(kind, name, args, paramsOf(name))
			if err != nil {
				errs = append(errs, err)
			}
			sp.own = own
		}
		if first, dup := given[name]; dup && (scoped || strings.Contains(first, ":")) {
			errs = append(errs, fmt.Errorf("--%s lists %s twice (%s and %s): a run has one %s %s; give it one set of parameters, or run each in a run of its own", kind, name, first, item, kind, name))
			continue
		}
		if _, dup := given[name]; !dup {
			given[name] = item
		}
		specs = append(specs, sp)
	}
	return specs, errs
}

func kindExample(kind string) string {
	if kind == "strategy" {
		return "redlock:extend=unchecked,redsync:extend=on"
	}
	return "flash-sale:stock=100,hot-key:keys=10"
}

// specNames are the specs' plugin names, in order.
func specNames(specs []pluginSpec) []string {
	out := make([]string, len(specs))
	for i, sp := range specs {
		out[i] = sp.name
	}
	return out
}

// flatParamErrors reports a run flag's value (a matrix-wide default) that
// a strategy of the matrix refuses, where several strategies of the matrix
// take the parameter and --strategy gives that one no value of its own:
// which strategy refuses it, and the scoped form that gives it another
// (--extend unchecked suits redlock, not redsync: --strategy
// redsync:extend=on). engine.Validate's plainer message of the same
// problem is marked in seen, so that it is not repeated.
func flatParamErrors(f *runFlags, specs []pluginSpec, seen map[string]bool) []error {
	takers := map[string]int{} // strategies of the matrix that declare each parameter
	for _, sp := range specs {
		for _, p := range strategies.ParamsOf(sp.name) {
			takers[p.Name]++
		}
	}
	var errs []error
	for _, sp := range specs {
		ps := strategies.ParamsOf(sp.name)
		v := registry.Pick(ps, f.plugin)
		for _, p := range ps {
			if sp.own.Has(p.Name) || !f.pluginSet[p.Name] || takers[p.Name] < 2 {
				continue // its own value (checked when read), the default, or one taker: the plain message says it
			}
			if err := p.Validate(v[p.Name]); err != nil {
				errs = append(errs, fmt.Errorf("--%s %s: strategy %s: %v (a value for %s alone: --strategy %s:%s=VALUE)",
					p.Name, registry.Format(v[p.Name]), sp.name, err, sp.name, sp.name, p.Name))
				for _, plain := range registry.Check("--", []registry.Param{p}, v) {
					seen[plain.Error()] = true
				}
			}
		}
	}
	return errs
}
