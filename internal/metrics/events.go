package metrics

import "time"

// The Recorder's events: what a worker's lock helpers report
// (workloads.Observer, which a *Recorder implements) and what the engine's
// worker loop counts per operation. Each is a counter or one buffered
// value (Observe): no allocation, no lock; Errored alone, off the hot
// path, updates a map (made on the first error).

// Acquired counts the attempts of a granted acquire and records its time.
func (r *Recorder) Acquired(attempts int, wait time.Duration) {
	r.Attempts += int64(attempts)
	r.Observe(Acquire, wait)
}

// AcquireFailed counts the attempts of an acquire that ended without the
// lock after wait (the failure itself is counted by the loop: GaveUp,
// TimedOut, Errored) and, unless the run's stop ended it, records wait in
// FailedAcquire (made on the first failure's flush).
func (r *Recorder) AcquireFailed(attempts int, wait time.Duration, stopping bool) {
	r.Attempts += int64(attempts)
	if stopping {
		return
	}
	r.Observe(FailedAcquire, wait)
}

// Overshot counts an acquire that took more than twice its deadline.
func (r *Recorder) Overshot() { r.Overshoots++ }

// Cancel counts an operation whose caller's context was cancelled inside
// its critical section (the cancel fault).
func (r *Recorder) Cancelled() { r.Cancels++ }

// Held records a hold time.
func (r *Recorder) Held(d time.Duration) { r.Observe(Hold, d) }

// Released records a release time, and counts it in NotOwner when it
// found another token in the lock.
func (r *Recorder) Released(d time.Duration, notOwner bool) {
	r.Observe(Release, d)
	if notOwner {
		r.NotOwner++
	}
}

// LeaseLost counts a lease found lost at release.
func (r *Recorder) LeaseLost() { r.LostLeases++ }

// ForeignRelease counts a release that removed another client's lock.
func (r *Recorder) ForeignRelease() { r.ForeignReleases++ }

// WroteAfterLoss counts a write completed after its lease was reported
// lost.
func (r *Recorder) WroteAfterLoss() { r.WorkedAfterLoss++ }

// FalseExtend counts an extend reported successful after another client
// had taken the lock since the extending holder acquired it.
func (r *Recorder) FalseExtend() { r.FalseExtends++ }

// FalseAcquire counts a granted acquire after which the lock key did not
// hold the lease's token.
func (r *Recorder) FalseAcquire() { r.FalseAcquires++ }

// WriteRejected counts a write a guard refused.
func (r *Recorder) WriteRejected() { r.Rejected++ }

// Read counts a read-only operation.
func (r *Recorder) Read() { r.Reads++ }

// Overlapped counts an entry into a critical section that found a
// conflicting holder inside (the oracle's overlap, on the entrant).
func (r *Recorder) Overlapped() { r.Overlaps++ }

// Completed counts a completed operation and records its latency.
func (r *Recorder) Completed(latency time.Duration) {
	r.Ops++
	r.Observe(Op, latency)
}

// Served records an open-loop operation's service time (from its actual
// start).
func (r *Recorder) Served(d time.Duration) { r.Observe(Service, d) }

// TimedOut counts an acquire that hit the acquire timeout.
func (r *Recorder) TimedOut() { r.Timeouts++ }

// GaveUp counts an acquire the retry policy gave up.
func (r *Recorder) GaveUp() { r.Failures++ }

// Errored counts an operation's error under kind (drivers.ErrorKind) and
// keeps the first message of each kind.
func (r *Recorder) Errored(kind string, err error) {
	if r.Errors == nil {
		r.Errors, r.Samples = map[string]int64{}, map[string]string{}
	}
	r.Errors[kind]++
	if _, ok := r.Samples[kind]; !ok {
		r.Samples[kind] = err.Error()
	}
}
