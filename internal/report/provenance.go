package report

import (
	"sort"
	"strings"
)

// depNames are the short names Provenance and BuildDiff give the modules
// of meta.deps; another module is named by its path.
var depNames = map[string]string{
	"github.com/redis/go-redis/v9":           "go-redis",
	"github.com/redis/rueidis":               "rueidis",
	"github.com/redis/rueidis/rueidiscompat": "rueidiscompat",
	"github.com/redis/rueidis/rueidislock":   "rueidislock",
	"github.com/go-redsync/redsync/v4":       "redsync",
	"github.com/bsm/redislock":               "redislock",
	"github.com/go-sql-driver/mysql":         "go-sql-driver/mysql",
	"github.com/go-zookeeper/zk":             "go-zookeeper/zk",
	"go.etcd.io/etcd/client/v3":              "etcd client",
}

// DepName is the short name of a module of meta.deps ("go-redis").
func DepName(module string) string {
	if n, ok := depNames[module]; ok {
		return n
	}
	return module
}

// redisVersionsOf are the Redis versions m records: redis_versions, else
// redis_version (files written before redis_versions existed).
func (m Meta) redisVersionsOf() []string {
	if len(m.RedisVersions) > 0 {
		return m.RedisVersions
	}
	if m.RedisVersion != "" {
		return []string{m.RedisVersion}
	}
	return nil
}

// commitKnown reports whether m records lockbench's commit.
func (m Meta) commitKnown() bool {
	return m.GitCommit != "" && m.GitCommit != "unknown"
}

// sortedDeps are m.Deps's module paths, sorted.
func (m Meta) sortedDeps() []string {
	mods := make([]string, 0, len(m.Deps))
	for mod := range m.Deps {
		mods = append(mods, mod)
	}
	sort.Strings(mods)
	return mods
}

// Provenance is one line naming the build that produced m's file and the
// Redis it ran against, as far as the file records them: "lockbench
// v1.2.0 commit f5e5dda go1.26.8, redis 7.0.15, go-redis v9.23.0,
// rueidis v1.0.79".
func (m Meta) Provenance() string {
	head := "lockbench"
	if m.Version != "" {
		head += " " + m.Version
	}
	if m.commitKnown() {
		head += " commit " + m.GitCommit
	}
	if m.GoVersion != "" {
		head += " " + m.GoVersion
	}
	parts := []string{head}
	if vs := m.redisVersionsOf(); len(vs) > 0 {
		parts = append(parts, "redis "+strings.Join(vs, "/"))
	}
	for _, mod := range m.sortedDeps() {
		parts = append(parts, DepName(mod)+" "+m.Deps[mod])
	}
	return strings.Join(parts, ", ")
}

// BuildDiff names each way the builds that produced two files differ, in
// the words "<what> <a's> vs <b's>": lockbench's version, its commit, the
// Go version, each module of meta.deps ("none" on the side that does not
// link it) and the Redis versions. A field is compared only when both
// files record it (files written before a field existed do not), and two
// commits are the same when one is a prefix of the other (a short and a
// full hash). Empty when nothing recorded differs.
func BuildDiff(a, b Meta) []string {
	var diffs []string
	add := func(what, x, y string) {
		if x != y {
			diffs = append(diffs, strings.TrimSpace(what+" "+x)+" vs "+y)
		}
	}
	if a.Version != "" && b.Version != "" {
		add("lockbench", a.Version, b.Version)
	}
	if a.commitKnown() && b.commitKnown() && !strings.HasPrefix(a.GitCommit, b.GitCommit) && !strings.HasPrefix(b.GitCommit, a.GitCommit) {
		add("commit", a.GitCommit, b.GitCommit)
	}
	if a.GoVersion != "" && b.GoVersion != "" {
		add("", a.GoVersion, b.GoVersion)
	}
	if len(a.Deps) > 0 && len(b.Deps) > 0 {
		mods := a.sortedDeps()
		for _, mod := range b.sortedDeps() {
			if _, ok := a.Deps[mod]; !ok {
				mods = append(mods, mod)
			}
		}
		sort.Strings(mods)
		none := func(v string, ok bool) string {
			if !ok {
				return "none"
			}
			return v
		}
		for _, mod := range mods {
			x, okx := a.Deps[mod]
			y, oky := b.Deps[mod]
			add(DepName(mod), none(x, okx), none(y, oky))
		}
	}
	if x, y := a.redisVersionsOf(), b.redisVersionsOf(); len(x) > 0 && len(y) > 0 {
		add("redis", strings.Join(x, "/"), strings.Join(y, "/"))
	}
	return diffs
}
