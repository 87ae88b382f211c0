// Package scripttest runs the shell scripts of lockbench's deployment files
// (compose's and Kubernetes' merge steps) in tests, with a stub in place of
// the lockbench binary that records its arguments.
package scripttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Result is what one run of a script did.
type Result struct {
	// Args are the arguments the script ran lockbench with, one per
	// element; nil when it did not run lockbench.
	Args []string
	// Output is the script's stdout and stderr together.
	Output string
	// Err is the script's exit error (nil on exit 0).
	Err error
}

// Run runs script with sh -c in a directory of t's, with env as its whole
// environment beside a PATH whose first entry holds a lockbench stub. It
// skips t when the machine has no sh.
func Run(t *testing.T, script string, env []string) Result {
	t.Helper()
	return RunExit(t, script, env, 0)
}

// RunExit is Run with a lockbench stub that exits with status code
// (0 to 255) after recording its arguments.
func RunExit(t *testing.T, script string, env []string, code int) Result {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(tmp, "args")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + record + "\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(filepath.Join(bin, "lockbench"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", script)
	cmd.Env = append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	r := Result{Err: cmd.Run()}
	r.Output = out.String()
	if b, err := os.ReadFile(record); err == nil {
		r.Args = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	return r
}
