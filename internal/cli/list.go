package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List strategies, drivers, workloads, retry policies and faults, with their parameters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printList(cmd.OutOrStdout())
			return nil
		},
	}
}

// listed is one plugin as `lockbench list` shows it.
type listed struct {
	name, desc string
	params     []registry.Param
}

func listOf[T any](es []registry.Entry[T]) []listed {
	out := make([]listed, len(es))
	for i, e := range es {
		out[i] = listed{e.Name, e.Desc, e.Params}
	}
	return out
}

// printList writes every registered plugin with its description and the
// parameters it declares: as flags (--name) for strategies and workloads
// (which also take them as name=value after NAME: in --strategy and
// --workload), as name=value in the spec for retry policies and faults.
func printList(w io.Writer) {
	section := func(title string, items []listed, asFlag bool) {
		fmt.Fprintf(w, "%s:\n", title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, it := range items {
			fmt.Fprintf(tw, "  %s\t%s\n", it.name, it.desc)
			for _, p := range it.params {
				name := p.Name + "=" + p.Type()
				if asFlag {
					name = "--" + p.Name + " " + p.Type()
				}
				fmt.Fprintf(tw, "    %s\t%s (default %s)\n", name, p.Doc, quoteEmpty(registry.Format(p.Default)))
			}
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	var drvs []listed
	for _, n := range drivers.Names() {
		drvs = append(drvs, listed{name: n, desc: drivers.Describe(n)})
	}
	section("strategies (--strategy NAME[:param=value,...]; a parameter is also a run flag, --param, the default for every strategy that takes it)", listOf(strategies.Entries()), true)
	section("drivers (--driver)", drvs, false)
	section("workloads (--workload NAME[:param=value,...]; a parameter is also a run flag, --param)", listOf(workloads.Entries()), true)
	section("retry policies (--retry NAME[:param=value,...])", listOf(retry.Entries()), false)
	section("faults (--fault NAME[:param=value,...]; "+triggers()+")", listOf(faults.Entries()), false)
}

// triggers says which trigger parameters the faults take: "every fault
// takes at=, all but A and B also after=" (faults.Info.AtOnly).
func triggers() string {
	var atOnly []string
	for _, e := range faults.Entries() {
		if e.Value.AtOnly {
			atOnly = append(atOnly, e.Name)
		}
	}
	switch n := len(atOnly); n {
	case 0:
		return "every fault takes at= and after="
	case 1:
		return "every fault takes at=, all but " + atOnly[0] + " also after="
	default:
		return "every fault takes at=, all but " + strings.Join(atOnly[:n-1], ", ") + " and " + atOnly[n-1] + " also after="
	}
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
