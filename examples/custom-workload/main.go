// Command custom-workload is lockbench with one more workload, "seats",
// registered in workload.go from outside lockbench's own packages: every
// lockbench command, flag, strategy, fault and oracle works on it.
//
//	go run ./examples/custom-workload list
//	go run ./examples/custom-workload run --workload seats --strategy naive,atomic --seats 200
//	go run ./examples/custom-workload run --workload seats:seats=50,shows=4 --strategy atomic
//
// See docs/workloads-and-faults.md (Writing a workload).
package main

import (
	"os"

	"github.com/lockbench/lockbench"
)

func main() { os.Exit(lockbench.Main(os.Args[1:])) }
