package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is lockbench's release; set with -ldflags "-X github.com/lockbench/lockbench/internal/cli.version=..."
// for a release build. A build without it reports the module version from
// the build info: "(devel)" for a build from a checkout, the tag for
// `go install github.com/lockbench/lockbench/cmd/lockbench@vX`.
var version string

// gitCommit is set by the Makefile with -ldflags "-X github.com/lockbench/lockbench/internal/cli.gitCommit=...".
var gitCommit string

// buildInfo is what `lockbench version` prints.
type buildInfo struct {
	Version   string // release or module version
	Commit    string // VCS revision, "unknown" without one
	Modified  bool   // built from a tree with uncommitted changes
	GoVersion string
}

// readBuildInfo combines the -ldflags values (Makefile builds) with the
// build info Go stamps into every binary built in a checkout
// (runtime/debug; vcs.revision and vcs.modified).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: gitCommit, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if b.Version == "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func (b buildInfo) String() string {
	s := "lockbench " + b.Version + " commit " + b.Commit
	if b.Commit == "unknown" {
		s += " (no VCS stamp: built outside a git checkout or with -buildvcs=false; make build stamps it)"
	}
	if b.Modified {
		s += " (modified)"
	}
	return s + " " + b.GoVersion
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print lockbench's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), readBuildInfo())
			return err
		},
	}
}
