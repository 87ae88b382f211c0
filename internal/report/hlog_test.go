package report

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

// A scenario's .hlog round-trips through hdrhistogram-go's own reader: one
// operation histogram (tag strategy/driver/workload/retry/clients) and one
// acquire histogram (the tag + "/acquire") per timeline entry, with the
// entry's interval (s since the scenario's start, warm-up included) and
// exactly the counts and values written; a scenario without interval
// histograms gets no file.
func TestHLOGRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := Scenario{Strategy: "atomic", Driver: "rueidis", Workload: "lock-cycle", Retry: "backoff:base=1ms,max=8ms", Clients: 3,
		Params: map[string]string{"warmup": "500ms"}}
	start := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	iv := &IntervalHists{Start: start, WindowS: 0.5}
	var wantOps, wantAcq int64
	var written []*hdrhistogram.Histogram
	ts := []float64{1, 1.5, 2, 2.6}
	for j, end := range ts {
		op, acq := metrics.NewHistogram(), metrics.NewHistogram()
		n := 100 * j // the first interval empty
		for range n {
			metrics.Record(op, time.Duration(1+rng.IntN(50_000))*time.Microsecond)
			metrics.Record(acq, time.Duration(1+rng.IntN(5_000))*time.Microsecond)
		}
		wantOps += int64(n)
		wantAcq += int64(n)
		written = append(written, op)
		s.Timeline = append(s.Timeline, Second{TS: end, Ops: int64(n)})
		for _, p := range []struct {
			h   *hdrhistogram.Histogram
			dst *[][]byte
		}{{op, &iv.Op}, {acq, &iv.Acquire}} {
			enc, err := p.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			*p.dst = append(*p.dst, enc)
		}
	}
	s.Intervals = iv
	bare := s
	bare.Intervals = nil
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	if err := WriteHLOG(out, &Run{Scenarios: []Scenario{s, bare}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r-2-atomic-rueidis-lock-cycle.hlog")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a scenario without interval histograms got a .hlog (%v)", err)
	}
	f, err := os.Open(filepath.Join(dir, "r-1-atomic-rueidis-lock-cycle.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tag := "atomic/rueidis/lock-cycle/backoff:base=1ms;max=8ms/3"
	if got := HLOGTag(s); got != tag {
		t.Fatalf("tag %q, want %q", got, tag)
	}
	r := hdrhistogram.NewHistogramLogReader(f)
	var ops, acqs int64
	var nOp, nAcq int
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		switch h.Tag() {
		case tag:
			from := 0.5
			if nOp > 0 {
				from = ts[nOp-1]
			}
			// Relative times: the reader adds the StartTime line.
			wantStart, wantEnd := start.UnixMilli()+int64(from*1000), start.UnixMilli()+int64(ts[nOp]*1000)
			if h.StartTimeMs() != wantStart || h.EndTimeMs() != wantEnd {
				t.Fatalf("interval %d: %d..%d ms, want %d..%d", nOp, h.StartTimeMs(), h.EndTimeMs(), wantStart, wantEnd)
			}
			if !h.Equals(withTimes(written[nOp], h)) {
				t.Fatalf("interval %d: histogram read back differs from the one written", nOp)
			}
			ops += h.TotalCount()
			nOp++
		case tag + "/acquire":
			acqs += h.TotalCount()
			nAcq++
		default:
			t.Fatalf("histogram tagged %q", h.Tag())
		}
	}
	if nOp != len(ts) || nAcq != len(ts) || ops != wantOps || acqs != wantAcq {
		t.Fatalf("read %d op intervals (%d values) and %d acquire intervals (%d values), want %d, %d, %d, %d",
			nOp, ops, nAcq, acqs, len(ts), wantOps, len(ts), wantAcq)
	}
	b, _ := os.ReadFile(f.Name())
	for _, w := range []string{"#[Histogram log format version 1.3]", "#[StartTime: ", "values in microseconds"} {
		if !strings.Contains(string(b), w) {
			t.Errorf(".hlog lacks %q:\n%s", w, b)
		}
	}
}

// withTimes is a copy of h with o's tag and times, for Equals.
func withTimes(h, o *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	c := hdrhistogram.Import(h.Export())
	c.SetTag(o.Tag())
	c.SetStartTimeMs(o.StartTimeMs())
	c.SetEndTimeMs(o.EndTimeMs())
	return c
}
