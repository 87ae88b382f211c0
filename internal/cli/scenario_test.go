package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/topology"
)

// fileList reads a list field of a scenario file as the run would: a YAML
// list or a comma string, else the flag's default.
func fileList(t *testing.T, doc map[string]any, name string) []string {
	t.Helper()
	switch v := doc[name].(type) {
	case nil:
		return splitList(newRunCmd().Flags().Lookup(name).DefValue)
	case string:
		return splitList(v)
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	default:
		t.Fatalf("field %s: %T", name, v)
	}
	return nil
}

// exampleWant are the scenarios (strategy/driver/workload) of the
// example doc: its matrix, or with a scenarios: list each item's, its
// fields over the top level's.
func exampleWant(t *testing.T, doc map[string]any) []string {
	t.Helper()
	var want []string
	if items, ok := doc["scenarios"].([]any); ok {
		for _, it := range items {
			m := maps.Clone(doc)
			delete(m, "scenarios")
			maps.Copy(m, it.(map[string]any))
			want = append(want, exampleWant(t, m)...)
		}
		return want
	}
	strats, drvs, wls := fileList(t, doc, "strategy"), fileList(t, doc, "driver"), fileList(t, doc, "workload")
	retries := splitRetry(strings.Join(fileList(t, doc, "retry"), ","))
	for _, wl := range wls {
		for _, st := range strats {
			for range retries {
				for _, d := range drvs {
					want = append(want, st+"/"+d+"/"+wl)
				}
			}
		}
	}
	return want
}

// exampleEffects holds, for every example in scenarios/, the duration it
// runs with in TestScenarioExamples and a check of the effect its comment
// header documents; a new example needs an entry here.
var exampleEffects = map[string]struct {
	duration string
	check    func(t *testing.T, run *report.Run)
}{
	// "A Redis Cluster of three masters that lockbench starts ... every
	// lock's keys in one slot": three servers, cluster mode, no error (a
	// CROSSSLOT would be one), the stock sold with no violation.
	"cluster.yaml": {"1s", func(t *testing.T, run *report.Run) {
		if run.Meta.Topology != "cluster" || len(run.Meta.Servers) != 3 {
			t.Errorf("meta topology %q with %d servers, want cluster with 3 masters", run.Meta.Topology, len(run.Meta.Servers))
		}
		for _, sc := range run.Scenarios {
			if sc.Topology != "cluster" || sc.Counters.Errors != 0 || sc.Ops == 0 || sc.Violations != (report.Violations{}) {
				t.Errorf("%s/%s: topology %q, errors %d %v, ops %d, violations %+v; want cluster, no error, ops > 0, no violation",
					sc.Strategy, sc.Driver, sc.Topology, sc.Counters.Errors, sc.Counters.ErrorSamples, sc.Ops, sc.Violations)
			}
		}
	}},
	// "a share of 0.2 of the replies is held 1 s, past the 200 ms read
	// timeout. The client sees a timeout".
	"reply-loss.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Counters.ErrorsByKind["timeout"] == 0 || len(sc.Faults) != 1 || !strings.Contains(sc.Faults[0].Note, "held 1s") {
				t.Errorf("%s/%s: errors %v, faults %+v; want timeouts and the window", sc.Strategy, sc.Driver, sc.Counters.ErrorsByKind, sc.Faults)
			}
		}
	}},
	// "calls hang until their 300 ms read timeout ... sales go on after it".
	"blackhole.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Counters.ErrorsByKind["timeout"] == 0 || len(sc.Faults) != 1 || sc.Faults[0].OpsAfter == 0 || !strings.Contains(sc.Faults[0].Note, "blackholed") {
				t.Errorf("%s/%s: errors %v, faults %+v; want timeouts and sales after the blackhole", sc.Strategy, sc.Driver, sc.Counters.ErrorsByKind, sc.Faults)
			}
		}
	}},
	// "no call fails (errors 0)".
	"script-flush.yaml": {"1s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Counters.Errors != 0 || sc.Ops == 0 || len(sc.Faults) != 1 || !strings.Contains(sc.Faults[0].Note, "times, every 100ms") {
				t.Errorf("%s/%s: errors %d %v, ops %d, faults %+v; want no error and repeated flushes", sc.Strategy, sc.Driver, sc.Counters.Errors, sc.Counters.ErrorSamples, sc.Ops, sc.Faults)
			}
		}
	}},
	// "the fault window's note says CLIENT PAUSE WRITE, then sales go on
	// with no error".
	"client-pause.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Counters.Errors != 0 || len(sc.Faults) != 1 || sc.Faults[0].OpsAfter == 0 || !strings.Contains(sc.Faults[0].Note, "CLIENT PAUSE WRITE") || sc.AcquireMS.Max < 400 {
				t.Errorf("%s/%s: errors %d, faults %+v, acquire max %.1f ms; want no error, the pause, acquires held about 500 ms, sales after it", sc.Strategy, sc.Driver, sc.Counters.Errors, sc.Faults, sc.AcquireMS.Max)
			}
		}
	}},
	// "a second client takes a majority while the first still works
	// (overlap > 0)".
	"redlock-clock-jump.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Violations.Overlap == 0 || len(sc.Faults) != 1 || !strings.Contains(sc.Faults[0].Note, "node 2: +10s") {
				t.Errorf("%s/%s: overlap %d, faults %+v; want overlap > 0 after the jump on nodes 0-2", sc.Strategy, sc.Driver, sc.Violations.Overlap, sc.Faults)
			}
		}
	}},
	// "naive dies between SETNX and EXPIRE: its lock has no TTL and the
	// shop sells nothing more (stuck_locks 1, ops_after 0 in the fault
	// window). atomic's lock expires after one TTL and sales go on."
	"crash-after-setnx.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if len(sc.Faults) != 1 {
				t.Errorf("%s/%s: fault windows %+v, want 1", sc.Strategy, sc.Driver, sc.Faults)
				continue
			}
			w := sc.Faults[0]
			switch sc.Strategy {
			case "naive":
				if sc.Violations.StuckLocks < 1 || w.StuckAfter < 1 || w.OpsAfter != 0 {
					t.Errorf("naive/%s: stuck_locks %d, stuck_after %d, ops_after %d; want a stuck lock and no sale after the crash",
						sc.Driver, sc.Violations.StuckLocks, w.StuckAfter, w.OpsAfter)
				}
			case "atomic":
				if sc.Violations.StuckLocks != 0 || w.StuckAfter != 0 || w.OpsAfter == 0 {
					t.Errorf("atomic/%s: stuck_locks %d, stuck_after %d, ops_after %d; want no stuck lock and sales after the crash",
						sc.Driver, sc.Violations.StuckLocks, w.StuckAfter, w.OpsAfter)
				}
			}
		}
	}},
	// "orphan_locks 1, and the lock time lost to it (orphan_lock_ms) and
	// the slowest time to free (time_to_free_ms.max) are both about the
	// 1 s TTL"
	"liveness-crash.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			l := sc.Liveness
			if l == nil || !l.Measured || l.OrphanLocks != 1 || l.OrphanLockMS < 900 || l.OrphanLockMS > 1100 ||
				l.TimeToFreeMS.Max < 900 || l.TimeToFreeMS.Max > 1500 {
				t.Errorf("%s/%s: liveness %+v; want 1 orphan costing about the 1 s TTL", sc.Strategy, sc.Driver, l)
			}
		}
	}},
	// "the release fails and the lock stays until its TTL
	// (liveness.orphan_locks > 0)"
	"cancel-release.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if l := sc.Liveness; l == nil || l.OrphanLocks == 0 || sc.Counters.Cancelled == 0 || sc.Params["release"] != "caller" {
				t.Errorf("%s/%s: liveness %+v, cancelled %d, params %v; want orphans from cancelled sections released on the caller's context",
					sc.Strategy, sc.Driver, l, sc.Counters.Cancelled, sc.Params)
			}
		}
	}},
	// "lockbench refuses a database that holds keys ..., writes only under
	// lockbench:<run-id>: and deletes those keys afterwards": checked in
	// the test's own external-tls branch, which has the server.
	"external-tls.yaml": {"1s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Topology != "external" || sc.Ops == 0 || sc.Counters.Errors != 0 {
				t.Errorf("%s/%s: topology %q, ops %d, errors %d; want external, ops > 0, no error", sc.Strategy, sc.Driver, sc.Topology, sc.Ops, sc.Counters.Errors)
			}
		}
	}},
	// "A lease shorter than the critical section ...: both strategies
	// oversell once a lease runs out mid-section, and naive's plain DEL
	// also frees the next holder's lock (foreign releases)." 3 s: atomic
	// sells about 160 a second and oversells once past the stock of 200.
	"flash-sale-short-ttl.yaml": {"3s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			v := sc.Violations
			if v.Oversell == 0 || v.Overlap == 0 {
				t.Errorf("%s/%s: oversell %d, overlap %d; want both > 0 (the lease runs out mid-section)", sc.Strategy, sc.Driver, v.Oversell, v.Overlap)
			}
			if sc.Strategy == "naive" && v.ForeignReleases == 0 {
				t.Errorf("naive/%s: no foreign release; its plain DEL frees the next holder's lock", sc.Driver)
			}
			if sc.Strategy == "atomic" && v.ForeignReleases != 0 {
				t.Errorf("atomic/%s: %d foreign releases; its compare-and-delete frees only its own lock", sc.Driver, v.ForeignReleases)
			}
		}
	}},
	// "naive and atomic let holders overlap when the lease expires
	// mid-task; the watchdog renews the lease every TTL/3 and keeps the
	// task safe."
	"long-task-watchdog.yaml": {"1s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			switch sc.Strategy {
			case "naive", "atomic":
				if sc.Violations.Overlap == 0 {
					t.Errorf("%s/%s: no overlap; want holders overlapping once the lease expires mid-task", sc.Strategy, sc.Driver)
				}
			case "watchdog":
				if sc.Violations != (report.Violations{}) || sc.Ops == 0 {
					t.Errorf("watchdog/%s: violations %+v, ops %d; want none and ops > 0", sc.Driver, sc.Violations, sc.Ops)
				}
			}
		}
	}},
	// "300 operations/s arrive as a Poisson process whatever the latency,
	// served by up to 20 clients; latency counts from the intended start,
	// and an arrival with no free client within 100 ms is dropped.
	// hot-key: 100 counters": an open loop at 300/s whose arrivals are
	// the rate times the window (generously), its latency at least its
	// service time, and every increment counted.
	// "an open loop whose arrival rate climbs in k6-style stages, from
	// 100/s to 1500/s over 2 s and then held, against 10 clients that each
	// hold the lock 20 ms (at most 500 operations/s between them) ...
	// offered (the stages' arrivals due) beside ops (achieved) and dropped":
	// the stages recorded, each second offering their integral, and the
	// arrivals above 500/s dropped (the third second offers 1,150), every
	// drop in the timeline.
	// "Two scenarios at once on one redis-server ... each under its own
	// key prefix, with its own figures, timeline and end check ... Their
	// measured windows overlap (measured_at); ... neither has commands per
	// operation (raw.shared_cost)."
	"concurrent.yaml": {"1s", func(t *testing.T, run *report.Run) {
		if len(run.Scenarios) != 2 || len(run.Meta.Servers) != 1 {
			t.Fatalf("%d scenarios on %d servers, want 2 on 1", len(run.Scenarios), len(run.Meta.Servers))
		}
		a, b := run.Scenarios[0], run.Scenarios[1]
		if a.Label != "checkout" || b.Label != "reports" || a.Raw.LockSpace == b.Raw.LockSpace {
			t.Errorf("names %q %q, lock spaces %q %q", a.Label, b.Label, a.Raw.LockSpace, b.Raw.LockSpace)
		}
		if a.MeasuredAt == nil || b.MeasuredAt == nil || !(a.MeasuredAt.Start < b.MeasuredAt.End && b.MeasuredAt.Start < a.MeasuredAt.End) {
			t.Fatalf("measured windows %v, %v: want them overlapping", a.MeasuredAt, b.MeasuredAt)
		}
		for _, sc := range run.Scenarios {
			if sc.Ops == 0 || sc.Violations.Total() != 0 || len(sc.Timeline) == 0 || !sc.Raw.SharedCost || sc.RedisCost.CommandsPerOp != 0 {
				t.Errorf("%s: %d ops, %d violations, %d timeline entries, shared cost %v, commands/op %v", sc.Label, sc.Ops, sc.Violations.Total(), len(sc.Timeline), sc.Raw.SharedCost, sc.RedisCost.CommandsPerOp)
			}
		}
		if a.Figures["sold"] != a.Figures["acked_orders"] || a.Figures["missing_keys"] != 0 || b.Figures["counter_sum"] != b.Figures["increments"] {
			t.Errorf("figures %v, %v: want the end checks exact", a.Figures, b.Figures)
		}
	}},
	"stages.yaml": {"3s", func(t *testing.T, run *report.Run) {
		const spec = "stages:start=100,1s=100,2s=1500"
		sh, err := arrival.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range run.Scenarios {
			if sc.Loop != "open" || sc.Params["rate_shape"] != spec {
				t.Fatalf("loop %q, rate_shape %q; want open, %q", sc.Loop, sc.Params["rate_shape"], spec)
			}
			checkOffered(t, sc, sh, 0, 3)
			var dropped, ops, offered int64
			for _, e := range sc.Timeline {
				dropped += e.Dropped
				ops += e.Ops
				offered += e.Offered
			}
			last := sc.Timeline[len(sc.Timeline)-1]
			// The last second offers 1,150; at most about 500 are served and
			// those due in its last 100 ms (150) may be undecided at the end.
			if dropped != sc.Dropped || last.Dropped < 450 || ops > 500*3 || ops+dropped > offered {
				t.Errorf("timeline: %d dropped (the scenario %d; %d in the last interval, want 450 or more), %d ops, %d offered",
					dropped, sc.Dropped, last.Dropped, ops, offered)
			}
		}
	}},
	"open-loop.yaml": {"1s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			name := sc.Strategy + "/" + sc.Driver
			if sc.Loop != "open" || sc.OfferedRate != 300 || sc.Clients != 20 {
				t.Errorf("%s: loop %q at %v/s with %d clients, want open at 300/s with 20", name, sc.Loop, sc.OfferedRate, sc.Clients)
			}
			if want := 300 * sc.DurationS; float64(sc.Offered) < want/2 || float64(sc.Offered) > want*2 {
				t.Errorf("%s: %d arrivals in %.2f s, want about %.0f", name, sc.Offered, sc.DurationS, want)
			}
			if sc.Ops == 0 || sc.Ops+sc.Dropped > sc.Offered {
				t.Errorf("%s: ops %d + dropped %d against %d arrivals; want ops > 0 and no more than the arrivals", name, sc.Ops, sc.Dropped, sc.Offered)
			}
			if sc.ServiceMS == nil || sc.LatencyMS.Max < sc.ServiceMS.Max || sc.LatencyMS.Mean < sc.ServiceMS.Mean*0.99 {
				t.Errorf("%s: latency %+v, service %+v; want latency from the intended start, at least the service time", name, sc.LatencyMS, sc.ServiceMS)
			}
			if inc, sum := sc.Figures["increments"], sc.Figures["counter_sum"]; inc == 0 || inc != sum || sc.Violations != (report.Violations{}) {
				t.Errorf("%s: increments %d, counter_sum %d, violations %+v; want equal, > 0, none", name, inc, sum, sc.Violations)
			}
		}
	}},
	// "With extend: unchecked ... the extend succeeds on the next holder's
	// keys: false_extends >= 1" (the --extend on side, false_extends 0, is
	// internal/faults' TestRedlockExtendUnderPause).
	"redlock-extend.yaml": {"2s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Params["extend"] != "unchecked" || len(sc.Faults) != 1 {
				t.Fatalf("%s: extend %q, fault windows %+v; want unchecked and one pause", sc.Strategy, sc.Params["extend"], sc.Faults)
			}
			if sc.Violations.FalseExtends < 1 || sc.StrategyStats["extends"] < 1 {
				t.Errorf("%s/%s: false_extends %d, extends %v; want >= 1 and >= 1 (%s)",
					sc.Strategy, sc.Driver, sc.Violations.FalseExtends, sc.StrategyStats["extends"], sc.Faults[0].Note)
			}
		}
	}},
	// "This file runs without [the reply-loss fault]: both settings then
	// sell with no error and no violation." (The effect of release itself
	// is strategies/locktest's TestOnTimeout.)
	// "no lock is left orphaned by an acquire (liveness.orphan_acquires
	// 0)", while the lost replies time calls out
	"on-timeout.yaml": {"2.5s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if l := sc.Liveness; sc.Params["on_timeout"] != "release" || sc.Ops == 0 || sc.Counters.ErrorsByKind["timeout"] == 0 ||
				l == nil || !l.Measured || l.OrphanAcquires != 0 {
				t.Errorf("%s/%s: on_timeout %q, ops %d, errors %v, liveness %+v; want release, ops, timeouts, no orphan from an acquire",
					sc.Strategy, sc.Driver, sc.Params["on_timeout"], sc.Ops, sc.Counters.ErrorsByKind, l)
			}
		}
	}},
	// "Redlock over five independent masters; one of them is killed after
	// 500 ms. A majority (3 of 5) still answers, so locking goes on."
	"redlock-node-kill.yaml": {"1s", func(t *testing.T, run *report.Run) {
		for _, sc := range run.Scenarios {
			if sc.Topology != "masters:5" || len(sc.Faults) != 1 {
				t.Fatalf("%s: topology %q, fault windows %+v; want masters:5 and one window", sc.Strategy, sc.Topology, sc.Faults)
			}
			if w := sc.Faults[0]; w.OpsAfter == 0 || !strings.Contains(w.Note, "killed") {
				t.Errorf("%s: ops_after %d, note %q; want a node killed and locking going on", sc.Strategy, w.OpsAfter, w.Note)
			}
			if sc.Violations != (report.Violations{}) {
				t.Errorf("%s: violations %+v, want none with a majority up", sc.Strategy, sc.Violations)
			}
		}
	}},
}

// Every example in scenarios/ runs (with the short duration of its
// exampleEffects entry from the command line) and exits 0 with exactly the
// strategy x driver x workload x retry scenarios its file lists, on the
// file's parameters, showing the effect its comment header documents.
// external-tls.yaml runs against a TLS server the test starts, its address
// and CA given on the command line; the server holds no key after the run,
// and a database holding one is refused. Each example runs in a lockbench
// process with servers of its own (the TLS server is the subtest's), and
// the effects checked are counts and fault windows, not speeds: the
// examples run in parallel, beside the package's other parallel tests.
func TestScenarioExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			effect, ok := exampleEffects[filepath.Base(path)]
			if !ok {
				t.Fatalf("no entry in exampleEffects: add the check of what %s's header documents", filepath.Base(path))
			}
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "-q", "-f", path, "--duration", effect.duration, "--out", out}
			var external *topology.Server
			if _, ok := doc["addr"]; ok {
				pki, err := topology.NewTLSFiles(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				topo, addr, err := topology.StartTLS(context.Background(), pki, false)
				if err != nil {
					t.Fatal(err)
				}
				defer topo.Stop()
				external = topo.Servers[0]
				args = append(args, "--addr", "rediss://:"+external.Password+"@"+addr, "--tls-ca-file", pki.CA)
			}
			r := lockbench(t, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			run, err := report.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			want := exampleWant(t, doc)
			for _, sc := range run.Scenarios {
				got = append(got, sc.Strategy+"/"+sc.Driver+"/"+sc.Workload)
				if ttl, ok := doc["ttl"].(string); ok && sc.Params["ttl"] != mustDuration(t, ttl).String() {
					t.Errorf("%s: ttl %s, want the file's %s", sc.Strategy, sc.Params["ttl"], ttl)
				}
				if stock, ok := doc["stock"].(int); ok && sc.Params["stock"] != strconv.Itoa(stock) {
					t.Errorf("%s: stock %s, want the file's %d", sc.Strategy, sc.Params["stock"], stock)
				}
				if n, ok := doc["clients"].(int); ok && sc.Clients != n {
					t.Errorf("%s: %d clients, want the file's %d", sc.Strategy, sc.Clients, n)
				}
				if d := sc.Params["duration"]; d != effect.duration {
					t.Errorf("%s: duration %s, want the command line's %s", sc.Strategy, d, effect.duration)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("scenarios %v, want %v", got, want)
			}
			if _, ok := doc["fault"]; ok {
				fs := splitRetry(strings.Join(fileList(t, doc, "fault"), ",")) // as the run reads them
				for _, sc := range run.Scenarios {
					if len(sc.Faults) != len(fs) {
						t.Errorf("%s/%s: %d fault windows, want %d", sc.Strategy, sc.Driver, len(sc.Faults), len(fs))
					}
				}
			}
			effect.check(t, run)
			if external != nil {
				if n := dbsize(t, external.Addr, external.Password); n != "0" {
					t.Errorf("DBSIZE after the run = %s, want 0 (the run's keys deleted)", n)
				}
				if _, err := topology.Command(external.Addr, external.Password, time.Second, "SET", "user:data", "precious"); err != nil {
					t.Fatal(err)
				}
				r := lockbench(t, append(args, "--force")...) // the first run's result is there
				if r.code == 0 || !strings.Contains(r.stderr, "allow-nonempty") {
					t.Errorf("a database holding a key: exit %d, want a refusal naming allow-nonempty\n%s", r.code, r.stderr)
				}
				if v, _ := topology.Command(external.Addr, external.Password, time.Second, "GET", "user:data"); v != "precious" || dbsize(t, external.Addr, external.Password) != "1" {
					t.Errorf("after the refused run: user key %q, DBSIZE %s; want it untouched and nothing else", v, dbsize(t, external.Addr, external.Password))
				}
			}
		})
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Flags on the command line beat the file's fields; fields the command
// line leaves alone come from the file; lists may be comma strings or
// YAML lists.
func TestScenarioFilePrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	body := `# precedence
strategy: naive
driver: "goredis, rueidis"
retry: [fixed:interval=2ms, spin]
clients: 3
stock: 7
ttl: 5s # a loaded machine does not outlast it
quiet: true
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	r := lockbench(t, "run", "-f", path, "--strategy", "atomic", "--stock", "5", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "[1/") {
		t.Errorf("quiet: true in the file did not silence the progress lines:\n%s", r.stderr)
	}
	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 4 {
		t.Fatalf("%d scenarios, want 4 (1 strategy x 2 drivers x 2 retry policies)", len(run.Scenarios))
	}
	retries := map[string]int{}
	for _, sc := range run.Scenarios {
		retries[strings.SplitN(sc.Retry, ":", 2)[0]]++
		if sc.Strategy != "atomic" || sc.Ops != 5 || sc.Params["stock"] != "5" || sc.Clients != 3 || sc.Params["ttl"] != "5s" {
			t.Errorf("%s/%s/%s: ops %d, stock %s, %d clients; ttl %s; want atomic (flag), 5 orders of stock 5 (flag), 3 clients and ttl 5s (file)",
				sc.Strategy, sc.Driver, sc.Retry, sc.Ops, sc.Params["stock"], sc.Clients, sc.Params["ttl"])
		}
	}
	if retries["fixed"] != 2 || retries["spin"] != 2 {
		t.Errorf("retry policies %v, want fixed and spin on both drivers", retries)
	}
}

func TestScenarioFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		path string
		want []string
	}{
		{filepath.Join(dir, "missing.yaml"), []string{"scenario file", "missing.yaml", "no such file"}},
		{write("unknown.yaml", "strategy: atomic\ncliens: 4\n"), []string{"unknown.yaml:2", `unknown field "cliens"`, `did you mean "clients"?`}},
		{write("underscore.yaml", "acquire_timeout: 1s\n"), []string{`did you mean "acquire-timeout"?`}},
		{write("type.yaml", "clients: many\nduration: soon\n"), []string{"type.yaml:1: clients", `"many"`, "type.yaml:2: duration", `"soon"`}},
		{write("list.yaml", "stock: [1, 2]\n"), []string{"stock takes one value, not a list"}},
		{write("map.yaml", "ttl: {a: 1}\n"), []string{"ttl: want a value or a list, not a mapping"}},
		{write("twice.yaml", "stock: 1\nstock: 2\n"), []string{"stock is given twice"}},
		{write("null.yaml", "ttl:\n"), []string{"ttl has no value"}},
		{write("top.yaml", "- strategy\n"), []string{"want a mapping"}},
		{write("empty.yaml", "# nothing\n"), []string{"is empty"}},
		{write("syntax.yaml", "strategy: [atomic\n"), []string{"syntax.yaml", "yaml:"}},
		{write("self.yaml", "file: other.yaml\n"), []string{`unknown field "file"`}},
		// The file's values are validated as flags are.
		{write("value.yaml", "strategy: atomc\n"), []string{`did you mean "atomic"`}},
	}
	for _, c := range cases {
		r := lockbench(t, "run", "-f", c.path, "--force", "--out", filepath.Join(dir, "r.json"))
		if r.code != exitUsage {
			t.Errorf("%s: exit %d, want 2\n%s", filepath.Base(c.path), r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", filepath.Base(c.path), w, r.stderr)
			}
		}
	}
}
