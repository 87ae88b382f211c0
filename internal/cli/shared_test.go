package cli

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/registry"
)

// sharedScenarioParams validates a one-scenario run with the shared
// settings of set at their values (the others at their defaults) and
// returns its result params (engine.Scenario.ParamsMap).
func sharedScenarioParams(t *testing.T, set map[string]string) map[string]string {
	t.Helper()
	cmd, f := newRunCmdFlags()
	args := map[string]string{"strategy": "atomic", "driver": "goredis", "workload": "flash-sale",
		"out": filepath.Join(t.TempDir(), "r.json")}
	for k, v := range set {
		args[k] = v
	}
	for k, v := range args {
		if err := cmd.Flags().Set(k, v); err != nil {
			t.Fatalf("--%s %s: %v", k, v, err)
		}
	}
	p, err := validate(f)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if len(p.scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(p.scenarios))
	}
	return p.scenarios[0].ParamsMap()
}

// otherValue is a value of s other than its default that validate
// accepts on the scenario of sharedScenarioParams.
func otherValue(s sharedSetting) string {
	for _, w := range s.words {
		if w != s.Default && w != "auto" && w != "decr" {
			return w
		}
	}
	switch s.Default.(type) {
	case int:
		return "8"
	case bool:
		return "true"
	case time.Duration:
		return "2s"
	case string: // a duration or a distribution of them (--think), a traffic mix (--background), client roles (--mix)
		for _, v := range []string{"2s", "get=100/s", "write=1"} {
			if s.Default != v && s.Check != nil && s.Check(v) == nil {
				return v
			}
		}
	}
	return registry.Format(s.Default)
}

// TestSharedSettingsDeclared holds the shared settings to their table:
// each is a flag of run and sweep of its declared type and default, a
// field a scenario file may set, its default passes its own check, and a
// result file records it as the table says (always, or only a value
// other than the default, under its key), while every key a scenario's
// params hold is a shared setting's, a plugin parameter's, or one of the
// few recorded otherwise (seed, rate_shape).
func TestSharedSettingsDeclared(t *testing.T) {
	run, sweep := scratchRunFlags(), scratchSweepFlags()
	names := fileFieldNames(run)
	for _, s := range sharedSettings {
		if err := registry.CheckParams([]registry.Param{s.Param}); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		for cmd, fl := range map[string]*pflag.FlagSet{"run": run, "sweep": sweep} {
			f := fl.Lookup(s.Name)
			if f == nil {
				t.Errorf("%s: no --%s flag", cmd, s.Name)
				continue
			}
			if f.Value.Type() != s.Type() || f.DefValue != registry.Format(s.Default) {
				t.Errorf("%s --%s: a %s flag with default %q, declared %s %q", cmd, s.Name, f.Value.Type(), f.DefValue, s.Type(), registry.Format(s.Default))
			}
		}
		if !slices.Contains(names, s.Name) {
			t.Errorf("a scenario file cannot set %s", s.Name)
		}
	}
	defaults := sharedScenarioParams(t, nil)
	for _, s := range sharedSettings {
		key := s.result.key
		_, has := defaults[key]
		switch s.result.when {
		case recordAlways:
			if !has {
				t.Errorf("%s: a scenario's params have no %s", s.Name, key)
			}
		case recordWhenGiven:
			if has {
				t.Errorf("%s: a scenario at the default records %s=%s", s.Name, key, defaults[key])
			}
			v := otherValue(s)
			if m := sharedScenarioParams(t, map[string]string{s.Name: v}); m[key] == "" {
				t.Errorf("--%s %s: the scenario's params have no %s", s.Name, v, key)
			}
		}
	}
	known := map[string]bool{"seed": true, "rate_shape": true}
	for _, s := range sharedSettings {
		known[s.result.key] = true
	}
	for _, pp := range pluginParams() {
		known[pp.ResultKey()] = true
	}
	all := map[string]string{}
	for _, s := range sharedSettings {
		if s.result.when == recordWhenGiven {
			all[s.Name] = otherValue(s)
		}
	}
	for k := range sharedScenarioParams(t, all) {
		if !known[k] {
			t.Errorf("result params key %s is neither a shared setting's (sharedSettings) nor a plugin parameter's", k)
		}
	}
}

// Completion offers the words of the shared settings that take one of a
// few, on run and sweep.
func TestSharedSettingsCompletion(t *testing.T) {
	for _, s := range sharedSettings {
		if len(s.words) == 0 {
			continue
		}
		for _, cmd := range []string{"run", "sweep"} {
			if got, want := complete(t, cmd, "--"+s.Name, ""), sorted(s.words); !slices.Equal(got, want) {
				t.Errorf("%s --%s '': %v, want %v", cmd, s.Name, got, want)
			}
		}
	}
}
