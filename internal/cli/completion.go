package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

// nameFlags are the flags whose values are registered plugin names, with
// the function listing the names and whether the flag takes a
// comma-separated list (--fault takes one name per flag, repeated).
var nameFlags = []struct {
	flag  string
	names func() []string
	list  bool
}{
	{"strategy", strategies.Names, true},
	{"driver", drivers.Names, true},
	{"workload", workloads.Names, true},
	{"retry", retry.Names, true},
	{"fault", faults.Names, false},
}

// registerNameCompletions makes cmd's shell completion (cobra's
// `lockbench completion bash|zsh|fish|powershell`) offer the registered
// names for --strategy, --driver, --workload, --retry and --fault. In a
// comma list the names complete the part after the last comma, the
// earlier parts kept (`--strategy atomic,wa<TAB>` gives atomic,watchdog),
// with no space after, so that another comma may follow.
func registerNameCompletions(cmd *cobra.Command) {
	for _, nf := range nameFlags {
		if cmd.Flags().Lookup(nf.flag) == nil {
			continue
		}
		_ = cmd.RegisterFlagCompletionFunc(nf.flag, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeNames(nf.names(), toComplete, nf.list)
		})
	}
}

// completeNames returns the candidates for toComplete among names: with
// list, for its last comma-separated part, each prefixed by the parts
// before it (names already in the list are not offered again).
func completeNames(names []string, toComplete string, list bool) ([]string, cobra.ShellCompDirective) {
	prefix, part := "", toComplete
	taken := map[string]bool{}
	if list {
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			prefix, part = toComplete[:i+1], toComplete[i+1:]
			for _, p := range strings.Split(toComplete[:i], ",") {
				name, _, _ := strings.Cut(p, ":") // retry:param=value
				taken[name] = true
			}
		}
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, part) && !taken[n] {
			out = append(out, prefix+n)
		}
	}
	sort.Strings(out)
	directive := cobra.ShellCompDirectiveNoFileComp
	if list {
		directive |= cobra.ShellCompDirectiveNoSpace
	}
	return out, directive
}
