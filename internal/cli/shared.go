package cli

// The settings every scenario shares, declared once, as plugins declare
// their parameters (registry.Param): the run flag, its help and default,
// the scenario file's field (the flag's name), the check validate runs on
// the value, the shell completion of a setting that takes one of a few
// words, and the key under which result files record it.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/workloads"
)

// sharedSetting is a setting every scenario shares. Its Param gives the
// flag --Name (a pflag of Default's type: int, bool, string or
// time.Duration, parsed into the runFlags field bind returns), its help
// (Doc), its default, and its scenario file field (Name, as every run
// flag). Check, when set, is run by validate (planBuilder.shared), which
// reports a refused value as "--Name " + Check's error (": " + the rest
// when the error starts with a colon); a setting without Check is checked
// per scenario by engine.Validate, or takes every value. words, when
// set, are the values offered by shell completion (Check refuses the
// others). result says how result files record the setting in a
// scenario's params (engine.Scenario.ParamsMap writes them; a test holds
// ParamsMap to this table).
type sharedSetting struct {
	registry.Param
	bind   func(f *runFlags) any
	words  []string
	result sharedResult
}

// sharedResult is how a result file records a shared setting: under key
// (ResultKey, unless the setting's value is recorded in another unit),
// always or only when the value is not the default.
type sharedResult struct {
	key  string
	when recordWhen
}

// recordWhen says when a result file records a shared setting.
type recordWhen int

const (
	notRecorded     recordWhen = iota // not in params (a field of its own, or not recorded)
	recordAlways                      // every scenario's params
	recordWhenGiven                   // only a value other than the default
)

// always and whenGiven record a setting under its ResultKey.
func always(key string) sharedResult    { return sharedResult{key, recordAlways} }
func whenGiven(key string) sharedResult { return sharedResult{key, recordWhenGiven} }

// sharedSettings are the settings every scenario shares, by flag name.
var sharedSettings = []sharedSetting{
	{Param: registry.Param{Name: "duration", Default: 30 * time.Second,
		Doc:   "measured time per scenario, after the warm-up (a scenario ends earlier when stock is sold out)",
		Check: durationIn(time.Nanosecond, 24*time.Hour, "must be > 0 and at most 24h, got %v")},
		bind: func(f *runFlags) any { return &f.duration }, result: always("duration")},
	{Param: registry.Param{Name: "warmup", Default: time.Duration(0),
		Doc:   "warm-up time per scenario, excluded from ops/s and latency",
		Check: durationIn(0, 24*time.Hour, "must be from 0 to 24h, got %v")},
		bind: func(f *runFlags) any { return &f.warmup }, result: always("warmup")},
	{Param: registry.Param{Name: "ttl", Default: "auto",
		Doc: "lock lease time (TTL); auto = 3 x --work, at least 100ms", Check: checkTTL},
		bind: func(f *runFlags) any { return &f.ttl }, result: always("ttl")},
	{Param: registry.Param{Name: "work", Default: "1ms",
		Doc: "critical-section time: a duration (80ms), uniform:10ms-40ms, lognormal:median=5ms,p99=80ms or exp:mean=5ms", Check: checkWork},
		bind: func(f *runFlags) any { return &f.work }, result: always("work")},
	{Param: registry.Param{Name: "think", Default: "0s",
		Doc: "closed loop: each client's think time after every operation, before its next (outside the lock and every latency): a duration (20ms), uniform:10ms-40ms, lognormal:median=5ms,p99=80ms or exp:mean=20ms; 0 = none", Check: checkThink},
		bind: func(f *runFlags) any { return &f.think }, result: whenGiven("think")},
	{Param: registry.Param{Name: "background", Default: "",
		Doc: "non-lock traffic on the lock's servers while each scenario runs, open loop, on connections and keys of its own, with its own latency: CMD=RATE/s for get, set, incr, hget, hset (get=20000/s,set=5000/s), and keys=N (10000), size=B (value bytes, 64), conns=N (connections per node, 8); \"\" = none", Check: checkBackground},
		bind: func(f *runFlags) any { return &f.background }, result: whenGiven("background")},
	{Param: registry.Param{Name: "mix", Default: "",
		Doc: "client roles, each a fixed share of the clients for the whole run, with figures per role: ROLE=SHARE,... summing to 1, ROLE one of write (the exclusive lock), read (the lock's read side: rwlock), nested (re-enters the lock it holds: reentrant, rwlock), e.g. read=0.8,write=0.2; \"\" = every client writes", Check: checkMix},
		bind: func(f *runFlags) any { return &f.mix }, result: whenGiven("mix")},
	{Param: registry.Param{Name: "acquire-timeout", Default: 10 * time.Second,
		Doc:   "bound on one acquire, retries included (0 = none)",
		Check: durationIn(0, 1<<63-1, "must be >= 0, got %v")},
		bind: func(f *runFlags) any { return &f.acquireTimeout }, result: always("acquire_timeout")},
	{Param: registry.Param{Name: "release", Default: workloads.ReleaseDetached,
		Doc:   "context a holder releases on: detached (the caller's cancellation cannot skip the release; correct) or caller (the caller's own context: a request cancelled inside its critical section leaves its lock until the TTL)",
		Check: oneWord("must be detached or caller, got %q", workloads.ReleaseDetached, workloads.ReleaseCaller)},
		bind: func(f *runFlags) any { return &f.release }, words: []string{workloads.ReleaseDetached, workloads.ReleaseCaller}, result: whenGiven("release")},
	{Param: registry.Param{Name: "token", Default: "random",
		Doc:   "lock value: random (128 random bits per lease) or constant (\"1\" for every client: the owner check then protects nothing; naive, atomic, watchdog, redlock)",
		Check: oneWord("%q is not random or constant", "random", "constant")},
		bind: func(f *runFlags) any { return &f.token }, words: []string{"random", "constant"}, result: always("token")},
	// Checked by engine.Validate, against each scenario's strategy and workload.
	{Param: registry.Param{Name: "guard", Default: "auto",
		Doc: "write guard beyond the lock: auto (the strategy's where the workload runs it: fencing->fence, multilevel->cas; else none), none, cas (flash-sale, hot-key, long-task, nested), decr (flash-sale only)"},
		bind: func(f *runFlags) any { return &f.guard }, words: []string{"auto", "none", workloads.GuardCAS, workloads.GuardDecr}, result: always("guard")},
	{Param: registry.Param{Name: "resource", Default: engine.ResourceLock,
		Doc:   "where the workload's protected data lives: lock (on the lock's own Redis, beside the lock keys) or separate (on a second redis-server that lockbench starts, bound to 127.0.0.1 with a password of its own; with --addr, the server --resource-addr names), whose fence scripts refuse a fencing token below the highest they saw and count the refusals (figures.resource_rejected; Kleppmann 2016)",
		Check: oneWord("%q is not lock or separate", engine.ResourceLock, engine.ResourceSeparate)},
		bind: func(f *runFlags) any { return &f.resource }, words: []string{engine.ResourceLock, engine.ResourceSeparate}, result: whenGiven("resource")},
	{Param: registry.Param{Name: "liveness-interval", Default: 5 * time.Millisecond,
		Doc:   "liveness oracle: read the lock keys' tokens this often to find orphaned locks and time to free (0 = off)",
		Check: offOrIn(time.Millisecond, time.Minute, "must be 0 (off) or from 1ms to 1m, got %v")},
		bind: func(f *runFlags) any { return &f.livenessInterval }},
	{Param: registry.Param{Name: "error-streak", Default: 5 * time.Second,
		Doc:   "stop a scenario, keeping what it measured (stop_reason aborted), after this long of nothing but failed operations (0 = never: outage experiments)",
		Check: durationIn(0, 1<<63-1, "must be >= 0 (0 = never stop), got %v")},
		bind: func(f *runFlags) any { return &f.errorStreak }},
	{Param: registry.Param{Name: "verify-acquire", Default: engine.DefaultVerifyAcquire,
		Doc:   "ownership check after acquire: each client reads the lock key (one GET; HEXISTS for a hash lock) after every Nth granted acquire and counts violations.false_acquires when it does not hold the lease's token; 1 = every acquire (+1 read per operation), 0 = off; the reads are lockbench's own, not in commands/op. Not run with --token constant, nor for zk, etcd, sql-rowlock, Redlock or rueidislock",
		Check: intIn(0, 1<<30, "must be from 0 (off) to 1073741824, got %d")},
		bind: func(f *runFlags) any { return &f.verifyAcquire }, result: whenGiven("verify_acquire")},
	{Param: registry.Param{Name: "load-sample", Default: time.Duration(0),
		Doc:   "sample the servers' command rate at this interval (e.g. 10ms) and report its mean, peak and variation (server_load); 0 = off",
		Check: offOrIn(time.Millisecond, 1<<63-1, "must be 0 (off) or at least 1ms, got %v")},
		bind: func(f *runFlags) any { return &f.loadSample }},
	{Param: registry.Param{Name: "interval", Default: time.Second,
		Doc:   "length of each timeline entry (ops, errors, violations, and p50/p99/max of the operation and the acquire; one interval histogram each in the .hlog files), at least 100ms",
		Check: durationIn(engine.MinInterval, 24*time.Hour, "must be from "+engine.MinInterval.String()+" to 24h, got %v")},
		bind: func(f *runFlags) any { return &f.interval }, result: always("interval_s")}, // in seconds
	// The driver settings: checked by engine.Validate.
	{Param: registry.Param{Name: "pool-size", Default: 0,
		Doc: "Redis driver: connections per node (go-redis PoolSize; rueidis BlockingPoolSize, for Pipeline and blocking calls only); 0 = --clients + 4"},
		bind: func(f *runFlags) any { return &f.poolSize }, result: whenGiven("pool_size")},
	{Param: registry.Param{Name: "dial-timeout", Default: time.Duration(0),
		Doc: "Redis driver: bound on connecting; 0 = 5s"},
		bind: func(f *runFlags) any { return &f.dialTimeout }, result: whenGiven("dial_timeout")},
	{Param: registry.Param{Name: "read-timeout", Default: time.Duration(0),
		Doc: "Redis driver: bound on waiting for a reply (go-redis ReadTimeout and PoolTimeout; rueidis: a deadline on each call's context when not 5s, see docs/commands.md); 0 = 5s"},
		bind: func(f *runFlags) any { return &f.readTimeout }, result: whenGiven("read_timeout")},
	{Param: registry.Param{Name: "write-timeout", Default: time.Duration(0),
		Doc: "Redis driver: bound on writing a command (go-redis WriteTimeout; rueidis ConnWriteTimeout, with --read-timeout if larger); 0 = 5s"},
		bind: func(f *runFlags) any { return &f.writeTimeout }, result: whenGiven("write_timeout")},
	// The open loop's (--rate).
	{Param: registry.Param{Name: "arrivals", Default: "constant",
		Doc:   "open loop: arrival process, constant or poisson",
		Check: oneWord("%q is not constant or poisson", "constant", "poisson")},
		bind: func(f *runFlags) any { return &f.arrivals }, words: []string{"constant", "poisson"}},
	{Param: registry.Param{Name: "max-clients", Default: 0,
		Doc:   "open loop: clients available to serve arrivals (default --clients)",
		Check: intIn(0, maxClients, "must be from 1 to "+strconv.Itoa(maxClients)+", got %d")},
		bind: func(f *runFlags) any { return &f.maxClients }},
	{Param: registry.Param{Name: "drop-after", Default: 100 * time.Millisecond,
		Doc:   "open loop: an arrival that finds no free client within this is dropped",
		Check: durationIn(time.Nanosecond, 1<<63-1, "must be > 0, got %v")},
		bind: func(f *runFlags) any { return &f.dropAfter }},
	{Param: registry.Param{Name: "keep-keys", Default: false,
		Doc: "leave the run's keys in Redis for inspection instead of deleting them"},
		bind: func(f *runFlags) any { return &f.keepKeys }},
}

// sharedSetting returns the setting named name; an unknown name is a
// programming error (it panics).
func sharedNamed(name string) sharedSetting {
	for _, s := range sharedSettings {
		if s.Name == name {
			return s
		}
	}
	panic("no shared setting " + name)
}

// registerShared declares the shared settings' flags on fl, parsing into
// f's fields.
func registerShared(fl *pflag.FlagSet, f *runFlags) {
	for _, s := range sharedSettings {
		switch p := s.bind(f).(type) {
		case *time.Duration:
			fl.DurationVar(p, s.Name, s.Default.(time.Duration), s.Doc)
		case *string:
			fl.StringVar(p, s.Name, s.Default.(string), s.Doc)
		case *int:
			fl.IntVar(p, s.Name, s.Default.(int), s.Doc)
		case *bool:
			fl.BoolVar(p, s.Name, s.Default.(bool), s.Doc)
		default:
			panic(fmt.Sprintf("shared setting %s: a %T field", s.Name, p))
		}
	}
}

// value is the setting's value in f.
func (s sharedSetting) value(f *runFlags) any {
	switch p := s.bind(f).(type) {
	case *time.Duration:
		return *p
	case *string:
		return *p
	case *int:
		return *p
	case *bool:
		return *p
	}
	return nil
}

// check runs the setting's Check on its value in f: nil, or the message
// "--Name PROBLEM".
func (s sharedSetting) check(f *runFlags) error {
	if s.Check == nil {
		return nil
	}
	err := s.Check(s.value(f))
	if err == nil {
		return nil
	}
	if msg := err.Error(); strings.HasPrefix(msg, ":") {
		return errors.New("--" + s.Name + msg)
	}
	return fmt.Errorf("--%s %w", s.Name, err)
}

// registerSharedCompletions makes cmd's shell completion offer the words
// of the shared settings that take one of a few.
func registerSharedCompletions(cmd *cobra.Command) {
	for _, s := range sharedSettings {
		if len(s.words) == 0 || cmd.Flags().Lookup(s.Name) == nil {
			continue
		}
		_ = cmd.RegisterFlagCompletionFunc(s.Name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeNames(s.words, toComplete, false)
		})
	}
}

// durationIn accepts durations from lo to hi; a refusal is msg with the
// value.
func durationIn(lo, hi time.Duration, msg string) func(any) error {
	return func(v any) error {
		if d := v.(time.Duration); d < lo || d > hi {
			return fmt.Errorf(msg, d)
		}
		return nil
	}
}

// intIn accepts whole numbers from lo to hi; a refusal is msg with the
// value.
func intIn(lo, hi int, msg string) func(any) error {
	return func(v any) error {
		if n := v.(int); n < lo || n > hi {
			return fmt.Errorf(msg, n)
		}
		return nil
	}
}

// offOrIn accepts 0 (off) and durations from lo to hi.
func offOrIn(lo, hi time.Duration, msg string) func(any) error {
	in := durationIn(lo, hi, msg)
	return func(v any) error {
		if v.(time.Duration) == 0 {
			return nil
		}
		return in(v)
	}
}

// oneWord accepts the words listed; a refusal is msg with the value.
func oneWord(msg string, words ...string) func(any) error {
	return func(v any) error {
		for _, w := range words {
			if v.(string) == w {
				return nil
			}
		}
		return fmt.Errorf(msg, v)
	}
}

// checkTTL accepts auto or a duration of at least 1ms.
func checkTTL(v any) error {
	s := v.(string)
	if s == "auto" {
		return nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a duration (like 500ms) or auto", s)
	case d < time.Millisecond:
		return fmt.Errorf("must be at least 1ms (Redis PX resolution), got %v", d)
	}
	return nil
}

// checkBackground accepts --background's grammar
// (engine.ParseBackground), or "" (none).
func checkBackground(v any) error {
	if _, err := engine.ParseBackground(v.(string)); err != nil {
		return fmt.Errorf(": %v", err)
	}
	return nil
}

// checkMix accepts --mix's grammar (workloads.ParseMix), or "" (none).
func checkMix(v any) error {
	if v.(string) == "" {
		return nil
	}
	if _, err := workloads.ParseMix(v.(string)); err != nil {
		return fmt.Errorf(": %v", err)
	}
	return nil
}

// checkThink accepts a think time (workloads.ParseDist) that stays
// within 1h.
func checkThink(v any) error { return checkWork(v) }

// checkWork accepts a critical-section time (workloads.ParseDist) that
// stays within 1h.
func checkWork(v any) error {
	work, err := workloads.ParseDist(v.(string))
	if err != nil {
		return fmt.Errorf(": %v", err)
	}
	if work.Max() > time.Hour {
		return fmt.Errorf("must stay within 1h, got %v", v)
	}
	return nil
}
