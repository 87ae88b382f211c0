package cli

import (
	"slices"
	"testing"
)

// lockbench adds madvdontneed=0 to GODEBUG, keeps the user's other
// settings, and leaves a madvdontneed the user set alone.
func TestWithLazyFree(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
		ok   bool
	}{
		{[]string{"PATH=/bin"}, []string{"PATH=/bin", "GODEBUG=madvdontneed=0"}, true},
		{[]string{"GODEBUG=gctrace=1", "HOME=/h"}, []string{"HOME=/h", "GODEBUG=gctrace=1,madvdontneed=0"}, true},
		{[]string{"GODEBUG="}, []string{"GODEBUG=madvdontneed=0"}, true},
		{[]string{"GODEBUG=gctrace=1,madvdontneed=1"}, []string{"GODEBUG=gctrace=1,madvdontneed=1"}, false},
		{[]string{"GODEBUG=madvdontneed=0"}, []string{"GODEBUG=madvdontneed=0"}, false},
		// The first GODEBUG counts, as for the runtime.
		{[]string{"GODEBUG=madvdontneed=1", "GODEBUG=x=1"}, []string{"GODEBUG=madvdontneed=1", "GODEBUG=x=1"}, false},
		{[]string{"GODEBUG=x=1", "A=b", "GODEBUG=madvdontneed=1"}, []string{"A=b", "GODEBUG=x=1,madvdontneed=0"}, true},
	}
	for _, c := range cases {
		got, ok := withLazyFree(c.in)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("withLazyFree(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
