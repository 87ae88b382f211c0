// Package libs registers the strategies that are thin adapters over the
// Go lock libraries people ship, each at the version pinned in go.mod:
// import it for its side effect.
//
//	import _ "github.com/lockbench/lockbench/strategies/libs"
//
// Each adapter's lockers implement strategies.OwnRetry (the library
// retries and renews itself) and declare the library's own options as
// parameters with the library's defaults.
package libs

import (
	_ "github.com/lockbench/lockbench/strategies/rueidislk" // rueidislock
)
