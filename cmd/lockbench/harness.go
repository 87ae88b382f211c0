package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/harness"
	"github.com/lockbench/lockbench/internal/topology"
	"github.com/lockbench/lockbench/strategies/retry"
	"github.com/lockbench/lockbench/workloads"
)

func newHarnessCmd() *cobra.Command {
	var clients, requests int
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "harness",
		Short: "Check that lockbench is not the bottleneck: lock cycles/s against redis-benchmark and a bare loop",
		Long: `harness starts one redis-server and measures the uncontended lock cycle
(SET NX PX on a fresh key, then EVALSHA of the compare-and-delete script) at
the same connection count three ways: redis-benchmark issuing the two
commands (equivalent cycle rate 1 / (1/rate_set + 1/rate_evalsha)); a bare
Go loop per driver that records nothing; and 'lockbench run --strategy atomic
--workload lock-cycle' per driver. It prints, last, one line per driver:
  harness-ratio <driver> <lockbench cycles/s / redis-benchmark cycle rate>
  harness-overhead <driver> <lockbench cycles/s / bare loop cycles/s>
All figures are from this run, on this machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if clients < 1 || requests < 1000 || duration <= 0 {
				return usageError{errors.New("--clients >= 1, --requests >= 1000 and --duration > 0 please")}
			}
			return runHarness(cmd.Context(), cmd.OutOrStdout(), clients, requests, duration)
		},
	}
	cmd.Flags().IntVar(&clients, "clients", 50, "connections / goroutines for every measurement")
	cmd.Flags().IntVar(&requests, "requests", 200000, "redis-benchmark requests per command")
	cmd.Flags().DurationVar(&duration, "duration", 5*time.Second, "time of each Go measurement")
	return cmd
}

func runHarness(parent context.Context, w io.Writer, clients, requests int, d time.Duration) error {
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	topo, err := topology.Start(ctx, 1)
	if err != nil {
		return err
	}
	defer topo.Stop()
	s := topo.Servers[0]
	set, evalsha, rb, err := harness.RedisBenchmark(s.Addr, s.Password, clients, requests)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "redis-benchmark  SET NX PX %.0f/s, EVALSHA %.0f/s -> %.0f cycles/s (%d connections)\n", set, evalsha, rb, clients)
	pol, _ := retry.Parse("none")
	type line struct{ ratio, overhead float64 }
	results := map[string]line{}
	for _, drv := range drivers.Names() {
		bare, err := harness.BareLoop(ctx, drv, s.Addr, s.Password, clients, d)
		if err != nil {
			return fmt.Errorf("bare loop %s: %w", drv, err)
		}
		res, err := engine.Run(ctx, engine.Scenario{
			Strategy: "atomic", Driver: drv, Workload: "lock-cycle", Retry: pol, Clients: clients,
			Duration: d, TTL: time.Second, Seed: 1,
			Params: workloads.Params{Keys: 100_000},
		}, []engine.Node{{Addr: s.Addr, Password: s.Password}}, "lockbench:harness:"+drv+":")
		if err != nil {
			return fmt.Errorf("lockbench %s: %w", drv, err)
		}
		fmt.Fprintf(w, "%-8s bare loop %.0f cycles/s; lockbench %.0f cycles/s (client CPU %.0f%% of its budget)\n",
			drv, bare, res.OpsPerSec, 100*res.ClientCPU.BudgetShare)
		results[drv] = line{res.OpsPerSec / rb, res.OpsPerSec / bare}
	}
	for _, drv := range drivers.Names() {
		fmt.Fprintf(w, "harness-ratio %s %.2f\n", drv, results[drv].ratio)
	}
	for _, drv := range drivers.Names() {
		fmt.Fprintf(w, "harness-overhead %s %.2f\n", drv, results[drv].overhead)
	}
	return nil
}
