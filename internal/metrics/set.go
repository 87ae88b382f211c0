package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	// group is each client's group (NewGroupedSet); group g's shards are
	// shards[first[g]:first[g+1]].
	group []int
	first []int
}

// NewSet returns the Recorders of clients (>= 1) clients, empty.
func NewSet(clients int) *Set { return NewGroupedSet(make([]int, clients)) }

// NewGroupedSet returns the Recorders of len(groups) (>= 1) clients,
// empty, client i in group groups[i] (0, 1, ...: a client role, --mix).
// The S shards (see Set) are split between the groups in proportion to
// their clients, at least one each, and no shard holds clients of two
// groups: TotalOf(g) is the histograms of group g's clients alone. With
// one group it is NewSet.
func NewGroupedSet(groups []int) *Set {
	clients := len(groups)
	s := max(maxShards, 4*runtime.GOMAXPROCS(0))
	buf := sharedLen
	if clients <= s {
		s, buf = clients, pendingLen
	}
	ng := 1
	for _, g := range groups {
		ng = max(ng, g+1)
	}
	count := make([]int, ng)
	for _, g := range groups {
		count[g]++
	}
	set := &Set{recs: make([]Recorder, clients), group: append([]int(nil), groups...),
		first: make([]int, ng+1)}
	per := make([]int, ng)
	for g, c := range count {
		if c > 0 {
			per[g] = max(1, c*s/clients) // with clients <= S: one shard per client
		}
		set.first[g+1] = set.first[g] + per[g]
	}
	set.shards = make([]Shard, set.first[ng])
	for i := range set.shards {
		set.shards[i].h = newHists()
	}
	// One slab for every buffer: whole cache lines each, none shared.
	slab := make([]uint32, clients*buf)
	seen := make([]int, ng)
	for i := range set.recs {
		r := &set.recs[i]
		g := groups[i]
		r.pending = slab[i*buf : (i+1)*buf : (i+1)*buf]
		r.shard = &set.shards[set.first[g]+seen[g]%per[g]]
		seen[g]++
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

// TotalOf is Total of group g's clients alone (NewGroupedSet): their
// counters and the histograms of their shards. Call it when no client
// records any more.
func (s *Set) TotalOf(g int) *Recorder {
	t := NewRecorder()
	for i := range s.recs {
		if s.group[i] == g {
			t.Merge(&s.recs[i])
		}
	}
	if g+1 < len(s.first) {
		for i := s.first[g]; i < s.first[g+1]; i++ {
			t.Hists.merge(&s.shards[i].h)
		}
	}
	return t
}

// CountsOf is group g's clients' counters, errors and error samples
// alone: TotalOf without the histograms, so that no client is flushed and
// no shard merged, for a caller that reads counters only. Its Hists are
// nil and it is no Recorder to observe into or Merge into (it is not
// NewRecorder's). Call it when no client records any more.
func (s *Set) CountsOf(g int) *Recorder {
	t := &Recorder{Errors: map[string]int64{}, Samples: map[string]string{}}
	for i := range s.recs {
		if s.group[i] == g {
			t.addCounts(&s.recs[i])
		}
	}
	return t
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
