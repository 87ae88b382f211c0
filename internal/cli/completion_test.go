package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// complete runs cobra's hidden __complete command (what the shell scripts
// of `lockbench completion` call) and returns the candidates it printed,
// without the trailing directive line.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append([]string{"__complete"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" && !strings.HasPrefix(l, ":") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return got
}

// Completion offers the registered names for the plugin flags of run and
// sweep, completing the last part of a comma list.
func TestCompletionNames(t *testing.T) {
	all := complete(t, "run", "--strategy", "")
	if want := strategies.Names(); !slices.Equal(all, sorted(want)) {
		t.Fatalf("run --strategy '': %v, want every strategy %v", all, sorted(want))
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--strategy", "watch"}, []string{"watchdog"}},
		{[]string{"run", "--strategy", "atomic,watch"}, []string{"atomic,watchdog"}},
		{[]string{"sweep", "--driver", "goredis,"}, []string{"goredis,rueidis"}},
		{[]string{"run", "--driver", "rue"}, []string{"rueidis"}},
		{[]string{"run", "--workload", "flash"}, []string{"flash-sale"}},
		{[]string{"run", "--retry", "fixed:interval=5ms,back"}, []string{"fixed:interval=5ms,backoff"}},
		{[]string{"run", "--strategy", "nosuch"}, nil},
	} {
		if got := complete(t, c.args...); !slices.Equal(got, c.want) {
			t.Errorf("__complete %v: %v, want %v", c.args, got, c.want)
		}
	}
	faults := complete(t, "run", "--fault", "")
	if len(faults) == 0 || slices.ContainsFunc(faults, func(s string) bool { return strings.Contains(s, ",") }) {
		t.Fatalf("run --fault '': %v, want the fault names, no lists", faults)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
