package ext

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
)

// The Python adapter: adapters/python/adapter.py, run by the interpreter
// of the virtual environment that adapters/python/build.sh makes
// (adapters/python/.venv, with the pins of requirements.txt: redis 8.2.0,
// python-redis-lock 4.0.1). docs/libraries.md describes its variants.
func init() {
	Register("redis-py-lock", Adapter{
		Desc: "redis-py's Lock (PyPI redis 8.2.0; Python, adapters/python): SET NX PX with lockbench's token, the library's own wait " +
			"(a try every sleep until blocking_timeout), compare-and-delete release, extend(replace_ttl); github.com/redis/redis-py",
		Lock: "redis-py-lock", Runtime: []string{"python3"}, Folder: "python", Command: pythonCommand, Kind: OwnRetry,
		Params: []registry.Param{{Name: "sleep", Default: 100 * time.Millisecond,
			Doc:   "the Lock's pause between tries while it waits (its sleep=)",
			Check: func(v any) error { return positive(v.(time.Duration)) }}, extendParam},
	})
	Register("python-redis-lock", Adapter{
		Desc: "python-redis-lock 4.0.1 (Python, adapters/python): SET NX EX (whole-second TTLs only) with lockbench's token, " +
			"one attempt per acquire, release script with a signal list under the lock's prefix; github.com/ionelmc/python-redis-lock",
		Lock: "python-redis-lock", Runtime: []string{"python3"}, Folder: "python", Command: pythonCommand,
		Params: []registry.Param{extendParam},
	})
	Register("python-redis-lock-renew", Adapter{
		Desc: "python-redis-lock 4.0.1 with auto_renewal (Python, adapters/python): as python-redis-lock, renewed every 2/3 of the TTL " +
			"by a thread per lock; a failed renewal is reported lost; github.com/ionelmc/python-redis-lock",
		Lock: "python-redis-lock-renew", Runtime: []string{"python3"}, Folder: "python", Command: pythonCommand,
		Params: []registry.Param{extendParam},
	})
}

// extendParam makes the Python locks' leases strategies.Extenders (the
// worker extends after each unit of work); off by default, as redsync's
// and ext-atomic's extend.
var extendParam = registry.Param{Name: "extend", Default: "off", Check: registry.OneOf("off", "on"),
	Doc: "off, or on (the lease is a strategies.Extender: the worker calls Lock.extend after its work)"}

// pythonCommand runs adapter.py with the virtual environment's python;
// ErrNotBuilt when build.sh has not finished installing it (it writes
// .venv/.installed last).
func pythonCommand(dir string) ([]string, error) {
	py, script := filepath.Join(dir, ".venv", "bin", "python"), filepath.Join(dir, "adapter.py")
	if err := Built(py, filepath.Join(dir, ".venv", ".installed"), script); err != nil {
		return nil, err
	}
	return []string{py, script}, nil
}

// positive refuses a duration that is not more than 0.
func positive(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("must be more than 0, got %v", d)
	}
	return nil
}
