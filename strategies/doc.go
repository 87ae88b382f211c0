// Package strategies defines the lock seam of lockbench — Locker and Lease —
// its registry, its errors, and the acquire loop that combines any strategy
// with any retry policy (package retry). Each strategy lives in a file of its
// own and registers itself in init():
//
//   - naive: SETNX, then EXPIRE as a second command; release by plain DEL.
//     The pattern the articles warn against (a crash between the two
//     commands leaves a lock with no TTL; DEL removes another client's lock).
//   - atomic: SET key token NX PX ttl in one command; release by a Lua
//     compare-and-delete, so only the owner's token deletes the key
//     (redis.io, "Distributed Locks with Redis", single-instance section).
//
// # Writing a strategy
//
// The seam is public: a program outside this module can benchmark its own
// lock with every workload, fault and oracle of lockbench
// (docs/custom-lock.md, examples/custom-lock). It needs:
//
//  1. A Locker whose TryAcquire makes one attempt on the Redis key it is
//     given and returns a Lease, ErrNotAcquired (the lock is held by
//     another) or another error (a Redis error, ctx's error). Acquire and
//     lockbench's retry policies (--retry) do the retrying. A TryAcquire
//     that waits in-process must say so: OwnRetry (a library's own retry
//     loop) or Queued (a lock service's queue).
//  2. A Lease whose Token is what the lock key stores (a string key's
//     value, the field of a hash key, or the member of a sorted set: a
//     semaphore's permit) and whose Release deletes the
//     lock only while it still holds that token, else returns ErrNotOwner.
//  3. A Register call in an init function, with an Info (description,
//     topology, parameters, drivers) and a Factory that builds the Locker
//     from a Config (the Redis nodes as drivers.Driver, the lease time,
//     the parameter values, the token tracker).
//
// Optional capabilities (capabilities.go), found by type assertion, make
// more of the run's figures mean something: a TokenTracker told of every
// token (Config.Sent, Config.Renewing) lets the liveness oracle count
// orphaned locks; Watched leases let the holder skip its write once the
// lock is lost; Extender leases are extended after the work; Fenced leases
// carry a fencing token for the fence guard; Abandonable leases drop their
// renewal when a fault crashes the holder; a FIFO locker (one that grants
// in arrival order) has its grants' order checked; a NonTokenFields locker
// names the fields of its hash lock key that are no token (Redisson's
// "mode"); a LossAtRenewal lease says it may learn of a loss only at its
// next renewal; a Semaphore locker (Permits > 1) is judged by capacity
// violations instead of overlaps; StatsReporter adds the
// strategy's own counts to the result. Package
// github.com/lockbench/lockbench/strategies/locktest runs the conformance
// suite on a registered strategy against real redis-server processes.
package strategies
