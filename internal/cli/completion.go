package cli

import (
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// nameFlags are the flags whose values are registered plugin names, with
// the function listing the names, the one giving a name's declared
// parameters (NAME:param=value), and whether the flag takes a
// comma-separated list of items (--fault takes one item per flag,
// repeated; --driver's names take no parameters).
var nameFlags = []struct {
	flag   string
	names  func() []string
	params func(name string) []registry.Param
	list   bool
}{
	{"strategy", strategies.Names, strategies.ParamsOf, true},
	{"driver", drivers.Names, nil, true},
	{"workload", workloads.Names, workloads.ParamsOf, true},
	{"retry", retry.Names, entryParams(retry.Entries), true},
	{"fault", faults.Names, entryParams(faults.Entries), false},
}

// entryParams turns a registry's Entries into a look-up of one name's
// parameters (nil for an unknown name).
func entryParams[T any](entries func() []registry.Entry[T]) func(string) []registry.Param {
	return func(name string) []registry.Param {
		for _, e := range entries() {
			if e.Name == name {
				return e.Params
			}
		}
		return nil
	}
}

// registerNameCompletions makes cmd's shell completion (cobra's
// `lockbench completion bash|zsh|fish|powershell`) offer the registered
// names for --strategy, --driver, --workload, --retry and --fault, and
// after NAME: the parameters that plugin declares. In a comma list the
// names complete the part after the last comma, the earlier parts kept
// (`--strategy atomic,wa<TAB>` gives atomic,watchdog), with no space
// after, so that another comma may follow; `--strategy redlock:<TAB>`
// gives redlock:extend=, redlock:quorum= and the rest, and after a
// parameter (`redlock:extend=on,<TAB>`) both the plugin's other
// parameters and the names of further items.
func registerNameCompletions(cmd *cobra.Command) {
	for _, nf := range nameFlags {
		if cmd.Flags().Lookup(nf.flag) == nil {
			continue
		}
		_ = cmd.RegisterFlagCompletionFunc(nf.flag, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeItems(nf.names(), nf.params, toComplete, nf.list)
		})
	}
}

// completeItems returns the candidates for toComplete, a value of a flag
// whose items are NAME[:param=value,...] (params nil: names only, no
// parameters), and the directive: no file names, and no space after
// (another comma or a value may follow) except after a whole name of a
// flag that takes one item without parameters.
func completeItems(names []string, params func(string) []registry.Param, toComplete string, list bool) ([]string, cobra.ShellCompDirective) {
	directive := cobra.ShellCompDirectiveNoFileComp
	if list || params != nil {
		directive |= cobra.ShellCompDirectiveNoSpace
	}
	prefix, part := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 && (list || params != nil) {
		prefix, part = toComplete[:i+1], toComplete[i+1:]
	}
	// The item the part belongs to, and the parameters it has been given.
	item, given, taken := "", map[string]bool{}, map[string]bool{}
	for _, p := range strings.Split(strings.TrimSuffix(prefix, ","), ",") {
		if p == "" {
			continue
		}
		name, args, scoped := strings.Cut(p, ":")
		if !strings.Contains(p, "=") || scoped { // a new item: NAME or NAME:param=value
			item, given = name, map[string]bool{}
			taken[name] = true
			p = args
		}
		if k, _, ok := strings.Cut(p, "="); ok {
			given[strings.TrimSpace(k)] = true
		}
	}
	var out []string
	if name, partial, scoped := strings.Cut(part, ":"); scoped {
		if params != nil {
			out = completeParams(prefix+name+":", params(name), partial, nil)
		}
	} else {
		if item != "" && params != nil && len(given) > 0 || !list && item != "" && params != nil {
			out = completeParams(prefix, params(item), part, given)
		}
		if list || item == "" {
			for _, n := range names {
				if strings.HasPrefix(n, part) && !taken[n] {
					out = append(out, prefix+n)
				}
			}
		}
	}
	sort.Strings(out)
	return out, directive
}

// completeParams returns lead+"name=" for each of ps whose name starts
// with partial and is not in given.
func completeParams(lead string, ps []registry.Param, partial string, given map[string]bool) []string {
	var out []string
	for _, p := range ps {
		if strings.HasPrefix(p.Name, partial) && !given[p.Name] {
			out = append(out, lead+p.Name+"=")
		}
	}
	return out
}

// completeNames returns the candidates for toComplete among names, which
// take no parameters: with list, for its last comma-separated part, each
// prefixed by the parts before it (names already in the list are not
// offered again).
func completeNames(names []string, toComplete string, list bool) ([]string, cobra.ShellCompDirective) {
	return completeItems(names, nil, toComplete, list)
}

// The fixed sets of values some flags take, each the list their
// validation checks against (or, for --topology and --backend, whose
// checks are switches in plan.go, the values those switches accept:
// TestCompletionEnumFlags runs each through the validation).
var (
	// compareFormats are compare's --format values.
	compareFormats = []string{"table", "benchstat"}
	// cleanDrivers are clean's --driver values.
	cleanDrivers = []string{"goredis", "rueidis"}
	// topologyNames are --topology's values; "masters:" takes a count.
	topologyNames = []string{"standalone", "masters:", "replica", "sentinel", "cluster"}
	// backendNames are --backend's values.
	backendNames = []string{"local", "docker"}
)

// enumFlags are the flags, other than nameFlags and the shared settings'
// words (registerSharedCompletions), that take one of a fixed set of
// values, or a comma list of them (list): for the commands named (nil:
// every command with the flag), the values, given the command and its
// positional arguments.
var enumFlags = []struct {
	cmds   []string
	flag   string
	values func(cmd *cobra.Command, args []string) []string
	list   bool
}{
	{[]string{"compare"}, "format", fixed(compareFormats), false},
	{[]string{"run", "sweep", "show"}, "format", fixed(report.Formats), false},
	{nil, "topology", fixed(topologyNames), false},
	{nil, "backend", fixed(backendNames), false},
	{nil, "columns", columnValues, true},
	{[]string{"compare"}, "normalize", normalizeValues, false},
	{[]string{"clean"}, "driver", fixed(cleanDrivers), false},
	{[]string{"claims"}, "driver", func(*cobra.Command, []string) []string { return drivers.Names() }, false},
}

func fixed(v []string) func(*cobra.Command, []string) []string {
	return func(*cobra.Command, []string) []string { return v }
}

// columnValues are --columns' keys: all and every column of the table
// (and of sweep's table; show takes either), as checkColumns accepts.
func columnValues(cmd *cobra.Command, _ []string) []string {
	sweeps := map[string][]bool{"sweep": {true}, "show": {false, true}}[cmd.Name()]
	if sweeps == nil {
		sweeps = []bool{false}
	}
	out := []string{"all"}
	for _, sweep := range sweeps {
		full, extra := tableColumns(sweep)
		for _, k := range report.ColumnKeys(append(full, extra...)) {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// normalizeValues are the scenario names (strategy/driver/workload/retry)
// of compare's first file, the names report.Compare looks --normalize up
// among; none before a file is given or when it cannot be read.
func normalizeValues(_ *cobra.Command, args []string) []string {
	if len(args) == 0 {
		return nil
	}
	run, err := readResult(args[0], 0) // 0: report.DefaultMaxInput
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range run.Scenarios {
		out = append(out, s.Name())
	}
	return out
}

// oneOfValues are the values a string parameter checked by
// registry.OneOf accepts, read from its refusal of a value no parameter
// takes ("X is not one of a, b"); nil for other parameters. The empty
// value ("") is not offered.
func oneOfValues(p registry.Param) []string {
	if _, ok := p.Default.(string); !ok || p.Check == nil {
		return nil
	}
	err := p.Check("\x00")
	if err == nil {
		return nil
	}
	_, list, ok := strings.Cut(err.Error(), " is not one of ")
	if !ok {
		return nil
	}
	var out []string
	for _, v := range strings.Split(list, ", ") {
		if v != `""` {
			out = append(out, v)
		}
	}
	return out
}

// registerEnumCompletions makes the shell completion of every command
// under root offer the values of enumFlags and of the plugin parameters
// checked by registry.OneOf (--extend, --mode...: the values any of the
// declaring plugins accepts); a flag whose completion is already
// registered (nameFlags, the shared settings) keeps it.
func registerEnumCompletions(root *cobra.Command) {
	params := map[string][]string{}
	eachPlugin(func(_ string, ps []registry.Param) {
		for _, p := range ps {
			for _, v := range oneOfValues(p) {
				if !slices.Contains(params[p.Name], v) {
					params[p.Name] = append(params[p.Name], v)
				}
			}
		}
	})
	for _, cmd := range root.Commands() {
		for _, ef := range enumFlags {
			if cmd.Flags().Lookup(ef.flag) == nil || ef.cmds != nil && !slices.Contains(ef.cmds, cmd.Name()) {
				continue
			}
			_ = cmd.RegisterFlagCompletionFunc(ef.flag, func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				values := ef.values(c, args)
				out, directive := completeNames(values, toComplete, ef.list)
				if slices.ContainsFunc(out, func(v string) bool { return strings.HasSuffix(v, ":") }) {
					directive |= cobra.ShellCompDirectiveNoSpace // masters: takes a count
				}
				return out, directive
			})
		}
		for name, values := range params {
			if cmd.Flags().Lookup(name) == nil {
				continue
			}
			if _, ok := cmd.GetFlagCompletionFunc(name); ok {
				continue
			}
			_ = cmd.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeNames(values, toComplete, false)
			})
		}
	}
}
