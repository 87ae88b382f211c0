package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	_ "github.com/lockbench/lockbench/drivers/all"
	_ "github.com/lockbench/lockbench/strategies/baselines"
	"github.com/lockbench/lockbench/strategies/ext"
	_ "github.com/lockbench/lockbench/strategies/libs"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "lockbench",
		Short: "Benchmark Redis distributed-lock strategies on real Redis",
		Long: `lockbench drives a workload through a Redis lock strategy on real
redis-server processes, with both Go drivers (go-redis and rueidis), and
reports throughput (ops/s), latency percentiles (p50/p99/p99.9) and exact
safety-violation counts (oversell, overlapping holders, lost updates).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       readBuildInfo().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c.Name() == "run" && strings.Contains(err.Error(), `for "--clients" flag`) && strings.ContainsAny(err.Error(), ",.") {
			err = fmt.Errorf("%w (a list or range of client counts is lockbench sweep's: lockbench sweep --clients 1,10,100)", err)
		}
		return usageError{err}
	})
	root.AddCommand(newRunCmd(), newSweepCmd(), newListCmd(), newHarnessCmd(), newCompareCmd(), newABCmd(), newMergeCmd(), newCheckCmd(), newClaimsCmd(), newReportCmd(), newShowCmd(), newCleanCmd(), newVersionCmd())
	registerEnumCompletions(root)
	return root
}

// Main runs lockbench with args (the command line without the program
// name, as in os.Args[1:]) and returns the process exit code: 0 done, 1 the
// run failed, 2 bad input, 3 a threshold failed, 130/143/129 interrupted
// by SIGINT/SIGTERM/SIGHUP (exitCodesDoc). When args is the process's own
// command line (os.Args[1:]), on Linux it first re-executes the running
// binary once with GODEBUG=madvdontneed=0 added unless GODEBUG already
// sets madvdontneed (reexecLazyFree): call it from main, before other
// goroutines start work. Called with any other args (a test, a program
// that builds its own command line) it never re-executes, since the exec
// could only repeat os.Args: it runs in-process with the runtime's
// default.
func Main(args []string) int {
	ext.ServeIfAdapter() // ext-null, ext-atomic: lockbench started as their adapter
	if ownCommandLine(args, os.Args) {
		reexecLazyFree()
	}
	return execute(args)
}

// ownCommandLine reports whether args is osArgs without the program name:
// Main was called by a main function with the process's own arguments.
func ownCommandLine(args, osArgs []string) bool {
	return len(osArgs) > 0 && slices.Equal(args, osArgs[1:])
}

func execute(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if quitting.Load() {
		// A second Ctrl-C killed the servers under the run: its errors
		// are not failures; the signal handler exits 130 (143, 129).
		select {}
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "lockbench:", cutLong(err.Error()))
	var ue usageError
	switch {
	case errors.As(err, &ue) || isCobraUsage(err):
		if cmd != nil {
			fmt.Fprintf(os.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return exitUsage
	case errors.Is(err, errInterrupted):
		return int(interruptCode.Load())
	case errors.Is(err, errThresholds):
		return exitThresholds
	case errors.Is(err, errRegressed):
		return exitFailure
	case errors.Is(err, errInvalidBaseline):
		return exitInvalidBase
	default:
		return exitFailure
	}
}

// isCobraUsage recognises cobra's own argument errors (unknown command,
// wrong number of arguments).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
