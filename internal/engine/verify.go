package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

// verify runs the workload's end check (within 30 s) and fills r.out's
// Figures and Violations: the workload's own (oversell, lost updates,
// lost acknowledged writes), the oracle's overlaps, the counts of all
// (the whole run's recorder, warm-up included), and the lock keys left
// without a TTL; then it publishes the violations (Prometheus). Errors:
// the end check or the stuck-lock check failed, unless the scenario
// injected faults: a fault may have left the data unreachable, so the
// failure goes into VerifyError and the figures measured are kept.
func (r *run) verify(all *metrics.Recorder) error {
	sc, out, env := &r.sc, &r.out, r.env
	vctx, vcancel := context.WithTimeout(r.bg, 30*time.Second)
	defer vcancel()
	var res workloads.Result
	var err error
	if !sc.Env.Follower { // a follower segment: the leader checks the data
		res, err = r.wl.Verify(vctx, env)
	}
	if err != nil {
		if r.inj == nil {
			return fmt.Errorf("%s verify: %w", sc.Workload, err)
		}
		// A fault may have left the data unreachable (a killed data node):
		// keep what was measured and say why the end check is missing.
		out.VerifyError = err.Error()
	}
	out.Figures = res.Figures
	if r.resource != nil && err == nil && !sc.Env.Follower {
		// The separate resource's own count of the tokens it refused.
		rep, gerr := r.resource.Do(vctx, "GET", env.Rejections)
		n, cerr := rep.AsInt()
		if err = errors.Join(gerr, cerr); err != nil {
			err = fmt.Errorf("read the separate resource's count of refusals: %w", err)
			if r.inj == nil {
				return err
			}
			out.VerifyError = err.Error()
		} else {
			if out.Figures == nil {
				out.Figures = map[string]int64{}
			}
			out.Figures[ResourceRejected] = n
		}
	}
	out.Violations = report.Violations{
		Overlap:         env.Oracle.Overlaps(),
		ForeignReleases: all.ForeignReleases,
		LostLeases:      all.LostLeases,
		WorkedAfterLoss: all.WorkedAfterLoss,
		FalseExtends:    all.FalseExtends,
		FalseAcquires:   all.FalseAcquires,
	}
	if so, ok := env.Oracle.(semOracle); ok && so.Permits() > 1 {
		// A semaphore: capacity violations instead of overlaps.
		mh := so.MaxHolders()
		out.Violations.CapacityViolations, out.Violations.MaxHolders = so.Capacity(), &mh
	}
	if sc.Env.Follower {
		out.Violations.EndCheck = report.EndCheckNotRun
	}
	for _, k := range report.ViolationKinds {
		if k.From == report.FromEndCheck {
			k.Set(&out.Violations, res.Violations[k.Key])
		}
	}
	if bad := unknownViolations(res.Violations); len(bad) > 0 {
		// A safety count the result file has no key for would be lost
		// and the run would read as safe: the workload is wrong.
		return fmt.Errorf("%s verify: violation kinds %s are not end-check kinds (%s)", sc.Workload,
			strings.Join(bad, ", "), strings.Join(endCheckKinds(), ", "))
	}
	defer func() { r.prom.Violations(out.Violations) }()
	if lk, ok := r.wl.(workloads.LockKeyer); ok && !sc.Env.Follower {
		if out.Violations.StuckLocks, err = redisadmin.StuckLocks(vctx, r.ds, lk.LockKeys()); err != nil {
			if r.inj == nil {
				return fmt.Errorf("stuck-lock check: %w", err)
			}
			out.VerifyError = strings.TrimPrefix(out.VerifyError+"; ", "; ") + "stuck-lock check: " + err.Error()
		}
	}
	return nil
}

// endCheckKinds are the violation keys a workload's end check may report
// (workloads.Result.Violations), in report.ViolationKinds' order.
func endCheckKinds() []string {
	var out []string
	for _, k := range report.ViolationKinds {
		if k.From == report.FromEndCheck {
			out = append(out, k.Key)
		}
	}
	return out
}

// unknownViolations returns the keys of v that are not end-check kinds,
// sorted (nil when every key is one).
func unknownViolations(v map[string]int64) []string {
	known := endCheckKinds()
	var bad []string
	for k := range v {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	return bad
}

// semOracle is the safety oracle's view of a semaphore
// (metrics.Oracle.SetPermits).
type semOracle interface {
	Permits() int
	Capacity() int64
	MaxHolders() int64
}
