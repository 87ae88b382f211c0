// Package export publishes a run's live figures as Prometheus metrics
// (github.com/prometheus/client_golang), under the names the articles use
// for lock monitoring (redis_lock_wait_duration_seconds,
// redis_lock_hold_duration_seconds, redis_lock_failed_total) and more of
// the same prefix (Names lists them all). Every series carries the labels
// strategy, driver, workload, retry, clients and scenario (Labels), so
// that each scenario of a matrix has series of its own.
//
// Every counter moves as the run goes: operations, acquires, attempts,
// failures and errors as the clients report them, the oracle's overlaps
// read at each scrape, the clients' lease-loss and foreign-release counts
// as they happen; the end check's violations (oversell, lost updates,
// lost acknowledged writes, stuck locks) when the scenario's end check
// has counted them. Warm-up included; a scenario run --repeat times adds
// every run into the same series.
package export

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockbench/lockbench/internal/report"
)

// The metric names: Prometheus naming (base units in the name, _total on
// counters), the prefix redis_lock_ of the articles' names.
const (
	WaitName       = "redis_lock_wait_duration_seconds"
	HoldName       = "redis_lock_hold_duration_seconds"
	FailedName     = "redis_lock_failed_total"
	AcquiredName   = "redis_lock_acquired_total"
	AttemptsName   = "redis_lock_attempts_total"
	OperationsName = "redis_lock_operations_total"
	ErrorsName     = "redis_lock_errors_total"
	ViolationsName = "redis_lock_violations_total"
	TTLName        = "redis_lock_ttl_seconds"
)

// Names are the metric families the exporter serves, in the order of its
// documentation.
var Names = []string{WaitName, HoldName, AcquiredName, FailedName, AttemptsName, OperationsName, ErrorsName, ViolationsName, TTLName}

// labelNames are the labels of every series (Labels), in the order of
// their values.
var labelNames = []string{"strategy", "driver", "workload", "retry", "clients", "scenario"}

// Labels identify one scenario's series.
type Labels struct {
	// Strategy, Driver, Workload and Retry are as in the result file's
	// scenario (retry as the policy's full spec, "backoff:cap=20ms,...").
	Strategy, Driver, Workload, Retry string
	// Clients is the scenario's number of clients.
	Clients int
	// Scenario is the scenario's number in the run's plan, from 1 (as the
	// CLI's messages number them); a skipped scenario keeps its number.
	Scenario int
}

func (l Labels) values() []string {
	return []string{l.Strategy, l.Driver, l.Workload, l.Retry, strconv.Itoa(l.Clients), strconv.Itoa(l.Scenario)}
}

// Prom holds the metrics and serves them.
type Prom struct {
	reg        *prometheus.Registry
	wait, hold *prometheus.HistogramVec
	failed     *prometheus.CounterVec
	acquired   *prometheus.CounterVec
	attempts   *prometheus.CounterVec
	ops        *prometheus.CounterVec
	errs       *prometheus.CounterVec
	violations *violations
	ttl        *prometheus.GaugeVec
	srv        *http.Server
	addr       string
}

// New registers the metrics in a registry of their own.
func New() *Prom {
	buckets := prometheus.ExponentialBuckets(0.0001, 2, 18) // 100 µs .. 13 s
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(labelNames[:len(labelNames):len(labelNames)], extra...))
	}
	p := &Prom{
		reg: prometheus.NewRegistry(),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: WaitName,
			Help: "Time to acquire a lock, retries included, of the acquires that got it (s).", Buckets: buckets}, labelNames),
		hold: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: HoldName,
			Help: "Time a lock was held: the critical section (s).", Buckets: buckets}, labelNames),
		failed:   counter(FailedName, "Acquires that ended without the lock (gave up, timed out or errored), less those the run's stop ended."),
		acquired: counter(AcquiredName, "Acquires that got the lock."),
		attempts: counter(AttemptsName, "Tries to take a lock (TryAcquire calls), of granted and failed acquires."),
		ops:      counter(OperationsName, "Completed operations."),
		errs:     counter(ErrorsName, "Operations that failed with an error, by kind (timeout, connection, ...; as the result's errors_by_kind).", "kind"),
		violations: &violations{desc: prometheus.NewDesc(ViolationsName,
			"Safety violations, by kind (as the result's violations): overlap and the clients' kinds as they happen, the end check's when it has run.",
			append(labelNames[:len(labelNames):len(labelNames)], "kind"), nil), byLabels: map[string]*vseries{}},
		ttl: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: TTLName,
			Help: "The scenario's lock lease time (TTL) (s), the reference for the hold > 80 % of TTL alert."}, labelNames),
	}
	p.reg.MustRegister(p.wait, p.hold, p.failed, p.acquired, p.attempts, p.ops, p.errs, p.violations, p.ttl)
	return p
}

// Serve listens on addr (host:port, ":9091") and serves /metrics until
// Close. Errors: the address cannot be listened on.
func (p *Prom) Serve(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{}))
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	p.addr = l.Addr().String()
	go func() {
		if err := p.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the run goes on without its metrics endpoint
		}
	}()
	return nil
}

// Gatherer is the registry the metrics live in (what /metrics serves).
func (p *Prom) Gatherer() prometheus.Gatherer { return p.reg }

// Addr is the address being served.
func (p *Prom) Addr() string { return p.addr }

// Close stops serving.
func (p *Prom) Close() {
	if p.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = p.srv.Shutdown(ctx)
	}
}

// Obs records one scenario's events; a nil *Obs records nothing. Safe
// for concurrent use by the scenario's clients.
type Obs struct {
	wait, hold                  prometheus.Observer
	failed, acquired, attempts  prometheus.Counter
	ops                         prometheus.Counter
	errs                        *prometheus.CounterVec
	ttl                         prometheus.Gauge
	v                           *vseries
	p                           *Prom
	lv                          []string
	lostLeases, foreignReleases *atomic.Int64
	workedAfterLoss, falseExt   *atomic.Int64
	falseAcq                    *atomic.Int64
}

// For returns the recorder of the scenario labelled l, its series made
// (at zero) now. Another For with the same labels (the next run of a
// --repeat) adds to the same series.
func (p *Prom) For(l Labels) *Obs {
	lv := l.values()
	v := p.violations.series(lv)
	return &Obs{wait: p.wait.WithLabelValues(lv...), hold: p.hold.WithLabelValues(lv...),
		failed: p.failed.WithLabelValues(lv...), acquired: p.acquired.WithLabelValues(lv...),
		attempts: p.attempts.WithLabelValues(lv...), ops: p.ops.WithLabelValues(lv...),
		errs: p.errs, ttl: p.ttl.WithLabelValues(lv...), v: v, p: p, lv: lv,
		lostLeases: &v.live[kindIndex["lost_leases"]], foreignReleases: &v.live[kindIndex["foreign_releases"]],
		workedAfterLoss: &v.live[kindIndex["worked_after_loss"]], falseExt: &v.live[kindIndex["false_extends"]],
		falseAcq: &v.live[kindIndex["false_acquires"]]}
}

// TTL publishes the scenario's lock lease time.
func (o *Obs) TTL(d time.Duration) {
	if o != nil {
		o.ttl.Set(d.Seconds())
	}
}

// Acquired records a granted acquire: its tries and its time.
func (o *Obs) Acquired(attempts int, wait time.Duration) {
	if o != nil {
		o.acquired.Inc()
		o.attempts.Add(float64(attempts))
		o.wait.Observe(wait.Seconds())
	}
}

// AcquireFailed records an acquire that ended without the lock after
// attempts tries; unless the run's stop ended it (stopping), it counts in
// redis_lock_failed_total.
func (o *Obs) AcquireFailed(attempts int, stopping bool) {
	if o != nil {
		o.attempts.Add(float64(attempts))
		if !stopping {
			o.failed.Inc()
		}
	}
}

// Hold records a hold time.
func (o *Obs) Hold(d time.Duration) {
	if o != nil {
		o.hold.Observe(d.Seconds())
	}
}

// Op counts a completed operation.
func (o *Obs) Op() {
	if o != nil {
		o.ops.Inc()
	}
}

// Error counts an operation's error of kind (drivers.ErrorKind).
func (o *Obs) Error(kind string) {
	if o != nil {
		o.errs.WithLabelValues(append(o.lv[:len(o.lv):len(o.lv)], kind)...).Inc()
	}
}

// The clients' violations, counted as they happen (report.FromClients).

// LeaseLost counts a lease found lost at release (lost_leases).
func (o *Obs) LeaseLost() {
	if o != nil {
		o.lostLeases.Add(1)
	}
}

// ForeignRelease counts a release of another client's lock
// (foreign_releases).
func (o *Obs) ForeignRelease() {
	if o != nil {
		o.foreignReleases.Add(1)
	}
}

// WroteAfterLoss counts a write after the lease was reported lost
// (worked_after_loss).
func (o *Obs) WroteAfterLoss() {
	if o != nil {
		o.workedAfterLoss.Add(1)
	}
}

// FalseExtend counts an extend reported successful after another client
// had taken the lock since the extending holder acquired it
// (false_extends).
func (o *Obs) FalseExtend() {
	if o != nil {
		o.falseExt.Add(1)
	}
}

// FalseAcquire counts a granted acquire after which the lock key did not
// hold the lease's token (false_acquires).
func (o *Obs) FalseAcquire() {
	if o != nil {
		o.falseAcq.Add(1)
	}
}

// Overlaps makes the overlap series read n (the oracle's overlap count,
// metrics.Oracle.Overlaps: safe to call while clients run) at each scrape,
// until Violations or Stop.
func (o *Obs) Overlaps(n func() int64) {
	if o != nil {
		o.v.mu.Lock()
		o.v.overlaps = n
		o.v.mu.Unlock()
	}
}

// Violations sets the scenario's violation counts to the end check's v
// (the result's violations): the end check's kinds appear, and each kind
// counted live takes v's count (where live counting saw more, its count
// stays: a counter never goes down). The overlap series stops reading the
// oracle. Call it once per run of the scenario, after its clients stopped.
func (o *Obs) Violations(v report.Violations) {
	if o == nil {
		return
	}
	s := o.v
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range report.ViolationKinds {
		live := s.live[i].Swap(0)
		if i == overlapIndex && s.overlaps != nil {
			live += s.overlaps()
		}
		s.base[i] += max(live, k.Of(v))
	}
	s.overlaps = nil
}

// Stop ends the scenario's run without an end check (it failed): the
// overlap series keeps the oracle's last count and stops reading it. After
// Violations it does nothing.
func (o *Obs) Stop() {
	if o == nil {
		return
	}
	s := o.v
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overlaps != nil {
		s.base[overlapIndex] += s.overlaps()
		s.overlaps = nil
	}
}

// kindIndex is each violation kind's index in report.ViolationKinds, by
// Key; overlapIndex the oracle's.
var (
	kindIndex    = map[string]int{}
	overlapIndex = -1
)

func init() {
	for i, k := range report.ViolationKinds {
		kindIndex[k.Key] = i
		if k.From == report.FromOracle {
			overlapIndex = i
		}
	}
	for _, key := range []string{"lost_leases", "foreign_releases", "worked_after_loss", "false_extends", "false_acquires", "overlap"} {
		if _, ok := kindIndex[key]; !ok {
			panic("export: no violation kind " + key)
		}
	}
}

// violations is the collector of redis_lock_violations_total: one series
// per scenario and kind (every kind, zeros included), whose value is read
// at each scrape from the kind's counts.
type violations struct {
	desc     *prometheus.Desc
	mu       sync.Mutex
	all      []*vseries // in the order made
	byLabels map[string]*vseries
}

// vseries is one scenario's violation counts: base holds those of its
// finished runs (and, for the overlap, of the runs that stopped), live
// the clients' counts of the run going on, overlaps the oracle's (nil
// when no run reads it).
type vseries struct {
	lv       []string
	mu       sync.Mutex // base, overlaps; and live's moves into base
	base     []int64
	live     []atomic.Int64
	overlaps func() int64
}

// series returns the counts of the scenario labelled lv, made on first use.
func (c *violations) series(lv []string) *vseries {
	key := ""
	for _, v := range lv {
		key += strconv.Quote(v)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.byLabels[key]; s != nil {
		return s
	}
	n := len(report.ViolationKinds)
	s := &vseries{lv: lv, base: make([]int64, n), live: make([]atomic.Int64, n)}
	c.byLabels[key] = s
	c.all = append(c.all, s)
	return s
}

// Describe implements prometheus.Collector.
func (c *violations) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *violations) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	all := append([]*vseries(nil), c.all...)
	c.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		for i, k := range report.ViolationKinds {
			n := s.base[i] + s.live[i].Load()
			if i == overlapIndex && s.overlaps != nil {
				n += s.overlaps()
			}
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), append(s.lv[:len(s.lv):len(s.lv)], k.Key)...)
		}
		s.mu.Unlock()
	}
}
