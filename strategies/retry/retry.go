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
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
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
// holder's release message.
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
// For a policy that needs a Notifier (pubsub) it returns a Backoff that
// only waits for its fallback time; use NewNotified.
func (p *Policy) New(rng *rand.Rand) Backoff { return p.newFn(rng) }

// NeedsNotifier reports whether the policy waits for release messages
// (pubsub); the caller must then subscribe and use NewNotified.
func (p *Policy) NeedsNotifier() bool { return p.Name == "pubsub" }

// NewNotified returns a pubsub Backoff that waits for n's wake-up for the
// key, or at most max (the remaining lease; p's max parameter when set,
// else the ttl passed here), then tries again.
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

type def struct {
	desc  string
	build func(p params) (func(*rand.Rand) Backoff, error)
}

var registry = map[string]def{
	"none": {"one attempt; a busy lock is a failure", func(p params) (func(*rand.Rand) Backoff, error) {
		if err := p.done(); err != nil {
			return nil, err
		}
		return func(*rand.Rand) Backoff { return none{} }, nil
	}},
	"fixed": {"poll at a fixed interval until the acquire timeout (interval=100ms)", func(p params) (func(*rand.Rand) Backoff, error) {
		iv := p.duration("interval", 100*time.Millisecond)
		if err := p.done(); err != nil {
			return nil, err
		}
		if iv <= 0 {
			return nil, errors.New("retry fixed: interval must be > 0")
		}
		return func(*rand.Rand) Backoff { return fixed{iv} }, nil
	}},
	"spin": {"retry at once, no wait, until the acquire timeout", func(p params) (func(*rand.Rand) Backoff, error) {
		if err := p.done(); err != nil {
			return nil, err
		}
		return func(*rand.Rand) Backoff { return spin{} }, nil
	}},
	"pubsub": {"wait for the holder's release message (PUBLISH on unlock, PSUBSCRIBE), or at most max=the lease TTL; Redisson's way", func(p params) (func(*rand.Rand) Backoff, error) {
		v, ok := p.take("max")
		if ok {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				p.errs = append(p.errs, fmt.Errorf("retry pubsub: max=%q is not a positive duration", v))
			}
			p.used["max"] = d.String()
		}
		if err := p.done(); err != nil {
			return nil, err
		}
		return func(*rand.Rand) Backoff { return fixed{100 * time.Millisecond} }, nil
	}},
	"backoff": {"jittered exponential backoff (start=50ms, factor U[min=1.5,max=2.0], cap=3s, tries=15)", func(p params) (func(*rand.Rand) Backoff, error) {
		start := p.duration("start", 50*time.Millisecond)
		cp := p.duration("cap", 3*time.Second)
		lo := p.float("min", 1.5)
		hi := p.float("max", 2.0)
		tries := p.int("tries", 15)
		if err := p.done(); err != nil {
			return nil, err
		}
		var errs []error
		if start <= 0 {
			errs = append(errs, errors.New("retry backoff: start must be > 0"))
		}
		if cp < start {
			errs = append(errs, errors.New("retry backoff: cap must be >= start"))
		}
		if !(lo >= 1 && hi >= lo && hi <= 100) {
			errs = append(errs, errors.New("retry backoff: need 1 <= min <= max <= 100"))
		}
		if tries < 1 {
			errs = append(errs, errors.New("retry backoff: tries must be >= 1"))
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		return func(rng *rand.Rand) Backoff {
			return &jittered{start: start, cap: cp, lo: lo, hi: hi, tries: tries, rng: rng}
		}, nil
	}},
}

// Names lists the registered policies, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Describe returns the one-line description of a policy.
func Describe(name string) string { return registry[name].desc }

// ErrUnknown is wrapped by Parse for an unknown policy name.
var ErrUnknown = errors.New("unknown retry policy")

// Parse reads a spec NAME[:param=value,...]. Errors name the unknown policy
// (with the valid names) or every bad parameter.
func Parse(spec string) (*Policy, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(spec), ":")
	d, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (valid: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	p := params{policy: name, raw: map[string]string{}, used: map[string]string{}}
	if rest != "" {
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				p.errs = append(p.errs, fmt.Errorf("retry %s: parameter %q is not key=value", name, kv))
				continue
			}
			if _, dup := p.raw[k]; dup {
				p.errs = append(p.errs, fmt.Errorf("retry %s: parameter %q given twice", name, k))
			}
			p.raw[k] = v
		}
	}
	fn, err := d.build(p)
	if err != nil {
		return nil, err
	}
	return &Policy{Name: name, Params: p.used, newFn: fn}, nil
}

type params struct {
	policy string
	raw    map[string]string
	used   map[string]string
	errs   []error
}

func (p *params) take(k string) (string, bool) {
	v, ok := p.raw[k]
	delete(p.raw, k)
	return v, ok
}

func (p *params) duration(k string, def time.Duration) time.Duration {
	v, ok := p.take(k)
	if !ok {
		p.used[k] = def.String()
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("retry %s: %s=%q is not a duration (like 100ms)", p.policy, k, v))
	}
	p.used[k] = d.String()
	return d
}

func (p *params) float(k string, def float64) float64 {
	v, ok := p.take(k)
	if !ok {
		p.used[k] = strconv.FormatFloat(def, 'g', -1, 64)
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.errs = append(p.errs, fmt.Errorf("retry %s: %s=%q is not a finite number", p.policy, k, v))
	}
	p.used[k] = strconv.FormatFloat(f, 'g', -1, 64)
	return f
}

func (p *params) int(k string, def int) int {
	v, ok := p.take(k)
	if !ok {
		p.used[k] = strconv.Itoa(def)
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("retry %s: %s=%q is not a whole number", p.policy, k, v))
	}
	p.used[k] = strconv.Itoa(n)
	return n
}

// done reports unknown parameters and parse errors, all at once.
func (p *params) done() error {
	for k := range p.raw {
		p.errs = append(p.errs, fmt.Errorf("retry %s: unknown parameter %q", p.policy, k))
	}
	return errors.Join(p.errs...)
}

type none struct{}

func (none) Next(int) (time.Duration, bool) { return 0, false }

type spin struct{}

func (spin) Next(int) (time.Duration, bool) { return 0, true }

// notified waits for a release message or at most max.
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
