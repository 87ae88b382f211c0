package schemacheck_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/report/schemacheck"
)

func encode(t *testing.T, r *report.Run) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What the Go types write matches, the custom and the nil cases included:
// a Liveness that measured nothing (its MarshalJSON leaves out the
// counts), a follower segment's Violations (without the end check's
// kinds), nil slices and maps written as null, every Meta field set.
func TestValidateAcceptsWhatTheTypesWrite(t *testing.T) {
	for name, r := range map[string]*report.Run{
		"zero": {Schema: report.Schema},
		"meta": {Schema: report.Schema, Meta: report.Meta{Version: "(devel)", Deps: map[string]string{"github.com/redis/go-redis/v9": "v9.23.0"},
			RedisVersion: "7.0.15", RedisVersions: []string{"7.0.15", "7.2.4"}, Servers: []report.ServerInfo{{Addr: "127.0.0.1:1", Pid: 2}}}},
		"liveness not measured": {Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic",
			Liveness: &report.Liveness{NotMeasured: "why", DeadlineOvershoots: 1, OrphanLocks: 3}}}},
		"follower segment": {Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic",
			Violations: report.Violations{EndCheck: report.EndCheckNotRun, Overlap: 1}}}},
		"liveness measured": {Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic",
			Liveness: &report.Liveness{Measured: true, OrphanLocks: 3}, ServerLoad: &report.ServerLoad{Samples: 3}}}},
	} {
		if err := schemacheck.Validate(encode(t, r)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// What no lockbench writes is refused, with the place named.
func TestValidateRefuses(t *testing.T) {
	good := string(encode(t, &report.Run{Schema: report.Schema, Scenarios: []report.Scenario{{Strategy: "atomic",
		Liveness: &report.Liveness{Measured: true}}}}))
	for _, c := range []struct{ name, json, want string }{
		{"another schema", strings.Replace(good, `"schema":1`, `"schema":2`, 1), "/schema"},
		{"a string for a number", strings.Replace(good, `"ops":0`, `"ops":"0"`, 1), "/scenarios/0/ops"},
		{"a required field missing", strings.Replace(good, `"strategy":"atomic",`, ``, 1), "strategy"},
		{"a measured liveness without its counts", strings.Replace(good, `"orphan_locks":0,`, ``, 1), "orphan_locks"},
		{"not JSON", `{"schema":`, "not JSON"},
	} {
		if c.json == good {
			t.Fatalf("%s: the replacement did not apply", c.name)
		}
		err := schemacheck.Validate([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}
