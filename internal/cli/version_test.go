package cli

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// buildInfoOf names the release when there is one, else the commit:
// never "(devel)".
func TestBuildInfoOf(t *testing.T) {
	const rev = "1be2d60a509459be74c91f19c833ff2a35faaa20"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	info := func(v string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/lockbench/lockbench", Version: v}, Settings: s}
	}
	for _, c := range []struct {
		name             string
		ldVersion, ldRev string
		bi               *debug.BuildInfo
		version, commit  string
		note             bool // the "no VCS stamp" note
	}{
		{"go install @tag", "", "", info("v1.2.3", nil), "v1.2.3", "unknown", false},
		{"go install @commit", "", "", info("v0.0.0-20261204050256-1be2d60a5094", nil), "v0.0.0-20261204050256-1be2d60a5094", "1be2d60a5094", false},
		{"go install @branch after a tag", "", "", info("v1.2.4-0.20261204050256-1be2d60a5094", nil), "v1.2.4-0.20261204050256-1be2d60a5094", "1be2d60a5094", false},
		{"go build in a checkout, Go stamps the version", "", "", info("v0.0.0-20261204050256-1be2d60a5094+dirty", vcs("true")), "v0.0.0-20261204050256-1be2d60a5094+dirty", rev, false},
		{"go build in a checkout on a tag", "", "", info("v1.2.3", vcs("false")), "v1.2.3", rev, false},
		{"(devel) with vcs info", "", "", info("(devel)", vcs("false")), "1be2d60a5094", rev, false},
		{"(devel) with vcs info, modified", "", "", info("(devel)", vcs("true")), "1be2d60a5094+dirty", rev, false},
		{"make build: -buildvcs=false, -ldflags commit", "", "1be2d60", info("(devel)", nil), "1be2d60", "1be2d60", false},
		{"-ldflags release", "v2.0.0", "1be2d60", info("(devel)", nil), "v2.0.0", "1be2d60", false},
		{"nothing known", "", "", info("(devel)", nil), "unknown", "unknown", true},
		{"no build info", "", "", nil, "unknown", "unknown", true},
		{"test binary", "", "", &debug.BuildInfo{}, "unknown", "unknown", true},
	} {
		b := buildInfoOf(c.ldVersion, c.ldRev, c.bi)
		if b.Version != c.version || b.Commit != c.commit {
			t.Errorf("%s: version %q commit %q, want %q %q", c.name, b.Version, b.Commit, c.version, c.commit)
		}
		s := b.String()
		if strings.Contains(s, "(devel)") || !strings.HasPrefix(s, "lockbench "+c.version+" commit "+c.commit+" ") {
			t.Errorf("%s: %q", c.name, s)
		}
		if got := strings.Contains(s, "no VCS stamp"); got != c.note {
			t.Errorf("%s: %q: note %v, want %v", c.name, s, got, c.note)
		}
	}
}

// The Makefile stamps the commit into the variable readBuildInfo reads
// (make build then prints "lockbench 1be2d60 commit 1be2d60 go1.26.8":
// TestBuildInfoOf's "make build" case).
func TestMakefileStampsCommit(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "-X github.com/lockbench/lockbench/internal/cli.gitCommit=$(COMMIT)") {
		t.Fatal("the Makefile's LDFLAGS no longer set internal/cli.gitCommit")
	}
	var _ *string = &gitCommit // a string variable, as -X needs
}
