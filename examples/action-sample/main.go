// Command action-sample is the program a repository gives lockbench's
// GitHub Action (input program: .): lockbench with the repository's own
// lock registered as the strategy "inhouse" (package lock), so that the
// Action benchmarks and gates it with every lockbench flag, workload,
// fault and oracle. See README.md here and docs/action.md.
//
//	go run ./examples/action-sample run -f examples/action-sample/lockbench/flash-sale.yaml
package main

import (
	"os"

	"github.com/lockbench/lockbench"

	_ "github.com/lockbench/lockbench/examples/action-sample/lock" // registers "inhouse"
)

func main() { os.Exit(lockbench.Main(os.Args[1:])) }
