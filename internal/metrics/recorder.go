package metrics

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	// FalseAcquires counts granted acquires after which the lock key did
	// not hold the lease's token (Worker's verify read).
	FalseAcquires int64
	// Overlaps counts this client's entries into a critical section that
	// found a conflicting holder inside (Oracle.Enter, EnterRead): the
	// oracle's overlaps, each on the client that entered.
	Overlaps int64
	// Errors counts Redis and other errors by kind (drivers.ErrorKind).
	// Nil in a Set's client Recorder until its first error.
	Errors map[string]int64
	// Samples keeps the first error message of each kind (nil like Errors).
	Samples map[string]string

	// Padding to recorderSize, a whole number of cache lines: another
	// client's Recorder, written by another core, never shares a line with
	// this one (Set keeps its Recorders in one slice, which starts on a
	// line, as does NewRecorder's allocation of that size class).
	_ [recorderSize - 248]byte
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
	r.addCounts(o)
}

// addCounts adds o's counters, errors and error samples into r, not its
// histograms (Merge, Set.CountsOf).
func (r *Recorder) addCounts(o *Recorder) {
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
	r.FalseAcquires += o.FalseAcquires
	r.Overlaps += o.Overlaps
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

// ErrorTotal is the sum of Errors.
func (r *Recorder) ErrorTotal() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}
