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
// two thirds left). Only renewals in the window count (Start, End):
// those before its start or after its end (the stop's drain) count in no
// figure. The window is split at its middle into a first and a second
// half, whose margins are kept apart (the trend); a window without a
// middle (Start's mid not after from: a scenario without a duration)
// counts every renewal in the first half, so the second
// half and the trend are absent. The figures are kept in
// marginShards shards, merged by Figures, so that clients do not queue
// on one mutex to record: Extended picks its shard by the client's ID,
// Renewed (a renewal loop's, with no client) by a round-robin counter.
// Safe for concurrent use.
type Margins struct {
	ttl      time.Duration // the scenario's TTL: an extend's lease
	from     atomic.Int64  // the window's start (Now ns); 0: not started, every renewal counts
	mid      atomic.Int64  // the window's middle (Now ns); <= from: no middle
	end      atomic.Int64  // the window's end (Now ns); 0: none yet
	measured atomic.Bool   // the strategy renews (Renews)
	next     atomic.Uint32 // Renewed's round-robin shard
	shards   [marginShards]marginShard
}

// marginShards is how many figure shards a Margins has.
const marginShards = 16

// marginShard is one shard of a Margins' figures.
type marginShard struct {
	mu       sync.Mutex
	halves   [2]*hdrhistogram.Histogram // margins in µs (1 µs .. 60 s), by half of the window; nil until the first
	renewals int64
	late     int64
	min      time.Duration // math.MaxInt64 until the first renewal
	_        [64]byte      // keeps neighbouring shards' mutexes off one cache line
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

// NewMargins returns a Margins for leases of ttl (the TTL of the leases
// that Extended records).
func NewMargins(ttl time.Duration) *Margins {
	m := &Margins{ttl: ttl}
	for i := range m.shards {
		m.shards[i].min = math.MaxInt64
	}
	return m
}

// TTL is the TTL of the leases that Extended records (NewMargins').
func (m *Margins) TTL() time.Duration { return m.ttl }

// Renews marks the strategy as one that renews its leases: its figures
// are measured (zero renewals included). Safe on a nil Margins.
func (m *Margins) Renews() {
	if m != nil && !m.measured.Load() {
		m.measured.Store(true)
	}
}

// Start sets the window: renewals before from count in no figure, nor
// those after end (the zero time: no end set here; an earlier End's is
// kept); those from
// mid on count in the second half. A mid not after from (a scenario
// without a duration) leaves the window without a middle: every renewal
// counts in the first half.
func (m *Margins) Start(from, mid, end time.Time) {
	if m == nil {
		return
	}
	f := int64(Mono(from))
	md := int64(Mono(mid))
	if md <= f {
		md = 0
	}
	m.mid.Store(md)
	if !end.IsZero() {
		m.End(end)
	}
	m.from.Store(f)
}

// End ends the window at t unless it already ends earlier: the run
// stopped (its duration, a workload with nothing left to do, an abort);
// renewals after t, during the stop's drain, count in no figure.
func (m *Margins) End(t time.Time) {
	if m == nil {
		return
	}
	e := int64(Mono(t))
	for {
		old := m.end.Load()
		if old != 0 && old <= e || m.end.CompareAndSwap(old, e) {
			return
		}
	}
}

// half is the half of the window a renewal at now counts in; false
// outside the window.
func (m *Margins) half(now int64) (int, bool) {
	f := m.from.Load()
	if f == 0 {
		return 0, true
	}
	if now < f {
		return 0, false
	}
	if e := m.end.Load(); e != 0 && now > e {
		return 0, false
	}
	if md := m.mid.Load(); md != 0 && now >= md {
		return 1, true
	}
	return 0, true
}

// Renewed records one successful renewal of a lease of ttl whose
// remaining TTL at the renewal was remaining, at the clock's now (a
// strategies.MarginFunc). Safe on a nil Margins.
func (m *Margins) Renewed(ttl, remaining time.Duration) {
	if m == nil {
		return
	}
	m.record(int(m.next.Add(1)), Now(), ttl, remaining)
}

// Extended records a successful extend (strategies.Extender) by client,
// sent at sent (Now's scale), of a lease of the scenario's TTL whose
// remaining TTL at sent was remaining, as its client counts it (see
// workloads.Worker.Extend). Safe on a nil Margins.
func (m *Margins) Extended(client int, sent, remaining time.Duration) {
	if m == nil {
		return
	}
	m.record(client, sent, m.ttl, remaining)
}

// record records a renewal at at in shard i (modulo the shards).
func (m *Margins) record(i int, at, ttl, remaining time.Duration) {
	half, ok := m.half(int64(at))
	if !ok {
		return
	}
	m.Renews()
	s := &m.shards[uint(i)%marginShards]
	s.mu.Lock()
	if s.halves[half] == nil {
		s.halves[half] = NewHistogram()
	}
	Record(s.halves[half], remaining)
	s.renewals++
	if remaining < ttl/3 {
		s.late++
	}
	s.min = min(s.min, remaining)
	s.mu.Unlock()
}

// Figures returns the data measured so far (the shards merged, histograms
// copied); nothing measured for a nil Margins.
func (m *Margins) Figures() MarginsFigures {
	if m == nil || !m.measured.Load() {
		return MarginsFigures{}
	}
	f := MarginsFigures{Measured: true, First: NewHistogram(), Second: NewHistogram()}
	lo := time.Duration(math.MaxInt64)
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		if s.halves[0] != nil {
			f.First.Merge(s.halves[0])
		}
		if s.halves[1] != nil {
			f.Second.Merge(s.halves[1])
		}
		f.Renewals += s.renewals
		f.Late += s.late
		lo = min(lo, s.min)
		s.mu.Unlock()
	}
	if f.Renewals > 0 {
		f.Min = lo
	}
	return f
}
