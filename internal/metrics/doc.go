// Package metrics records what a run measures without slowing it: one
// Recorder per worker (plain counters, and a buffer of values that it
// adds in batches to HdrHistograms of latency in µs, its own or, in a
// Set of many clients, its shard's, shared by a few clients under the
// shard's mutex, since hdrhistogram-go is not safe for concurrent use),
// merged after the run;
// and the safety Oracle, an in-process holder counter and holder registry
// per lock, in one slot per lock, that counts overlapping holders with one
// atomic add on entry and one on exit — no Redis command, no mutex in the
// critical section.
package metrics
