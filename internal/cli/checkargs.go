package cli

import (
	"context"
	"io"
	"slices"

	"github.com/spf13/cobra"
)

// checked are the commands whose RunE stops on checkOnly after the
// validation it does before any work; the others have their flags and
// arguments parsed only.
var checked = []string{"run", "sweep", "merge"}

// CheckArgs reports whether args, a lockbench command line without the
// program name (as Main takes it), would be accepted: it builds the same
// command tree as Main, finds the subcommand, parses its flags and
// positional arguments with cobra, and for run and sweep applies a
// scenario file (-f) and runs the validation run does before it starts
// anything (validate: every flag, the strategies, workloads and faults by
// name, the scenarios, --out's directory); for merge it checks --out. It
// starts no server, connects to nothing and reads no result file; the
// only side effect is the writability probe of --out (a temporary file
// created and removed at once in the nearest existing directory above
// it). $LOCKBENCH_PASSWORD is read as run reads it. It is for tests of
// command lines written in files (deploy/k8s, compose/distributed.yaml).
// The error is the one Main would print (nil when the line is valid);
// --help and --version are valid and print nothing.
func CheckArgs(args []string) error {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	if cmd, _, err := root.Find(args); err == nil && cmd != root && !slices.Contains(checked, cmd.Name()) {
		cmd.Run, cmd.RunE = nil, func(*cobra.Command, []string) error { return nil }
	}
	ctx := context.WithValue(context.Background(), checkOnlyKey{}, true)
	return root.ExecuteContext(ctx)
}
