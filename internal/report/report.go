// Package report holds the result-file format (schema 1, described in
// results/README.md), writes it atomically, and renders the summary table
// with github.com/olekukonko/tablewriter.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/atomicfile"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report/schemacheck"
)

// Schema is the version of the result-file format.
const Schema = 1

// Run is one result file.
type Run struct {
	Schema int  `json:"schema"`
	Meta   Meta `json:"meta"`
	// Interrupted is true when the run was stopped (Ctrl-C) before every
	// scenario finished; the scenarios present are complete.
	Interrupted bool `json:"interrupted"`
	// Failed holds the error that ended the run early, if one did; the
	// scenarios present are the ones that completed before it.
	Failed string `json:"failed,omitempty"`
	// Skipped lists the scenarios not run because the server their
	// strategy needs is not installed ("strategy/driver/workload: why").
	Skipped   []string   `json:"skipped,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
	// Thresholds are the --fail-on thresholds, each tested on every
	// scenario in its scope (absent without --fail-on).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Files are the other files of the result set, beside this file (its
	// .hgrm and .hlog files), by name, with their size and SHA-256: the
	// result file is put into place last and names exactly its set's
	// files; a reader trusts no other (results/README.md). Absent in a
	// placeholder, a merged file, and files of lockbench before it.
	Files []SetFile `json:"files,omitempty"`
}

// SetFile is one file of a result set (Run.Files).
type SetFile struct {
	Name   string `json:"name"`   // base name, in the result file's directory
	Bytes  int64  `json:"bytes"`  // size
	SHA256 string `json:"sha256"` // of the contents, lower-case hex
}

// Meta describes where and how the run happened.
type Meta struct {
	StartedAt string `json:"started_at"` // RFC 3339, UTC
	GitCommit string `json:"git_commit"`
	// Version is lockbench's version: the release stamped at build time,
	// else the module (pseudo-)version, else the commit it was built from
	// (12 hex digits, +dirty for a modified tree), else "unknown".
	Version   string `json:"version,omitempty"`
	GoVersion string `json:"go_version"`
	// Deps are the versions of the Redis drivers, lock libraries and
	// baseline clients linked into lockbench, by module path (from the
	// binary's build info; absent when it has none, as in a test binary).
	Deps         map[string]string `json:"deps,omitempty"`
	RedisVersion string            `json:"redis_version"`
	// RedisVersions are the distinct redis_version values of every server
	// the scenarios connected to (each node of a cluster), sorted.
	RedisVersions []string `json:"redis_versions,omitempty"`
	GOMAXPROCS    int      `json:"gomaxprocs"`
	// GODEBUG is the Go runtime settings the run had ($GODEBUG; lockbench
	// adds madvdontneed=0 unless the user set madvdontneed).
	GODEBUG string   `json:"godebug,omitempty"`
	Args    []string `json:"args"`
	RunID   string   `json:"run_id"`
	// Topology is "standalone", "masters:N" or "external" (--addr;
	// "external-cluster" with --cluster, "external-sentinel" with
	// --sentinel-master), then the baseline servers started ("mariadb",
	// "zookeeper", "etcd").
	Topology string `json:"topology"`
	// MaxRSSMB is lockbench's peak resident memory over the run, MB.
	MaxRSSMB float64 `json:"max_rss_mb"`
	// Servers are the redis-server processes lockbench started (empty with
	// --addr), then the baseline servers: their addresses and process ids.
	Servers []ServerInfo `json:"servers,omitempty"`
	// ParamDefaults are the defaults of every parameter each strategy and
	// workload declares, by plugin name then parameter key (as in a
	// scenario's params), so that a later version that adds a parameter
	// can still match this file's scenarios (see Match).
	ParamDefaults map[string]map[string]string `json:"param_defaults,omitempty"`
	// Sweep is set by lockbench sweep: the client counts each matrix cell
	// ran at (nil for lockbench run).
	Sweep *Sweep `json:"sweep,omitempty"`
	// Segment and Segments: the file of execution segment Segment of
	// Segments (--segment i/N, --segment-count, --procs' children; 1-based).
	// A merged file of segments has Segment 0 and Segments N. Both 0 (absent):
	// a run of one process.
	Segment  int `json:"segment,omitempty"`
	Segments int `json:"segments,omitempty"`
	// PlanHash identifies the scenarios of a run of segments (every
	// parameter, not the segment or the output paths): 16 hex digits, the
	// same in every segment's file. lockbench merge refuses files whose
	// hashes differ.
	PlanHash string `json:"plan_hash,omitempty"`
	// RunNonce is the leading segment's random nonce for this run, the
	// same in every segment's file: two runs with one run id have
	// different nonces (lockbench merge refuses to mix them).
	RunNonce string `json:"run_nonce,omitempty"`
	// KilledSegments lists the segments whose process died before writing
	// its result (a proc-kill fault, a crash): a merged file lacks their
	// figures.
	KilledSegments []int `json:"killed_segments,omitempty"`
}

// ServerInfo is one started redis-server.
type ServerInfo struct {
	Addr string `json:"addr"`
	Pid  int    `json:"pid"`
}

// Library is a lock library and its exact version.
type Library struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Runtime is the runtime an external adapter ran on ("java 17.0.15",
	// "node v20.20.2", "python 3.11.7"); absent for a Go library.
	Runtime string `json:"runtime,omitempty"`
}

// Scenario is one cell of the matrix.
type Scenario struct {
	// Label is the scenario's name: in a scenario file's scenarios: list,
	// its name: field (absent when none was given, and elsewhere).
	Label    string `json:"name,omitempty"`
	Strategy string `json:"strategy"`
	Driver   string `json:"driver"`
	// Library is the lock library the strategy runs and its version
	// (strategies.Library: redsync, rueidislock, redislock, an external
	// adapter's Redisson, node-redlock, redis-py, ...); absent for a
	// strategy of lockbench's own.
	Library  *Library          `json:"library,omitempty"`
	Workload string            `json:"workload"`
	Retry    string            `json:"retry"`
	Clients  int               `json:"clients"`
	Params   map[string]string `json:"params"`
	// DurationS is the measured window in s (warm-up excluded).
	DurationS float64 `json:"duration_s"`
	// Ops is the number of operations completed in the measured window.
	Ops int64 `json:"ops"`
	// OpsPerSec is Ops / DurationS.
	OpsPerSec float64 `json:"ops_per_sec"`
	// LatencyMS, AcquireMS and ReleaseMS summarise raw.hists (Derive);
	// each is absent when it has no value (nothing measured, never 0).
	LatencyMS metrics.Latency `json:"latency_ms,omitzero"`
	AcquireMS metrics.Latency `json:"acquire_ms,omitzero"`
	ReleaseMS metrics.Latency `json:"release_ms,omitzero"`
	// SlowReleases are the release calls (raw.hists.release) that took
	// longer than SlowReleaseBoundMS, max(10 x the release p50, TTL/2)
	// (SlowReleaseBound), derived from the release histogram by Derive:
	// a release that retries, loops or waits on something for a good
	// part of the lease. Absent (0, and the bound 0) without a TTL in the
	// params or without releases; a release that never returned is in
	// counters.hung_releases instead.
	SlowReleases       int64      `json:"slow_releases,omitempty"`
	SlowReleaseBoundMS float64    `json:"slow_release_bound_ms,omitempty"`
	Counters           Counters   `json:"counters"`
	Violations         Violations `json:"violations"`
	// Figures are the workload's end-state numbers (flash-sale: sold,
	// final_stock), counted over the whole run, warm-up included.
	Figures map[string]int64 `json:"figures"`
	// StopReason says why the scenario ended: "done" (nothing left to do,
	// e.g. sold out), "duration", or "interrupted".
	StopReason string `json:"stop_reason"`
	// Loop is "closed" (each client starts its next operation when the last
	// ends) or "open" (operations start at intended times, --rate).
	Loop string `json:"loop"`
	// OfferedRate is the open loop's target (ops/s); Offered the arrivals
	// decided (handed to a client or dropped), Dropped those that found no
	// free client in time, Undecided those due before the scenario's stop
	// that were neither (still inside their --drop-after bound, or not yet
	// reached by a scheduler running behind): Offered + Undecided is the
	// arrivals due.
	OfferedRate float64 `json:"offered_rate,omitempty"`
	Offered     int64   `json:"offered,omitempty"`
	Dropped     int64   `json:"dropped"`
	Undecided   int64   `json:"undecided,omitempty"`
	// ServiceMS is, in an open loop, the operation from its actual start
	// (uncorrected); LatencyMS is then from the intended start (corrected).
	ServiceMS *metrics.Latency `json:"service_ms,omitempty"`
	// Topology is the server layout the scenario ran on: "standalone",
	// "masters:N", "replica" (master + replica) or "external" (also
	// "external-cluster", "external-sentinel").
	Topology string `json:"topology"`
	// HoldMS is the time spent inside the critical section, ms.
	HoldMS metrics.Latency `json:"hold_ms,omitzero"`
	// CeilingOpsPerSec is the lock-bound ceiling: locks that can be held at
	// once (min of clients and distinct locks; for a semaphore of N
	// permits, raw.permits, min of clients and distinct locks x N) / mean
	// hold time (s): N / mean hold on one semaphore key. 0, and
	// absent from the JSON, when there is none to compute: no lock held, a
	// mean hold under CeilingMinHoldMicros, or reads (Counters.Reads > 0:
	// readers may hold a lock shared, which this bound does not cover)
	// (HasCeiling).
	CeilingOpsPerSec float64 `json:"ceiling_ops_per_sec,omitempty"`
	// Efficiency is OpsPerSec / CeilingOpsPerSec; 0 and absent with no
	// ceiling.
	Efficiency float64 `json:"efficiency,omitempty"`
	// ThinkBoundOpsPerSec, with a think time (--think), is what the
	// clients can offer, ops/s: clients / (mean think time + mean hold).
	// Each client makes one operation per think time plus hold at most,
	// however fast the lock hands over, so ops/s stays about under it (a
	// short window can fit one more operation per client, and the think
	// times drawn have a mean of their own); when it is near or under the
	// ceiling, Efficiency measures the clients' thinking as much as the
	// lock. 0, and absent, without think time. The ceiling and Efficiency
	// keep their meaning.
	ThinkBoundOpsPerSec float64   `json:"think_bound_ops_per_sec,omitempty"`
	Fairness            Fairness  `json:"fairness"`
	RedisCost           RedisCost `json:"redis_cost"`
	ClientCPU           ClientCPU `json:"client_cpu"`
	// ServerLoad is the servers' command rate sampled at a fine interval
	// (--load-sample) over the measured window (not the warm-up); nil when
	// not sampled.
	ServerLoad *ServerLoad `json:"server_load,omitempty"`
	// Background is what the background traffic (--background) got from
	// the servers over the measured window: commands offered and done per
	// second, dropped, errors, and their latency from the intended start,
	// in all and per command kind. Absent without background traffic.
	Background *Background `json:"background,omitempty"`
	// VerifyError is set when a fault left the end check impossible (the
	// data node was killed): figures and end-state violations are then
	// missing, the rest was measured.
	VerifyError string `json:"verify_error,omitempty"`
	// LatencyHist is latency_ms's HdrHistogram (µs) as hdrhistogram-go's
	// Encode writes it (V2 compressed, base64), so that runs can be merged
	// and re-summarised exactly; hdrhistogram.Decode reads it back.
	LatencyHist string `json:"latency_hist,omitempty"`
	// Repeats is the spread over --repeat runs (absent for one run).
	Repeats *Repeats `json:"repeats,omitempty"`
	// Samples are the headline figures of every run of the scenario, in
	// run order: one per --repeat (absent in files written before they
	// existed).
	Samples []Sample `json:"samples,omitempty"`
	// Faults are the windows in which the scenario's faults acted.
	Faults []FaultWindow `json:"faults,omitempty"`
	// StrategyStats are the strategy's own counts (watchdog renewals and
	// renewal lag, Redlock per-node results, ...).
	StrategyStats map[string]float64 `json:"strategy_stats,omitempty"`
	// AcquireFailedMS is the time of acquires that ended without the lock
	// (gave up, timed out, failed), ms; absent when none did.
	AcquireFailedMS *metrics.Latency `json:"acquire_failed_ms,omitempty"`
	// Liveness are the liveness oracle's figures (absent when it was off).
	Liveness *Liveness `json:"liveness,omitempty"`
	// Handover are the hand-over gaps and, for a FIFO lock, its queue
	// order (derived from Raw.Handover; absent when not measured).
	Handover *Handover `json:"handover,omitempty"`
	// RenewalMargin are the leases' remaining TTLs at their renewals
	// (derived from Raw.RenewalMargin; absent for a strategy that does not
	// renew).
	RenewalMargin *RenewalMargin `json:"renewal_margin,omitempty"`
	// Roles are the figures of each client role (--mix), by role
	// (RoleNames), derived from Raw.Roles: clients, ops, latency, acquire
	// wait and violations of the clients of that role. Absent without
	// --mix.
	Roles map[string]Role `json:"roles,omitempty"`
	// StopError is the failure that stopped an aborted scenario (stop
	// reason "aborted").
	StopError string `json:"stop_error,omitempty"`
	// Timeline is the measured window second by second (absent in files
	// written before it existed, and when nothing was measured).
	Timeline []Second `json:"timeline,omitempty"`
	// HistoryFile is this process's critical-section history of the
	// scenario (run --history; internal/history), relative to the result
	// file's directory; absent when none was kept.
	HistoryFile string `json:"history_file,omitempty"`
	// CrossCheck says how lockbench merge compared the processes'
	// histories ("4 histories, same host: exact", "3 histories on 2 hosts:
	// offset uncertainty up to 0.30 ms"); set with violations.cross_overlap.
	CrossCheck string `json:"cross_check,omitempty"`
	// Linearizability is Porcupine's check of the same histories, beside
	// the cross-process counts (lockbench merge and run --procs, lockbench
	// check; absent when no history was checked).
	Linearizability *Linearizability `json:"linearizability,omitempty"`
	// MeasuredAt is the measured window's wall-clock start and end, for a
	// scenario that ran at the same time as others (a scenario file with
	// concurrent: true; raw.shared_cost): their windows overlap. Absent
	// elsewhere.
	MeasuredAt *WallWindow `json:"measured_at,omitempty"`
	// Intervals are the timeline's interval histograms, for the .hlog file
	// (nil when the engine kept none, and in a file read back).
	Intervals *IntervalHists `json:"-"`
	// Raw is what the scenario measured as mergeable data (histograms,
	// counts, sums): every figure above that is not a count is derived
	// from it by Derive, for one run and for any combination of runs
	// (Combine). Absent in files written before it existed.
	Raw *Raw `json:"raw,omitempty"`
}

// WallWindow is a span of wall-clock time, RFC 3339 in UTC with
// nanoseconds.
type WallWindow struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// FaultWindow is when a fault acted. Times are ms since the scenario's
// start (warm-up included).
type FaultWindow struct {
	Fault string `json:"fault"`
	// ArmedMS is when the trigger came; StartMS when the fault acted (a
	// client-side fault acts when a client reaches its point).
	ArmedMS float64 `json:"armed_ms"`
	StartMS float64 `json:"start_ms"`
	EndMS   float64 `json:"end_ms"`
	// OpsBefore are the locks granted (operations begun) before the fault
	// acted; OpsAfter those granted after it.
	OpsBefore int64 `json:"ops_before"`
	OpsAfter  int64 `json:"ops_after"`
	// StuckAfter is the number of lock keys with no TTL right after the
	// fault acted (-1: not checked).
	StuckAfter int64 `json:"stuck_after"`
	// Note says what happened, or why the fault did not act.
	Note string `json:"note,omitempty"`
}

// Fairness describes how evenly the clients were served.
type Fairness struct {
	// JainIndex is Jain's index over per-client completed operations:
	// 1 = equal shares, 1/clients = one client got everything.
	// Absent without operations (nothing to be fair about).
	JainIndex float64 `json:"jain_index,omitzero"`
	// LongestWaitMS is the longest single successful acquire, ms; absent
	// without one.
	LongestWaitMS float64 `json:"longest_wait_ms,omitzero"`
}

// ServerLoad describes how steady the servers' command rate was: INFO
// stats total_commands_processed (summed over the nodes) read every
// IntervalMS during the run, the sampler's own INFO calls subtracted.
// Lockstep polling shows as a high PeakToMean and CV (a thundering herd).
type ServerLoad struct {
	// IntervalMS is the sampling interval, ms; Samples the intervals read.
	IntervalMS float64 `json:"interval_ms"`
	Samples    int     `json:"samples"`
	// MeanPerSec, P99PerSec and PeakPerSec are commands/s over one
	// interval: the mean, 99th percentile and highest of the samples.
	MeanPerSec float64 `json:"mean_per_s"`
	P99PerSec  float64 `json:"p99_per_s"`
	PeakPerSec float64 `json:"peak_per_s"`
	// PeakToMean is PeakPerSec / MeanPerSec; CV the coefficient of
	// variation (standard deviation / mean) of the samples.
	PeakToMean float64 `json:"peak_to_mean"`
	CV         float64 `json:"cv"`
}

// RedisCost is what the measured window cost the servers, from INFO
// commandstats deltas summed over every node.
type RedisCost struct {
	// Commands is the number of commands the servers executed.
	Commands int64 `json:"commands"`
	// Ops are the operations over the window the cost was read over
	// (warm-up included): CommandsPerOp is Commands / Ops.
	Ops int64 `json:"ops,omitempty"`
	// CommandsPerOp is Commands / Ops; absent when not measured (no
	// operation, or the servers could not be read).
	CommandsPerOp float64 `json:"commands_per_op,omitzero"`
	// ByCommand counts per command name (lower case, e.g. "set", "evalsha").
	ByCommand map[string]int64 `json:"by_command"`
	// ServerCPUMS is the servers' CPU time (user + sys, all nodes) over the
	// run, ms, from INFO cpu; for a baseline strategy (zk, etcd, sql-*)
	// whose server lockbench started, that server's process CPU time is
	// added (raw.cost has an entry per server). ServerCPUMSPer1kOps
	// divides it per 1,000 ops (absent without operations).
	ServerCPUMS         float64 `json:"server_cpu_ms"`
	ServerCPUMSPer1kOps float64 `json:"server_cpu_ms_per_1k_ops,omitzero"`
}

// ClientCPU is lockbench's own CPU use over the run (getrusage).
type ClientCPU struct {
	CPUSeconds float64 `json:"cpu_s"`
	// CPUMicrosPerOp is client CPU µs per operation over the cost window
	// (redis_cost.ops); absent without operations.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitzero"`
	// BudgetShare is CPU time / (wall time x GOMAXPROCS).
	BudgetShare float64 `json:"budget_share"`
	// ClientBound is true when BudgetShare > 0.9: the client, not Redis,
	// may have limited the figures.
	ClientBound bool `json:"client_bound"`
}

// Counters are the measured window's counts.
type Counters struct {
	Attempts int64 `json:"attempts"`
	Failures int64 `json:"failures"`
	// Timeouts are acquires that hit --acquire-timeout.
	Timeouts int64 `json:"timeouts"`
	// NotOwner counts releases refused because the lock held another token.
	NotOwner int64 `json:"not_owner"`
	// Rejected counts writes a guard refused (optimistic check, fencing
	// token, conditional decrement).
	Rejected int64 `json:"rejected"`
	// Reads counts read-only operations (--read-ratio, the read role of
	// --mix), included in ops.
	Reads int64 `json:"reads"`
	// Cancelled counts critical sections whose caller's context the cancel
	// fault cancelled.
	Cancelled int64 `json:"cancelled,omitempty"`
	// HungReleases counts release calls that had not returned when the
	// end-of-run grace period (engine.Grace) ended: the engine stops
	// waiting for them and counts them here (their clients record nothing
	// more). A release that loops or ignores its context shows here, not
	// as a run that never ends or a silent cut. Combined: summed.
	HungReleases int64 `json:"hung_releases,omitempty"`
	// Errors is the total of ErrorsByKind.
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	// ErrorSamples holds the first message seen for each kind.
	ErrorSamples map[string]string `json:"error_samples,omitempty"`
}

// WriteFile writes r as indented JSON to path atomically (WriteAtomic).
//
// The invariants of every scenario (Check) are tested as it is written:
// a file that breaks one is still written whole, and the error (wrapping
// ErrInvariant) says which. Likewise, under go test or with
// LOCKBENCH_CHECK_SCHEMA=1 in the environment (make test sets it, for the
// lockbench processes tests start), the JSON is checked against the result
// file's JSON Schema (results/schema.json, internal/report/schemacheck).
func WriteFile(path string, r *Run) error {
	var schemaErr error
	if err := WriteAtomic(path, func(w io.Writer) error {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
		if testing.Testing() || os.Getenv("LOCKBENCH_CHECK_SCHEMA") == "1" {
			if err := schemacheck.Validate(b.Bytes()); err != nil {
				schemaErr = fmt.Errorf("the result file does not match results/schema.json (after changing a type of the file, run make schema): %w", err)
			}
		}
		_, err := w.Write(b.Bytes())
		return err
	}); err != nil {
		return err
	}
	return errors.Join(schemaErr, Check(r))
}

// WriteAtomic writes a file with write: into a temporary file in path's
// directory (created if needed; named .lockbench-<pid>-*.tmp, so that a
// later run can sweep it when this process was killed), then renamed over
// path with mode 0644, so a reader never sees half a file. On error
// nothing is left behind.
func WriteAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.Write(path, write)
}

// ReadFile decodes a result file and checks its schema version: it is
// ReadFileMax with DefaultMaxInput.
func ReadFile(path string) (*Run, error) {
	return ReadFileMax(path, DefaultMaxInput)
}

// Table writes one row per scenario (the columns of TableColumns): strategy, driver, workload, retry,
// clients, ops/s, the lock-bound ceiling (ops/s), p50, p99, p99.9 and max
// in ms, Jain's fairness index, a column for each violation kind with
// Column set (oversell, overlap, lost updates), the other kinds' non-zero
// counts in one cell, and errors (acquire timeouts and give-ups included).
func Table(w io.Writer, scenarios []Scenario) error {
	return TableOf(w, scenarios, TableColumns())
}

// otherCell names the non-zero violation counts of the kinds without a
// column of their own (ViolationKind.Column), by their Short names (a
// semaphore's capacity violations with its max_holders), the
// non-zero liveness figures, and the slow and hung releases (slow rel,
// hung rel: no violations, but failures of the release to name).
func otherCell(v Violations, l *Liveness, slow, hung int64) string {
	var parts []string
	for _, k := range ViolationKinds {
		if n := k.Of(v); !k.Column && n != 0 {
			c := k.Short + " " + strconv.FormatInt(n, 10)
			if k.Key == "capacity_violations" && v.MaxHolders != nil { // a semaphore's
				c += " (max " + strconv.FormatInt(*v.MaxHolders, 10) + " holders)"
			}
			parts = append(parts, c)
		}
	}
	if v.CrossOverlap != nil { // lockbench merge checked the histories
		c := "cross-proc " + strconv.FormatInt(*v.CrossOverlap, 10)
		if p := v.CrossOverlapPossible; p != nil && *p != 0 {
			c += " (+" + strconv.FormatInt(*p, 10) + " possible)"
		}
		parts = append(parts, c)
	}
	if l != nil {
		for _, f := range LivenessFigures {
			if n := f.Of(*l); n != 0 {
				parts = append(parts, f.Short+" "+strconv.FormatInt(n, 10))
			}
		}
		if !l.Measured {
			parts = append(parts, "liveness n/a")
		}
	}
	if slow != 0 {
		parts = append(parts, "slow rel "+strconv.FormatInt(slow, 10))
	}
	if hung != 0 {
		parts = append(parts, "hung rel "+strconv.FormatInt(hung, 10))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

// FormatMS formats a latency in ms with the table's precision: no decimals
// from 100 ms, one from 10 ms, two below.
func FormatMS(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func shortRetry(spec string) string {
	name, _, _ := strings.Cut(spec, ":")
	return name
}

// errorCell is the error total, with timeouts and failures spelled out
// when there are any: "3 (timeout 2, fail 1)".
func errorCell(c Counters) string {
	total := c.Errors + c.Timeouts + c.Failures
	if total == 0 {
		return "0"
	}
	var parts []string
	if c.Timeouts > 0 {
		parts = append(parts, "acquire timeout "+strconv.FormatInt(c.Timeouts, 10))
	}
	if c.Failures > 0 {
		parts = append(parts, "gave up "+strconv.FormatInt(c.Failures, 10))
	}
	kinds := make([]string, 0, len(c.ErrorsByKind))
	for k := range c.ErrorsByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		parts = append(parts, k+" "+strconv.FormatInt(c.ErrorsByKind[k], 10))
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// Liveness are the liveness oracle's figures (internal/liveness): locks
// left without a live holder and how long each holder's exit took to free
// its lock. Times in ms.
type Liveness struct {
	// Measured is false when the oracle could not tell live tokens from
	// orphans (NotMeasured says why): the counts below are then not 0 but
	// unknown.
	Measured    bool   `json:"measured"`
	NotMeasured string `json:"not_measured,omitempty"`
	// ResolutionMS is the mean time between two reads of the lock keys;
	// Samples the reads made; ReadErrors the node reads that failed.
	ResolutionMS float64 `json:"resolution_ms"`
	Samples      int64   `json:"samples"`
	ReadErrors   int64   `json:"read_errors,omitempty"`
	// OrphanLocks are tokens seen stored in a lock key after their client
	// had given them up (a timed-out acquire whose SET the server applied,
	// a crash, a cancelled or failed release); OrphanLockMS the lock time
	// lost to them (death to the last read that saw each), OrphansAtEnd
	// those still stored at the last read.
	OrphanLocks  int64   `json:"orphan_locks"`
	OrphanLockMS float64 `json:"orphan_lock_ms"`
	OrphansAtEnd int64   `json:"orphans_at_end"`
	// OrphanAcquires are the orphans left by acquires that failed (a SET
	// applied whose reply the client never got); the others were left at
	// a holder's exit (a crash, a cancelled or failed release).
	OrphanAcquires int64 `json:"orphan_acquires"`
	// TimeToFreeMS is, per holder exit (release, crash, cancel), the time
	// until the lock could be taken again.
	// Absent when no holder exited (nothing measured).
	TimeToFreeMS metrics.Latency `json:"time_to_free_ms,omitzero"`
	// OrphanRenewals are renewals sent for a token already released or
	// given up; HeldPastTTL keys kept alive more than 3 x the TTL holding
	// only such tokens.
	OrphanRenewals int64 `json:"orphan_renewals"`
	HeldPastTTL    int64 `json:"held_past_ttl"`
	// OrphanShares are, in multi-owner locks (a read lock's readers, a
	// semaphore's holders: several tokens in one key), dead owners' shares
	// seen stored beside a live owner's more than ShareGrace (2 x the TTL
	// + 100 ms, internal/liveness) after their owner died: another owner's
	// renewal or arrival kept the key, and the dead share with it, alive.
	// Each share counts once. OrphanShareAgeMS is, per orphan share, the
	// time from its owner's death to the last read that saw it (a share
	// still stored at the end: to the last read); derived from
	// raw.hists.orphan_share_age, absent without orphan shares.
	OrphanShares     int64           `json:"orphan_shares"`
	OrphanShareAgeMS metrics.Latency `json:"orphan_share_age_ms,omitzero"`
	// DeadlineOvershoots are acquires that took more than 2 x their
	// deadline (--acquire-timeout).
	DeadlineOvershoots int64 `json:"deadline_overshoots"`
	// GoroutinesMax is the most goroutines lockbench ran at one read.
	GoroutinesMax int `json:"goroutines_max"`
	// ForeignHoldMaxMS, in a run of execution segments (several processes,
	// --procs or --segment), is the longest time one token of another
	// process was seen stored in a lock key: from the first read that saw
	// it to the last (so short by up to one read interval at each end; a
	// token still stored at the end counts up to the last read). This
	// process's own tokens are not in it (they are judged above). A
	// process killed inside its critical section (the proc-kill fault)
	// leaves its token until its lease ends: about one TTL here, where a
	// live holder's token lasts its critical section. Absent (0) outside
	// segments.
	ForeignHoldMaxMS float64 `json:"foreign_hold_max_ms,omitempty"`
}

// LivenessFigure is one count of Liveness, named for the table, the
// metrics and thresholds.
type LivenessFigure struct {
	Key, Short, Doc string
	Of              func(Liveness) int64
	// Always: measured whenever the scenario has liveness figures, not
	// only when the oracle could tell orphans (deadline_overshoots).
	Always bool
}

// known reports whether s measured f.
func (f LivenessFigure) known(s Scenario) bool {
	return s.Liveness != nil && (s.Liveness.Measured || f.Always)
}

// LivenessFigures are the liveness counts the table's "other violations"
// cell shows when not zero, and that thresholds can name.
var LivenessFigures = []LivenessFigure{
	{"orphan_locks", "orphans", "locks left holding a token no live holder owns (liveness oracle)", func(l Liveness) int64 { return l.OrphanLocks }, false},
	{"orphan_renewals", "orphan renewals", "renewals sent for a token already released or given up", func(l Liveness) int64 { return l.OrphanRenewals }, false},
	{"held_past_ttl", "held past 3xTTL", "lock keys kept alive more than 3 x the TTL with no live holder", func(l Liveness) int64 { return l.HeldPastTTL }, false},
	{"orphan_shares", "orphan shares", "dead owners' shares of multi-owner locks (readers, semaphore holders) kept stored past 2 x the TTL beside a live owner's", func(l Liveness) int64 { return l.OrphanShares }, false},
	{"deadline_overshoots", "overshoots", "acquires that took more than 2 x their deadline (--acquire-timeout)", func(l Liveness) int64 { return l.DeadlineOvershoots }, true},
}

// MarshalJSON writes l; when the oracle could not tell orphans (Measured
// false), the counts it would have made are left out rather than written
// as zeros: they are unknown.
func (l Liveness) MarshalJSON() ([]byte, error) {
	type plain Liveness
	if l.Measured {
		return json.Marshal(plain(l))
	}
	return json.Marshal(struct {
		Measured           bool   `json:"measured"`
		NotMeasured        string `json:"not_measured,omitempty"`
		DeadlineOvershoots int64  `json:"deadline_overshoots"`
		GoroutinesMax      int    `json:"goroutines_max,omitempty"`
	}{false, l.NotMeasured, l.DeadlineOvershoots, l.GoroutinesMax})
}
