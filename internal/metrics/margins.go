package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Margins measures renewal margins: at each successful renewal of a
// lease (a watchdog's, a lock library's, an extend), the lease's remaining
// TTL at the moment of the renewal, before it was extended. A renewal
// schedule that drifts toward the lease's end shows here as shrinking
// margins long before a lease is lost.
//
// A renewal is late when its margin is below a third of its lease's TTL
// (the watchdog renews every TTL/3, so a correct one renews with about
// two thirds left). Renewals before the window's start (Start) count in
// no figure; the window is split at its middle into a first and a second
// half, whose margins are kept apart (the trend). Safe for concurrent
// use.
type Margins struct {
	ttl      time.Duration // the scenario's TTL: an extend's lease
	from     atomic.Int64  // the window's start (Now ns); 0: not started, every renewal counts
	mid      atomic.Int64  // the window's middle (Now ns)
	measured atomic.Bool   // the strategy renews (Renews)

	mu       sync.Mutex
	halves   [2]*hdrhistogram.Histogram // margins in µs (1 µs .. 60 s), by half of the window
	renewals int64
	late     int64
	min      time.Duration
}

// MarginsFigures are a Margins' data.
type MarginsFigures struct {
	// Measured: the strategy renews its leases (Renews was called); else
	// nothing was measured and the rest is zero.
	Measured bool
	// First and Second hold the margins (µs, 1 µs .. 60 s; a margin of 0
	// or less recorded as 1 µs) of the renewals in the first and the
	// second half of the window.
	First, Second *hdrhistogram.Histogram
	// Renewals are the renewals counted, Late those with a margin below
	// TTL/3 (counted exactly, as recorded).
	Renewals, Late int64
	// Min is the smallest margin, exactly (0 or less for a renewal that
	// succeeded after the lease's end as its client counted it); 0
	// without renewals.
	Min time.Duration
}

// NewMargins returns a Margins for leases of ttl (the TTL that Extended
// counts with).
func NewMargins(ttl time.Duration) *Margins {
	return &Margins{ttl: ttl, min: math.MaxInt64,
		halves: [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}}
}

// Renews marks the strategy as one that renews its leases: its figures
// are measured (zero renewals included). Safe on a nil Margins.
func (m *Margins) Renews() {
	if m != nil && !m.measured.Load() {
		m.measured.Store(true)
	}
}

// Start sets the window: renewals before from count in no figure; those
// from mid on count in the second half.
func (m *Margins) Start(from, mid time.Time) {
	if m == nil {
		return
	}
	m.mid.Store(int64(Mono(mid)))
	m.from.Store(int64(Mono(from)))
}

// Renewed records one successful renewal of a lease of ttl whose
// remaining TTL at the renewal was remaining. Safe on a nil Margins.
func (m *Margins) Renewed(ttl, remaining time.Duration) {
	if m == nil {
		return
	}
	now := int64(Now())
	if f := m.from.Load(); f != 0 && now < f {
		return
	}
	half := 0
	if now >= m.mid.Load() && m.from.Load() != 0 {
		half = 1
	}
	m.Renews()
	m.mu.Lock()
	Record(m.halves[half], remaining)
	m.renewals++
	if remaining < ttl/3 {
		m.late++
	}
	m.min = min(m.min, remaining)
	m.mu.Unlock()
}

// Extended records a successful extend (strategies.Extender) sent at
// sent, of a lease that ran from from (its grant, or its last extend's
// start): its margin is the scenario's TTL minus the time between them,
// the lease's remaining TTL as its client counts it.
func (m *Margins) Extended(from, sent time.Duration) {
	if m == nil {
		return
	}
	m.Renewed(m.ttl, m.ttl-(sent-from))
}

// Figures returns the data measured so far (histograms copied); nothing
// measured for a nil Margins.
func (m *Margins) Figures() MarginsFigures {
	if m == nil {
		return MarginsFigures{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f := MarginsFigures{Measured: m.measured.Load(), Renewals: m.renewals, Late: m.late}
	if !f.Measured {
		return MarginsFigures{}
	}
	f.First, f.Second = hdrhistogram.Import(m.halves[0].Export()), hdrhistogram.Import(m.halves[1].Export())
	if m.renewals > 0 {
		f.Min = m.min
	}
	return f
}
