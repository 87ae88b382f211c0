package metrics

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 60 s, 3 significant figures.
const (
	minMicros = 1
	maxMicros = 60_000_000
	sigFigs   = 3
)

// NewHistogram returns an empty latency histogram in µs (1 µs .. 60 s,
// 3 significant figures). Longer values are clamped to 60 s.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minMicros, maxMicros, sigFigs)
}

// Record adds d to h in µs, clamped to the histogram's range.
func Record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(micros(d)) // cannot fail within range
}

// micros is d in µs, clamped to the histograms' range.
func micros(d time.Duration) int64 {
	us := d.Microseconds()
	if us < minMicros {
		us = minMicros
	}
	if us > maxMicros {
		us = maxMicros
	}
	return us
}

// Kind names one of a Recorder's histograms, for Observe.
type Kind uint8

// The Recorder's histograms.
const (
	Op Kind = iota
	Acquire
	Release
	Hold
	Service
	FailedAcquire
	numKinds
)

// Hists is a set of latency histograms (µs, see NewHistogram). Op,
// Acquire, Release and Hold exist from the start; Service and
// FailedAcquire are nil until their first value (each costs about 140 KB).
type Hists struct {
	// Op is the whole operation (acquire, critical section, release), µs.
	Op *hdrhistogram.Histogram
	// Acquire is acquire time including every retry and wait, µs.
	Acquire *hdrhistogram.Histogram
	// Release is the release call, µs.
	Release *hdrhistogram.Histogram
	// Hold is the time spent holding the lock in the critical section,
	// from the acquire's return to leaving the section (before the
	// release), µs.
	Hold *hdrhistogram.Histogram
	// Service is the operation from its actual start (open loop only; Op
	// is then measured from the intended start), µs. Nil until the first
	// open-loop operation.
	Service *hdrhistogram.Histogram
	// FailedAcquire is the time of acquires that ended without the lock
	// (not the run's stop), µs. Nil until the first.
	FailedAcquire *hdrhistogram.Histogram
}

func newHists() Hists {
	return Hists{Op: NewHistogram(), Acquire: NewHistogram(), Release: NewHistogram(), Hold: NewHistogram()}
}

// hist returns the histogram of kind k, making Service or FailedAcquire
// on first use.
func (h *Hists) hist(k Kind) *hdrhistogram.Histogram {
	if g := h.get(k); g != nil {
		return g
	}
	g := NewHistogram() // Service or FailedAcquire: the four others always exist
	if k == Service {
		h.Service = g
	} else {
		h.FailedAcquire = g
	}
	return g
}

// merge adds o's histograms into h.
func (h *Hists) merge(o *Hists) {
	for k := Op; k < numKinds; k++ {
		if src := o.get(k); src != nil {
			h.hist(k).Merge(src)
		}
	}
}

// get returns the histogram of kind k, nil when it was never made.
func (h *Hists) get(k Kind) *hdrhistogram.Histogram {
	switch k {
	case Op:
		return h.Op
	case Acquire:
		return h.Acquire
	case Release:
		return h.Release
	case Hold:
		return h.Hold
	case Service:
		return h.Service
	}
	return h.FailedAcquire
}

// record adds vs to their histograms, and Op and Acquire values to iv
// too (when not nil).
func (h *Hists) record(vs []uint32, iv [2]*hdrhistogram.Histogram) {
	// In the order observed: the counts a batch touches (kilobytes per
	// histogram when latencies spread over milliseconds) come into the
	// cache on their first value and stay there for the rest of the batch.
	// (Sorting the batch first cost more than it saved: about 150 ns per
	// operation of four values, BenchmarkObserve.)
	// Cannot fail: micros clamps to the histograms' range.
	if iv[0] == nil {
		for _, v := range vs {
			_ = h.hist(Kind(v >> kindShift)).RecordValue(int64(v & (1<<kindShift - 1)))
		}
		return
	}
	for _, v := range vs {
		k, us := Kind(v>>kindShift), int64(v&(1<<kindShift-1))
		_ = h.hist(k).RecordValue(us)
		if k <= Acquire { // Op or Acquire: one more Record, into the interval's
			_ = iv[k].RecordValue(us)
		}
	}
}

// Latency is a histogram summary in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	// Count is the number of recorded values.
	Count int64 `json:"count"`
}

// Summarize reads p50, p90, p99, p99.9, max and mean (ms) from a µs
// histogram. An empty or nil histogram gives zeros.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
		Mean:  h.Mean() / 1000,
		Count: h.TotalCount(),
	}
}
