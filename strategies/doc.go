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
package strategies
