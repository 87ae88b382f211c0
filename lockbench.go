// Package lockbench is lockbench's command line as a library: a program
// that registers its own lock strategy (strategies.Register), driver,
// workload or fault and then calls Main benchmarks it with every flag,
// workload, fault, oracle and report of the lockbench command. The
// built-in drivers (go-redis, rueidis) and strategies, the baselines and
// the library strategies included, are registered by importing this
// package. docs/custom-lock.md and examples/custom-lock show a lock
// benchmarked this way.
package lockbench

import "github.com/lockbench/lockbench/internal/cli"

// Main runs the lockbench command line with args (os.Args[1:]: the
// arguments without the program name) and returns its exit code: 0 done,
// 1 the run failed, 2 bad input, 3 a --fail-on threshold failed, 130, 143
// or 129 interrupted by SIGINT, SIGTERM or SIGHUP. Call it from main and
// pass the code to os.Exit. When args is the process's own command line
// (os.Args[1:]), on Linux it may first re-execute the running binary once,
// with the same arguments, to add GODEBUG=madvdontneed=0 (the runtime
// reads it only at start-up; a GODEBUG that sets madvdontneed already
// prevents it), so call it before the program does other work. With any
// other args, as from a test (lockbench.Main([]string{"run", ...})), it
// runs in-process and never re-executes.
func Main(args []string) int { return cli.Main(args) }
