package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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

// pendingLen is how many values (of all kinds) the buffer of a Recorder
// with histograms of its own holds (see Observe); sharedLen, of one that
// shares its shard's histograms with other clients (see Set).
const (
	pendingLen = 4096
	sharedLen  = 512
)

// headroom is the values a buffer keeps free beyond its batch: a Recorder
// is Due when its batch is full, and the engine's worker loop then flushes
// it between two operations, outside every measured time; the headroom
// holds the values of the operation in progress. Observe flushes at once
// only when the buffer is full (a caller that never flushes).
const headroom = 256

// batchLen is the batch of a Recorder with a buffer of pendingLen.
const batchLen = pendingLen - headroom

// A buffered value is its µs (below 1<<kindShift: 60 s is 6e7 µs) with
// its Kind in the bits above.
const kindShift = 26

// Compile-time checks: every value fits below kindShift, every Kind above.
const (
	_ = uint(1<<kindShift - 1 - maxMicros)
	_ = uint(1<<(32-kindShift) - numKinds)
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

// Recorder is one worker's measurements. Not safe for concurrent use.
//
// Recording is cheap: Observe appends the value (µs, tagged with its
// kind) to one small buffer, and about every batch of values the lot goes
// into the histograms: when Due, the engine's worker loop calls FlushDue
// between two operations, so that no measured time includes it. A
// histogram's counts (about 140 KB) are far bigger than the CPU caches
// hold for 50 clients, and a value added at once between two Redis round
// trips mostly misses them; a batch reuses the cache lines it brings in.
// One buffer for every kind, written in order, and its count beside the
// Ops and Attempts counters: an operation's recording touches two cache
// lines, one of the Recorder and one of its buffer.
//
// In a Set with interval histograms (TrackIntervals) a client's values
// must also reach the interval in which their operation ended, even when
// its next operation lasts longer than the Set's sampler waits at the
// interval's end for the client to flush. So the client publishes, at the
// end of each operation (Ended: one compare-and-swap on the Recorder's
// first cache line), how many of its buffered values are of ended
// operations, and the sampler, after the interval's end, takes those of
// a client that has not flushed since into the interval's histograms
// itself (Set.Settle); the client then drops them. Values are still
// flushed in batches, not at every operation's end.
//
// A Recorder from NewRecorder has histograms of its own (its Hists). One
// from a Set (Set.Client) has none (its Hists are nil): its Flush adds
// the buffered values to its shard's histograms, which a few other
// clients of the Set share, under the shard's mutex; Set.Total merges
// them. Its counters are its own either way.
//
// The histograms hold every value observed up to the last Flush; Merge
// flushes both recorders first. The counters are always current.
//
// Clients that run in step (rueidis pipelines all of them in one round
// trip) would fill their buffers on the same operation and all flush at
// once, stalling every client together; so each Recorder's first batch
// is cut short at its own point, and their flushes stay spread out in
// time.
type Recorder struct {
	// First, on one cache line: what every operation writes or reads.
	pending  []uint32 // values not yet in their histogram (see kindShift)
	n, limit uint16   // values in pending; Due when n reaches limit
	// seen is the interval (epoch.n) of r's last flush: Due when the
	// Set's sampler has ended an interval since. mark is n at the start of
	// the operation in progress (Mark).
	seen, mark uint32
	// state is what the client published for the Set's sampler (Ended,
	// Set.Settle): 0 nothing ever; p+1: the first p values are of ended
	// operations; stealing, or stolenBit|p: the sampler is taking, or has
	// taken, those p values.
	state    atomic.Uint32
	Ops      int64   // operations completed
	Attempts int64   // acquire attempts (TryAcquire calls)
	epoch    *epochs // the Set's interval count; never changes for NewRecorder's
	shard    *Shard  // where Flush puts the values; nil: r's own Hists
	// acked is the last interval (epoch.n) whose end r's flush saw, for
	// the sampler (Set.Settle).
	acked atomic.Uint32

	// Hists are the Recorder's own histograms (NewRecorder, Merge's
	// target); all nil in a Set's client Recorder.
	Hists

	Failures int64 // acquires that gave up (retry policy exhausted)
	Timeouts int64 // acquires that hit the acquire timeout
	// NotOwner counts releases that found another token in the lock.
	NotOwner int64
	// Rejected counts writes refused by a guard (optimistic check, fencing
	// token, conditional decrement).
	Rejected int64
	// Reads counts read-only operations (included in Ops).
	Reads int64
	// ForeignReleases counts releases that removed another client's lock.
	ForeignReleases int64
	// LostLeases counts leases found lost at release: the lock held
	// another token, or the lease's context said it was lost.
	LostLeases int64
	// WorkedAfterLoss counts writes that completed after the holder had
	// been told its lease was lost.
	WorkedAfterLoss int64
	// Overshoots counts acquires that took more than twice their deadline
	// (the acquire timeout).
	Overshoots int64
	// Cancels counts operations whose caller cancelled them inside the
	// critical section (the cancel fault).
	Cancels int64
	// FalseExtends counts extends reported successful after another
	// client had taken the lock since the extending holder acquired it
	// (Oracle.TakenSince), or while the holder registry named another
	// client (Oracle.HeldByAnother).
	FalseExtends int64
	// Errors counts Redis and other errors by kind (drivers.ErrorKind).
	// Nil in a Set's client Recorder until its first error.
	Errors map[string]int64
	// Samples keeps the first error message of each kind (nil like Errors).
	Samples map[string]string

	// Padding to recorderSize, a whole number of cache lines: another
	// client's Recorder, written by another core, never shares a line with
	// this one (Set keeps its Recorders in one slice, which starts on a
	// line, as does NewRecorder's allocation of that size class).
	_ [recorderSize - 232]byte
}

// The sampler's states of Recorder.state.
const (
	stealing  = 1 << 31 // the sampler is taking the published values
	stolenBit = 1 << 30 // | p: it took the first p values; the client drops them
)

// Compile-time checks: every state fits, and Recorder.state and the
// counters beside it sit on the Recorder's first cache line.
const (
	_ = uint(stolenBit - 1 - pendingLen)
	_ = uint(64 - 8 - unsafe.Offsetof(Recorder{}.epoch))
)

// recorderSize is a Recorder's size in bytes: 4 cache lines.
const recorderSize = 256

// Compile-time check: a Recorder is recorderSize bytes.
const (
	_ = uint(recorderSize - unsafe.Sizeof(Recorder{}))
	_ = uint(unsafe.Sizeof(Recorder{}) - recorderSize)
)

// Shard is histograms that several of a Set's Recorders flush into, under
// mu.
type Shard struct {
	mu sync.Mutex
	h  Hists
	// iv are the interval histograms of Op and Acquire (Set.TrackIntervals;
	// nil without), one pair per parity of the interval count: each Op and
	// Acquire value flushed goes into h and into iv[p], p the parity of
	// the interval in which its client saw it end, and Set.TakeInterval
	// swaps out the pair of the interval that ended while clients flush
	// the next one's into the other.
	iv [2][2]*hdrhistogram.Histogram
	_  [128 - 8 - 6*8 - 4*8]byte // two cache lines of its own (in Set's slice)
}

// epochs is a Set's interval count, which its sampler advances at the end
// of each interval (Set.EndInterval), and the count of client flushes that
// saw a new interval (acks), each on a cache line of its own: n is read by
// every client once per operation (Due), acks written once per client per
// interval.
type epochs struct {
	n    atomic.Uint32
	_    [60]byte
	acks atomic.Int64
	_    [56]byte
	// ended is closed by EndInterval (and then set to nil; IntervalEnded
	// makes the next one): an idle client waits on it to flush.
	mu    sync.Mutex
	ended chan struct{}
	// aged: the Set tracks intervals (Set.TrackIntervals); its clients
	// publish their ended operations' values (Ended).
	aged bool
	// taken is the first interval whose histograms TakeInterval has not
	// taken: a client that flushes values of an older interval (it missed
	// the sampler's wait) puts them in this one's.
	taken atomic.Uint32
}

// endedChan returns the channel the next EndInterval closes (nil for
// still, whose intervals never end).
func (e *epochs) endedChan() <-chan struct{} {
	if e == &still {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended == nil {
		e.ended = make(chan struct{})
	}
	return e.ended
}

// still is the epochs of Recorders outside a Set: no interval ever ends.
var still epochs

// recorders counts the Recorders made, to stagger their first flushes.
var recorders atomic.Uint32

// Observe records d (clamped to 1 µs .. 60 s) in the histogram of kind k.
// It allocates nothing (Service and FailedAcquire excepted, on their first
// flush); the value reaches the histogram at the next Flush at the latest.
// Observe itself flushes only a full buffer (see Due).
func (r *Recorder) Observe(k Kind, d time.Duration) {
	n := r.n
	r.pending[n] = uint32(micros(d)) | uint32(k)<<kindShift
	n++
	r.n = n
	if int(n) == len(r.pending) {
		r.own()
		r.flush(uint32(r.n))
	}
}

// Mark marks the start of an operation: when an interval ends while it is
// in progress, FlushDue keeps the values observed after the mark (this
// operation's) for the next interval. One store.
func (r *Recorder) Mark() { r.mark = uint32(r.n) }

// Ended marks the end of an operation, before the caller checks Due: in a
// Set that tracks intervals it publishes that every value buffered is of
// an ended operation, for the Set's sampler to take into the interval's
// histograms after the interval's end (Set.Settle) should the client not
// flush in time (its next operation may outlast the sampler's wait).
// A load and a compare-and-swap on the Recorder's first cache line;
// nothing outside such a Set.
func (r *Recorder) Ended() {
	if !r.epoch.aged {
		return
	}
	if s := r.state.Load(); s < stolenBit && r.state.CompareAndSwap(s, uint32(r.n)+1) {
		return
	}
	r.own()
	r.state.Store(uint32(r.n) + 1)
}

// own takes the buffer back from the Set's sampler before the client
// changes the values it published (Ended): it withdraws them, waiting
// while the sampler takes them, and drops them once it has (they are in
// their histograms). Nothing published, nothing to do.
func (r *Recorder) own() {
	for {
		s := r.state.Load()
		switch {
		case s <= 1: // nothing published (0: never)
			return
		case s == stealing:
			runtime.Gosched() // a few µs: the sampler records them
		case s&stolenBit != 0:
			r.drop(uint16(s &^ stolenBit))
			r.state.Store(1)
			return
		case r.state.CompareAndSwap(s, 1):
			return
		}
	}
}

// drop removes the first p buffered values (the sampler took them).
func (r *Recorder) drop(p uint16) {
	r.n = uint16(copy(r.pending, r.pending[p:r.n]))
	r.mark -= min(uint32(p), r.mark)
}

// IntervalEnded returns a channel that the next EndInterval of r's Set
// closes (nil, which never fires, for a Recorder outside a Set). A client
// that waits for work (an open-loop worker between arrivals) selects on
// it and then calls Flush, so that the values of its operations, all of
// which ended before the interval did, reach that interval. Get the
// channel before checking Due, so that no EndInterval falls between them.
func (r *Recorder) IntervalEnded() <-chan struct{} { return r.epoch.endedChan() }

// Due reports whether the buffered values should be flushed now: they
// have reached this Recorder's batch size, or its Set's sampler has ended
// an interval since the last flush (Set.EndInterval; the values then reach
// the interval histograms before the sampler takes them). The caller
// flushes (FlushDue) between two operations, where no measured time runs.
func (r *Recorder) Due() bool { return r.n >= r.limit || r.epoch.n.Load() != r.seen }

// FlushDue is the flush of the engine's worker loop at the end of an
// operation, when Due. When the Set's sampler has ended an interval since
// the last flush, it flushes the values observed before the last Mark
// (the operations that ended before the interval's end; the one that just
// ended did so after it), keeps the rest buffered for the next interval,
// and counts the flush in Set.Flushed; otherwise it flushes every value,
// as Flush does.
func (r *Recorder) FlushDue() {
	r.own()
	if e := r.epoch.n.Load(); e != r.seen {
		r.flush(r.mark)
		// The rest (the operation that ended after the interval did) goes
		// to the new interval's histograms: the sampler takes the old ones.
		r.seen = e
		r.flush(uint32(r.n))
		// Every client flushed at once: spread their next batches again.
		r.stagger()
		r.acked.Store(e)
		r.epoch.acks.Add(1)
		return
	}
	r.flush(uint32(r.n))
}

// Flush adds every value Observe buffered to its histogram (the
// Recorder's own, or its shard's under the shard's mutex, and the shard's
// interval histograms for Op and Acquire values).
func (r *Recorder) Flush() {
	r.own()
	r.flush(uint32(r.n))
	if e := r.epoch.n.Load(); e != r.seen {
		r.seen = e
		r.acked.Store(e)
		r.epoch.acks.Add(1)
	}
}

// flush adds the first upto buffered values to their histograms and keeps
// the rest, at the start of the buffer, for a later flush. The caller
// owns the buffer (own).
func (r *Recorder) flush(upto uint32) {
	if upto > 0 {
		if r.shard != nil {
			r.shard.record(r.pending[:upto], r.epoch, r.seen)
		} else {
			r.Hists.record(r.pending[:upto], [2]*hdrhistogram.Histogram{})
		}
	}
	r.n = uint16(copy(r.pending, r.pending[upto:r.n]))
	r.mark = 0
	r.limit = uint16(len(r.pending) - headroom)
}

// record adds vs, values of operations that ended in interval e
// (epoch.n), to sh's histograms under its mutex, Op and Acquire values
// also to its interval histograms of e, or of the first interval not yet
// taken when e's was.
func (sh *Shard) record(vs []uint32, ep *epochs, e uint32) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if t := ep.taken.Load(); e < t {
		e = t // its own interval was taken: the first one not yet
	}
	sh.h.record(vs, sh.iv[e&1])
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

// stagger sets the first batch of a Recorder with a buffer of size
// values: 1 .. size-headroom values, a different number for consecutive
// Recorders (97 is prime to both batch sizes, so that 256 Recorders in a
// row, 3840 with the larger buffer, all differ).
func (r *Recorder) stagger() {
	r.limit = uint16(1 + (recorders.Add(1)*97)%(uint32(len(r.pending))-headroom))
}

// NewRecorder returns an empty Recorder with histograms of its own.
func NewRecorder() *Recorder {
	r := &Recorder{
		pending: make([]uint32, pendingLen),
		epoch:   &still,
		Hists:   newHists(),
		Errors:  map[string]int64{},
		Samples: map[string]string{},
	}
	r.stagger()
	return r
}

// Merge adds o's counters and histograms into r (which has histograms of
// its own: NewRecorder), after flushing both. The histograms of a Set's
// Recorder are its shard's: Set.Total merges those.
func (r *Recorder) Merge(o *Recorder) {
	r.Flush()
	o.Flush()
	r.Hists.merge(&o.Hists)
	r.Overshoots += o.Overshoots
	r.Cancels += o.Cancels
	r.Ops += o.Ops
	r.Attempts += o.Attempts
	r.Failures += o.Failures
	r.Timeouts += o.Timeouts
	r.NotOwner += o.NotOwner
	r.Rejected += o.Rejected
	r.Reads += o.Reads
	r.ForeignReleases += o.ForeignReleases
	r.LostLeases += o.LostLeases
	r.WorkedAfterLoss += o.WorkedAfterLoss
	r.FalseExtends += o.FalseExtends
	if len(o.Errors) > 0 && r.Errors == nil {
		r.Errors, r.Samples = map[string]int64{}, map[string]string{}
	}
	for k, v := range o.Errors {
		r.Errors[k] += v
	}
	for k, v := range o.Samples {
		if _, ok := r.Samples[k]; !ok {
			r.Samples[k] = v
		}
	}
}

// maxShards is the fewest shards a Set of more clients has: a Set has
// S = max(maxShards, 4 x GOMAXPROCS) shards, clients beyond S share
// them, and with at most S clients each has a shard, and so histograms,
// of its own, as a NewRecorder has.
const maxShards = 64

// Set is the Recorders of a run's clients, with their histograms in a few
// shards: client i records into shard i % S, S = min(clients,
// max(maxShards, 4 x GOMAXPROCS)), so that memory does not grow with the clients
// beyond a Recorder (its counters and buffer, under 2.5 KB) each. Up to S
// clients each have a shard and a buffer of pendingLen values as a
// NewRecorder does; with more, a client's buffer holds sharedLen values,
// and its Flush takes its shard's mutex (a flush's few µs per a batch of
// operations; no two clients of a shard flush at once). Every value still
// reaches one histogram, so the merge of the shards is the histogram of
// every value recorded. Not safe for concurrent use itself: each Recorder
// is used by one goroutine, and Total after they are done.
type Set struct {
	recs   []Recorder
	shards []Shard
	epoch  epochs
	// spare are the interval histograms TakeInterval swaps into the shards
	// (Op and Acquire per shard); nil until TrackIntervals.
	spare [][2]*hdrhistogram.Histogram
	// settled is, per client, the last interval end Settle is done with;
	// steals counts the values Settle took (the sampler's alone).
	settled []uint32
	steals  int64
}

// NewSet returns the Recorders of clients (>= 1) clients, empty.
func NewSet(clients int) *Set {
	s := max(maxShards, 4*runtime.GOMAXPROCS(0))
	buf := sharedLen
	if clients <= s {
		s, buf = clients, pendingLen
	}
	set := &Set{recs: make([]Recorder, clients), shards: make([]Shard, s)}
	for i := range set.shards {
		set.shards[i].h = newHists()
	}
	// One slab for every buffer: whole cache lines each, none shared.
	slab := make([]uint32, clients*buf)
	for i := range set.recs {
		r := &set.recs[i]
		r.pending = slab[i*buf : (i+1)*buf : (i+1)*buf]
		r.shard = &set.shards[i%s]
		r.epoch = &set.epoch
		r.stagger()
	}
	return set
}

// TrackIntervals gives every shard interval histograms of Op and Acquire
// values (µs, as NewHistogram: 4 histograms of about 140 KB per shard,
// with the spares TakeInterval swaps in), which TakeInterval empties, and
// has the clients publish their ended operations' values (Ended) for
// Settle. Call it before any client records.
func (s *Set) TrackIntervals() {
	s.epoch.aged = true
	s.spare = make([][2]*hdrhistogram.Histogram, len(s.shards))
	for i := range s.shards {
		for p := range s.shards[i].iv {
			s.shards[i].iv[p] = [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}
		}
		s.spare[i] = [2]*hdrhistogram.Histogram{NewHistogram(), NewHistogram()}
	}
}

// EndInterval ends the current interval: every client's Recorder is Due
// from now until its next flush, so that the engine's worker loop flushes
// (FlushDue) each client's values of the operations that ended before now
// at the end of its operation in progress; Flushed counts those flushes.
// It returns Flushed's count before the interval ended. Safe to call while
// clients record.
func (s *Set) EndInterval() int64 {
	before := s.epoch.acks.Load()
	s.epoch.n.Add(1)
	s.epoch.mu.Lock()
	if s.epoch.ended != nil {
		close(s.epoch.ended) // after n's increment: a woken client's Flush sees the new interval
		s.epoch.ended = nil
	}
	s.epoch.mu.Unlock()
	return before
}

// Flushed is the number of client flushes since NewSet that came after an
// EndInterval the client had not yet seen (at most one per client per
// EndInterval). Safe to call while clients record.
func (s *Set) Flushed() int64 { return s.epoch.acks.Load() }

// Settle is the sampler's wait after EndInterval, before TakeInterval,
// for the values of the operations that ended in the interval to reach
// its histograms. A client is settled once it has flushed since the end
// (FlushDue: its values of the operations that ended before, in the
// interval's histograms) or, when it published values of ended operations
// (Ended) and has not flushed, once Settle has taken those into the
// interval's histograms itself: it is in an operation that may outlast
// the wait, which would otherwise keep them from their interval. Settle
// checks every client not yet settled once a millisecond until all are or
// deadline passes, and returns how many are not (their values reach a
// later interval). Call it from one goroutine, after EndInterval; safe
// while clients record.
func (s *Set) Settle(deadline time.Time) int {
	e := s.epoch.n.Load()
	if len(s.settled) != len(s.recs) {
		s.settled = make([]uint32, len(s.recs))
	}
	for {
		left := 0
		for i := range s.recs {
			if s.settled[i] == e {
				continue
			}
			if r := &s.recs[i]; r.acked.Load() == e || s.steal(r, e-1) {
				s.settled[i] = e
				continue
			}
			left++
		}
		if left == 0 || !time.Now().Before(deadline) {
			return left
		}
		time.Sleep(time.Millisecond)
	}
}

// steal takes the values r published as of ended operations (Ended) into
// its shard's histograms, those of interval e among the interval
// histograms, and reports whether r is settled: it published none (1), its
// values were taken before (at an earlier interval's end: those it holds
// now are of its operation in progress), or steal took them. Not when r
// never published (0: a client that does not, which is waited for), or
// changed what it published meanwhile (the next check retries).
func (s *Set) steal(r *Recorder, e uint32) bool {
	st := r.state.Load()
	switch {
	case st == 0 || st == stealing:
		return false
	case st == 1 || st&stolenBit != 0:
		return true
	}
	if !r.state.CompareAndSwap(st, stealing) {
		return false
	}
	p := st - 1
	r.shard.record(r.pending[:p], r.epoch, e)
	r.state.Store(stolenBit | p)
	s.steals += int64(p)
	return true
}

// TakeInterval merges the values flushed into the interval histograms of
// the interval the last EndInterval ended (every Op and Acquire value,
// µs, that its clients saw end in it) into op and acq, and empties them:
// under each shard's mutex it swaps that interval's histograms for empty
// spares, then merges and resets them outside it; meanwhile the clients
// flush the next interval's values into the other pair. With final (every
// client has stopped and flushed, no EndInterval since the last), it
// takes both pairs: the current interval's and any late values. A value
// flushed into an interval's pair after its take (a client that missed
// the sampler's wait) goes to the first interval not yet taken. Safe to call while
// clients record, from one goroutine at a time; nothing without
// TrackIntervals.
func (s *Set) TakeInterval(op, acq *hdrhistogram.Histogram, final bool) {
	n := s.epoch.n.Load()
	parities := []uint32{(n - 1) & 1} // the interval EndInterval ended
	if final {
		parities = []uint32{0, 1}
	} else {
		s.epoch.taken.Store(n) // late values of interval n-1 or before: into n's
	}
	for _, p := range parities {
		for i := range s.spare {
			sh := &s.shards[i]
			sh.mu.Lock()
			sh.iv[p], s.spare[i] = s.spare[i], sh.iv[p]
			sh.mu.Unlock()
			for k, dst := range []*hdrhistogram.Histogram{op, acq} {
				if h := s.spare[i][k]; h.TotalCount() > 0 {
					dst.Merge(h)
					h.Reset()
				}
			}
		}
	}
}

// Flush flushes every client's buffer into its shard. Call it when no
// client records.
func (s *Set) Flush() {
	for i := range s.recs {
		s.recs[i].Flush()
	}
}

// Client returns client i's Recorder; nil for a nil Set.
func (s *Set) Client(i int) *Recorder {
	if s == nil {
		return nil
	}
	return &s.recs[i]
}

// Len is the number of clients.
func (s *Set) Len() int { return len(s.recs) }

// Shards is the number of shards.
func (s *Set) Shards() int { return len(s.shards) }

// Ops returns each client's completed operations, in client order.
func (s *Set) Ops() []int64 {
	ops := make([]int64, len(s.recs))
	for i := range s.recs {
		ops[i] = s.recs[i].Ops
	}
	return ops
}

// Total returns a new Recorder (NewRecorder) holding every client's
// counters and every value recorded, after flushing each client: the
// merge of the shards' histograms. Call it when no client records any
// more.
func (s *Set) Total() *Recorder {
	t := NewRecorder()
	for i := range s.recs {
		t.Merge(&s.recs[i])
	}
	for i := range s.shards {
		t.Hists.merge(&s.shards[i].h)
	}
	return t
}

// ErrorTotal is the sum of Errors.
func (r *Recorder) ErrorTotal() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// Jain returns Jain's fairness index of xs, (Σx)² / (n·Σx²): 1 when every
// client got the same share, 1/n when one client got everything; 1 for an
// empty or all-zero input.
func Jain(xs []int64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
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

// Oracle counts overlapping holders of each lock. Lock i is entered with
// Enter(i) (exclusive) or EnterRead(i) (shared) when a client starts its
// critical section, and left with Leave / LeaveRead before it releases.
// An exclusive holder that finds anyone inside, or a reader that finds an
// exclusive holder inside, is one overlap. Safe for concurrent use, with no
// mutex: it costs two atomic adds per critical section on the lock's own
// slot, so clients on different locks share nothing but the overlap count,
// which only an overlap writes.
//
// The Oracle also keeps a holder registry: which client took each lock
// last (Acquired) and has not released it yet (Releasing), and a
// generation per lock that each new holder's registration bumps. A release
// that succeeds while the registry names another client deleted that
// client's lock: a foreign release. An extend that succeeds after another
// client registered since the extending holder did (TakenSince), or while
// the registry names another client (HeldByAnother), is a false extend. A
// lock's holder count and registry entry (client and generation packed in
// one int64) sit side by side in one 16-byte slot, so that a critical
// section touches one cache line of the Oracle, not two; with up to 16,384
// locks each slot has a cache line to itself.
type Oracle struct {
	locks []lockSlot
	// stride is the slots per lock: slotsPerLine when the locks are few,
	// so that each lock's slot has a cache line of its own (clients on
	// two cores updating neighbouring locks would otherwise share one and
	// slow each other down), else 1.
	stride   int
	overlaps atomic.Int64
}

// lockSlot is one lock's state in the Oracle.
type lockSlot struct {
	holders atomic.Int64 // exclusive holders << 32 | readers
	// owner is the registry's entry: generation << 32 | client id + 1 of
	// the registered holder (0 = none). The generation counts other
	// clients' registrations (see Acquired); a release clears the client
	// part only.
	owner atomic.Int64
}

const oneWriter = 1 << 32

// clientMask is the client part of lockSlot.owner.
const clientMask = 1<<32 - 1

// ownerGen is the generation part of lockSlot.owner's value v.
func ownerGen(v int64) uint32 { return uint32(uint64(v) >> 32) }

const (
	// slotsPerLine lockSlots fill a 64-byte cache line.
	slotsPerLine = 64 / int(unsafe.Sizeof(lockSlot{}))
	// padUpTo is the most locks whose slots get a cache line each (1 MiB
	// of slots); with more, two clients rarely update neighbouring locks
	// at once, and the memory is better saved.
	padUpTo = 1 << 14
)

// NewOracle returns an Oracle for locks 0..n-1.
func NewOracle(n int) *Oracle {
	stride := 1
	if n <= padUpTo {
		stride = slotsPerLine
	}
	return &Oracle{locks: make([]lockSlot, n*stride), stride: stride}
}

// slot is lock i's state.
func (o *Oracle) slot(i int) *lockSlot { return &o.locks[i*o.stride] }

// Acquired registers client (0 <= client < 1<<32 - 1) as lock i's holder
// and returns the registration's generation, which Worker.Hold keeps for
// TakenSince. Each registration by a client other than the one the
// registry names bumps lock i's generation (a 32-bit counter that wraps);
// a client the registry already names keeps the generation it has, so
// that only another client's registration moves it.
func (o *Oracle) Acquired(i, client int) (gen uint32) {
	me := int64(client) + 1
	owner := &o.slot(i).owner
	for {
		v := owner.Load()
		if v&clientMask == me {
			return ownerGen(v)
		}
		gen = ownerGen(v) + 1
		if owner.CompareAndSwap(v, int64(gen)<<32|me) {
			return gen
		}
	}
}

// Releasing is called just before client sends its release of lock i. It
// unregisters client and reports whether the registry names another client
// instead: one that took the lock after client's lease ended, so that a
// release that still deletes the key removes that client's lock. (No other
// client can register between this call and a correct release, which is
// what still keeps the lock until then.) The generation stays as it is: a
// release is no registration.
func (o *Oracle) Releasing(i, client int) (another bool) {
	me := int64(client) + 1
	owner := &o.slot(i).owner
	for {
		v := owner.Load()
		if c := v & clientMask; c != me {
			return c != 0
		}
		if owner.CompareAndSwap(v, v&^clientMask) {
			return false
		}
		// Another client registered between the load and the swap: the
		// next round reports it.
	}
}

// HeldByAnother reports whether the registry names a client other than
// client as lock i's holder (one that took the lock after client's lease
// ended), without changing it: an extend that succeeds then extended that
// client's lock (a false extend, see TakenSince for the other case).
func (o *Oracle) HeldByAnother(i, client int) bool {
	c := o.slot(i).owner.Load() & clientMask
	return c != 0 && c != int64(client)+1
}

// TakenSince reports whether another client has registered as lock i's
// holder since the registration whose generation Acquired returned as gen,
// whether or not it still holds the lock. For a correct lock that means the
// lease of gen's holder ended: an extend of it that succeeds after such a
// registration extended someone else's lock, or a lock that had been free,
// a false extend, even when the registry names nobody at the moment (the
// next holder has released and the one after it has not registered yet).
func (o *Oracle) TakenSince(i int, gen uint32) bool {
	return ownerGen(o.slot(i).owner.Load()) != gen
}

// Enter records an exclusive holder entering lock i's critical section and
// reports whether it overlapped another holder.
func (o *Oracle) Enter(i int) bool {
	if v := o.slot(i).holders.Add(oneWriter); v != oneWriter {
		o.overlaps.Add(1)
		return true
	}
	return false
}

// Leave records the exclusive holder leaving lock i's critical section.
func (o *Oracle) Leave(i int) { o.slot(i).holders.Add(-oneWriter) }

// EnterRead records a reader entering lock i and reports whether an
// exclusive holder was inside.
func (o *Oracle) EnterRead(i int) bool {
	if v := o.slot(i).holders.Add(1); v >= oneWriter {
		o.overlaps.Add(1)
		return true
	}
	return false
}

// LeaveRead records the reader leaving lock i.
func (o *Oracle) LeaveRead(i int) { o.slot(i).holders.Add(-1) }

// Overlaps is the number of entries that found a conflicting holder inside.
// Safe to read while clients run.
func (o *Oracle) Overlaps() int64 { return o.overlaps.Load() }
