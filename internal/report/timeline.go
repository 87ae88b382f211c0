package report

// Second is one second of a scenario's measured window, as a sampler read
// the engine's live counters once a second. The interval it covers runs
// from the previous entry's TS (or the start of the measured window,
// params.warmup) to its own TS; every interval is 1 s except the last,
// which ends with the window (a tail under 250 ms is folded into the
// entry before it, so that one may last up to 1.25 s).
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
	// OpP50MS, OpP99MS and OpMaxMS are the median, 99th percentile and
	// maximum latency (ms) of the operations completed in the interval
	// (acquire with retries, critical section, release); absent (0) when
	// it completed none.
	OpP50MS float64 `json:"op_p50_ms,omitempty"`
	OpP99MS float64 `json:"op_p99_ms,omitempty"`
	OpMaxMS float64 `json:"op_max_ms,omitempty"`
	// AcquireP50MS, AcquireP99MS and AcquireMaxMS are the same of the
	// acquires that succeeded in the interval (retries included); absent
	// (0) when none did.
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
}

// OpsPerSec is the interval's rate, Ops / its length in s; prev is the
// TS of the entry before (the start of the measured window for the first).
func (s Second) OpsPerSec(prev float64) float64 {
	if d := s.TS - prev; d > 0 {
		return float64(s.Ops) / d
	}
	return 0
}
