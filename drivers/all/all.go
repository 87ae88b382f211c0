// Package all registers every driver adapter; import it for its side effect.
package all

import (
	// Register the adapters.
	_ "github.com/lockbench/lockbench/drivers/goredis"
	_ "github.com/lockbench/lockbench/drivers/rueidis"
)
