package libs_test

import (
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/libs"
	"github.com/lockbench/lockbench/strategies/redislock"
	"github.com/lockbench/lockbench/strategies/redsynclock"
	"github.com/lockbench/lockbench/strategies/rueidislk"
)

// Each library strategy runs the version go.mod pins, and its
// description (lockbench list) names that version.
func TestVersionsPinned(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		module, version string
		names           []string
	}{
		{redsynclock.Module, redsynclock.Version, []string{"redsync", "redsync-redlock"}},
		{redislock.Module, redislock.Version, []string{"redislock"}},
		{rueidislk.Module, rueidislk.Version, []string{rueidislk.Name}},
	} {
		if want := "\t" + c.module + " " + c.version + "\n"; !strings.Contains(string(b), want) {
			t.Errorf("go.mod does not require %q", strings.TrimSpace(want))
		}
		for _, n := range c.names {
			if d := strategies.InfoOf(n).Desc; !strings.Contains(d, c.version) {
				t.Errorf("%s: description %q does not name %s", n, d, c.version)
			}
		}
	}
}
