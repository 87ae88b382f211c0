package cli

import (
	"context"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
)

// depModules are the modules whose versions a result file records in
// meta.deps: the Redis drivers, the lock libraries and the baseline
// strategies' clients. A module the binary does not link is left out
// (rueidislock is a package of the rueidis module; its own path is listed
// in case it becomes a module of its own).
var depModules = []string{
	"github.com/redis/go-redis/v9",
	"github.com/redis/rueidis",
	"github.com/redis/rueidis/rueidiscompat",
	"github.com/redis/rueidis/rueidislock",
	"github.com/go-redsync/redsync/v4",
	"github.com/bsm/redislock",
	"github.com/go-sql-driver/mysql",
	"github.com/go-zookeeper/zk",
	"go.etcd.io/etcd/client/v3",
}

// provenance fills the fields of m that say which build produced the
// file: lockbench's version and the versions of depModules linked in.
// meta.git_commit and meta.go_version are set with the rest of the Meta.
func provenance(m *report.Meta) {
	m.Version = readBuildInfo().Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		m.Deps = depsOf(bi.Deps)
	}
}

// depsOf picks depModules out of a build's modules: module path ->
// version; a replaced module reads "v1.2.3 => path v1.2.4" (a local
// replacement has no version). Nil when none is there (a test binary's
// build info lists no modules).
func depsOf(mods []*debug.Module) map[string]string {
	var deps map[string]string
	for _, d := range mods {
		if !slices.Contains(depModules, d.Path) {
			continue
		}
		v := d.Version
		if r := d.Replace; r != nil {
			v = strings.TrimSpace(v + " => " + strings.TrimSpace(r.Path+" "+r.Version))
		}
		if deps == nil {
			deps = map[string]string{}
		}
		deps[d.Path] = v
	}
	return deps
}

// redisVersions reads the version of every server a run's scenarios
// connect to, once per node.
type redisVersions struct {
	seen map[string]bool
}

// probe sets m.RedisVersion from the first node, the first time (its
// failure is returned, as it always was: the run cannot start), and adds
// the versions of nodes' servers not read before to m.RedisVersions
// (every master of a cluster). A node that cannot be read then is left
// out: the scenario reports its own connection failure.
func (v *redisVersions) probe(ctx context.Context, driver string, nodes []engine.Node, m *report.Meta) error {
	if m.RedisVersion == "" {
		rv, err := probeVersion(ctx, driver, nodes)
		if err != nil {
			return err
		}
		m.RedisVersion = rv
	}
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	vs := slices.Clone(m.RedisVersions) // a copy: publish() shares the old slice
	for _, n := range nodes {
		key := strings.Join([]string{n.Addr, strings.Join(n.Seeds, ","), strings.Join(n.Sentinels, ","), n.MasterName, strconv.FormatBool(n.Cluster)}, "|")
		if v.seen[key] {
			continue
		}
		ds, err := engine.Open(ctx, driver, []engine.Node{n}, 1)
		if err != nil {
			continue
		}
		got, err := redisadmin.ServerVersions(ctx, ds[0])
		ds[0].Close()
		if err != nil {
			continue
		}
		v.seen[key] = true
		vs = append(vs, got...)
	}
	if len(vs) == 0 {
		vs = []string{m.RedisVersion}
	}
	m.RedisVersions = distinctVersions(vs)
	return nil
}

// distinctVersions sorts versions numerically ("7.0.15" before
// "7.10.0") and drops repeats.
func distinctVersions(vs []string) []string {
	vs = slices.Clone(vs)
	slices.SortFunc(vs, compareVersions)
	return slices.Compact(vs)
}

// compareVersions compares dotted versions part by part, numerically
// where both parts are numbers.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errx := strconv.Atoi(as[i])
		y, erry := strconv.Atoi(bs[i])
		var c int
		if errx == nil && erry == nil {
			c = x - y
		} else {
			c = strings.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}
