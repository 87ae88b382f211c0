package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/faults"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/retry"
)

// After NAME: completion offers the parameters that plugin declares, as
// NAME:param=, for every plugin flag that takes them; after a parameter,
// the plugin's others (not the ones given) and, in a list, further names.
func TestCompletionParams(t *testing.T) {
	t.Parallel()
	withLead := func(lead string, names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, lead+n+"=")
		}
		return sorted(out)
	}
	paramNames := func(ps []strategies.Param) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, name := range strategies.Names() {
		ps := strategies.ParamsOf(name)
		got := complete(t, "run", "--strategy", "atomic,"+name+":")
		if want := withLead("atomic,"+name+":", paramNames(ps)...); !slices.Equal(got, want) {
			t.Errorf("--strategy atomic,%s: gives %v, want %v", name, got, want)
		}
	}
	for _, e := range faults.Entries() {
		got := complete(t, "run", "--fault", e.Name+":")
		if want := withLead(e.Name+":", paramNames(e.Params)...); !slices.Equal(got, want) {
			t.Errorf("--fault %s: gives %v, want %v", e.Name, got, want)
		}
	}
	var backoff []strategies.Param
	for _, e := range retry.Entries() {
		if e.Name == "backoff" {
			backoff = e.Params
		}
	}
	if len(backoff) < 2 {
		t.Fatalf("backoff declares %d parameters; the test needs two", len(backoff))
	}
	first := backoff[0].Name
	got := complete(t, "run", "--retry", "backoff:"+first+"=1ms,")
	var want []string
	for _, p := range backoff[1:] {
		want = append(want, "backoff:"+first+"=1ms,"+p.Name+"=")
	}
	for _, n := range retry.Names() {
		if n != "backoff" {
			want = append(want, "backoff:"+first+"=1ms,"+n)
		}
	}
	if want = sorted(want); !slices.Equal(got, want) {
		t.Errorf("--retry backoff:%s=1ms,: gives %v, want %v", first, got, want)
	}
	// A fault takes one item: after its parameter, its other parameters
	// only, no fault names.
	got = complete(t, "run", "--fault", "node-kill:node=1,")
	if want := withLead("node-kill:node=1,", "after", "at"); !slices.Equal(got, want) {
		t.Errorf("--fault node-kill:node=1,: gives %v, want %v", got, want)
	}
	// A partial parameter name narrows; an unknown plugin offers nothing.
	if got := complete(t, "run", "--fault", "node-restart:d"); !slices.Equal(got, []string{"node-restart:down="}) {
		t.Errorf("--fault node-restart:d: gives %v, want [node-restart:down=]", got)
	}
	if got := complete(t, "run", "--strategy", "nosuch:"); len(got) != 0 {
		t.Errorf("--strategy nosuch:: gives %v, want nothing", got)
	}
	for _, got := range complete(t, "run", "--strategy", "redlock:extend=on,") {
		if strings.HasSuffix(got, ",redlock") {
			t.Errorf("--strategy redlock:extend=on,: offers redlock again (%v)", got)
		}
	}
}
