package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/lockbench/lockbench/internal/metrics"
)

// DefaultMaxInput is the largest result file ReadFile reads: 512 MiB (a
// result of a long sweep with timelines is a few MiB).
const DefaultMaxInput int64 = 512 << 20

// ErrBadInput is wrapped by ReadFileMax's and Validate's errors: the file
// is not one lockbench can read (not a regular file, too large, not a
// result file of this schema, or figures a result cannot hold).
var ErrBadInput = errors.New("bad input")

// ErrTooLarge is ReadBounded's error for a file over its limit; it wraps
// ErrBadInput.
var ErrTooLarge = fmt.Errorf("%w", ErrBadInput)

// ReadFileMax decodes the result file at path, as ReadFile, reading at
// most max bytes: a path that is not a regular file (a directory, a FIFO,
// a device such as /dev/zero) or a file larger than max is refused before
// it is read, naming the path and the limit. A FIFO is opened without
// blocking, so no reader waits for a writer.
func ReadFileMax(path string, max int64) (*Run, error) {
	b, err := ReadBounded(path, max)
	if err != nil {
		return nil, err
	}
	return decode(path, b)
}

// ReadBounded reads the file at path, at most max bytes (0:
// DefaultMaxInput): a path that is not a regular file, or one larger than
// max, is refused (ErrBadInput) without blocking or reading it whole.
func ReadBounded(path string, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxInput
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi, max); err != nil {
		return nil, err
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi, err = fh.Stat(); err != nil { // the file opened, not a swapped path
		return nil, err
	}
	if err := regular(path, fi, max); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > max { // grew while read
		return nil, fmt.Errorf("%w: %s: larger than the input limit of %s", ErrTooLarge, path, FormatSize(max))
	}
	return b, nil
}

// regular refuses what is not a regular file of at most max bytes.
func regular(path string, fi os.FileInfo, max int64) error {
	switch m := fi.Mode(); {
	case m.IsDir():
		return fmt.Errorf("%w: %s is a directory, not a result file", ErrBadInput, path)
	case !m.IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (%s), not a result file", ErrBadInput, path, fileKind(m))
	case fi.Size() > max:
		return fmt.Errorf("%w: %s: %s, over the input limit of %s", ErrTooLarge, path, FormatSize(fi.Size()), FormatSize(max))
	}
	return nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	default:
		return m.Type().String()
	}
}

// decode decodes a result file's bytes and checks its schema version.
func decode(path string, b []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema == 0 {
		return nil, fmt.Errorf("%s: not a lockbench result file (no \"schema\" field)", path)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %d, this lockbench reads %d", path, r.Schema, Schema)
	}
	return &r, nil
}

// ParseSize reads a byte count: a number with an optional unit B, KiB,
// MiB, GiB (or K, M, G, the same powers of 1024), like 512MiB. It must be
// positive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: want a positive number of bytes, optionally with KiB, MiB or GiB, like 512MiB", s)
	}
	return n * mult, nil
}

// FormatSize writes n bytes as ParseSize reads them: 512MiB, 1000B.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Validate checks what the result schema means but its types cannot say,
// for a file read back (show, compare, merge, report): no count is
// negative (ops, clients, every counter and violation count, every
// latency's count, the dropped and offered operations), every measured
// latency's percentiles do not decrease (p50 <= p90 <= p99 <= p99.9 <=
// max), and ops equal the operation histogram's count where both are
// given (latency_ms.count, and raw.hists' op histogram). Errors wrap
// ErrBadInput and name the field as a JSON path:
// scenarios[0].violations.overlap: -3 is negative.
func Validate(r *Run) error {
	for i := range r.Scenarios {
		if err := validateScenario(&r.Scenarios[i]); err != nil {
			return fmt.Errorf("%w: scenarios[%d].%v", ErrBadInput, i, err)
		}
	}
	return nil
}

func validateScenario(s *Scenario) error {
	for _, f := range []struct {
		name string
		n    int64
	}{{"ops", s.Ops}, {"clients", int64(s.Clients)}, {"offered", s.Offered}, {"dropped", s.Dropped}, {"undecided", s.Undecided}, {"slow_releases", s.SlowReleases}} {
		if f.n < 0 {
			return fmt.Errorf("%s: %d is negative", f.name, f.n)
		}
	}
	if err := nonNegative("counters", reflect.ValueOf(s.Counters)); err != nil {
		return err
	}
	for k, n := range s.Counters.ErrorsByKind {
		if n < 0 {
			return fmt.Errorf("counters.errors_by_kind.%s: %d is negative", k, n)
		}
	}
	if err := nonNegative("violations", reflect.ValueOf(s.Violations)); err != nil {
		return err
	}
	lats := []struct {
		name string
		l    *metrics.Latency
	}{{"latency_ms", &s.LatencyMS}, {"acquire_ms", &s.AcquireMS}, {"release_ms", &s.ReleaseMS}, {"hold_ms", &s.HoldMS}, {"service_ms", s.ServiceMS}, {"acquire_failed_ms", s.AcquireFailedMS}}
	for _, x := range lats {
		if x.l == nil {
			continue
		}
		if err := validateLatency(x.l); err != nil {
			return fmt.Errorf("%s.%v", x.name, err)
		}
	}
	if s.LatencyMS.Count > 0 && s.Ops != s.LatencyMS.Count {
		return fmt.Errorf("ops: %d, but latency_ms.count is %d (one latency per operation)", s.Ops, s.LatencyMS.Count)
	}
	if s.Raw != nil {
		h, err := s.Raw.Hist(HistOp)
		if err != nil {
			return fmt.Errorf("raw.hists.%s: %v", HistOp, err)
		}
		if h != nil && h.TotalCount() != s.Ops {
			return fmt.Errorf("ops: %d, but raw.hists.%s holds %d values (one per operation)", s.Ops, HistOp, h.TotalCount())
		}
	}
	return nil
}

// nonNegative checks that no int64 (or *int64) field of the struct v is
// negative, naming it by its JSON key under prefix.
func nonNegative(prefix string, v reflect.Value) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if key == "" || key == "-" {
			continue
		}
		var n int64
		switch {
		case f.Kind() == reflect.Int64:
			n = f.Int()
		case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Int64:
			n = f.Elem().Int()
		default:
			continue
		}
		if n < 0 {
			return fmt.Errorf("%s.%s: %d is negative", prefix, key, n)
		}
	}
	return nil
}

// validateLatency: a count that is not negative, no negative figure, and
// percentiles that do not decrease (the first one above a higher
// percentile is named, with the highest it exceeds).
func validateLatency(l *metrics.Latency) error {
	if l.Count < 0 {
		return fmt.Errorf("count: %d is negative", l.Count)
	}
	ps := []struct {
		name string
		v    float64
	}{{"p50", l.P50}, {"p90", l.P90}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}}
	for _, p := range ps {
		if p.v < 0 {
			return fmt.Errorf("%s: %g is negative", p.name, p.v)
		}
	}
	for i := range ps {
		for j := len(ps) - 1; j > i; j-- { // the highest percentile below it
			if ps[i].v > ps[j].v {
				return fmt.Errorf("%s: %g is above %s %g (percentiles cannot decrease)", ps[i].name, ps[i].v, ps[j].name, ps[j].v)
			}
		}
	}
	return nil
}
