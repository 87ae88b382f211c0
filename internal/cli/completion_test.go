package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
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

// TestCompletionEnumFlags: every flag that takes one of a fixed set of
// values completes, on every command that has it, and each value offered
// passes the flag's own validation (run and sweep lines through
// CheckArgs, --topology's masters: with a count); both ways, a value not
// offered is refused.
func TestCompletionEnumFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	valid := func(cmd, flag, v string) error {
		switch {
		case cmd == "run" || cmd == "sweep":
			if strings.HasSuffix(v, ":") {
				v += "3"
			}
			args := []string{cmd, "--" + flag, v, "--out", out}
			args = append(args, map[string][]string{"columns": {"--format", "table"}, "arrivals": {"--rate", "100"},
				"extend": {"--strategy", "redlock"}, "renew": {"--strategy", "handoff"}}[flag]...)
			return CheckArgs(args)
		case flag == "columns":
			return checkColumns(v, "table", false)
		case flag == "format" && cmd == "show":
			if !contains(report.Formats, v) {
				return fmt.Errorf("%q is not a format", v)
			}
		case flag == "format" && cmd == "compare" || flag == "driver":
			return nil // checked below, against the validation's refusal
		}
		return nil
	}
	flags := map[string][]string{
		"run":     {"format", "topology", "backend", "guard", "token", "columns", "release", "resource", "arrivals", "extend", "on-timeout", "renew"},
		"sweep":   {"format", "topology", "backend", "guard", "token", "columns"},
		"show":    {"format", "columns"},
		"compare": {"format"},
		"clean":   {"driver"},
		"claims":  {"driver"},
	}
	for cmd, fs := range flags {
		for _, flag := range fs {
			got := complete(t, cmd, "--"+flag, "")
			if len(got) < 2 {
				t.Errorf("%s --%s '': %v, want its values", cmd, flag, got)
			}
			for _, v := range got {
				if err := valid(cmd, flag, v); err != nil {
					t.Errorf("%s --%s %s, offered by completion: %v", cmd, flag, v, err)
				}
			}
		}
	}
	// Every plugin parameter of a fixed set, and every shared setting's
	// words, complete on run.
	for _, pp := range pluginParams() {
		if v := oneOfValues(pp.Param); len(v) > 0 && len(complete(t, "run", "--"+pp.Name, "")) == 0 {
			t.Errorf("run --%s (one of %v) completes nothing", pp.Name, v)
		}
	}
	for _, ss := range sharedSettings {
		if len(ss.words) > 0 && !slices.Equal(complete(t, "run", "--"+ss.Name, ""), sorted(ss.words)) {
			t.Errorf("run --%s completes %v, want %v", ss.Name, complete(t, "run", "--"+ss.Name, ""), ss.words)
		}
	}
	for _, bad := range [][]string{
		{"run", "--topology", "ring"}, {"run", "--backend", "podman"}, {"sweep", "--format", "yaml"},
		{"run", "--extend", "maybe"}, {"run", "--columns", "nosuch", "--format", "table"},
	} {
		if err := CheckArgs(append(bad, "--out", out)); err == nil {
			t.Errorf("lockbench %v: accepted, want refused (not among the values completion offers)", bad)
		}
	}
	for _, c := range [][]string{{"compare", "a.json", "b.json", "--format", "yaml"}, {"clean", "--addr", "127.0.0.1:1", "--run-id", "x", "--driver", "valkey"}} {
		if r := lockbench(t, c...); r.code != 2 || !strings.Contains(r.stderr, "valkey") && !strings.Contains(r.stderr, "yaml") {
			t.Errorf("lockbench %v: exit %d %s, want 2 naming the value", c, r.code, r.stderr)
		}
	}
	if got := complete(t, "compare", "--format", ""); !slices.Equal(got, compareFormats) && !slices.Equal(got, sorted(compareFormats)) {
		t.Errorf("compare --format: %v, want %v", got, compareFormats)
	}
	if got := complete(t, "clean", "--driver", ""); !slices.Equal(got, sorted(cleanDrivers)) {
		t.Errorf("clean --driver: %v, want %v", got, cleanDrivers)
	}
	// --normalize: the scenario names of compare's first file.
	base := filepath.Join("..", "..", "results", "baseline.json")
	run, err := report.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range run.Scenarios {
		names = append(names, s.Name())
	}
	if got := complete(t, "compare", base, "--normalize", ""); len(got) == 0 || !slices.Equal(got, sorted(names)) {
		t.Errorf("compare %s --normalize '': %v, want its scenarios %v", base, got, names)
	}
}
