package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/report"
)

// A short run with --interval (here from a scenario file) has a timeline
// of that interval whose entries with operations carry the operation's
// and the acquire's p50/p99/max, records params.interval_s, and writes a
// .hlog beside the result that hdrhistogram-go's reader reads back as one
// operation and one acquire histogram per timeline entry, holding exactly
// the run's operations and acquires.
func TestTimelineLatencyAndHLOG(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte("interval: 200ms\nworkload: lock-cycle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.json")
	r := lockbench(t, "run", "-q", "-f", file, "--strategy", "atomic", "--driver", "rueidis", "--clients", "2",
		"--retry", "fixed:interval=1ms", "--duration", "1100ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	doc := readDoc(t, out)
	sc := doc["scenarios"].([]any)[0].(map[string]any)
	if p := sc["params"].(map[string]any)["interval_s"]; p != "0.2" {
		t.Fatalf("params.interval_s = %v, want 0.2", p)
	}
	tl := sc["timeline"].([]any)
	if len(tl) < 5 {
		t.Fatalf("%d timeline entries for 1.1 s at 200 ms, want 5 or 6", len(tl))
	}
	for i, e := range tl {
		e := e.(map[string]any)
		if e["ops"].(float64) == 0 {
			continue
		}
		hasKeys(t, "timeline entry", e, "op_p50_ms", "op_p99_ms", "op_max_ms", "acquire_p50_ms", "acquire_p99_ms", "acquire_max_ms")
		if e["op_p99_ms"].(float64) < e["op_p50_ms"].(float64) || e["op_max_ms"].(float64) < e["op_p99_ms"].(float64) {
			t.Errorf("entry %d: op p50 %v, p99 %v, max %v out of order", i, e["op_p50_ms"], e["op_p99_ms"], e["op_max_ms"])
		}
	}

	run, err := report.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Scenarios[0]
	f, err := os.Open(filepath.Join(dir, "t-1-atomic-rueidis-lock-cycle.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := hdrhistogram.NewHistogramLogReader(f)
	tag := report.HLOGTag(s)
	if tag != "atomic/rueidis/lock-cycle/fixed:interval=1ms/2" {
		t.Fatalf("tag %q", tag)
	}
	count := map[string]int{}
	total := map[string]int64{}
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		count[h.Tag()]++
		total[h.Tag()] += h.TotalCount()
	}
	if count[tag] != len(tl) || count[tag+"/acquire"] != len(tl) || len(count) != 2 {
		t.Fatalf("intervals read per tag %v, want %d of %s and of its /acquire", count, len(tl), tag)
	}
	if total[tag] != s.Ops || total[tag+"/acquire"] != s.AcquireMS.Count {
		t.Fatalf("values read %v, want %d operations and %d acquires", total, s.Ops, s.AcquireMS.Count)
	}
}

// --interval below 100 ms, or not a duration, is a usage error (exit 2)
// of run and of sweep, which share run's flags, and of a scenario file.
func TestIntervalUsageErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("interval: 10ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--interval", "50ms"}, "--interval must be from 100ms to 24h, got 50ms"},
		{[]string{"run", "--interval", "0s"}, "--interval must be from 100ms to 24h, got 0s"},
		{[]string{"run", "--interval", "soon"}, `invalid argument "soon" for "--interval"`},
		{[]string{"sweep", "--interval", "99ms"}, "--interval must be from 100ms to 24h, got 99ms"},
		{[]string{"run", "-f", file}, "--interval must be from 100ms to 24h, got 10ms"},
	} {
		r := lockbench(t, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("lockbench %v: exit %d, want 2 with %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
}
