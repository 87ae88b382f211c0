// Command custom-lock is lockbench with one more lock strategy, "custom",
// registered in lock.go: every lockbench command, flag, workload, fault
// and oracle works on it.
//
//	go run ./examples/custom-lock list
//	go run ./examples/custom-lock run --strategy custom,atomic --duration 1s
//
// See docs/custom-lock.md.
package main

import (
	"os"

	"github.com/lockbench/lockbench"
)

func main() { os.Exit(lockbench.Main(os.Args[1:])) }
