package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planOf validates a run command line (without "run") and returns its
// plan, or the validation error.
func planOf(t *testing.T, args ...string) (*plan, error) {
	t.Helper()
	cmd, f := newRunCmdFlags()
	args = append(args, "--out", filepath.Join(t.TempDir(), "r.json"))
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	return validate(f)
}

// A parameter given after a strategy's or workload's name is that plugin's
// alone: it reaches its scenarios' params (the keys unchanged) over the
// run flag, which stays the default of every other plugin that takes it.
func TestStrategyScopedParams(t *testing.T) {
	for _, c := range []struct {
		args []string
		want map[string]map[string]string // strategy/workload -> result key -> value
	}{
		{[]string{"--strategy", "redlock:extend=unchecked,redsync:extend=on"},
			map[string]map[string]string{"redlock/flash-sale": {"extend": "unchecked"}, "redsync/flash-sale": {"extend": "on"}}},
		// The flag is the matrix-wide default; a scoped value overrides it
		// for its strategy alone.
		{[]string{"--strategy", "redlock:extend=unchecked,redsync", "--extend", "on"},
			map[string]map[string]string{"redlock/flash-sale": {"extend": "unchecked"}, "redsync/flash-sale": {"extend": "on"}}},
		{[]string{"--strategy", "redlock,redsync-redlock:extend=off,redsync", "--extend", "on"},
			map[string]map[string]string{"redlock/flash-sale": {"extend": "on"}, "redsync-redlock/flash-sale": {"extend": "off"}, "redsync/flash-sale": {"extend": "on"}}},
		// Parameters of their own on both sides, kept with their item.
		{[]string{"--strategy", "redsync:tries=3,retry-delay=10ms,atomic:on-timeout=release",
			"--workload", "flash-sale:stock=7,skus=2,hot-key:keys=3", "--zipf", "2"},
			map[string]map[string]string{
				"redsync/flash-sale": {"tries": "3", "retry_delay": "10ms", "stock": "7", "skus": "2"},
				"atomic/flash-sale":  {"on_timeout": "release", "stock": "7"},
				"redsync/hot-key":    {"tries": "3", "keys": "3", "zipf": "2"},
				"atomic/hot-key":     {"on_timeout": "release", "keys": "3"},
			}},
	} {
		p, err := planOf(t, c.args...)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		got := map[string]map[string]string{}
		for _, sc := range p.scenarios {
			got[sc.Strategy+"/"+sc.Workload] = sc.ParamsMap()
		}
		for name, kv := range c.want {
			if got[name] == nil {
				t.Errorf("%q: no scenario %s", c.args, name)
				continue
			}
			for k, v := range kv {
				if got[name][k] != v {
					t.Errorf("%q: %s params %s = %q, want %q", c.args, name, k, got[name][k], v)
				}
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: scenarios %v, want %d", c.args, got, len(c.want))
		}
	}
}

// Scoped parameters that do not fit are usage errors naming the plugin,
// all at once; a flag value one strategy of the matrix refuses names that
// strategy and the scoped form.
func TestStrategyScopedParamErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--strategy", "redlock,redsync", "--extend", "unchecked"},
			[]string{`--extend unchecked: strategy redsync: "unchecked" is not one of off, on (a value for redsync alone: --strategy redsync:extend=VALUE)`}},
		{[]string{"--strategy", "redlock:extend=bogus,redsync:extnd=on,atomic:extend=on"},
			[]string{`strategy redlock: extend=bogus: "bogus" is not one of off, on, unchecked`,
				`strategy redsync: unknown parameter "extnd" (it takes drift-factor, extend, retry-delay, timeout-factor, tries)`,
				`strategy atomic: unknown parameter "extend" (it takes on-timeout)`}},
		{[]string{"--strategy", "redsync:tries=x,tries=2"},
			[]string{`strategy redsync: tries=x: "x" is not a whole number`, `strategy redsync: parameter "tries" given twice`}},
		{[]string{"--strategy", "redlock:extend=on,redlock:extend=unchecked"},
			[]string{"--strategy lists redlock twice (redlock:extend=on and redlock:extend=unchecked)"}},
		{[]string{"--strategy", "redlock,extend=on"},
			[]string{`--strategy "redlock,extend=on": a parameter goes after its strategy's name and a colon, NAME:param=value (redlock:extend=on)`}},
		{[]string{"--strategy", "redlock:extend=unchecked,redsync:extend=on", "--extend", "on"},
			[]string{"--extend has no effect: redlock, redsync each give their own (NAME:extend=...); drop the flag or one of theirs"}},
		{[]string{"--workload", "flash-sale:stock=7", "--stock", "9"},
			[]string{"--stock has no effect: flash-sale gives its own (flash-sale:stock=...); drop one of the two"}},
		{[]string{"--workload", "hot-key:stock=5,flash-sale:stock=0"},
			[]string{`workload hot-key: unknown parameter "stock" (it takes keys, zipf)`, "workload flash-sale: stock=0: must be from 1"}},
	} {
		_, err := planOf(t, c.args...)
		var ue usageError
		if err == nil || !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", c.args, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v\nwant it to contain %q", c.args, err, w)
			}
		}
		if strings.Count(err.Error(), "\n")+1 != len(c.want) {
			t.Errorf("%q: %d problems, want %d:\n%v", c.args, strings.Count(err.Error(), "\n")+1, len(c.want), err)
		}
	}
}

// A scenario file lists strategies in the same form, as a YAML list or one
// value; the command line's --strategy wins over it, and its values are
// still checked.
func TestScenarioFileScopedStrategy(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		file string
		args []string
		want map[string]string // strategy -> extend
		err  string
	}{
		{file: "strategy: [redlock:extend=unchecked, redsync:extend=on]\n", want: map[string]string{"redlock": "unchecked", "redsync": "on"}},
		{file: "strategy:\n  - redlock:extend=on\n  - redsync\nextend: off\n", want: map[string]string{"redlock": "on", "redsync": "off"}},
		{file: "strategy: redsync-redlock:extend=on,tries=4\n", want: map[string]string{"redsync-redlock": "on"}},
		{file: "strategy: [redlock:extend=unchecked]\n", args: []string{"--strategy", "redsync:extend=on"}, want: map[string]string{"redsync": "on"}},
		{file: "strategy: [redlock:extend=bogus]\n", err: `strategy redlock: extend=bogus: "bogus" is not one of off, on, unchecked`},
	} {
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd, f := newRunCmdFlags()
		args := append([]string{"-f", path, "--out", filepath.Join(dir, "r.json")}, c.args...)
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := applyFile(cmd.Flags(), scratchRunFlags(), path); err != nil {
			t.Fatalf("%q: %v", c.file, err)
		}
		p, err := validate(f)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.file, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.file, err)
		}
		got := map[string]string{}
		for _, sc := range p.scenarios {
			got[sc.Strategy] = sc.ParamsMap()["extend"]
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: strategies %v, want %v", c.file, got, c.want)
		}
		for st, v := range c.want {
			if got[st] != v {
				t.Errorf("%q: %s extend = %q, want %q", c.file, st, got[st], v)
			}
		}
	}
}
