package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckArgs checks that CheckArgs accepts valid lines and refuses
// the bad ones as Main would (unknown flags, values run's validation
// refuses, merge's argument count and --out), without starting or reading
// anything: a valid run against an address nothing listens on passes, and
// merge's input files need not exist.
func TestCheckArgs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	cases := []struct {
		args []string
		want string // "" = valid; else a part of the error
	}{
		{[]string{"run", "--addr", "127.0.0.1:1", "--strategy", "atomic", "--out", out}, ""},
		{[]string{"run", "--addr", "127.0.0.1:1", "--clients", "0", "--out", out}, "--clients must be from 1"},
		{[]string{"run", "--addr", "127.0.0.1:1", "--strategy", "nosuch", "--out", out}, "nosuch"},
		{[]string{"run", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"run", "--out", filepath.Join(dir, "r.txt")}, "must end in .json"},
		{[]string{"run", "extra"}, "unknown command"},
		{[]string{"sweep", "--addr", "127.0.0.1:1", "--clients", "1,10", "--out", out}, ""},
		{[]string{"merge", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), "--out", filepath.Join(dir, "m.json")}, ""},
		{[]string{"merge", filepath.Join(dir, "a.json")}, "requires at least 2 arg(s)"},
		{[]string{"merge", "a.json", "b.json", "--out", filepath.Join(dir, "m.txt")}, "must end in .json"},
		{[]string{"version"}, ""},
		{[]string{"run", "--help"}, ""},
		{[]string{"nosuch"}, "unknown command"},
	}
	for _, c := range cases {
		err := CheckArgs(c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckArgs(%q) = %v, want nil", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckArgs(%q) = %v, want an error with %q", c.args, err, c.want)
		}
	}
	// Nothing was written: no result, no reservation, no probe left.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("CheckArgs left %s in the --out directory", e.Name())
	}
}
