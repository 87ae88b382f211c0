package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
)

// sizedTerminal reports whether w is a terminal that knows its size, at
// least 40 columns and 2 rows (a pseudo-terminal without a window size
// would hide the bars).
func sizedTerminal(w io.Writer) bool {
	if !isTerminal(w) {
		return false
	}
	ws, err := unix.IoctlGetWinsize(int(w.(*os.File).Fd()), unix.TIOCGWINSZ)
	return err == nil && ws.Col >= 40 && ws.Row >= 2
}

// liveProgress draws one bar per scenario with github.com/vbauerster/mpb:
// "[i/n] strategy/driver/workload/retry", the bar over the scenario's
// planned time (warm-up + duration, times --repeat), the elapsed time, and
// the last second's ops/s with the errors (acquire give-ups and timeouts
// included) and overlaps so far, from the engine's timeline sampler. A
// finished bar shows the scenario's summary instead. Lines written through
// it (warnings) appear above the bars.
type liveProgress struct {
	w    io.Writer
	p    *mpb.Progress
	n    int
	mu   sync.Mutex
	bars []*scenarioBar
	cur  *scenarioBar // started last (start)
	// byIndex are the bars by scenario index (scenarios run at once:
	// each ends on its own bar).
	byIndex map[int]*scenarioBar
	once    sync.Once
}

// newLiveProgress draws on w; opts are extra mpb options (tests render to
// a buffer with a manual refresh).
func newLiveProgress(w io.Writer, n int, opts ...mpb.ContainerOption) *liveProgress {
	opts = append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithRefreshRate(250 * time.Millisecond)}, opts...)
	return &liveProgress{w: w, p: mpb.New(opts...), n: n}
}

// Write prints p above the bars, or straight to the output once the bars
// are closed.
func (lp *liveProgress) Write(p []byte) (int, error) {
	if n, err := lp.p.Write(p); err == nil {
		return n, nil
	}
	return lp.w.Write(p)
}

// scenarioBar is one scenario's bar and its live figures.
type scenarioBar struct {
	bar     *mpb.Bar
	start   time.Time
	planned time.Duration
	stop    chan struct{}
	// prefix is "[i/n] ", name the scenario's name.
	prefix, name string

	mu         sync.Mutex
	opsPerSec  float64
	interval   time.Duration // each timeline entry's (--interval; 0: 1 s)
	seconds    int
	errors     int64
	violations int64
	// final is the finished bar's text, finalShort its narrow form.
	final, finalShort string
	// shown is the status of the line being drawn (head sets it, tail
	// prints it).
	shown string
}

// Bar layout: at most barMax columns of bar, fewer on a narrow terminal;
// a name cut to no fewer than nameMin columns; the short status below
// narrowAt columns.
const (
	barMax   = 24
	barMin   = 8
	nameMin  = 16
	narrowAt = 100
)

// scenario adds the bar of scenario i (0-based) named name, expected to
// take planned.
func (lp *liveProgress) scenario(i int, name string, planned time.Duration) *scenarioBar {
	b := &scenarioBar{start: time.Now(), planned: max(planned, time.Millisecond), stop: make(chan struct{}),
		prefix: fmt.Sprintf("[%d/%d] ", i+1, lp.n), name: name}
	b.bar = lp.p.New(b.planned.Milliseconds(), mpb.BarStyle(), mpb.BarWidth(barMax),
		mpb.PrependDecorators(decor.Any(b.head)),
		mpb.AppendDecorators(decor.Any(b.tail)),
	)
	lp.mu.Lock()
	lp.bars = append(lp.bars, b)
	lp.mu.Unlock()
	go func() { // move the bar with the clock
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.bar.SetCurrent(min(time.Since(b.start), b.planned-time.Millisecond).Milliseconds())
			}
		}
	}()
	return b
}

// head is the text before the bar, "[i/n] name", fitted to the line's
// width (the terminal's, stat.AvailableWidth): the status after the bar
// keeps its room, then the name, cut with "…" down to nameMin columns,
// then the bar (mpb fills what is left, up to barMax). Below narrowAt
// columns the status is the short one.
func (b *scenarioBar) head(stat decor.Statistics) string {
	width := stat.AvailableWidth
	st := b.status(width < narrowAt)
	b.mu.Lock()
	b.shown = st
	b.mu.Unlock()
	// prefix, name, a space, the bar, a space, the status
	room := width - utf8.RuneCountInString(b.prefix) - 2 - utf8.RuneCountInString(st)
	nameW := max(min(utf8.RuneCountInString(b.name), room-barMin), nameMin)
	return b.prefix + truncate(b.name, nameW)
}

// truncate cuts s to n runes, the last of them "…", when it is longer.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}

// tail is the text after the bar: the status head chose.
func (b *scenarioBar) tail(decor.Statistics) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.shown
}

// status is the text after the bar; short drops "elapsed" and commas
// (a narrow terminal).
func (b *scenarioBar) status(short bool) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.final != "" {
		if short {
			return b.finalShort
		}
		return b.final
	}
	el := time.Since(b.start).Round(time.Second)
	switch {
	case b.seconds == 0 && short:
		return fmt.Sprintf("%v starting", el)
	case b.seconds == 0:
		return fmt.Sprintf("%v elapsed, starting", el)
	case short:
		return fmt.Sprintf("%v %.0f ops/s errors %d overlap %d", el, b.opsPerSec, b.errors, b.violations)
	}
	return fmt.Sprintf("%v elapsed, %.0f ops/s, errors %d, overlap %d", el, b.opsPerSec, b.errors, b.violations)
}

// second takes one whole interval of the timeline (engine.Scenario.OnSecond).
func (b *scenarioBar) second(s report.Second) {
	b.mu.Lock()
	b.seconds++
	iv := b.interval
	if iv <= 0 {
		iv = engine.DefaultInterval
	}
	b.opsPerSec = float64(s.Ops) / iv.Seconds() // a whole interval
	b.errors += s.Errors + s.AcquireFailures
	b.violations += s.Violations
	b.mu.Unlock()
}

// finish completes the bar showing summary.
func (b *scenarioBar) finish(summary string) { b.finishShort(summary, summary) }

// finishShort completes the bar showing summary, or short on a narrow
// terminal.
func (b *scenarioBar) finishShort(summary, short string) {
	b.mu.Lock()
	b.final, b.finalShort = summary, short
	b.mu.Unlock()
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	b.bar.SetTotal(-1, true) // complete at the current position
}

// close completes every bar (a failed scenario's shows "stopped") and
// waits for the last drawing, so that nothing written after it mixes with
// the bars. Calls after the first do nothing.
func (lp *liveProgress) close() { lp.once.Do(lp.closeOnce) }

func (lp *liveProgress) closeOnce() {
	lp.mu.Lock()
	for _, b := range lp.bars {
		if !b.bar.Completed() {
			b.mu.Lock()
			done := b.final != ""
			b.mu.Unlock()
			if !done {
				b.finish("stopped")
			}
		}
	}
	lp.mu.Unlock()
	lp.p.Wait()
}

// progress shows how a matrix run goes, one call per event. Write takes
// warnings (above the live bars while they are drawn).
type progress interface {
	io.Writer
	// start: scenario i (0-based) begins, planned to take planned; it may
	// set sc.OnSecond.
	start(i int, sc *engine.Scenario, planned time.Duration)
	// skipped: scenario i's server is not installed.
	skipped(i int)
	// stopped: scenario i ended without a result; why is "failed" or
	// "interrupted".
	stopped(i int, why string)
	// done: scenario i finished with res.
	done(i int, res report.Scenario)
	// close ends the progress output (the live bars' last drawing);
	// calls after the first do nothing.
	close()
}

// newProgress is live bars on stderr when both stdout and stderr are
// terminals (never on stdout, never into a pipe or a file); else plain
// lines, or none with quiet. Warnings go to stderr in every case.
func newProgress(stdout, stderr io.Writer, quiet bool, n int) progress {
	switch {
	case quiet:
		return quietProgress{stderr}
	case isTerminal(stdout) && sizedTerminal(stderr):
		return newLiveProgress(stderr, n)
	default:
		return plainProgress{w: stderr, n: n}
	}
}

// scenarioName is how progress names a scenario.
func scenarioName(sc *engine.Scenario) string {
	return fmt.Sprintf("%s %s %s %s, %d clients", sc.Strategy, sc.Driver, sc.Workload, sc.Retry.Name, sc.Clients)
}

// scenarioSummary is the progress line of a finished scenario.
func scenarioSummary(res report.Scenario) string {
	v := res.Violations
	return fmt.Sprintf("%s ops/s, overlap %s, oversell %s, lost updates %s (%.1fs, %s)",
		report.FormatRate(res.OpsPerSec), countOf(v, "overlap"), countOf(v, "oversell"), countOf(v, "lost_updates"),
		res.DurationS, res.StopReason)
}

// shortSummary is scenarioSummary for a narrow terminal: the table's
// short names, the stop reason left out.
func shortSummary(res report.Scenario) string {
	v := res.Violations
	return fmt.Sprintf("%s ops/s overlap %s oversell %s lost upd %s %.1fs",
		report.FormatRate(res.OpsPerSec), countOf(v, "overlap"), countOf(v, "oversell"), countOf(v, "lost_updates"),
		res.DurationS)
}

// countOf is v's count of the kind keyed key, "-" when v did not measure
// it (a follower segment runs no end check), as the table prints it.
func countOf(v report.Violations, key string) string {
	for _, k := range report.ViolationKinds {
		if k.Key == key {
			if !k.Known(v) {
				return "-"
			}
			return strconv.FormatInt(k.Of(v), 10)
		}
	}
	return "-"
}

func (lp *liveProgress) start(i int, sc *engine.Scenario, planned time.Duration) {
	b := lp.scenario(i, scenarioName(sc), planned)
	b.interval = sc.Interval
	sc.Env.OnSecond = b.second
	lp.mu.Lock()
	lp.cur = b
	if lp.byIndex == nil {
		lp.byIndex = map[int]*scenarioBar{}
	}
	lp.byIndex[i] = b
	lp.mu.Unlock()
}

// skipped leaves the bar as it is (close marks it "stopped").
func (lp *liveProgress) skipped(int) {}

func (lp *liveProgress) stopped(i int, why string) { lp.current(i).finish(why) }

func (lp *liveProgress) done(i int, res report.Scenario) {
	lp.current(i).finishShort(scenarioSummary(res), shortSummary(res))
}

// current is scenario i's bar, else the bar of the scenario started last.
func (lp *liveProgress) current(i int) *scenarioBar {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if b, ok := lp.byIndex[i]; ok {
		return b
	}
	return lp.cur
}

// plainProgress writes one line per scenario to w: "[i/n] name ..." when
// it starts, completed with its summary (or skipped, failed, interrupted)
// when it ends.
type plainProgress struct {
	w io.Writer
	n int
}

func (pp plainProgress) Write(p []byte) (int, error) { return pp.w.Write(p) }

func (pp plainProgress) start(i int, sc *engine.Scenario, _ time.Duration) {
	fmt.Fprintf(pp.w, "[%d/%d] %s ...", i+1, pp.n, scenarioName(sc))
}

func (pp plainProgress) skipped(int) { fmt.Fprintln(pp.w, " skipped") }

func (pp plainProgress) stopped(_ int, why string) { fmt.Fprintln(pp.w, " "+why) }

func (pp plainProgress) done(_ int, res report.Scenario) {
	fmt.Fprintln(pp.w, " "+scenarioSummary(res))
}

func (plainProgress) close() {}

// quietProgress (-q) shows no progress; warnings still go to w.
type quietProgress struct{ w io.Writer }

func (qp quietProgress) Write(p []byte) (int, error) { return qp.w.Write(p) }

func (quietProgress) start(int, *engine.Scenario, time.Duration) {}
func (quietProgress) skipped(int)                                {}
func (quietProgress) stopped(int, string)                        {}
func (quietProgress) done(int, report.Scenario)                  {}
func (quietProgress) close()                                     {}

// linesProgress is plainProgress for scenarios that run at once
// (scenarioLoop.together): one whole line as each starts and one as
// each ends, named, since their ends do not follow their starts.
type linesProgress struct{ plainProgress }

func (lp linesProgress) start(i int, sc *engine.Scenario, _ time.Duration) {
	fmt.Fprintf(lp.w, "[%d/%d] %s started\n", i+1, lp.n, scenarioName(sc))
}

func (lp linesProgress) skipped(i int) { fmt.Fprintf(lp.w, "[%d/%d] skipped\n", i+1, lp.n) }

func (lp linesProgress) stopped(i int, why string) {
	fmt.Fprintf(lp.w, "[%d/%d] %s\n", i+1, lp.n, why)
}

func (lp linesProgress) done(i int, res report.Scenario) {
	name := res.Name()
	if res.Label != "" {
		name = res.Label + " (" + name + ")"
	}
	fmt.Fprintf(lp.w, "[%d/%d] %s: %s\n", i+1, lp.n, name, scenarioSummary(res))
}
