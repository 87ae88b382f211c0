// Package retry holds the retry policies that combine with every lock
// strategy: how long a client waits after a failed acquire attempt before it
// tries again, and when it gives up. A policy is written as a spec,
// NAME[:param=value,...], for example "fixed:interval=20ms" or
// "backoff:start=50ms,cap=3s,tries=15".
//
// Defaults follow the articles whose claims docs/claims.md lists: fixed
// polling every 100 ms; jittered exponential backoff starting at 50 ms,
// each wait the previous one times a factor drawn uniformly from
// [1.5, 2.0], capped at 3 s, at most 15 tries.
package retry

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// Backoff decides the wait after a failed acquire attempt. A Backoff is
// used by one goroutine at a time (one per worker); it may keep state.
type Backoff interface {
	// Next returns how long to wait before the next attempt, given that
	// `failed` attempts (1, 2, ...) have failed in a row, and ok = false
	// when the caller should give up instead.
	Next(failed int) (wait time.Duration, ok bool)
}

// Waker is implemented by backoffs that can also be woken early: Acquire
// calls Watch(key) before its first attempt and, between attempts, waits
// for the wake channel as well as for Next's duration.
type Waker interface {
	Backoff
	Watch(key string) (wake <-chan struct{}, stop func())
}

// Notifier delivers wake-ups per lock key: the pub/sub hub that hears a
// holder's release message (pubsub), or the tracking hub that hears the
// lock key's invalidations (csc).
type Notifier interface {
	Watch(key string) (wake <-chan struct{}, stop func())
}

// Policy is a parsed, validated retry spec.
type Policy struct {
	// Name is the registered name ("none", "fixed", "backoff").
	Name string
	// Params holds every parameter with its value in force, defaults
	// included, for result files.
	Params map[string]string
	newFn  func(rng *rand.Rand) Backoff
}

// New returns a fresh Backoff for one worker, drawing jitter from rng.
// For a policy that needs a Notifier (pubsub, csc) it returns a Backoff that
// only waits for its fallback time; use NewNotified.
func (p *Policy) New(rng *rand.Rand) Backoff { return p.newFn(rng) }

// NeedsNotifier reports whether the policy waits for release messages
// (pubsub); the caller must then subscribe and use NewNotified.
func (p *Policy) NeedsNotifier() bool { return p.Name == "pubsub" }

// NeedsTracking reports whether the policy waits for client-side-caching
// invalidations of the lock key (csc); the caller must then track the
// run's key prefix (strategies.NewTrackingHub) and use NewNotified with
// that Notifier. Nothing is published after a release.
func (p *Policy) NeedsTracking() bool { return p != nil && p.Name == "csc" }

// Drivers lists the Redis drivers the policy runs on (csc: rueidis, whose
// RESP3 client delivers invalidations), or nil when it runs on every one.
func (p *Policy) Drivers() []string {
	if p == nil {
		return nil
	}
	return DriversOf(p.Name)
}

// DriversOf lists the Redis drivers the policy name runs on, or nil when
// it runs on every one.
func DriversOf(name string) []string { return onlyOn[name] }

// RunsOn reports whether the policy runs on the Redis driver drv
// (Drivers). A nil policy runs everywhere.
func (p *Policy) RunsOn(drv string) bool {
	ds := p.Drivers()
	return len(ds) == 0 || slices.Contains(ds, drv)
}

// onlyOn holds the drivers of the policies that do not run on every one.
var onlyOn = map[string][]string{"csc": {"rueidis"}}

// NewNotified returns a pubsub or csc Backoff that waits for n's wake-up
// for the key, or at most max (the remaining lease; p's max parameter
// when set, else the ttl passed here), then tries again.
func (p *Policy) NewNotified(n Notifier, ttl time.Duration) Backoff {
	maxWait := ttl
	if v, err := time.ParseDuration(p.Params["max"]); err == nil && v > 0 {
		maxWait = v
	}
	return &notified{n: n, max: maxWait}
}

// String is the canonical spec, NAME:k=v,... with parameters sorted.
func (p *Policy) String() string {
	if len(p.Params) == 0 {
		return p.Name
	}
	keys := make([]string, 0, len(p.Params))
	for k := range p.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p.Params[k]
	}
	return p.Name + ":" + strings.Join(parts, ",")
}

// Builder makes the per-worker Backoff constructor from a policy's
// parameter values, or reports the problems that involve more than one
// value (each value alone was checked against its Param).
type Builder func(v registry.Values) (func(*rand.Rand) Backoff, error)

var reg = registry.New[Builder]("retry policy")

// Register makes a retry policy available under name, with its one-line
// description and the parameters its spec takes. It panics on an empty or
// duplicate name, a nil build function, or a badly declared parameter.
func Register(name, desc string, params []registry.Param, build Builder) {
	if build == nil {
		panic("retry: Register with a nil build function")
	}
	reg.Register(name, desc, params, build)
}

func init() {
	Register("none", "one attempt; a busy lock is a failure", nil,
		func(registry.Values) (func(*rand.Rand) Backoff, error) {
			return func(*rand.Rand) Backoff { return none{} }, nil
		})
	Register("fixed", "poll at a fixed interval until the acquire timeout",
		[]registry.Param{{Name: "interval", Doc: "wait between attempts", Default: 100 * time.Millisecond, Check: registry.Positive}},
		func(v registry.Values) (func(*rand.Rand) Backoff, error) {
			iv := v.Duration("interval")
			return func(*rand.Rand) Backoff { return fixed{iv} }, nil
		})
	Register("spin", "retry at once, no wait, until the acquire timeout", nil,
		func(registry.Values) (func(*rand.Rand) Backoff, error) {
			return func(*rand.Rand) Backoff { return spin{} }, nil
		})
	Register("pubsub", "wait for the holder's release message (PUBLISH on unlock, PSUBSCRIBE), or at most max; Redisson's way",
		[]registry.Param{{Name: "max", Doc: "longest wait for a release message before the next attempt; 0 = the lease TTL", Default: time.Duration(0),
			Check: registry.DurationAtLeast(0)}},
		func(registry.Values) (func(*rand.Rand) Backoff, error) {
			return func(*rand.Rand) Backoff { return fixed{100 * time.Millisecond} }, nil
		})
	Register("csc", "wait for the lock key's client-side-caching invalidation (RESP3 CLIENT TRACKING ON BCAST PREFIX <the run's key prefix>: a push on every write, DEL or expiry of the key), or at most max; rueidis driver only; rueidislock's way (github.com/redis/rueidis/rueidislock)",
		[]registry.Param{{Name: "max", Doc: "longest wait for an invalidation of the lock key before the next attempt; 0 = the lease TTL", Default: time.Duration(0),
			Check: registry.DurationAtLeast(0)}},
		func(registry.Values) (func(*rand.Rand) Backoff, error) {
			return func(*rand.Rand) Backoff { return fixed{100 * time.Millisecond} }, nil
		})
	Register("backoff", "jittered exponential backoff: each wait the previous one times a factor drawn from U[min, max], capped",
		[]registry.Param{
			{Name: "start", Doc: "first wait", Default: 50 * time.Millisecond, Check: registry.Positive},
			{Name: "cap", Doc: "longest wait", Default: 3 * time.Second, Check: registry.Positive},
			{Name: "min", Doc: "smallest growth factor per step", Default: 1.5, Check: registry.Between(1.0, 100.0)},
			{Name: "max", Doc: "largest growth factor per step", Default: 2.0, Check: registry.Between(1.0, 100.0)},
			{Name: "tries", Doc: "attempts before giving up", Default: 15, Check: registry.AtLeast(1)},
		},
		func(v registry.Values) (func(*rand.Rand) Backoff, error) {
			start, cp := v.Duration("start"), v.Duration("cap")
			lo, hi, tries := v.Float("min"), v.Float("max"), v.Int("tries")
			var errs []error
			if cp < start {
				errs = append(errs, errors.New("retry backoff: cap must be >= start"))
			}
			if hi < lo {
				errs = append(errs, errors.New("retry backoff: need 1 <= min <= max <= 100"))
			}
			if len(errs) > 0 {
				return nil, errors.Join(errs...)
			}
			return func(rng *rand.Rand) Backoff {
				return &jittered{start: start, cap: cp, lo: lo, hi: hi, tries: tries, rng: rng}
			}, nil
		})
}

// Names lists the registered policies, sorted.
func Names() []string { return reg.Names() }

// Entries lists the registered policies with their descriptions and
// parameters, sorted by name.
func Entries() []registry.Entry[Builder] { return reg.Entries() }

// Describe returns the one-line description of a policy.
func Describe(name string) string { e, _ := reg.Get(name); return e.Desc }

// ErrUnknown is wrapped by Parse for an unknown policy name.
var ErrUnknown = errors.New("unknown retry policy")

// Parse reads a spec NAME[:param=value,...]. Errors name the unknown policy
// (with the valid names) or every bad parameter, or a parameter its
// Builder reads but did not declare (registry.UndeclaredError).
func Parse(spec string) (_ *Policy, err error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(spec), ":")
	e, err := reg.Lookup(name, ErrUnknown)
	if err != nil {
		return nil, err
	}
	v, err := registry.ParseArgs("retry", name, rest, e.Params)
	if err != nil {
		return nil, err
	}
	defer registry.Recover(&err, "retry "+name+": ")
	fn, err := e.Value(v)
	if err != nil {
		return nil, err
	}
	return &Policy{Name: name, Params: v.Strings(), newFn: fn}, nil
}

// LibraryName is the retry column of a strategy that owns its retrying
// (strategies.Info.OwnsRetry: a lock library's own acquire loop).
const LibraryName = "library"

// Library is the policy of a strategy that owns its retrying: one call of
// its TryAcquire, which runs the library's own loop of tries and waits;
// lockbench's policies are not layered on top. It is not registered, so
// --retry cannot name it: a library strategy's scenarios get it instead of
// the --retry policies.
func Library() *Policy {
	return &Policy{Name: LibraryName, newFn: func(*rand.Rand) Backoff { return none{} }}
}

// QueueName is the retry column of a strategy that waits in its lock's
// own queue (strategies.Info.Queues).
const QueueName = "queue"

// Queue is the policy of a strategy that waits in its lock's own queue
// (the lock service's, or handoff's in Redis): one call of its TryAcquire,
// which returns when the lock is granted or the acquire timeout ends; no
// policy is layered on top. It is not registered, so --retry cannot name
// it: such a strategy's scenarios get it instead of the --retry policies.
func Queue() *Policy {
	return &Policy{Name: QueueName, newFn: func(*rand.Rand) Backoff { return none{} }}
}

type none struct{}

func (none) Next(int) (time.Duration, bool) { return 0, false }

type spin struct{}

func (spin) Next(int) (time.Duration, bool) { return 0, true }

// notified waits for a wake-up (a release message, an invalidation) or
// at most max.
type notified struct {
	n   Notifier
	max time.Duration
}

func (b *notified) Next(int) (time.Duration, bool) { return b.max, true }
func (b *notified) Watch(key string) (<-chan struct{}, func()) {
	return b.n.Watch(key)
}

type fixed struct{ d time.Duration }

func (f fixed) Next(int) (time.Duration, bool) { return f.d, true }

// jittered is exponential backoff with a random factor per step:
// wait(1) = start, wait(n) = min(cap, wait(n-1) * U[lo, hi]); after `tries`
// failed attempts it gives up.
type jittered struct {
	start, cap time.Duration
	lo, hi     float64
	tries      int
	rng        *rand.Rand
	cur        time.Duration
}

func (j *jittered) Next(failed int) (time.Duration, bool) {
	if failed >= j.tries {
		return 0, false
	}
	if failed <= 1 || j.cur == 0 {
		j.cur = j.start
		return j.cur, true
	}
	f := j.lo + (j.hi-j.lo)*j.rng.Float64()
	next := j.cap
	if w := float64(j.cur) * f; w < float64(j.cap) {
		next = time.Duration(w)
	}
	j.cur = next
	return next, true
}
