package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sec is a section given on the server's clock, for process p.
type sec struct {
	key        string
	start, end int64
	client     int32
	shared     bool
}

// part builds a process's history whose server-clock sections are ss,
// with offset off (server = local + off) and uncertainty unc, on host.
func part(proc, host string, off, unc int64, ss ...sec) Part {
	s := &Scenario{Key: "k", Name: "n", OffsetNS: off, UncertaintyNS: unc, Measured: true}
	for _, x := range ss {
		s.Entries = append(s.Entries, Entry{Key: x.key, Enter: x.start - off, Leave: x.end - off, Client: x.client, Shared: x.shared})
	}
	s.sort()
	return Part{Header: Header{Format: Format, Version: Version, Host: host, BootID: "boot-" + host, Proc: proc, MonoBaseNS: off}, Scenarios: []*Scenario{s}}
}

// The hand-built pair of processes: A (uncertainty 100 ns) and B (50 ns).
func handBuilt(hostA, hostB string) []Part {
	a := part("A", hostA, 0, 100,
		sec{key: "k", start: 0, end: 1000},
		sec{key: "k", start: 2000, end: 3000},
		sec{key: "k", start: 5000, end: 6000, shared: true},
		sec{key: "k2", start: 7000, end: 8000},
		sec{key: "k", start: 10000, end: 11000, client: 0},
		sec{key: "k", start: 10500, end: 12000, client: 1}, // overlaps A's own section: not counted
	)
	b := part("B", hostB, 1000, 50,
		sec{key: "k", start: 900, end: 1500},                // 100 ns over A's first: possible (<= 150)
		sec{key: "k", start: 2200, end: 2800},               // 600 ns inside A's second: certain
		sec{key: "k", start: 3000, end: 3100},               // touches A's second: not counted
		sec{key: "k", start: 5500, end: 5800, shared: true}, // both shared: not counted
		sec{key: "k", start: 7100, end: 7200},               // A held k2, not k
		sec{key: "k", start: 10900, end: 11500},             // 100 ns over A's client 0 (possible), 600 over client 1 (certain)
	)
	return []Part{a, b}
}

func TestCountCertainPossible(t *testing.T) {
	c, err := Count(handBuilt("ha", "hb"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Certain != 2 || c.Possible != 2 || c.SameClock || c.Hosts != 2 || c.Processes != 2 || c.MaxUncertainty != 100 {
		t.Fatalf("counts %+v, want 2 certain, 2 possible on 2 hosts", c)
	}
	if got, want := c.Text(), "2 histories on 2 hosts: offset uncertainty up to 0.00 ms"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
}

// On one host the entries are compared on CLOCK_MONOTONIC (MonoBaseNS,
// here equal to the offsets), with no uncertainty: every overlap is
// certain, and the Redis offsets are not used.
func TestCountSameHostExact(t *testing.T) {
	ps := handBuilt("h", "h")
	for _, p := range ps {
		p.Scenarios[0].OffsetNS, p.Scenarios[0].Measured = 123456789, false
	}
	c, err := Count(ps)
	if err != nil {
		t.Fatal(err)
	}
	if c.Certain != 4 || c.Possible != 0 || !c.SameClock || c.MaxUncertainty != 0 {
		t.Fatalf("counts %+v, want 4 certain, 0 possible", c)
	}
	if got, want := c.Text(), "2 histories, same host: exact"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
}

// One process's sections never count, however they overlap; two files
// of one process (one Proc) are one process.
func TestCountSameProcess(t *testing.T) {
	a := part("A", "ha", 0, 0, sec{key: "k", start: 0, end: 1000}, sec{key: "k", start: 10, end: 900, client: 1})
	a2 := part("A", "hb", 0, 0, sec{key: "k", start: 500, end: 1500})
	c, err := Count([]Part{a, a2})
	if err != nil {
		t.Fatal(err)
	}
	if c.Certain != 0 || c.Possible != 0 || c.Processes != 1 {
		t.Fatalf("counts %+v, want none", c)
	}
}

func TestCountNeedsOffsetAcrossHosts(t *testing.T) {
	ps := handBuilt("ha", "hb")
	ps[1].Scenarios[0].Measured = false
	if _, err := Count(ps); err == nil || !strings.Contains(err.Error(), "no clock offset") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Count(nil); err == nil {
		t.Fatal("no parts counted")
	}
}

func TestFileRoundTrip(t *testing.T) {
	ps := handBuilt("ha", "hb")
	f := &File{Header: ps[0].Header, Scenarios: []*Scenario{ps[0].Scenarios[0], ps[1].Scenarios[0]}}
	f.Scenarios[1].Key = "other"
	f.Scenarios[0].Entries[0].Token, f.Scenarios[0].Entries[0].Fence = TokenHash("tok"), 42
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	g, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Header, f.Header) || len(g.Scenarios) != 2 {
		t.Fatalf("read back %+v", g)
	}
	for i, s := range g.Scenarios {
		w := f.Scenarios[i]
		if !reflect.DeepEqual(s.Entries, w.Entries) || s.Key != w.Key || s.OffsetNS != w.OffsetNS || s.UncertaintyNS != w.UncertaintyNS || !s.Measured {
			t.Fatalf("scenario %d read back %+v\nwant %+v", i, s, w)
		}
	}
	if len(g.Scenario("k")) != 1 || g.Scenario("k")[0].Entries[0].Fence != 42 {
		t.Fatal("Scenario(k)")
	}
	// Damaged files are refused.
	var c bytes.Buffer
	_ = f.Write(&c)
	for name, data := range map[string][]byte{"not gzip": []byte("{}"), "truncated": c.Bytes()[:c.Len()/2]} {
		if _, err := Read(bytes.NewReader(data)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// The Writer rewrites its file at each Add, whole, and leaves no
// temporary file; a nil Buf records nothing.
func TestWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "h.history.jsonl.gz")
	w := NewWriter(path, Header{RunID: "r1", Segment: 2, Segments: 3})
	if h := w.Header(); h.Pid != os.Getpid() || h.Proc == "" || h.Format != Format || h.Segment != 2 {
		t.Fatalf("header %+v", h)
	}
	var nb *Buf
	nb.Add("k", "t", 0, 1, 2, false)
	for n := 1; n <= 2; n++ {
		r := NewRecorder(2)
		r.Worker(1).Add("lock", "tok", 7, 30*time.Nanosecond, 40*time.Nanosecond, false)
		r.Worker(0).Add("lock", "tok0", 0, 10*time.Nanosecond, 20*time.Nanosecond, true)
		if r.Worker(2) != nil || (*Recorder)(nil).Worker(0) != nil {
			t.Fatal("Worker out of range")
		}
		s := r.Finish("key"+string(rune('0'+n)), "name", n, Offset{Offset: 5, Uncertainty: 3, RTT: 6, Measured: true})
		if err := w.Add(s); err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Scenarios) != n || f.Header.RunID != "r1" {
			t.Fatalf("after %d adds: %d scenarios", n, len(f.Scenarios))
		}
		e := f.Scenarios[n-1].Entries
		want := []Entry{{Key: "lock", Enter: 10, Leave: 20, Token: TokenHash("tok0"), Client: 0, Shared: true},
			{Key: "lock", Enter: 30, Leave: 40, Token: TokenHash("tok"), Fence: 7, Client: 1}}
		if !reflect.DeepEqual(e, want) || f.Scenarios[n-1].OffsetNS != 5 {
			t.Fatalf("entries %+v, want %+v", e, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "sub", ".lockbench-*"))
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestCombine(t *testing.T) {
	a := Offset{Offset: 100, Uncertainty: 10, RTT: 20, Measured: true}
	b := Offset{Offset: 140, Uncertainty: 5, RTT: 10, Measured: true}
	if got, want := Combine(a, b), (Offset{Offset: 120, Uncertainty: 30, RTT: 10, Measured: true}); got != want {
		t.Fatalf("Combine = %+v, want %+v", got, want)
	}
	if Combine(Offset{}, b) != b || Combine(a, Offset{}) != a {
		t.Fatal("a failed measurement not left out")
	}
}

// BenchmarkBufAdd is the hot path's cost of a kept history: one section
// appended (token hashed) per op.
func BenchmarkBufAdd(b *testing.B) {
	r := NewRecorder(1)
	w := r.Worker(0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Add("lockbench:run:1:lock:42", "c2a1f0e9b8d7c6a5b4c3d2e1f0a9b8c7", 0, time.Duration(i), time.Duration(i+1), false)
	}
}

// A buffer past one chunk keeps every section, in order of Enter.
func TestRecorderChunks(t *testing.T) {
	r := NewRecorder(2)
	const n = 2*chunk + 7
	for i := 0; i < n; i++ {
		r.Worker(i%2).Add("k", "t", 0, time.Duration(i), time.Duration(i+1), false)
	}
	s := r.Finish("key", "", 0, Offset{})
	if len(s.Entries) != n {
		t.Fatalf("%d entries, want %d", len(s.Entries), n)
	}
	for i, e := range s.Entries {
		if e.Enter != int64(i) || e.Client != int32(i%2) {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
}
