package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/redisadmin"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/internal/segment"
	"github.com/lockbench/lockbench/strategies"
)

// segPlan is a run as one execution segment (--segment, --segment-count).
type segPlan struct {
	seg      segment.Segment
	timeout  time.Duration
	planHash string
	barrier  *segment.Barrier
	// child is set in a child of --procs: the process faults' side there.
	child *procChild
}

// parseSegment reads --segment (or $LOCKBENCH_SEGMENT), --segment-count
// (with $JOB_COMPLETION_INDEX), --run-id, --barrier-timeout and --procs,
// and checks what goes with them. It returns nil without segments.
// Errors: usage errors, all at once.
func parseSegment(f *runFlags, p *plan) (*segPlan, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if f.runID != "" && !runIDPattern.MatchString(f.runID) {
		bad("--run-id %q: want 1 to 64 letters, digits, '-' or '_' (it is part of every key name, and lockbench clean --run-id takes it)", f.runID)
	}
	spec, from := f.segment, "--segment"
	if spec == "" && f.segmentCount == 0 {
		if spec = os.Getenv("LOCKBENCH_SEGMENT"); spec != "" {
			from = "$LOCKBENCH_SEGMENT"
		}
	}
	var seg *segment.Segment
	switch {
	case f.segment != "" && f.segmentCount != 0:
		bad("--segment and --segment-count do not go together: give segment i/N, or N with $JOB_COMPLETION_INDEX")
	case spec != "":
		s, err := segment.Parse(spec)
		if err != nil {
			bad("%s %v", from, err)
		} else {
			seg = &s
		}
	case f.segmentCount != 0:
		idx, ok := os.LookupEnv("JOB_COMPLETION_INDEX")
		if !ok {
			bad("--segment-count %d needs $JOB_COMPLETION_INDEX (0-based, as a Kubernetes Indexed Job sets it); by hand, give --segment i/N", f.segmentCount)
			break
		}
		s, err := segment.FromIndex(idx, f.segmentCount)
		if err != nil {
			bad("%v", err)
		} else {
			seg = &s
		}
	}
	if !f.sweep && (f.barrierTimeout <= 0 || f.barrierTimeout > 24*time.Hour) { // sweep has no segments
		bad("--barrier-timeout must be above 0 and at most 24h, got %v", f.barrierTimeout)
	}
	if f.procs < 0 || f.procs > maxProcs {
		bad("--procs must be from 1 to %d, got %d", maxProcs, f.procs)
	}
	if f.procs > 0 && seg != nil {
		bad("--procs starts the segments itself: it does not go with %s", from)
	}
	if f.clientShape != nil && (f.procs > 0 || seg != nil) {
		from := from
		if f.procs > 0 {
			from = "--procs"
		}
		bad("--clients %s: a client ramp runs in one process; it does not go with %s (give --clients a number)", f.clientShape, from)
	}
	if seg == nil {
		errs = append(errs, procFaultsWithout(p, f.procs)...)
		if len(errs) > 0 {
			return nil, usageError{errors.Join(errs...)}
		}
		return nil, nil
	}
	if f.runID == "" {
		bad("%s needs --run-id ID: every segment of the run gives the same id (its keys are lockbench:<run-id>:)", from)
	}
	if len(p.addrs) == 0 {
		bad("%s needs --addr: every segment runs against the same servers (--procs starts them for its children)", from)
	}
	if p.repeat > 1 {
		bad("--repeat does not go with %s", from)
	}
	if p.docker {
		bad("--backend docker does not go with %s (give the servers with --addr)", from)
	}
	for _, sc := range p.scenarios {
		if strategies.InfoOf(sc.Strategy).Backend != strategies.NoBackend {
			bad("strategy %s does not run as execution segments (its data lives in its own server, which each process would start)", sc.Strategy)
			break
		}
	}
	procs := 0 // a --procs child: its parent's N
	if os.Getenv(procChildEnv) != "" {
		procs = seg.Count
	}
	errs = append(errs, procFaultsWithout(p, procs)...)
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	return &segPlan{seg: *seg, timeout: f.barrierTimeout, planHash: planHash(p), child: openProcChild()}, nil
}

// maxProcs bounds --procs.
const maxProcs = 256

// planHash is a hash of the scenarios a run will run, every parameter
// included (clients and rates before any split), and not the segment, the
// run id or where the results go: segments of one run have the same.
// 16 hex digits of SHA-256 over the scenarios' JSON.
func planHash(p *plan) string {
	type sc struct {
		Strategy, Driver, Workload, Retry string
		Clients                           int
		Params                            map[string]string
		Rate                              float64
		Poisson                           bool
		DropAfter                         time.Duration
		Faults                            []string
		Repeat                            int
	}
	var all []sc
	for _, s := range p.scenarios {
		x := sc{Strategy: s.Strategy, Driver: s.Driver, Workload: s.Workload, Retry: s.Retry.String(),
			Clients: s.Clients, Params: s.ParamsMap(), Rate: s.Rate, Poisson: s.Poisson, DropAfter: s.DropAfter, Repeat: p.repeat}
		for _, f := range s.Faults {
			x.Faults = append(x.Faults, f.String())
		}
		all = append(all, x)
	}
	b, _ := json.Marshal(all) // maps marshal in key order
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// segmentScenario makes sc the segment's share of it: its clients (from
// client segment.Offset on), its rate, and the leader's or a follower's
// role, synchronised by the barrier of scenario i.
func (sp *segPlan) segmentScenario(sc engine.Scenario, i int) engine.Scenario {
	total := sc.Clients
	sc.Clients = segment.Share(total, sp.seg)
	sc.Env.ClientOffset = segment.Offset(total, sp.seg)
	sc.Env.ScenarioClients = total
	if sc.Rate > 0 {
		sc.Rate = segment.Rate(sc.Rate, sp.seg)
		if sc.Shape != nil {
			sc.Shape = sc.Shape.Scale(1 / float64(sp.seg.Count))
		}
	}
	sc.Env.Follower = !sp.seg.Leader()
	sc.Env.Sync = sp.barrier.Scenario(i)
	return sp.child.scenario(sc, i)
}

// join opens the barrier's connection to the first server and registers
// the segment (segment.Barrier.Join). Errors: a refusal (plan, count, a
// segment claimed twice) is a usage error; a connection failure is not.
func (sp *segPlan) join(ctx context.Context, p *plan, runID string) (func(), error) {
	nodes := p.external(strategies.Standalone)
	ds, err := engine.Open(ctx, p.scenarios[0].Driver, nodes[:1], 1)
	if err != nil {
		return func() {}, tlsHint(err, nodes[0])
	}
	d := ds[0]
	var total time.Duration
	for _, sc := range p.scenarios {
		total += sc.Warmup + sc.Duration + sp.timeout + engine.Grace
	}
	sp.barrier = &segment.Barrier{D: d, RunID: runID, Seg: sp.seg, Nonce: segment.NewNonce(), PlanHash: sp.planHash,
		Timeout: sp.timeout, KeyTTL: total + 2*sp.timeout + 10*time.Minute}
	if err := sp.barrier.Join(ctx); err != nil {
		d.Close()
		if errors.Is(err, segment.ErrRefused) {
			return func() {}, usageError{err}
		}
		return func() {}, err
	}
	return func() {
		if sp.seg.Leader() { // the run's barrier keys, every segment being past them
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = redisadmin.DeleteKeys(cctx, d, segment.BarrierPrefix(runID))
		}
		d.Close()
	}, nil
}

// idleSegment is a segment's part in scenario sc when it has none of its
// clients (fewer clients than segments): it meets the others at the start
// and end barriers and records the scenario with no clients and no
// operations (stop reason "no_clients"), so that its file lists every
// scenario of the plan.
func idleSegment(ctx context.Context, sc engine.Scenario) (report.Scenario, error) {
	out := report.Scenario{Strategy: sc.Strategy, Driver: sc.Driver, Workload: sc.Workload,
		Retry: sc.Retry.String(), Params: sc.ParamsMap(), StopReason: "no_clients",
		Raw: &report.Raw{Runs: 1}} // measured nothing: it adds nothing to a merge
	if sc.Env.Follower {
		out.Violations.EndCheck = report.EndCheckNotRun
	}
	at, err := sc.Env.Sync.Start(ctx)
	if err != nil {
		return out, err
	}
	t := time.NewTimer(time.Until(at.Add(sc.Warmup + sc.Duration)))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		out.StopReason = "interrupted"
	}
	_, err = sc.Env.Sync.End(context.WithoutCancel(ctx), nil)
	return out, err
}

// segmentMeta fills the result's segment fields.
func (sp *segPlan) segmentMeta(m *report.Meta) {
	if sp == nil {
		return
	}
	m.Segment, m.Segments, m.PlanHash = sp.seg.Index, sp.seg.Count, sp.planHash
	if sp.barrier != nil {
		m.RunNonce = sp.barrier.LeaderNonce
	}
}

// ourKeys counts the keys under the run's namespace on d: with segments,
// the other segments' barrier registrations and the leader's data are
// there before a follower checks that the database is empty.
func ourKeys(ctx context.Context, d drivers.Driver, runID string) int64 {
	if runID == "" {
		return 0
	}
	n, err := redisadmin.CountKeys(ctx, d, segment.Prefix(runID))
	if err != nil {
		return 0
	}
	return int64(n)
}

// checkSegmentFiles refuses to merge result files of execution segments
// that are not of one run: different run ids, plan hashes or run nonces,
// or two files of one segment. Files without segments pass unless two
// have one run id (one run's file twice). It sorts
// segment files by segment (the leader's first: its meta is the merged
// file's) and returns the segments missing from 1..N.
func checkSegmentFiles(runs []*report.Run, names []string) (missing []int, err error) {
	seg := 0
	for _, r := range runs {
		if r.Meta.Segments > 0 {
			seg++
		}
	}
	if seg == 0 {
		// Files of several machines' runs: a run's file twice (or a copy)
		// would count its operations twice in one window.
		byID := map[string]string{}
		for i, r := range runs {
			if id := r.Meta.RunID; id != "" {
				if prev, ok := byID[id]; ok {
					return nil, fmt.Errorf("%s and %s are of one run (run id %s): give the files of runs made together on several machines, or the segments of one run", prev, names[i], id)
				}
				byID[id] = names[i]
			}
		}
		return nil, nil
	}
	if seg != len(runs) {
		return nil, errors.New("some files are execution segments (meta.segments) and some are not: give the segments of one run")
	}
	for i, r := range runs {
		if r.Meta.Segment == 0 {
			return nil, fmt.Errorf("%s is already the merge of %d segments: give the segments' own files", names[i], r.Meta.Segments)
		}
	}
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return runs[idx[a]].Meta.Segment < runs[idx[b]].Meta.Segment })
	sorted := make([]*report.Run, len(runs))
	sortedNames := make([]string, len(runs))
	for i, k := range idx {
		sorted[i], sortedNames[i] = runs[k], names[k]
	}
	copy(runs, sorted)
	copy(names, sortedNames)
	first := runs[0].Meta
	seen := map[int]string{}
	for i, r := range runs {
		m := r.Meta
		switch {
		case m.RunID != first.RunID:
			return nil, fmt.Errorf("%s has run id %s and %s run id %s: merge the segments of one run", names[i], m.RunID, names[0], first.RunID)
		case m.PlanHash != first.PlanHash:
			return nil, fmt.Errorf("%s has plan hash %s and %s plan hash %s: the segments ran different scenarios", names[i], m.PlanHash, names[0], first.PlanHash)
		case m.Segments != first.Segments:
			return nil, fmt.Errorf("%s is a segment of %d and %s of %d", names[i], m.Segments, names[0], first.Segments)
		case m.RunNonce != "" && first.RunNonce != "" && m.RunNonce != first.RunNonce:
			return nil, fmt.Errorf("%s has run nonce %s and %s run nonce %s: two runs with run id %s", names[i], m.RunNonce, names[0], first.RunNonce, m.RunID)
		}
		if prev, ok := seen[m.Segment]; ok {
			return nil, fmt.Errorf("%s and %s are both segment %d/%d", prev, names[i], m.Segment, m.Segments)
		}
		seen[m.Segment] = names[i]
	}
	for i := 1; i <= first.Segments; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, i)
		}
	}
	return missing, nil
}

// mergeSegments merges segment files (checkSegmentFiles passed): the
// merged meta has segment 0, segments N and the segments missing in
// killed_segments (with those the files already listed).
func mergeSegments(runs []*report.Run, missing []int) (*report.Run, error) {
	m, err := report.Merge(runs)
	if err != nil {
		return nil, err
	}
	if runs[0].Meta.Segments > 0 {
		m.Meta.Segment = 0
		killed := slices.Clone(missing)
		for _, r := range runs {
			killed = append(killed, r.Meta.KilledSegments...)
		}
		slices.Sort(killed)
		m.Meta.KilledSegments = slices.Compact(killed)
	}
	return m, nil
}

// runIDPattern is what a run id may hold: lockbench's are 8 hex digits;
// no glob character may reach SCAN MATCH.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// crossCheck runs the cross-process oracle and Porcupine's check, within
// b, on merged (report.CrossCheckWithin), each history relative to its
// result file's directory. A history file missing or unreadable is bad
// input (exit 2).
func crossCheck(merged *report.Run, runs []*report.Run, paths []string, b report.LinBounds) error {
	dirs := make([]string, len(paths))
	for i, p := range paths {
		dirs[i] = filepath.Dir(p)
	}
	if err := report.CrossCheckWithin(merged, runs, dirs, b); err != nil {
		return usageError{fmt.Errorf("cross-process check: %w", err)}
	}
	return nil
}
