package faults_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/faults"
)

// TestDocsFaultTable keeps the fault table of docs/workloads-and-faults.md
// in step with the registry: one row per registered fault, none for a
// fault that does not exist, and each of a fault's own parameters named
// in its params column (the trigger, at and after, is described above the
// table once for all).
func TestDocsFaultTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/workloads-and-faults.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z-]+)` \\|(.*)\\|([^|]*)\\|\\s*$")
	rows := map[string]string{} // fault -> params cell
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| fault | what it does | params |"):
			in = true
			continue
		case in && !strings.HasPrefix(line, "|"):
			in = false
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("fault table row not understood: %.80s", line)
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("fault %s has two rows", m[1])
		}
		rows[m[1]] = m[3]
	}
	if len(rows) == 0 {
		t.Fatal("no fault table (a header `| fault | what it does | params |`) in docs/workloads-and-faults.md")
	}
	trigger := map[string]bool{}
	for _, p := range faults.Trigger {
		trigger[p.Name] = true
	}
	for _, e := range faults.Entries() {
		cell, ok := rows[e.Name]
		if !ok {
			t.Errorf("fault %s is registered but has no row in docs/workloads-and-faults.md", e.Name)
			continue
		}
		delete(rows, e.Name)
		for _, p := range e.Params {
			if trigger[p.Name] {
				continue
			}
			if !strings.Contains(cell, "`"+p.Name+"`") {
				t.Errorf("fault %s: parameter %s is not in its params column (%q)", e.Name, p.Name, strings.TrimSpace(cell))
			}
		}
	}
	for name := range rows {
		t.Errorf("docs/workloads-and-faults.md has a row for %s, which is no registered fault", name)
	}
}
