package cli

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is lockbench's release; set with -ldflags "-X github.com/lockbench/lockbench/internal/cli.version=..."
// for a release build. A build without it reports the module version from
// the build info: the tag for `go install
// github.com/lockbench/lockbench/cmd/lockbench@vX.Y.Z`, a pseudo-version
// (v0.0.0-<date>-<commit>) for `go install ...@<commit or branch>` and for
// `go build` in a git checkout; a build that has no module version
// ("(devel)": -buildvcs=false, no .git, or the Makefile's build where Go
// stamps none) reports its commit instead, never "(devel)" alone.
var version string

// gitCommit is set by the Makefile with -ldflags "-X github.com/lockbench/lockbench/internal/cli.gitCommit=...".
var gitCommit string

// buildInfo is what `lockbench version` prints.
type buildInfo struct {
	Version   string // release, module version, else the commit, else "unknown"
	Commit    string // VCS revision, "unknown" without one
	Modified  bool   // built from a tree with uncommitted changes
	GoVersion string
	release   bool // Version is a release or module version, not the commit
}

// readBuildInfo combines the -ldflags values (Makefile builds) with the
// build info Go stamps into every binary (runtime/debug: the module
// version; vcs.revision and vcs.modified in a checkout).
func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return buildInfoOf(version, gitCommit, bi)
}

// pseudoRev matches the commit at the end of a Go pseudo-version
// (v0.0.0-20261204050256-1be2d60a5094, v1.2.4-0.20261204050256-1be2d60a5094,
// v1.3.0-rc.1.0.20261204050256-1be2d60a5094, each maybe with +dirty).
var pseudoRev = regexp.MustCompile(`[.-][0-9]{14}-([0-9a-f]{12})(\+[0-9A-Za-z.-]+)?$`)

// buildInfoOf is readBuildInfo on given values: ldVersion and ldCommit
// are the -ldflags variables, bi the build info (nil when there is none).
//
// The version is the release stamped with -ldflags, else the module
// version of the build info unless it is "(devel)", else the commit
// (12 digits of vcs.revision, or the -ldflags commit as given; +dirty
// for a modified tree), else "unknown". The commit is vcs.revision or the
// -ldflags commit, else the one a pseudo-version names, else "unknown".
func buildInfoOf(ldVersion, ldCommit string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: ldVersion, Commit: ldCommit, GoVersion: runtime.Version()}
	if bi != nil {
		if v := bi.Main.Version; b.Version == "" && v != "" && v != "(devel)" {
			b.Version = v
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
	if b.Commit == "" {
		if m := pseudoRev.FindStringSubmatch(b.Version); m != nil {
			b.Commit = m[1]
		}
	}
	b.release = b.Version != ""
	switch {
	case b.Version != "":
	case b.Commit != "":
		b.Version = b.Commit
		if len(b.Version) == 40 {
			b.Version = b.Version[:12]
		}
		if b.Modified {
			b.Version += "+dirty"
		}
	default:
		b.Version = "unknown"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func (b buildInfo) String() string {
	s := "lockbench " + b.Version + " commit " + b.Commit
	if b.Commit == "unknown" && !b.release {
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
		Short: "Print lockbench's version (the release tag, else the commit), commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), readBuildInfo())
			return err
		},
	}
}
