package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

var driverDesc = map[string]string{
	"goredis": "github.com/redis/go-redis/v9: a connection pool sized to --clients",
	"rueidis": "github.com/redis/rueidis: auto-pipelining over shared connections",
}

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List strategies, drivers, workloads and retry policies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printList(cmd.OutOrStdout())
			return nil
		},
	}
}

func printList(w io.Writer) {
	section := func(title string, names []string, desc func(string) string) {
		fmt.Fprintf(w, "%s:\n", title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, n := range names {
			fmt.Fprintf(tw, "  %s\t%s\n", n, desc(n))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	section("strategies (--strategy)", strategies.Names(), strategies.Describe)
	section("drivers (--driver)", drivers.Names(), func(n string) string { return driverDesc[n] })
	section("workloads (--workload)", workloads.Names(), workloads.Describe)
	section("retry policies (--retry NAME[:param=value,...])", retry.Names(), retry.Describe)
	section("faults (--fault NAME[:param=value,...], with at=D or after=N)", faults.Names(), faults.Describe)
}
