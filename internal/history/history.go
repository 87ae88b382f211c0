// Package history records one lockbench process's critical sections (a
// history) and checks the histories of several processes that ran the
// same scenario against the same Redis for sections that overlapped on
// the same lock: the cross-process safety oracle (docs/distributed.md,
// "The cross-process oracle"). The in-process oracle (metrics.Oracle)
// sees only the clients of its own process; a lock that lets two
// processes in at once is only visible here.
//
// # Recording
//
// The engine gives each worker a *Buf (Recorder.Worker) and the worker
// appends one Entry per critical section (Buf.Add) to it: a slice append
// into memory only that worker touches, no lock, no clock read of its
// own (the section's times are the ones the worker already took), no
// copy as it grows (chunks of 4096 sections, about 56 bytes each). A nil
// *Buf records nothing: with no history kept the cost is one nil check.
// At the scenario's end Recorder.Finish gathers the buffers into a
// Scenario, and Writer.Add appends it to the process's history file,
// which it rewrites atomically (temporary file + rename).
//
// # Times
//
// An entry's Enter is when the acquire returned the lock (the worker's
// clock read that ends the acquire) and its Leave when the worker left
// the critical section, before it sent the release. For a lock that is
// safe, one holder's Leave therefore precedes the release it then sends,
// which the server applies before it grants the next holder, whose Enter
// comes after that reply: the recorded intervals of a safe lock never
// overlap, even with a perfect clock; any overlap is a real one (up to
// the clocks' uncertainty).
//
// Times are ns on the process's monotonic clock (metrics.Now: since the
// process's first clock read). The header ties that clock to the host's
// CLOCK_MONOTONIC (MonoBaseNS), which every process of one kernel shares;
// each scenario ties it to the Redis server's clock (OffsetNS, measured
// with TIME round trips, see MeasureOffset).
//
// # File format
//
// A history file is gzip'd JSON lines (RFC 1952 members, one per
// scenario after one for the header; gzip readers read them as one
// stream). Line 1 is the Header object ("format": "lockbench-history",
// "version": 1). Each scenario is a Scenario object (its "scenario" field
// is the result's scenario key, report.Scenario.Key) followed by its
// "sections" entries, one JSON array per line:
//
//	[lock, client, enter_ns, leave_ns, token, fence, shared]
//
// lock is an index into the scenario's "locks" (the Redis keys), client
// the worker's id in this process, enter_ns and leave_ns the process
// clock, token the FNV-1a 64-bit hash of the lease's Token() (decimal),
// fence the lease's fencing token (strategies.Fenced; 0 without one),
// shared 1 for a read-side (shared) section of a read-write lock, else 0.
// Every entry of a file belongs to the header's segment.
package history

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/internal/atomicfile"
)

// Format and Version name the file format in its header.
const (
	Format  = "lockbench-history"
	Version = 1
)

// Header describes the process that wrote a history file.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	RunID   string `json:"run_id"`
	// Segment and Segments are the process's execution segment i/N
	// (1-based; 0/0 when the run was not segmented).
	Segment  int `json:"segment"`
	Segments int `json:"segments"`
	// Host is the host name; BootID the kernel's boot id
	// (/proc/sys/kernel/random/boot_id, "" where there is none). Files of
	// one host name and boot id share CLOCK_MONOTONIC.
	Host   string `json:"host"`
	BootID string `json:"boot_id"`
	Pid    int    `json:"pid"`
	// Proc is a random id of the writing process (histories with the same
	// Proc are one process's, whatever their other fields say).
	Proc string `json:"proc"`
	// MonoBaseNS is CLOCK_MONOTONIC (ns) at the process clock's 0, and
	// MonoErrNS the error of that link (half the gap between the two
	// process-clock reads around the CLOCK_MONOTONIC read; 0 in files
	// built by hand).
	MonoBaseNS int64 `json:"mono_base_ns"`
	MonoErrNS  int64 `json:"mono_err_ns"`
	// WallBaseNS is the wall clock (Unix ns) at the process clock's 0, for
	// people; the checks do not use it.
	WallBaseNS int64 `json:"wall_base_ns"`
}

// Scenario is one scenario's critical sections in one process.
type Scenario struct {
	// Key is the result's scenario key (report.Scenario.Key): histories of
	// one scenario from several processes are matched by it.
	Key string `json:"scenario"`
	// Name is strategy/driver/workload/retry, for people.
	Name string `json:"name,omitempty"`
	// Number is the scenario's number in the run's plan (from 1).
	Number int `json:"number,omitempty"`
	// OffsetNS is the Redis server's clock minus the process clock (ns):
	// server time = process time + OffsetNS. UncertaintyNS bounds its
	// error (see MeasureOffset); RTTNS is the round trip it came from.
	// All 0 when it could not be measured (Measured false).
	OffsetNS      int64 `json:"offset_ns"`
	UncertaintyNS int64 `json:"uncertainty_ns"`
	RTTNS         int64 `json:"rtt_ns"`
	Measured      bool  `json:"measured"`
	// Locks are the lock keys the entries' lock indexes name.
	Locks []string `json:"locks"`
	// Sections is the number of entry lines that follow.
	Sections int `json:"sections"`
	// Entries are the sections, sorted by Enter.
	Entries []Entry `json:"-"`
}

// Entry is one critical section.
type Entry struct {
	// Key is the lock's Redis key (in a file, Locks[lock]).
	Key string
	// Enter and Leave are process-clock ns (see the package doc).
	Enter, Leave int64
	// Token is the FNV-1a 64-bit hash of the lease's Token().
	Token uint64
	// Fence is the lease's fencing token (strategies.Fenced), 0 without.
	Fence int64
	// Client is the worker's id within its process.
	Client int32
	// Shared is true for a read-side section of a read-write lock.
	Shared bool
}

// TokenHash is the FNV-1a 64-bit hash of a lease token, as entries store
// it.
func TokenHash(token string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(token); i++ {
		h ^= uint64(token[i])
		h *= 1099511628211
	}
	return h
}

// Buf is one worker's sections. Only its worker may call Add; a nil *Buf
// records nothing.
type Buf struct {
	client int32
	// full are filled chunks, cur the one being filled: sections are
	// never copied as the buffer grows.
	full [][]Entry
	cur  []Entry
}

// chunk is the number of sections per allocation of a Buf (224 KiB).
const chunk = 4096

// Add records a section of lock key, held with token (hashed here) and
// fence, from enter to leave (metrics.Now values). No-op on a nil Buf.
func (b *Buf) Add(key, token string, fence int64, enter, leave time.Duration, shared bool) {
	if b == nil {
		return
	}
	if len(b.cur) == cap(b.cur) {
		if b.cur != nil {
			b.full = append(b.full, b.cur)
		}
		b.cur = make([]Entry, 0, chunk)
	}
	b.cur = append(b.cur, Entry{Key: key, Enter: int64(enter), Leave: int64(leave),
		Token: TokenHash(token), Fence: fence, Client: b.client, Shared: shared})
}

// Recorder collects one scenario's sections in this process, one Buf per
// worker.
type Recorder struct {
	bufs []Buf
}

// NewRecorder returns a Recorder for workers 0..clients-1.
func NewRecorder(clients int) *Recorder {
	r := &Recorder{bufs: make([]Buf, clients)}
	for i := range r.bufs {
		r.bufs[i].client = int32(i)
	}
	return r
}

// Worker returns worker i's Buf; nil on a nil Recorder or for an i out of
// range (nothing is then recorded).
func (r *Recorder) Worker(i int) *Buf {
	if r == nil || i < 0 || i >= len(r.bufs) {
		return nil
	}
	return &r.bufs[i]
}

// Finish gathers the workers' sections (once every worker has stopped)
// into a Scenario with the given key, name, number and clock offset.
func (r *Recorder) Finish(key, name string, number int, off Offset) *Scenario {
	s := &Scenario{Key: key, Name: name, Number: number}
	s.setOffset(off)
	n := 0
	for i := range r.bufs {
		b := &r.bufs[i]
		n += len(b.cur)
		for _, c := range b.full {
			n += len(c)
		}
	}
	s.Entries = make([]Entry, 0, n)
	for i := range r.bufs {
		b := &r.bufs[i]
		for _, c := range b.full {
			s.Entries = append(s.Entries, c...)
		}
		s.Entries = append(s.Entries, b.cur...)
		b.full, b.cur = nil, nil
	}
	s.sort()
	return s
}

func (s *Scenario) setOffset(off Offset) {
	s.OffsetNS, s.UncertaintyNS, s.RTTNS, s.Measured = int64(off.Offset), int64(off.Uncertainty), int64(off.RTT), off.Measured
}

func (s *Scenario) sort() {
	sort.SliceStable(s.Entries, func(i, j int) bool { return s.Entries[i].Enter < s.Entries[j].Enter })
}

// Writer writes one process's history file: its header and every
// scenario added so far, rewritten atomically at each Add.
type Writer struct {
	path    string
	mu      sync.Mutex
	head    Header
	members [][]byte // gzip members: the header, then one per scenario
}

// NewWriter returns a Writer of path for the process described by h,
// whose Format, Version, Host, BootID, Pid, Proc and clock bases it fills
// in (LocalHeader). Nothing is written before the first Add.
func NewWriter(path string, h Header) *Writer {
	return &Writer{path: path, head: LocalHeader(h)}
}

// Path is the file the Writer writes.
func (w *Writer) Path() string { return w.path }

// Header is the header the Writer writes.
func (w *Writer) Header() Header { return w.head }

// Add appends s to the file and rewrites it atomically (a temporary file
// in its directory, renamed over it). Safe
// for concurrent use. Errors: the encoding's or the file system's.
func (w *Writer) Add(s *Scenario) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.members == nil {
		m, err := gzipMember(func(bw *bufio.Writer) error { return writeJSONLine(bw, w.head) })
		if err != nil {
			return err
		}
		w.members = append(w.members, m)
	}
	m, err := gzipMember(func(bw *bufio.Writer) error { return writeScenario(bw, s) })
	if err != nil {
		return err
	}
	w.members = append(w.members, m)
	return atomicfile.Write(w.path, func(f io.Writer) error {
		for _, m := range w.members {
			if _, err := f.Write(m); err != nil {
				return err
			}
		}
		return nil
	})
}

// File is a history file read back.
type File struct {
	Header    Header
	Scenarios []*Scenario
}

// Write writes f to out in the file format (one gzip member per line
// group). For tests and tools; a run uses Writer.
func (f *File) Write(out io.Writer) error {
	m, err := gzipMember(func(bw *bufio.Writer) error { return writeJSONLine(bw, f.Header) })
	if err != nil {
		return err
	}
	if _, err := out.Write(m); err != nil {
		return err
	}
	for _, s := range f.Scenarios {
		if m, err = gzipMember(func(bw *bufio.Writer) error { return writeScenario(bw, s) }); err != nil {
			return err
		}
		if _, err := out.Write(m); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes f to path atomically.
func (f *File) WriteFile(path string) error {
	return atomicfile.Write(path, f.Write)
}

// Scenario returns the file's scenarios with key (several when the
// scenario was repeated).
func (f *File) Scenario(key string) []*Scenario {
	var out []*Scenario
	for _, s := range f.Scenarios {
		if s.Key == key {
			out = append(out, s)
		}
	}
	return out
}

func gzipMember(write func(*bufio.Writer) error) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	bw := bufio.NewWriterSize(zw, 64<<10)
	if err := write(bw); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSONLine(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Write(b)
	return w.WriteByte('\n')
}

// writeScenario writes s's line and its entry lines.
func writeScenario(w *bufio.Writer, s *Scenario) error {
	idx := map[string]int{}
	locks := []string{}
	for _, e := range s.Entries {
		if _, ok := idx[e.Key]; !ok {
			idx[e.Key] = len(locks)
			locks = append(locks, e.Key)
		}
	}
	head := *s
	head.Locks, head.Sections = locks, len(s.Entries)
	if err := writeJSONLine(w, head); err != nil {
		return err
	}
	var line []byte
	for _, e := range s.Entries {
		line = append(line[:0], '[')
		line = strconv.AppendInt(line, int64(idx[e.Key]), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(e.Client), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, e.Enter, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, e.Leave, 10)
		line = append(line, ',')
		line = strconv.AppendUint(line, e.Token, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, e.Fence, 10)
		if e.Shared {
			line = append(line, ",1]\n"...)
		} else {
			line = append(line, ",0]\n"...)
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// ErrFormat is wrapped by Read for a file that is not a history file of
// this version, or is damaged.
var ErrFormat = errors.New("not a lockbench history file")

// ReadFile reads the history file at path (see Read); a path that is not
// a regular file is refused (ErrFormat).
func ReadFile(path string) (*File, error) {
	// Not a regular file (a FIFO would block the open, a device never
	// end): refused before it is opened.
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrFormat, path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Read(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Read decodes a history file. Errors wrap ErrFormat for a stream that is
// not gzip, a header of another format or version, a line that does not
// decode, a scenario with fewer entry lines than it announced, or an
// entry whose lock index is out of range.
func Read(r io.Reader) (*File, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 64<<20) // a scenario line lists its lock keys
	f := &File{}
	line := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrFormat, line, fmt.Sprintf(format, a...))
	}
	var cur *Scenario
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			if err := json.Unmarshal(b, &f.Header); err != nil {
				return nil, bad("header: %v", err)
			}
			if f.Header.Format != Format || f.Header.Version != Version {
				return nil, bad("format %q version %d, this lockbench reads %q version %d", f.Header.Format, f.Header.Version, Format, Version)
			}
			continue
		}
		if cur != nil && len(cur.Entries) < cur.Sections {
			e, err := parseEntry(b, cur.Locks)
			if err != nil {
				return nil, bad("%v", err)
			}
			cur.Entries = append(cur.Entries, e)
			continue
		}
		s := &Scenario{}
		if err := json.Unmarshal(b, s); err != nil || s.Key == "" {
			return nil, bad("want a scenario line (%v)", err)
		}
		s.Entries = make([]Entry, 0, s.Sections)
		f.Scenarios = append(f.Scenarios, s)
		cur = s
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%w: empty", ErrFormat)
	}
	if cur != nil && len(cur.Entries) < cur.Sections {
		return nil, fmt.Errorf("%w: scenario %q: %d sections announced, %d found", ErrFormat, cur.Key, cur.Sections, len(cur.Entries))
	}
	return f, nil
}

func parseEntry(b []byte, locks []string) (Entry, error) {
	var a []json.Number
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 7 {
		return Entry{}, fmt.Errorf("want [lock, client, enter_ns, leave_ns, token, fence, shared] (%v)", err)
	}
	var n [7]int64
	var tok uint64
	for i, v := range a {
		var err error
		if i == 4 {
			tok, err = strconv.ParseUint(string(v), 10, 64)
		} else {
			n[i], err = strconv.ParseInt(string(v), 10, 64)
		}
		if err != nil {
			return Entry{}, fmt.Errorf("field %d: %v", i+1, err)
		}
	}
	if n[0] < 0 || n[0] >= int64(len(locks)) {
		return Entry{}, fmt.Errorf("lock index %d out of range (%d locks)", n[0], len(locks))
	}
	return Entry{Key: locks[n[0]], Client: int32(n[1]), Enter: n[2], Leave: n[3], Token: tok, Fence: n[5], Shared: n[6] != 0}, nil
}

// newProc returns a random process id (16 hex digits).
func newProc() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
