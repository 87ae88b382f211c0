package ext

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/internal/registry"
)

// Errors of Available and of a strategy's start.
var (
	// ErrNoRuntime: a program the adapter needs (Adapter.Runtime) is not
	// on PATH. Tests skip with it.
	ErrNoRuntime = errors.New("runtime not installed")
	// ErrNotBuilt: the adapter's build output is missing: run `make
	// adapters`.
	ErrNotBuilt = errors.New("adapter not built (run make adapters)")
	// ErrNoAdapters: no adapters/ folder was found (EnvDir).
	ErrNoAdapters = errors.New("adapters folder not found")
)

// EnvDir is the environment variable that names the adapters folder.
// Unset: the first adapters/ folder (one holding README.md) in the
// current directory, the executable's, or one of their parents.
const EnvDir = "LOCKBENCH_ADAPTERS"

// Dir returns the absolute path of the adapters folder, or an error
// wrapping ErrNoAdapters.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, s := range starts {
		for d := s; ; d = filepath.Dir(d) {
			cand := filepath.Join(d, "adapters")
			if fi, err := os.Stat(filepath.Join(cand, "README.md")); err == nil && fi.Mode().IsRegular() {
				return cand, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("%w: run lockbench inside its repository, or set %s to the adapters folder", ErrNoAdapters, EnvDir)
}

// Folder returns the absolute path of the folder of strategy name's
// adapter ("" when it needs none).
func Folder(name string) (string, error) {
	a, ok := adapterOf(name)
	if !ok {
		return "", fmt.Errorf("ext: %s is not an external lock", name)
	}
	if a.Folder == "" {
		return "", nil
	}
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, a.Folder), nil
}

// Available reports whether strategy name's adapter can start: nil, an
// error wrapping ErrNoRuntime (a runtime is not on PATH), or one
// wrapping ErrNotBuilt or ErrNoAdapters.
func Available(name string) error {
	a, ok := adapterOf(name)
	if !ok {
		return fmt.Errorf("ext: %s is not an external lock", name)
	}
	if err := runtimes(name, a); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if a.fromParams != nil {
		return nil
	}
	dir, err := Folder(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err = a.Command(dir); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func runtimes(name string, a Adapter) error {
	for _, r := range a.Runtime {
		if _, err := exec.LookPath(r); err != nil {
			return fmt.Errorf("%w: %s is not on PATH", ErrNoRuntime, r)
		}
	}
	return nil
}

// IsExternal reports whether strategy name runs through an adapter.
func IsExternal(name string) bool { _, ok := adapterOf(name); return ok }

// commandOf is the argv that starts strategy name's adapter.
func commandOf(name string, a Adapter, v registry.Values) ([]string, error) {
	if err := runtimes(name, a); err != nil {
		return nil, err
	}
	if a.fromParams != nil {
		argv, _ := a.fromParams(v)
		cmd := argv[0]
		if cmd == "" {
			return nil, fmt.Errorf("needs cmd=PATH: the adapter program (args= adds its arguments, space-separated)")
		}
		if _, err := exec.LookPath(cmd); err != nil {
			return nil, fmt.Errorf("cmd=%s: %w", cut(cmd), err)
		}
		return argv, nil
	}
	dir, err := Folder(name)
	if err != nil {
		return nil, err
	}
	argv, err := a.Command(dir)
	if err != nil && os.Getenv(EnvDir) != "" {
		err = fmt.Errorf("%w (in %s=%s)", err, EnvDir, os.Getenv(EnvDir))
	}
	return argv, err
}

// Built returns an error wrapping ErrNotBuilt unless every path exists:
// for an Adapter.Command to check its build output.
func Built(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%w: %s is missing", ErrNotBuilt, p)
		}
	}
	return nil
}

func init() {
	Register("ext", Adapter{
		Desc: "any external lock: the adapter program cmd=PATH (args= its arguments, lock= the variant named in hello) " +
			"speaking lockbench's external-lock protocol v1 over stdin/stdout (docs/external-locks.md); one attempt per acquire",
		fromParams: func(v registry.Values) ([]string, string) {
			return append([]string{strings.TrimSpace(v.String("cmd"))}, strings.Fields(v.String("args"))...), v.String("lock")
		},
		Params: []registry.Param{
			{Name: "cmd", Doc: "ext: the adapter program (a path, or a name on PATH)", Default: ""},
			{Name: "args", Doc: "ext: the adapter's arguments, space-separated", Default: ""},
			{Name: "lock", Doc: "ext: the variant sent in hello's lock", Default: ""},
		},
	})
}
