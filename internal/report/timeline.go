package report

import "time"

// Second is one interval of a scenario's measured window (a second by
// default; params.interval_s, --interval), as a sampler read the engine's
// live counters and interval histograms at its end. The interval it covers
// runs from the previous entry's TS (or the start of the measured window,
// params.warmup) to its own TS; every interval has the same length except
// the last, which ends with the window (a tail under a quarter of the
// interval is folded into the entry before it, so that one may last up to
// 1.25 intervals).
type Second struct {
	// TS is the end of the interval in s since the scenario's start,
	// warm-up included: the clock of faults[].start_ms / 1000.
	TS float64 `json:"t_s"`
	// Ops are the operations completed in the interval; over the whole
	// timeline they sum to the scenario's ops.
	Ops int64 `json:"ops"`
	// Errors are failed operations (Redis and other errors; counters.errors).
	Errors int64 `json:"errors"`
	// AcquireFailures are acquires that gave up or timed out (counters.
	// failures + counters.timeouts).
	AcquireFailures int64 `json:"acquire_failures"`
	// Violations are the overlaps the oracle counted live in the interval.
	// Oversell and lost updates are only known at the end check, so they
	// are not here.
	Violations int64 `json:"violations"`

	// The latency of the operations (OpP50MS, OpP99MS, OpMaxMS: the whole
	// operation, as latency_ms) and of the granted acquires (AcquireP50MS,
	// AcquireP99MS, AcquireMaxMS: as acquire_ms) whose values reached the
	// interval's histograms, in ms; absent when none did. At an interval's
	// end each client flushes, when its operation in progress ends, the
	// values of the operations that ended before the interval's end (that
	// operation's own, its acquire's included, count in the next), and the
	// sampler waits for that up to a tenth of the interval (at most
	// 100 ms): an operation counts in the interval in which it ended, as
	// in Ops, except that the values buffered by a client whose operation
	// in progress outlasts the wait count in the interval in which it
	// flushes them. The interval histograms together hold exactly the
	// values of latency_ms and acquire_ms (the .hlog file has them).
	OpP50MS      float64 `json:"op_p50_ms,omitempty"`
	OpP99MS      float64 `json:"op_p99_ms,omitempty"`
	OpMaxMS      float64 `json:"op_max_ms,omitempty"`
	AcquireP50MS float64 `json:"acquire_p50_ms,omitempty"`
	AcquireP99MS float64 `json:"acquire_p99_ms,omitempty"`
	AcquireMaxMS float64 `json:"acquire_max_ms,omitempty"`
	// Offered are, in an open loop (--rate), the arrivals due in the
	// interval by the arrival shape: the shape's integral over it, within
	// one arrival (the expected count with Poisson arrivals), up to the
	// moment the arrivals stopped. Absent in a closed loop (and for an
	// interval with none due).
	Offered int64 `json:"offered,omitempty"`
	// Dropped are, in an open loop, the arrivals dropped in the interval
	// for want of a free client within --drop-after (counted when dropped,
	// --drop-after after their intended start). Warm-up drops are in the
	// scenario's dropped but in no interval. Absent when none.
	Dropped int64 `json:"dropped,omitempty"`
	// Clients is, with a client ramp (params.clients_shape), the clients
	// in force at the interval's end: the ramp's value there rounded to
	// the nearest whole count (halves up). ClientsMean is that count's
	// mean over the interval. Efficiency is the interval's ops/s over its
	// own lock-bound ceiling, min(clients_mean, raw.locks) / the
	// interval's mean hold (HoldMSSum / Holds; Derive; absent without a
	// ceiling: no lock, no hold, or a mean hold under
	// CeilingMinHoldMicros). All three absent without a ramp. Combined side by side (lockbench merge), clients
	// add up.
	Clients     int     `json:"clients,omitempty"`
	ClientsMean float64 `json:"clients_mean,omitempty"`
	Efficiency  float64 `json:"efficiency,omitempty"`
	// Holds and HoldMSSum are, with a client ramp, the critical sections
	// that ended in the interval and their total time, ms: the interval's
	// mean hold, for its own ceiling (the hold grows with contention, so
	// the window's mean would not do). Absent without a ramp; added up
	// when combined side by side.
	Holds     int64   `json:"holds,omitempty"`
	HoldMSSum float64 `json:"hold_ms_sum,omitempty"`
}

// IntervalHists are a scenario's interval histograms, one of each kind per
// timeline entry, in the timeline's order: what its .hlog file holds
// (WriteHLOG). They are not part of the result JSON.
type IntervalHists struct {
	// Start is the scenario's start: t_s 0 of its timeline.
	Start time.Time
	// WindowS is the start of the measured window (the first entry's
	// interval), s since Start: params.warmup.
	WindowS float64
	// Op and Acquire are, per timeline entry, the histogram of the
	// operation's and of the granted acquire's time in µs (as latency_ms
	// and acquire_ms record them), encoded as hdrhistogram-go's Encode
	// does with V2CompressedEncodingCookieBase (the form of latency_hist).
	Op, Acquire [][]byte
}

// OpsPerSec is the interval's rate, Ops / its length in s; prev is the
// TS of the entry before (the start of the measured window for the first).
func (s Second) OpsPerSec(prev float64) float64 {
	if d := s.TS - prev; d > 0 {
		return float64(s.Ops) / d
	}
	return 0
}
