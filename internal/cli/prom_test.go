package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lockbench/lockbench/internal/export/exporttest"
	"github.com/lockbench/lockbench/internal/report"
)

// A two-scenario matrix (--retry fixed,backoff) served with
// --metrics-linger: after the run has written its result file, /metrics
// still answers; each scenario has series of its own (scenario="1" and
// "2", the retry label its policy's spec, as in the result file), whose
// counters are the result's counts exactly (no warm-up): operations,
// granted acquires (and the wait histogram's count), attempts, failed
// acquires, holds, errors, every violation kind. The text passes the
// Prometheus linter (client_golang's promlint, the rules of `promtool
// check metrics`) and, when promtool is on PATH, promtool itself. The
// linger says so on stderr, and Ctrl-C ends it with the run's own exit
// status (0). With -q the line is left out.
func TestPrometheusLinger(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	cmd := exec.Command(bin, "run", "--strategy", "atomic", "--driver", "goredis", "--workload", "flash-sale",
		"--retry", "fixed,backoff", "--clients", "4", "--duration", "1s", "--stock", "1000000",
		"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "5m", "--out", out, "--format", "json")
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var mu sync.Mutex
	var errText strings.Builder
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			errText.WriteString(sc.Text() + "\n")
			mu.Unlock()
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() { _ = cmd.Process.Kill() }() // on a failure; after the exit it does nothing
	stderrText := func() string {
		mu.Lock()
		defer mu.Unlock()
		return errText.String()
	}
	// The endpoint's address, then the linger line: the run is done and
	// its result file written.
	addrRe := regexp.MustCompile(`Prometheus metrics on http://(127\.0\.0\.1:\d+)/metrics`)
	var addr string
	lingering := false
	timeout := time.After(3 * time.Minute)
	for !lingering {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("lockbench exited before lingering:\n%s", stderrText())
			}
			if m := addrRe.FindStringSubmatch(l); m != nil && addr == "" {
				addr = m[1]
			}
			lingering = strings.Contains(l, "--metrics-linger") && strings.Contains(l, "Ctrl-C ends it")
		case <-timeout:
			t.Fatalf("no linger line within 3 min:\n%s", stderrText())
		}
	}
	if addr == "" {
		t.Fatalf("no \"Prometheus metrics on\" line:\n%s", stderrText())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("lingering before the result file is written: %v", err)
	}
	var run report.Run
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(run.Scenarios))
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("/metrics after the run: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}

	// Lint: promlint is what `promtool check metrics` runs.
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = bytes.NewReader(body)
		if msg, err := c.CombinedOutput(); err != nil || len(bytes.TrimSpace(msg)) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, msg)
		}
	} else {
		t.Log("promtool not on PATH: promlint only (.ci/run unpacks it from the prometheus package)")
	}

	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Collect(maps.Values(families))
	series := func(name string, want map[string]string) []*dto.Metric { return exporttest.Matching(all, name, want) }
	if ops := series("redis_lock_operations_total", nil); len(ops) != 2 {
		t.Fatalf("%d series of redis_lock_operations_total, want one per scenario (2):\n%s", len(ops), body)
	}
	retries := map[string]bool{}
	for i, sc := range run.Scenarios {
		retries[sc.Retry] = true
		lv := map[string]string{"strategy": sc.Strategy, "driver": sc.Driver, "workload": sc.Workload,
			"retry": sc.Retry, "clients": strconv.Itoa(sc.Clients), "scenario": strconv.Itoa(i + 1)}
		value := func(name string, extra ...string) float64 {
			t.Helper()
			want := map[string]string{}
			for k, v := range lv {
				want[k] = v
			}
			for j := 0; j+1 < len(extra); j += 2 {
				want[extra[j]] = extra[j+1]
			}
			ms := series(name, want)
			if len(ms) != 1 {
				t.Fatalf("scenario %d: %d series of %s%v, want 1", i+1, len(ms), name, want)
			}
			if h := ms[0].GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return ms[0].GetCounter().GetValue()
		}
		var failed int64
		if sc.AcquireFailedMS != nil {
			failed = sc.AcquireFailedMS.Count
		}
		for _, c := range []struct {
			name string
			want int64
		}{
			{"redis_lock_operations_total", sc.Ops},
			{"redis_lock_acquired_total", sc.AcquireMS.Count},
			{"redis_lock_wait_duration_seconds", sc.AcquireMS.Count},
			{"redis_lock_hold_duration_seconds", sc.HoldMS.Count},
			{"redis_lock_attempts_total", sc.Counters.Attempts},
			{"redis_lock_failed_total", failed},
		} {
			if got := value(c.name); got != float64(c.want) {
				t.Errorf("scenario %d (%s): %s %v, result %d", i+1, sc.Retry, c.name, got, c.want)
			}
		}
		if sc.Ops == 0 {
			t.Errorf("scenario %d: no operations", i+1)
		}
		var errs float64
		for _, m := range series("redis_lock_errors_total", lv) {
			errs += m.GetCounter().GetValue()
		}
		if errs != float64(sc.Counters.Errors) {
			t.Errorf("scenario %d: redis_lock_errors_total %v, result errors %d", i+1, errs, sc.Counters.Errors)
		}
		for _, k := range report.ViolationKinds {
			if got, want := value("redis_lock_violations_total", "kind", k.Key), k.Of(sc.Violations); got != float64(want) {
				t.Errorf("scenario %d: redis_lock_violations_total{kind=%q} %v, result %d", i+1, k.Key, got, want)
			}
		}
	}
	if len(retries) != 2 {
		t.Errorf("retry labels %v, want two policies", retries)
	}

	// Ctrl-C ends the linger; the exit is the run's (0).
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines { // drain until stderr closes
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after Ctrl-C in the linger: %v, want exit 0\n%s", err, stderrText())
		}
	case <-time.After(time.Minute):
		t.Fatalf("Ctrl-C did not end the linger within 1 min:\n%s", stderrText())
	}
	if s := stderrText(); strings.Contains(s, "finishing the current operations") {
		t.Errorf("Ctrl-C in the linger was taken for a stop of the run:\n%s", s)
	}

	// -q: no linger line.
	q := lockbench(t, "run", "--strategy", "atomic", "--driver", "goredis", "--clients", "1", "--duration", "200ms",
		"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "1ms", "-q", "--out", filepath.Join(dir, "q.json"))
	if q.code != 0 || strings.Contains(q.stderr, "--metrics-linger") {
		t.Errorf("-q: exit %d, stderr:\n%s\nwant 0 and no linger line", q.code, q.stderr)
	}
}
