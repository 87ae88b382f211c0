package ext

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// The Node.js adapter (adapters/node/adapter.js, built by
// adapters/node/build.sh: npm ci of the versions pinned in
// adapters/node/package-lock.json). NodeRedlockVersion and
// NodeSemaphoreVersion are the pinned releases, for the descriptions; the
// adapter reports the version it loaded in its hello, and the result
// records that one. docs/libraries.md, "Node.js: node-redlock and
// redis-semaphore", says how each variant calls its library.
const (
	// NodeRedlockVersion is npm redlock's "latest" dist-tag (node-redlock
	// 4.2.0; the 5.0.0-beta releases are not tagged latest).
	NodeRedlockVersion = "4.2.0"
	// NodeSemaphoreVersion is npm redis-semaphore's release.
	NodeSemaphoreVersion = "5.8.0"
	// NodeIORedisVersion is the ioredis client both run on.
	NodeIORedisVersion = "5.9.3"
)

// nodeClientParam is the ioredis option every Node.js variant takes.
var nodeClientParam = registry.Param{Name: "offline-queue",
	Doc:     "ioredis enableOfflineQueue: on (a command to a server that is down waits for ioredis's next reconnect, backing off up to 2s, and fails if that reconnect fails) or off (it fails at once)",
	Default: "on", Check: registry.OneOf("on", "off")}

// nodeRedlockParams are node-redlock's options, with its own defaults
// (a default of 0 stands for the library's, so that a parameter another
// strategy declares under the same name keeps one default). retryCount
// is not one: it is derived from each acquire's wait (docs/libraries.md).
var nodeRedlockParams = []registry.Param{
	{Name: "retry-delay", Doc: "node-redlock retryDelay: wait between two acquire rounds (each round: the lock script on every server); 0 = node-redlock's default, 200ms; the rounds of one acquire are as many as fit in --acquire-timeout at retry-delay + retry-jitter apart",
		Default: time.Duration(0), Check: registry.DurationBetween(0, time.Hour)},
	{Name: "retry-jitter", Doc: "node-redlock retryJitter: the retry delay varies by up to this much either way",
		Default: 100 * time.Millisecond, Check: registry.DurationBetween(0, time.Hour)},
	{Name: "drift-factor", Doc: "node-redlock driftFactor: share of the TTL (plus 2 ms) taken off the validity; a lock whose validity is gone when granted is refused",
		Default: 0.01, Check: registry.Between(0.0, 0.99)},
	{Name: "extend", Doc: "off (no extend) or on (the lease is a strategies.Extender: the worker calls Lock.extend after its work)",
		Default: "off", Check: registry.OneOf("off", "on")},
	nodeClientParam,
}

// nodeSemaphoreParams are redis-semaphore's options, with its defaults
// (0: the library's). Its retryInterval is poll-interval here: redislock
// declares retry-interval with another default.
var nodeSemaphoreParams = []registry.Param{
	{Name: "poll-interval", Doc: "redis-semaphore retryInterval: pause between two acquire attempts within --acquire-timeout (acquireTimeout); 0 = the library's default, 10ms",
		Default: time.Duration(0), Check: registry.DurationBetween(0, time.Hour)},
	{Name: "refresh", Doc: "redis-semaphore refreshInterval: period of the auto-refresh (the renewal); 0 = the library's default, 0.8 x the TTL",
		Default: time.Duration(0), Check: registry.DurationBetween(0, time.Hour)},
	nodeClientParam,
}

func init() {
	redlockDesc := "node-redlock " + NodeRedlockVersion + " (npm redlock, ioredis " + NodeIORedisVersion + ", Node.js adapter)"
	Register("redlock-node", Adapter{
		Desc: redlockDesc + " on one server: Redlock.lockWithOptions (a Lua SET-if-absent PX, retryCount rounds retry-delay apart within the acquire timeout), " +
			"unlock (compare-and-delete), extend with --extend on; lockbench's token is the lock value",
		Lock: "redlock", Runtime: []string{"node", "npm"}, Folder: "node", Command: nodeCommand("adapter.js"),
		Kind: OwnRetry, Params: nodeRedlockParams,
	})
	Register("redlock-node-quorum", Adapter{
		Desc: redlockDesc + " over N independent masters (--nodes, at least 3): quorum N/2+1, validity = TTL - elapsed - drift; " +
			"its own retries, unlock and extend as redlock-node",
		Lock: "redlock", Runtime: []string{"node", "npm"}, Folder: "node", Command: nodeCommand("adapter.js"),
		Kind: OwnRetry, Topology: strategies.Masters, MinNodes: 3, Params: nodeRedlockParams,
	})
	semDesc := "redis-semaphore " + NodeSemaphoreVersion + " (ioredis " + NodeIORedisVersion + ", Node.js adapter)"
	Register("redis-semaphore-node", Adapter{
		Desc: semDesc + ": Mutex.tryAcquire (SET NX PX every poll-interval within the acquire timeout), auto-refresh (PEXPIRE if the value is ours) " +
			"every 0.8 x TTL with onLockLost, release (compare-and-delete); lockbench's token is the identifier",
		Lock: "mutex", Runtime: []string{"node", "npm"}, Folder: "node", Command: nodeCommand("adapter.js"),
		Kind: OwnRetry, Params: nodeSemaphoreParams,
	})
	Register("redis-semaphore-node-sem", Adapter{
		Desc: semDesc + ": Semaphore of --permits holders, a sorted set of identifiers scored by acquire time (ZADD if ZCARD < permits " +
			"after dropping members older than the TTL), auto-refresh, release (ZREM)",
		Lock: "semaphore", Runtime: []string{"node", "npm"}, Folder: "node", Command: nodeCommand("adapter.js"),
		Kind: OwnRetry,
		Params: append(append([]registry.Param(nil), nodeSemaphoreParams...), registry.Param{
			Name: "permits", Doc: "redis-semaphore limit: holders at once", Default: 4, Check: registry.Between(1, 1000)}),
	})
}

// nodeCommand returns the Command of the Node.js adapter program script
// (in adapters/node): node SCRIPT, or an error wrapping ErrNotBuilt when
// adapters/node/node_modules is missing or older than package-lock.json
// (run make adapters, or sh adapters/node/build.sh).
func nodeCommand(script string) func(dir string) ([]string, error) {
	return func(dir string) ([]string, error) {
		stamp, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
		if err != nil {
			return nil, fmt.Errorf("%w: %s has no node_modules", ErrNotBuilt, dir)
		}
		if lock, err := os.Stat(filepath.Join(dir, "package-lock.json")); err == nil && lock.ModTime().After(stamp.ModTime()) {
			return nil, fmt.Errorf("%w: %s/node_modules is older than package-lock.json", ErrNotBuilt, dir)
		}
		return []string{"node", filepath.Join(dir, script)}, nil
	}
}
