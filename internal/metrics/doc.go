// Package metrics records what a run measures without slowing it: one
// Recorder per worker (HdrHistograms of latency in µs, fed in batches of
// 256 buffered values, and plain counters; no locks, since
// hdrhistogram-go is not safe for concurrent use), merged after the run;
// and the safety Oracle, an in-process holder counter and holder registry
// per lock, in one slot per lock, that counts overlapping holders with one
// atomic add on entry and one on exit — no Redis command, no mutex in the
// critical section.
package metrics
