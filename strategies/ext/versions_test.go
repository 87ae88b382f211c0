package ext

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/strategies"
)

// scripts/with-library.sh npm puts another version of an adapter's
// package beside the pinned one: with LOCKBENCH_ADAPTERS set to its copy
// (what the wrapper it writes does), the adapter loads that version and
// the locker reports it (strategies.Library, recorded in
// scenarios[].library); without, the pinned one. Not parallel: it sets
// the environment.
func TestWithLibraryNPM(t *testing.T) {
	const name, old = "redis-semaphore-node", "5.6.2"
	needAdapter(t, name)
	out := filepath.Join(t.TempDir(), "lockbench-redis-semaphore-"+old)
	b, err := exec.Command("sh", "../../scripts/with-library.sh", "npm", "redis-semaphore", old, out).CombinedOutput()
	if err != nil {
		t.Fatalf("with-library.sh: %v\n%s", err, b)
	}
	w, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(w), "LOCKBENCH_ADAPTERS='"+out+".adapters'") {
		t.Fatalf("the wrapper does not set LOCKBENCH_ADAPTERS to its copy:\n%s", w)
	}
	version := func() string {
		t.Helper()
		eps, err := servers.Nodes(name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := drivers.Open(DataDriver, drivers.Options{Endpoint: eps[0]})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		l, err := strategies.New(name, strategies.Config{Nodes: []drivers.Driver{d}, TTL: time.Second, Prefix: "lockbench:ext-test:"})
		if err != nil {
			t.Fatal(err)
		}
		defer l.(interface{ Close() error }).Close()
		lib, v := strategies.LibraryOf(l)
		if lib != "redis-semaphore" {
			t.Fatalf("library %q, want redis-semaphore", lib)
		}
		return v
	}
	pinned := version()
	t.Setenv(EnvDir, out+".adapters")
	if v := version(); v != old {
		t.Errorf("with LOCKBENCH_ADAPTERS at the copy: redis-semaphore %s, want %s", v, old)
	}
	if pinned == old {
		t.Errorf("the pinned redis-semaphore is %s too: the test cannot tell the two apart", old)
	}
	bad := exec.Command("sh", "../../scripts/with-library.sh", "npm", "redis-semaphore")
	if err := bad.Run(); err == nil || bad.ProcessState.ExitCode() != 2 {
		t.Errorf("with-library.sh with 2 arguments: %v, want exit 2", err)
	}
}
