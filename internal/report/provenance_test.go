package report

import (
	"strings"
	"testing"
)

// BuildDiff names every difference between two builds in one fixed
// wording, compares only what both files record, and takes a short and a
// full hash of one commit as the same.
func TestBuildDiff(t *testing.T) {
	a := Meta{Version: "v1.2.0", GitCommit: "f5e5dda", GoVersion: "go1.26.8", RedisVersion: "7.0.15",
		Deps: map[string]string{
			"github.com/redis/go-redis/v9":     "v9.23.0",
			"github.com/redis/rueidis":         "v1.0.79",
			"github.com/go-redsync/redsync/v4": "v4.18.1",
			"github.com/bsm/redislock":         "v0.9.4",
		}}
	b := Meta{Version: "(devel)", GitCommit: "c40632f0123456789abcdef0123456789abcdef0", GoVersion: "go1.26.9",
		RedisVersion: "7.0.15", RedisVersions: []string{"7.0.15", "7.2.4"},
		Deps: map[string]string{
			"github.com/redis/go-redis/v9":     "v9.24.0",
			"github.com/redis/rueidis":         "v1.0.79",
			"github.com/go-redsync/redsync/v4": "v4.18.1",
			"go.etcd.io/etcd/client/v3":        "v3.6.16",
		}}
	got := strings.Join(BuildDiff(a, b), ", ")
	want := "lockbench v1.2.0 vs (devel), commit f5e5dda vs c40632f0123456789abcdef0123456789abcdef0, go1.26.8 vs go1.26.9, " +
		"redislock v0.9.4 vs none, go-redis v9.23.0 vs v9.24.0, etcd client none vs v3.6.16, redis 7.0.15 vs 7.0.15/7.2.4"
	if got != want {
		t.Errorf("BuildDiff:\n got %s\nwant %s", got, want)
	}
	if d := BuildDiff(a, a); d != nil {
		t.Errorf("a file against itself: %q, want none", d)
	}

	// One commit, short and full; the same Redis said by redis_version
	// alone (an older file) and by redis_versions.
	c := a
	c.GitCommit = "f5e5dda0123456789abcdef0123456789abcdef0"
	c.RedisVersion, c.RedisVersions = "7.0.15", []string{"7.0.15"}
	if d := BuildDiff(a, c); d != nil {
		t.Errorf("short and full hash of one commit: %q, want none", d)
	}

	// A file written before version and deps existed, with no commit
	// stamped: only the Go and Redis versions can be compared.
	old := Meta{GitCommit: "unknown", GoVersion: "go1.26.8", RedisVersion: "6.2.14"}
	if got, want := strings.Join(BuildDiff(old, b), ", "), "go1.26.8 vs go1.26.9, redis 6.2.14 vs 7.0.15/7.2.4"; got != want {
		t.Errorf("old file:\n got %s\nwant %s", got, want)
	}
}

func TestProvenance(t *testing.T) {
	m := Meta{Version: "(devel)", GitCommit: "f5e5dda", GoVersion: "go1.26.8", RedisVersion: "7.0.15",
		Deps: map[string]string{"github.com/redis/rueidis": "v1.0.79", "github.com/redis/go-redis/v9": "v9.23.0", "example.com/other": "v0.1.0"}}
	want := "lockbench (devel) commit f5e5dda go1.26.8, redis 7.0.15, example.com/other v0.1.0, go-redis v9.23.0, rueidis v1.0.79"
	if got := m.Provenance(); got != want {
		t.Errorf("Provenance:\n got %s\nwant %s", got, want)
	}
	if got, want := (Meta{GitCommit: "unknown"}).Provenance(), "lockbench"; got != want {
		t.Errorf("nothing recorded: %q, want %q", got, want)
	}
}
