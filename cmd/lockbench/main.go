// Command lockbench measures Redis distributed-lock strategies on real
// redis-server processes: throughput, latency percentiles and exact safety
// violation counts. See README.md.
package main

import (
	"os"

	"github.com/lockbench/lockbench"
)

func main() { os.Exit(lockbench.Main(os.Args[1:])) }
