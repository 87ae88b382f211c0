package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/lockbench/lockbench/internal/engine"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies/retry"
)

// drawn refreshes the bars until buf holds want (at most 10 s).
func drawn(t *testing.T, buf *syncBuffer, refresh chan<- any, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			s := buf.String()
			t.Fatalf("the bars never showed %q; drawn last:\n%q", want, s[max(0, len(s)-600):])
		}
		refresh <- time.Now()
		time.Sleep(10 * time.Millisecond)
	}
}

// The renderer, drawing into a buffer: scenario i of n and its name, the
// last second's ops/s, errors (acquire failures included) and overlaps so
// far, then the summary; a bar left unfinished shows "stopped"; a line
// written through it is kept.
func TestProgressRenderer(t *testing.T) {
	buf := &syncBuffer{}
	refresh := make(chan any)
	lp := newLiveProgress(buf, 2, mpb.WithManualRefresh(refresh), mpb.WithWidth(200))
	b := lp.scenario(0, "atomic rueidis flash-sale fixed, 50 clients", 3*time.Second)
	drawn(t, buf, refresh, "[1/2] atomic rueidis flash-sale fixed, 50 clients")
	drawn(t, buf, refresh, "elapsed, starting")
	b.second(report.Second{TS: 1, Ops: 650, Errors: 2, AcquireFailures: 1, Violations: 4})
	drawn(t, buf, refresh, "650 ops/s, errors 3, overlap 4")
	b.second(report.Second{TS: 2, Ops: 701, Errors: 1})
	drawn(t, buf, refresh, "701 ops/s, errors 4, overlap 4")
	b.finish("688 ops/s, overlap 4, oversell 0, lost updates 0 (2.0s, done)")
	drawn(t, buf, refresh, "688 ops/s, overlap 4, oversell 0, lost updates 0 (2.0s, done)")
	if _, err := lp.Write([]byte("lockbench: warning: a line above the bars\n")); err != nil {
		t.Fatal(err)
	}
	lp.scenario(1, "naive goredis flash-sale fixed, 50 clients", time.Second)
	drawn(t, buf, refresh, "[2/2] naive goredis")
	lp.close()
	lp.close() // twice is harmless
	if _, err := lp.Write([]byte("a line after the bars\n")); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"[2/2] naive goredis flash-sale fixed, 50 clients", "stopped", "a line above the bars", "a line after the bars\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("drawing lacks %q:\n%q", want, out)
		}
	}
}

// Not a terminal: no live bars, no cursor movement, no carriage return;
// with --format json stdout is exactly the JSON document; with -q stderr
// has no progress line either.
func TestNoProgressWithoutTerminal(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	out := filepath.Join(t.TempDir(), "r.json")
	args := []string{"run", "--strategy", "atomic", "--driver", "rueidis", "--clients", "4", "--stock", "1000000",
		"--duration", "1500ms", "--work", "0", "--out", out, "--format", "json"}
	r := lockbench(t, args...)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var run report.Run
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%q", err, r.stdout)
	}
	if len(run.Scenarios) != 1 || len(run.Scenarios[0].Timeline) == 0 {
		t.Fatalf("stdout's run has %d scenarios, timeline %v", len(run.Scenarios), run.Scenarios[0].Timeline)
	}
	for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if strings.ContainsAny(s, "\x1b\r") || strings.Contains(s, "elapsed") {
			t.Errorf("%s has live-progress bytes:\n%q", name, s)
		}
	}
	// The plain line stays on stderr (logs of CI runs keep it).
	if !strings.Contains(r.stderr, "[1/1] atomic rueidis flash-sale fixed, 4 clients ...") {
		t.Errorf("stderr lacks the plain progress line:\n%s", r.stderr)
	}
	r = lockbench(t, append(args, "-q", "--force")...)
	if r.code != 0 || strings.Contains(r.stderr, "[1/1]") {
		t.Fatalf("-q: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// On a terminal (script(1) gives the run a pseudo-terminal), the live bar
// is drawn on stderr with the scenario's live figures, then the table.
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel() // lockbench processes with servers of their own
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed; the renderer is tested by TestProgressRenderer")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	cmdline := "stty cols 200 rows 40; " + bin + " run --strategy atomic --driver rueidis --clients 4 --stock 1000000 --duration 2500ms --work 0 --ttl 10s --out " + out
	c := exec.Command(script, "-qec", cmdline, "/dev/null")
	var tty bytes.Buffer
	c.Stdout, c.Stderr = &tty, &tty
	if err := c.Run(); err != nil {
		t.Fatalf("%v under script: %v\n%q", cmdline, err, tty.String())
	}
	s := tty.String()
	for _, want := range []string{"[1/1] atomic rueidis flash-sale fixed, 4 clients", "elapsed", "ops/s, errors 0, overlap 0", "(2.5s, duration)", "│ atomic"} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, s)
		}
	}
	if strings.Contains(s, "clients ...") {
		t.Error("the plain progress line was printed beside the live bar")
	}
}

// Plain lines: "[i/n] name ..." completed by the summary or the word for
// how the scenario ended; quiet prints nothing but warnings.
func TestPlainAndQuietProgress(t *testing.T) {
	var buf bytes.Buffer
	sc := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "goredis", Workload: "flash-sale", Retry: &retry.Policy{Name: "fixed"}, Clients: 50}}
	res := report.Scenario{OpsPerSec: 687.6, DurationS: 2, StopReason: "done", Violations: report.Violations{Overlap: 4}}
	pp := newProgress(&buf, &buf, false, 3)
	pp.start(0, &sc, time.Second)
	pp.done(0, res)
	pp.start(1, &sc, time.Second)
	pp.skipped(1)
	pp.start(2, &sc, time.Second)
	pp.stopped(2, "failed")
	fmt.Fprintln(pp, "lockbench: warning: w")
	pp.close()
	want := "[1/3] atomic goredis flash-sale fixed, 50 clients ... 688 ops/s, overlap 4, oversell 0, lost updates 0 (2.0s, done)\n" +
		"[2/3] atomic goredis flash-sale fixed, 50 clients ... skipped\n" +
		"[3/3] atomic goredis flash-sale fixed, 50 clients ... failed\n" +
		"lockbench: warning: w\n"
	if buf.String() != want {
		t.Errorf("plain progress:\n%q\nwant\n%q", buf.String(), want)
	}
	buf.Reset()
	qp := newProgress(&buf, &buf, true, 3)
	qp.start(0, &sc, time.Second)
	qp.done(0, res)
	qp.stopped(0, "interrupted")
	fmt.Fprintln(qp, "lockbench: warning: w")
	qp.close()
	if want := "lockbench: warning: w\n"; buf.String() != want {
		t.Errorf("quiet progress: %q, want %q", buf.String(), want)
	}
}

// Scenarios run at once (concurrent: true): each ends on its own bar,
// whichever started last; the plain lines name each scenario as it ends.
func TestProgressTogether(t *testing.T) {
	buf := &syncBuffer{}
	refresh := make(chan any)
	lp := newLiveProgress(buf, 2, mpb.WithManualRefresh(refresh), mpb.WithWidth(200))
	a := engine.Scenario{Spec: engine.Spec{Strategy: "atomic", Driver: "rueidis", Workload: "flash-sale", Retry: retry.Library(), Clients: 5}}
	b := a
	b.Strategy, b.Workload = "fencing", "hot-key"
	lp.start(0, &a, time.Second)
	lp.start(1, &b, time.Second)
	if lp.current(0) == lp.current(1) || lp.current(1) != lp.cur {
		t.Fatal("the scenarios share a bar")
	}
	lp.close()

	var w strings.Builder
	pp := linesProgress{plainProgress{w: &w, n: 2}}
	pp.start(0, &a, time.Second)
	pp.start(1, &b, time.Second)
	pp.done(1, report.Scenario{Label: "reports", Strategy: "fencing", Driver: "rueidis", Workload: "hot-key", Retry: "fixed"})
	if got := w.String(); !strings.Contains(got, "[1/2] atomic rueidis flash-sale") || !strings.Contains(got, "started\n[2/2] fencing") ||
		!strings.Contains(got, "[2/2] reports (fencing/rueidis/hot-key/fixed): ") {
		t.Errorf("plain lines:\n%s", got)
	}
}
