package report

import (
	"fmt"
	"io"
	"maps"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/metrics"
)

// BackgroundRaw is the background traffic's raw data (--background): the
// commands the engine sent to the lock's servers besides the lock, open
// loop, on connections of their own, counted over the measured window
// (arrivals due in the warm-up are sent but not counted). It combines
// exactly: counts are summed, histograms merged.
type BackgroundRaw struct {
	// Commands are the counts of each command kind (get, set, incr, hget,
	// hset), by name.
	Commands map[string]BackgroundCounts `json:"commands"`
}

// BackgroundCounts are one background command kind's arrivals in the
// measured window: Offered were decided (Sent to a connection, or
// Dropped because none was free within the drop bound), Undecided were
// due before the stop but neither; every command Sent ended Done or with
// an error (Errors): Sent = Done + Errors, Offered = Sent + Dropped.
type BackgroundCounts struct {
	Offered   int64 `json:"offered"`
	Sent      int64 `json:"sent"`
	Done      int64 `json:"done"`
	Errors    int64 `json:"errors"`
	Dropped   int64 `json:"dropped"`
	Undecided int64 `json:"undecided,omitempty"`
	// Hist is the latency of the commands Done, from their intended start
	// (coordinated omission corrected), an HdrHistogram in µs encoded as
	// Raw.Hists are; absent when none was done.
	Hist string `json:"hist,omitempty"`
	// ErrorSample is the first error's message; absent without errors.
	ErrorSample string `json:"error_sample,omitempty"`
}

// Background is what the background traffic (--background) got from the
// servers over the measured window, derived from Raw.Background by
// Derive: absent without background traffic.
type Background struct {
	// OfferedPerSec and DonePerSec are the commands offered (arrivals
	// decided) and done per second of the window, all kinds together.
	OfferedPerSec float64 `json:"offered_per_s"`
	DonePerSec    float64 `json:"done_per_s"`
	// Offered, Done, Errors and Dropped are the window's counts, all
	// kinds together (BackgroundCounts).
	Offered int64 `json:"offered"`
	Done    int64 `json:"done"`
	Errors  int64 `json:"errors"`
	Dropped int64 `json:"dropped"`
	// LatencyMS is the latency of the commands done, from their intended
	// start, all kinds together; absent when none was done.
	LatencyMS metrics.Latency `json:"latency_ms,omitzero"`
	// Commands are the same figures for each command kind, by name.
	Commands map[string]BackgroundCommand `json:"commands"`
}

// BackgroundCommand is one background command kind's figures.
type BackgroundCommand struct {
	OfferedPerSec float64         `json:"offered_per_s"`
	DonePerSec    float64         `json:"done_per_s"`
	Done          int64           `json:"done"`
	Errors        int64           `json:"errors"`
	Dropped       int64           `json:"dropped"`
	LatencyMS     metrics.Latency `json:"latency_ms,omitzero"`
}

// hist decodes c's histogram; nil when absent.
func (c BackgroundCounts) hist() (*hdrhistogram.Histogram, error) {
	if c.Hist == "" {
		return nil, nil
	}
	return hdrhistogram.Decode([]byte(c.Hist))
}

// deriveBackground is the Background of r over a window of windowS s;
// nil without background data.
func deriveBackground(r *BackgroundRaw, windowS float64) (*Background, error) {
	if r == nil {
		return nil, nil
	}
	per := func(n int64) float64 {
		if windowS <= 0 {
			return 0
		}
		return float64(n) / windowS
	}
	b := &Background{Commands: map[string]BackgroundCommand{}}
	var all *hdrhistogram.Histogram
	for _, name := range slices.Sorted(maps.Keys(r.Commands)) {
		c := r.Commands[name]
		h, err := c.hist()
		if err != nil {
			return nil, fmt.Errorf("raw.background.commands.%s.hist: %w", name, err)
		}
		if h != nil {
			if all == nil {
				all = metrics.NewHistogram()
			}
			all.Merge(h)
		}
		b.Offered += c.Offered
		b.Done += c.Done
		b.Errors += c.Errors
		b.Dropped += c.Dropped
		b.Commands[name] = BackgroundCommand{OfferedPerSec: per(c.Offered), DonePerSec: per(c.Done),
			Done: c.Done, Errors: c.Errors, Dropped: c.Dropped, LatencyMS: metrics.Summarize(h)}
	}
	b.OfferedPerSec, b.DonePerSec = per(b.Offered), per(b.Done)
	b.LatencyMS = metrics.Summarize(all)
	return b, nil
}

// cloneBackground is a deep copy of r (nil for nil).
func cloneBackground(r *BackgroundRaw) *BackgroundRaw {
	if r == nil {
		return nil
	}
	return &BackgroundRaw{Commands: maps.Clone(r.Commands)}
}

// addBackground adds b's counts to a's, command by command, merging the
// histograms (either may be nil: not run there). Errors: a histogram
// that does not decode.
func addBackground(a, b *BackgroundRaw) (*BackgroundRaw, error) {
	if b == nil {
		return a, nil
	}
	if a == nil {
		return cloneBackground(b), nil
	}
	for name, y := range b.Commands {
		x, ok := a.Commands[name]
		if !ok {
			a.Commands[name] = y
			continue
		}
		hx, err := x.hist()
		if err != nil {
			return nil, fmt.Errorf("raw.background.commands.%s.hist: %w", name, err)
		}
		hy, err := y.hist()
		if err != nil {
			return nil, fmt.Errorf("raw.background.commands.%s.hist: %w", name, err)
		}
		switch {
		case hx == nil:
			x.Hist = y.Hist
		case hy != nil:
			hx.Merge(hy)
			x.Hist = EncodeHist(hx)
		}
		x.Offered += y.Offered
		x.Sent += y.Sent
		x.Done += y.Done
		x.Errors += y.Errors
		x.Dropped += y.Dropped
		x.Undecided += y.Undecided
		if x.ErrorSample == "" {
			x.ErrorSample = y.ErrorSample
		}
		a.Commands[name] = x
	}
	return a, nil
}

// BackgroundLines writes one line per scenario that ran background
// traffic (--background), for after the table: its name and clients, the
// commands offered and done per second, those dropped and failed, and
// the latency of those done (from the intended start). Nothing when no
// scenario ran any.
func BackgroundLines(w io.Writer, ss []Scenario) error {
	for _, s := range ss {
		b := s.Background
		if b == nil {
			continue
		}
		clients := "clients"
		if s.Clients == 1 {
			clients = "client"
		}
		line := fmt.Sprintf("background (%s, %d %s): %.0f/s offered, %.0f/s done, %d dropped, %d errors",
			s.Name(), s.Clients, clients, b.OfferedPerSec, b.DonePerSec, b.Dropped, b.Errors)
		if l := b.LatencyMS; l.Count > 0 {
			line += fmt.Sprintf("; p50 %s ms, p99 %s ms, p99.9 %s ms", FormatMS(l.P50), FormatMS(l.P99), FormatMS(l.P999))
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
