package retry

import "testing"

// Parse never panics, and a parsed policy's canonical spec parses back to
// the same policy.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"none", "fixed", "fixed:interval=20ms", "backoff:start=1ms,cap=2s,tries=3,min=1.1,max=1.9",
		"pubsub:max=5ms", "spin", "backoff:,", "fixed:interval=", ":", "backoff:max=NaN", "fixed:interval=1ms,interval=2ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Parse(spec)
		if err != nil {
			return
		}
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("canonical spec %q of %q does not parse: %v", p.String(), spec, err)
		}
		if q.String() != p.String() {
			t.Fatalf("round trip %q -> %q", p.String(), q.String())
		}
		b := p.New(nil)
		if _, ok := b.(*jittered); !ok { // jittered needs a rng; others must not
			b.Next(1)
		}
	})
}
