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

// Main re-executes only for the process's own command line: a test binary
// (or a program) that passes a command line of its own runs in-process.
func TestOwnCommandLine(t *testing.T) {
	cases := []struct {
		args, osArgs []string
		want         bool
	}{
		{[]string{"run", "--duration", "1s"}, []string{"/usr/bin/lockbench", "run", "--duration", "1s"}, true},
		{[]string{}, []string{"/usr/bin/lockbench"}, true},
		{nil, []string{"/usr/bin/lockbench"}, true},
		{[]string{"run", "--strategy", "custom"}, []string{"/tmp/custom-lock.test", "-test.run=TestCLI"}, false},
		{[]string{"list"}, []string{"/usr/bin/lockbench", "run"}, false},
		{[]string{"list"}, nil, false},
	}
	for _, c := range cases {
		if got := ownCommandLine(c.args, c.osArgs); got != c.want {
			t.Errorf("ownCommandLine(%q, %q) = %v, want %v", c.args, c.osArgs, got, c.want)
		}
	}
}
