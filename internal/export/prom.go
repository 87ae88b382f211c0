// Package export publishes a run's live figures as Prometheus metrics
// (github.com/prometheus/client_golang), under the names the articles use
// for lock monitoring: redis_lock_wait_duration_seconds,
// redis_lock_hold_duration_seconds and redis_lock_failed_total, plus
// operation and violation counters, labelled by strategy, driver and
// workload.
package export

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockbench/lockbench/internal/report"
)

var labels = []string{"strategy", "driver", "workload"}

// Prom holds the metrics and serves them.
type Prom struct {
	reg        *prometheus.Registry
	wait, hold *prometheus.HistogramVec
	failed     *prometheus.CounterVec
	ops        *prometheus.CounterVec
	violations *prometheus.CounterVec
	ttl        *prometheus.GaugeVec
	srv        *http.Server
	addr       string
}

// New registers the metrics in a registry of their own.
func New() *Prom {
	buckets := prometheus.ExponentialBuckets(0.0001, 2, 18) // 100 µs .. 13 s
	p := &Prom{
		reg: prometheus.NewRegistry(),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "redis_lock_wait_duration_seconds",
			Help: "Time to acquire a lock, retries included (s).", Buckets: buckets}, labels),
		hold: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "redis_lock_hold_duration_seconds",
			Help: "Time a lock was held: the critical section (s).", Buckets: buckets}, labels),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "redis_lock_failed_total",
			Help: "Acquires that failed: gave up, timed out or errored."}, labels),
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lockbench_operations_total",
			Help: "Completed operations."}, labels),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lockbench_violations_total",
			Help: "Safety violations at the end of a scenario, by kind."}, append(labels, "kind")),
		ttl: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lockbench_lock_ttl_seconds",
			Help: "The scenario's lock lease time (TTL) (s), the reference for the hold > 80 % of TTL alert."}, labels),
	}
	p.reg.MustRegister(p.wait, p.hold, p.failed, p.ops, p.violations, p.ttl)
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

// Obs records one scenario's events; a nil *Obs records nothing.
type Obs struct {
	wait, hold  prometheus.Observer
	failed, ops prometheus.Counter
	p           *Prom
	lv          []string
}

// For returns the recorder of one scenario.
func (p *Prom) For(strategy, driver, workload string) *Obs {
	lv := []string{strategy, driver, workload}
	return &Obs{wait: p.wait.WithLabelValues(lv...), hold: p.hold.WithLabelValues(lv...),
		failed: p.failed.WithLabelValues(lv...), ops: p.ops.WithLabelValues(lv...), p: p, lv: lv}
}

// TTL publishes the scenario's lock lease time.
func (o *Obs) TTL(d time.Duration) {
	if o != nil {
		o.p.ttl.WithLabelValues(o.lv...).Set(d.Seconds())
	}
}

// Wait records an acquire time.
func (o *Obs) Wait(d time.Duration) {
	if o != nil {
		o.wait.Observe(d.Seconds())
	}
}

// Hold records a hold time.
func (o *Obs) Hold(d time.Duration) {
	if o != nil {
		o.hold.Observe(d.Seconds())
	}
}

// Failed counts a failed acquire.
func (o *Obs) Failed() {
	if o != nil {
		o.failed.Inc()
	}
}

// Op counts a completed operation.
func (o *Obs) Op() {
	if o != nil {
		o.ops.Inc()
	}
}

// Violations adds a scenario's non-zero violation counts, one series per
// kind (report.ViolationKinds; the kind label is its Key).
func (o *Obs) Violations(v report.Violations) {
	if o == nil {
		return
	}
	for _, k := range report.ViolationKinds {
		if n := k.Of(v); n > 0 {
			o.p.violations.WithLabelValues(append(o.lv, k.Key)...).Add(float64(n))
		}
	}
}
