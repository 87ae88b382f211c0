package retry

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestParseDefaults(t *testing.T) {
	cases := map[string]string{
		"none":                           "none",
		"fixed":                          "fixed:interval=100ms",
		"backoff":                        "backoff:cap=3s,max=2,min=1.5,start=50ms,tries=15",
		"fixed:interval=20ms":            "fixed:interval=20ms",
		" backoff:start=10ms,tries=3 ":   "backoff:cap=3s,max=2,min=1.5,start=10ms,tries=3",
		"backoff:min=1.2,max=1.2,cap=1s": "backoff:cap=1s,max=1.2,min=1.2,start=50ms,tries=15",
	}
	for spec, want := range cases {
		p, err := Parse(spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
			continue
		}
		if p.String() != want {
			t.Errorf("Parse(%q) = %s, want %s", spec, p, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"":                                "unknown retry policy",
		"fixd":                            `unknown retry policy "fixd"; did you mean "fixed"? (valid: backoff, csc, fixed, none, pubsub, spin)`,
		"fixed:interval=soon":             "not a duration",
		"fixed:interval=0s":               "interval=0s: must be > 0",
		"fixed:speed=1":                   `unknown parameter "speed"`,
		"none:x=1":                        `unknown parameter "x"`,
		"backoff:tries=0":                 "tries=0: must be at least 1, got 0",
		"backoff:min=2,max=1.5":           "need 1 <= min <= max",
		"backoff:max=NaN":                 "not a finite number",
		"backoff:min=Inf,max=Inf":         "not a finite number",
		"fixed:interval=1ms,interval=2ms": "given twice",
		"backoff:,":                       "is not key=value",
		"backoff:start=1s,cap=10ms":       "cap must be >= start",
		"backoff:start":                   "is not key=value",
		"backoff:tries=x,start=oops":      "not a whole number",
	}
	for spec, want := range cases {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", spec, err, want)
		}
	}
	// All problems are reported at once.
	_, err := Parse("backoff:tries=x,start=oops")
	if err == nil || !strings.Contains(err.Error(), "tries") || !strings.Contains(err.Error(), "start") {
		t.Errorf("want both bad parameters named, got %v", err)
	}
}

func TestNoneAndFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p, _ := Parse("none")
	if _, ok := p.New(rng).Next(1); ok {
		t.Error("none retried")
	}
	p, _ = Parse("fixed:interval=7ms")
	b := p.New(rng)
	for i := 1; i <= 1000; i++ {
		if w, ok := b.Next(i); !ok || w != 7*time.Millisecond {
			t.Fatalf("fixed Next(%d) = %v, %v", i, w, ok)
		}
	}
}

// Jittered backoff: first wait = start, each next one is the previous times
// a factor in [min, max], capped, and it gives up after `tries` failures.
func TestJitteredBackoff(t *testing.T) {
	p, _ := Parse("backoff")
	for seed := uint64(0); seed < 50; seed++ {
		b := p.New(rand.New(rand.NewPCG(seed, 0)))
		prev := time.Duration(0)
		n := 0
		for failed := 1; ; failed++ {
			w, ok := b.Next(failed)
			if !ok {
				break
			}
			n++
			switch {
			case failed == 1 && w != 50*time.Millisecond:
				t.Fatalf("first wait %v, want 50ms", w)
			case w > 3*time.Second:
				t.Fatalf("wait %v above the 3 s cap", w)
			case failed > 1 && w < 3*time.Second:
				ratio := float64(w) / float64(prev)
				if ratio < 1.5-1e-9 || ratio > 2.0+1e-9 {
					t.Fatalf("step factor %.3f outside [1.5, 2.0]", ratio)
				}
			}
			prev = w
		}
		if n != 14 {
			t.Fatalf("%d waits, want 14 (15 tries)", n)
		}
		if prev != 3*time.Second {
			t.Fatalf("last wait %v, want the 3 s cap (50ms*1.5^13 > 3s)", prev)
		}
	}
	// A new run of failures starts again from start.
	b := p.New(rand.New(rand.NewPCG(9, 9)))
	b.Next(1)
	b.Next(2)
	if w, _ := b.Next(1); w != 50*time.Millisecond {
		t.Fatalf("restart wait %v, want 50ms", w)
	}
}

// fakeNotifier hands out one wake channel.
type fakeNotifier struct{ ch chan struct{} }

func (f fakeNotifier) Watch(string) (<-chan struct{}, func()) { return f.ch, func() {} }

// csc: recorded as csc:max=0s, needs tracking (not release messages), runs
// on rueidis only; its notified backoff waits max, or the TTL for max=0,
// and watches the notifier.
func TestCSC(t *testing.T) {
	p, err := Parse("csc")
	if err != nil {
		t.Fatal(err)
	}
	if p.String() != "csc:max=0s" || !p.NeedsTracking() || p.NeedsNotifier() {
		t.Fatalf("%s: tracking %v notifier %v, want csc:max=0s, true, false", p, p.NeedsTracking(), p.NeedsNotifier())
	}
	if !p.RunsOn("rueidis") || p.RunsOn("goredis") || strings.Join(p.Drivers(), ",") != "rueidis" {
		t.Fatalf("drivers %v", p.Drivers())
	}
	pub, _ := Parse("pubsub")
	var none *Policy
	if pub.NeedsTracking() || !pub.RunsOn("goredis") || pub.Drivers() != nil || !none.RunsOn("goredis") || none.NeedsTracking() {
		t.Fatal("pubsub or a nil policy is limited like csc")
	}
	n := fakeNotifier{make(chan struct{}, 1)}
	b := p.NewNotified(n, 3*time.Second)
	if w, ok := b.Next(1); w != 3*time.Second || !ok {
		t.Fatalf("max=0: Next = %v %v, want the 3s TTL", w, ok)
	}
	wk, ok := b.(Waker)
	if !ok {
		t.Fatal("csc's notified backoff is not a Waker")
	}
	if ch, _ := wk.Watch("k"); ch != (<-chan struct{})(n.ch) {
		t.Fatal("Watch does not return the notifier's channel")
	}
	p2, _ := Parse("csc:max=40s")
	if w, _ := p2.NewNotified(n, time.Second).Next(5); w != 40*time.Second {
		t.Fatalf("max=40s: Next = %v", w)
	}
	if _, err := Parse("csc:max=-1s"); err == nil || !strings.Contains(err.Error(), "max") {
		t.Fatalf("csc:max=-1s: %v", err)
	}
}
