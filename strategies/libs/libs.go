// Package libs registers the strategies that are thin adapters over the
// Go lock libraries people ship, each at the version pinned in go.mod:
// import it for its side effect.
//
//	import _ "github.com/lockbench/lockbench/strategies/libs"
//
// Each adapter's lockers implement strategies.OwnRetry (the library
// retries and renews itself) and declare the library's own options as
// parameters with the library's defaults:
//
//   - redsync, redsync-redlock: github.com/go-redsync/redsync/v4
//     (strategies/redsynclock), on both drivers;
//   - redislock: github.com/bsm/redislock (strategies/redislock), on
//     go-redis only;
//   - rueidislock: github.com/redis/rueidis/rueidislock
//     (strategies/rueidislk), on rueidis only.
package libs

import (
	// Register the library strategies.
	_ "github.com/lockbench/lockbench/strategies/redislock"
	_ "github.com/lockbench/lockbench/strategies/redsynclock"
	_ "github.com/lockbench/lockbench/strategies/rueidislk" // rueidislock
)
