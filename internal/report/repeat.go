package report

import (
	"math"
	"sort"

	"golang.org/x/perf/benchmath"
)

// Spread summarises one figure over the repeats of a scenario.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CI95Lo and CI95Hi bound a confidence interval of the median from
	// order statistics (MedianCI): 95 % with 6 values or more; with fewer,
	// [Min, Max], whose confidence CIConfidence says.
	CI95Lo float64 `json:"ci95_lo"`
	CI95Hi float64 `json:"ci95_hi"`
	// CIConfidence is the interval's real confidence level (0..1).
	CIConfidence float64 `json:"ci_confidence"`
	// Values are the figure of each repeat, in run order.
	Values []float64 `json:"values"`
}

// Repeats is the spread of a scenario run --repeat times, each on fresh
// keys: per-run ops/s and p99. The scenario's own figures are derived from
// every run's raw data pooled (Combine), not from these; files written
// before raw data had the medians here and the other fields of the run
// nearest the median ops/s.
type Repeats struct {
	N         int    `json:"n"`
	OpsPerSec Spread `json:"ops_per_sec"`
	P99MS     Spread `json:"p99_ms"`
}

// Sample is one run's headline figures: a scenario's Samples hold one per
// repeat, in run order, for statistics across runs (compare, benchstat).
//
// A latency the run did not measure (no operation, no granted acquire)
// is absent, never 0.
type Sample struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	P50MS     float64 `json:"p50_ms,omitempty"`
	P99MS     float64 `json:"p99_ms,omitempty"`
	P999MS    float64 `json:"p999_ms,omitempty"`
	// AcquireP99MS is the p99 of the acquire alone.
	AcquireP99MS float64 `json:"acquire_p99_ms,omitempty"`
	// Violations is the run's total of every violation kind.
	Violations int64 `json:"violations"`
	// Ops are the run's operations in its measured window (absent in
	// files written before it existed); without any, the latencies above
	// are not measured.
	Ops int64 `json:"ops,omitempty"`
	// CommandsPerOp is the run's redis_cost.commands_per_op; absent when
	// not measured.
	CommandsPerOp float64 `json:"commands_per_op,omitempty"`
	// CPUMicrosPerOp is the run's client_cpu.cpu_us_per_op (lockbench's
	// own CPU, µs per operation); absent when not measured.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// ServerCPUMSPer1kOps is the run's redis_cost.server_cpu_ms_per_1k_ops
	// (the servers' CPU, ms per 1,000 operations: the Redis nodes', and a
	// baseline strategy's server lockbench started); absent when not
	// measured.
	ServerCPUMSPer1kOps float64 `json:"server_cpu_ms_per_1k_ops,omitempty"`
	// TimelineEntries is how many entries the run's timeline has: pooled
	// repeats' timelines follow each other in the scenario's timeline,
	// and these counts split it back into runs (a run that outlasts its
	// window, waiting for its clients to stop, has more than its window's
	// seconds). Absent in files written before it existed.
	TimelineEntries int `json:"timeline_entries,omitempty"`
}

// SampleOf is s's own figures as one Sample.
func SampleOf(s Scenario) Sample {
	return Sample{OpsPerSec: s.OpsPerSec, P50MS: s.LatencyMS.P50, P99MS: s.LatencyMS.P99, P999MS: s.LatencyMS.P999,
		AcquireP99MS: s.AcquireMS.P99, Violations: s.Violations.Total(), Ops: s.Ops, CommandsPerOp: s.RedisCost.CommandsPerOp,
		CPUMicrosPerOp: s.ClientCPU.CPUMicrosPerOp, ServerCPUMSPer1kOps: s.RedisCost.ServerCPUMSPer1kOps, TimelineEntries: len(s.Timeline)}
}

// NewSpread computes the median, the range and MedianCI's 95 % interval
// of xs.
func NewSpread(xs []float64) Spread {
	s := Spread{Values: append([]float64(nil), xs...)}
	if len(xs) == 0 {
		return s
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Median, s.CI95Lo, s.CI95Hi, s.CIConfidence = MedianCI(xs, 0.95)
	return s
}

// MedianCI returns the median of xs and a confidence interval of it from
// order statistics, which assumes nothing of the distribution: the one
// benchstat reports (golang.org/x/perf/benchmath, AssumeNothing), at
// confidence (0.95 for 95 %). When xs are too few for that confidence (n
// < 6 at 95 %), the interval is [min, max], and conf is that interval's
// real confidence, 1 - 2^(1-n) (0.75 for 3 values, 0.9375 for 5). One
// value: lo = hi = the value, conf 0. xs is not changed.
func MedianCI(xs []float64, confidence float64) (median, lo, hi, conf float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 0
	}
	sorted := append([]float64(nil), xs...)
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(sorted, &benchmath.DefaultThresholds), confidence)
	median = sum.Center
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) {
		return median, sum.Lo, sum.Hi, sum.Confidence
	}
	n := len(sorted)
	if n == 1 {
		return median, sorted[0], sorted[0], 0
	}
	return median, sorted[0], sorted[n-1], 1 - math.Pow(2, float64(1-n))
}
