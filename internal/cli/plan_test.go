package cli

import (
	"path/filepath"
	"reflect"
	"testing"
)

// validate takes the user and password from an --addr URL into the plan
// without writing them into its *runFlags.
func TestValidateLeavesFlags(t *testing.T) {
	t.Setenv("LOCKBENCH_PASSWORD", "")
	cmd, f := newRunCmdFlags()
	if err := cmd.Flags().Parse([]string{"--addr", "redis://user:pw@127.0.0.1:6390", "--out", filepath.Join(t.TempDir(), "r.json")}); err != nil {
		t.Fatal(err)
	}
	before := *f
	p, err := validate(f)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !reflect.DeepEqual(*f, before) {
		t.Errorf("validate changed its runFlags:\nbefore %+v\nafter  %+v", before, *f)
	}
	if p.conn.Username != "user" || p.conn.Password != "pw" {
		t.Errorf("plan username %q password %q, want user, pw", p.conn.Username, p.conn.Password)
	}
	if want := []string{"127.0.0.1:6390"}; !reflect.DeepEqual(p.addrs, want) {
		t.Errorf("plan addrs %q, want %q", p.addrs, want)
	}
}
