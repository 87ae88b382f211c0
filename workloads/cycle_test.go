package workloads

import (
	"context"
	"slices"
	"testing"
)

// lock-cycle's own keys are numbered over the whole scenario: segment 2 of
// a 5-client scenario split 3 + 2 (ClientOffset 3) locks keys 3 and 4, so
// that it shares none with segment 1's 0..2; without own-keys the key
// space is the scenario's --keys in every segment.
func TestCycleOwnKeysUnderSegments(t *testing.T) {
	for _, c := range []struct {
		own  bool
		want []string
	}{
		{true, []string{"p:{cyc:3}:lock", "p:{cyc:4}:lock"}},
		{false, []string{"p:{cyc:0}:lock", "p:{cyc:1}:lock", "p:{cyc:2}:lock"}},
	} {
		w := &cycle{keys: 3, own: c.own}
		env := &Env{Prefix: "p:", Clients: 2, ClientOffset: 3}
		if err := w.Setup(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		if got := w.LockKeys(); !slices.Equal(got, c.want) || env.Locks != len(c.want) {
			t.Errorf("own-keys %v: keys %q (Locks %d), want %q", c.own, got, env.Locks, c.want)
		}
	}
}
