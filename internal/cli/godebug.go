package cli

import (
	"os"
	"runtime"
	"strings"
	"syscall"
)

// lazyFree is the GODEBUG setting lockbench runs with: the Go runtime
// hands freed heap pages back to the kernel with MADV_FREE instead of
// MADV_DONTNEED (runtime package docs, GODEBUG madvdontneed).
//
// Why: a run's histograms make lockbench's heap tens of MB (about 0.5 MB
// per shard of histograms, one per client up to 64 clients), so its garbage collector lets the heap grow by as much
// between two cycles, and with MADV_DONTNEED the runtime keeps giving
// those pages back and faulting them in again inside the measured window.
// On a virtual machine such a fault can cost tens of µs. Measured on the
// 2-core VM the docs' figures come from: 400 to 2,700 page faults per
// 1 s lock-cycle run at 50 clients with MADV_DONTNEED, about 0 with
// MADV_FREE after the first run, and lockbench / bare loop on go-redis went
// from 0.92-0.94 to 0.99-1.00 (`lockbench harness`). MADV_FREE pages stay
// counted in the process's RSS until the kernel needs them. Child processes
// (redis-server, the baselines' servers) inherit the setting; of them only
// etcd is a Go program.
const lazyFree = "madvdontneed=0"

// withLazyFree returns environ with lazyFree added to GODEBUG, and true;
// or environ and false when GODEBUG already sets madvdontneed (the user's
// choice stands). Of several GODEBUG entries the first counts, as it does
// for the runtime and os.Getenv; the others are dropped.
func withLazyFree(environ []string) ([]string, bool) {
	out := make([]string, 0, len(environ)+1)
	godebug, seen := "", false
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			if !seen {
				godebug, seen = v, true
			}
			continue
		}
		out = append(out, kv)
	}
	for _, s := range strings.Split(godebug, ",") {
		if strings.HasPrefix(strings.TrimSpace(s), "madvdontneed=") {
			return environ, false
		}
	}
	if godebug != "" {
		godebug += ","
	}
	return append(out, "GODEBUG="+godebug+lazyFree), true
}

// reexecLazyFree replaces the process with lockbench itself run with
// lazyFree (see there), unless GODEBUG already sets madvdontneed (set
// GODEBUG=madvdontneed=0 yourself to run lockbench under a debugger
// without the exec): the runtime reads that setting only at start-up. It
// executes /proc/self/exe, the running binary even if its file was since
// replaced or deleted, with the same arguments (os.Args): Main calls it
// only when its args are those (ownCommandLine), never from a test binary
// or a program that passes a command line of its own. It returns only
// when it does nothing or the exec fails (lockbench then runs as it is).
func reexecLazyFree() {
	if runtime.GOOS != "linux" {
		return
	}
	env, ok := withLazyFree(os.Environ())
	if !ok {
		return
	}
	_ = syscall.Exec("/proc/self/exe", os.Args, env)
}
