package ext

import (
	"path/filepath"

	"github.com/lockbench/lockbench/internal/registry"
)

// RedissonVersion is the org.redisson:redisson version that
// adapters/java/pom.xml pins (<redisson.version>). The adapter reports
// the version it runs in its hello, read from Redisson's jar, and the
// result records that one.
const RedissonVersion = "4.7.0"

// redissonCommand is the argv of the Redisson adapter built by
// adapters/java/build.sh (target/lockbench-redisson.jar, its dependencies
// in target/lib): a JVM with small flags (a serial collector, 512 KiB
// thread stacks, the C1 compiler only) so that it starts in about a
// second, and the JVM's own warnings sent to stderr (HotSpot and its
// unified logging write them to stdout, the protocol's channel, by
// default). An error wrapping ErrNotBuilt when the jar is missing.
func redissonCommand(dir string) ([]string, error) {
	jar := filepath.Join(dir, "target", "lockbench-redisson.jar")
	if err := Built(jar, filepath.Join(dir, "target", "lib")); err != nil {
		return nil, err
	}
	return []string{"java", "-XX:+UseSerialGC", "-Xss512k", "-XX:TieredStopAtLevel=1",
		"-XX:+DisplayVMOutputToStderr", "-Xlog:disable", "-Xlog:all=warning:stderr", "-jar", jar}, nil
}

// redissonDesc starts each Redisson strategy's description.
const redissonDesc = "Redisson " + RedissonVersion + " (Java, adapters/java): "

// redissonSource ends each Redisson strategy's description.
const redissonSource = "; github.com/redisson/redisson"

// The Redisson strategies (docs/libraries.md, "Java: Redisson"): one
// adapter, adapters/java, serving six variants. Every variant waits with
// Redisson's own tryLock (Kind OwnRetry: wait_ms is its waitTime), and
// each lockbench client is a Redisson owner of its own (thread id
// client+1), so the locks re-enter per client.
func init() {
	java := []string{"java"}
	Register("redisson", Adapter{
		Desc: redissonDesc + "RLock, one hash per lock with a field <redisson id>:<thread> per owner, a fixed leaseTime of --ttl (watchdog off), " +
			"tryLock's own pub/sub wait" + redissonSource,
		Lock: "lock", Runtime: java, Folder: "java", Command: redissonCommand, Kind: OwnRetry, Reentrant: true})
	Register("redisson-watchdog", Adapter{
		Desc: redissonDesc + "RLock without leaseTime: the lock watchdog renews the hash to --ttl every ttl/3 (lockWatchdogTimeout = --ttl); " +
			"a lease the watchdog drops is reported lost" + redissonSource,
		Lock: "watchdog", Runtime: java, Folder: "java", Command: redissonCommand, Kind: OwnRetry, Reentrant: true})
	Register("redisson-fair", Adapter{
		Desc: redissonDesc + "RFairLock: RLock granting waiters in arrival order (a queue list and a timeout zset beside the hash), " +
			"a fixed leaseTime of --ttl" + redissonSource,
		Lock: "fair", Runtime: java, Folder: "java", Command: redissonCommand, Kind: OwnRetry, Reentrant: true, FIFO: true})
	Register("redisson-rw", Adapter{
		Desc: redissonDesc + "RReadWriteLock: writeLock for writes, readLock for reads (one hash: a mode field and a field per holder), " +
			"a fixed leaseTime of --ttl" + redissonSource,
		Lock: "rw", Runtime: java, Folder: "java", Command: redissonCommand, Kind: OwnRetry, Reentrant: true, Reads: true,
		NonTokenFields: []string{"mode"}})
	Register("redisson-fenced", Adapter{
		Desc: redissonDesc + "RFencedLock: RLock whose grant carries a fencing token (INCR of a counter beside the hash), " +
			"a fixed leaseTime of --ttl" + redissonSource,
		Lock: "fenced", Runtime: java, Folder: "java", Command: redissonCommand, Kind: OwnRetry, Reentrant: true})
	Register("redisson-semaphore", Adapter{
		Desc: redissonDesc + "RPermitExpirableSemaphore: --permits holders at once, each permit an id with its own expiry (leaseTime --ttl) " +
			"in a zset beside the free-permit counter; extend is updateLeaseTime" + redissonSource,
		Lock: "semaphore", Runtime: java, Folder: "java", Command: redissonCommand, Kind: OwnRetry,
		Params: []registry.Param{{Name: "permits",
			Doc:     "redisson-semaphore: holders of one key at once (trySetPermits on the key's first acquire)",
			Default: 4, Check: registry.Between(1, 1_000_000)}}})
}
