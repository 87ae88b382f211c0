package liveness

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
)

// DefaultInterval is the Sampler's default time between reads (--liveness-interval).
const DefaultInterval = 5 * time.Millisecond

// ShareSlack is what ShareGrace allows beyond two leases for a command
// still in flight at an owner's death (a renewal sent as it crashed),
// whose lease began up to a round trip after it.
const ShareSlack = 100 * time.Millisecond

// ShareGrace is how long after its owner's death a dead share of a
// multi-owner lock may still be seen stored beside a live owner's before
// it counts as an orphan share: 2 x ttl + ShareSlack. Its own lease ends
// at most one ttl after the death; a lock that drops an expired share
// lazily, at its next call on the key, and never sets the key's expiry
// past its live shares' leases, stores it at most one more ttl (its last
// call before the share's lease ended set the key to expire within a
// ttl, and any later call dropped the share); a lock whose calls extend
// the whole key (one PEXPIRE for every share) keeps it as long as other
// owners keep coming.
func ShareGrace(ttl time.Duration) time.Duration { return 2*ttl + ShareSlack }

// chunk is the most keys one read script takes.
const chunk = 256

// readScript returns, per key of KEYS, the token(s) stored: a string key's
// value, a hash key's field names, a sorted set's members (a semaphore's
// permits), or "" for a missing key or another type; then the number of
// EXISTS, of TYPE and of ZRANGE calls it made (for the sampler's cost).
// One MGET reads every string key; only when one of the keys it found no
// string under exists (EXISTS) does it look at those one by one (TYPE,
// then HKEYS for a hash, ZRANGE 0 -1 for a sorted set). The sampler runs
// it once a read (strings) has found a key of another type than a
// string.
var readScript = drivers.NewScript(`local out = redis.call('mget', unpack(KEYS))
local none = {}
for i = 1, #KEYS do
	if not out[i] then
		out[i] = ''
		none[#none + 1] = i
	end
end
local exists, types, zsets = 0, 0, 0
if #none > 0 then
	local keys = {}
	for j, i in ipairs(none) do
		keys[j] = KEYS[i]
	end
	exists = 1
	if redis.call('exists', unpack(keys)) > 0 then
		for _, i in ipairs(none) do
			types = types + 1
			local ty = redis.call('type', KEYS[i]).ok
			if ty == 'hash' then
				out[i] = redis.call('hkeys', KEYS[i])
			elseif ty == 'zset' then
				zsets = zsets + 1
				out[i] = redis.call('zrange', KEYS[i], 0, -1)
			end
		end
	end
end
out[#KEYS + 1] = exists
out[#KEYS + 2] = types
out[#KEYS + 3] = zsets
return out`)

// Sampler reads the lock keys' tokens from every node each Interval and
// compares them with its Tracker (see the package comment for what it
// counts). Start it once, Stop it once; Result after Stop.
type Sampler struct {
	T *Tracker
	// Nodes hold the lock keys: one for a single-node strategy, every
	// master for Redlock.
	Nodes []drivers.Driver
	// Quorum is how many nodes make a lock held (1; Redlock: N/2 + 1): a
	// dead token is freed once at most len(Nodes) - Quorum nodes store it.
	Quorum int
	// Keys are the lock keys to read.
	Keys []string
	// Cluster reads one key per script (keys of several slots).
	Cluster bool
	// Interval is the time between reads. Default DefaultInterval.
	Interval time.Duration
	// Foreign, for a process that is one execution segment of several
	// (internal/segment), also times the tokens it never registered:
	// those of the other processes' clients (ForeignHoldMaxMS). Start
	// then has its Tracker keep every token of this process's in its map
	// (Tracker.indexAll), where a read finds them.
	Foreign bool
	// NotTokens are field names of hash lock keys that are no holder's
	// token (strategies.NonTokenFields: Redisson's "mode"): a read leaves
	// them out, where a field it does not find in the registry would
	// count as a live holder it does not judge (and, with Foreign, as
	// another process's token). Nil: every field is a token.
	NotTokens []string

	stop, done chan struct{}
	mu         sync.Mutex // held during a sample: Cost reads between samples
	// mixed: a read found a lock key of another type than a string; reads
	// go by the script from then on.
	mixed bool

	seq          int64
	samples      int64
	first, last  time.Duration
	cost         map[string]int64
	keys         []keyState
	heldPastTTL  int64
	seenLast     map[*entry]struct{}
	shareCand    []*entry // a key's dead tokens in the current read
	readErrors   int64
	goroutineMax int
	// foreign: per token of another process seen in the last read, the
	// first and last reads that saw it; foreignMax the longest span of
	// one such token no longer seen.
	foreign    map[tokKey]*span
	foreignMax time.Duration
}

type span struct {
	first, last time.Duration
	seq         int64
}

type keyState struct {
	since   time.Duration // first read that found only dead tokens (0: none)
	counted bool
}

// Start begins sampling on ctx's values (its cancellation is ignored: Stop
// ends the sampler).
func (s *Sampler) Start(ctx context.Context) {
	if s.Interval <= 0 {
		s.Interval = DefaultInterval
	}
	s.Quorum = max(s.Quorum, 1)
	s.cost = map[string]int64{}
	s.keys = make([]keyState, len(s.Keys))
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	if s.Foreign {
		s.T.indexAll()
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.Interval)
		defer t.Stop()
		for {
			s.sample(ctx)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends sampling after the sample in progress, if any.
func (s *Sampler) Stop() {
	if s.stop == nil {
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// Cost returns the server commands the sampler has sent, by command name
// as INFO commandstats counts them (the script and the commands it ran),
// so that the scenario's Redis cost can leave them out.
func (s *Sampler) Cost() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.cost))
	for k, v := range s.cost {
		out[k] = v
	}
	return out
}

// read returns, per key, the tokens node d stores. Keys of one slot
// (not Cluster) on a driver that pipelines are read by MULTI, MGET,
// EXISTS, EXEC: one round trip and a few µs of the server's time, no
// script (see strings); once a read finds a key holding another type
// than a string (a hash lock), the sampler reads by the script.
func (s *Sampler) read(ctx context.Context, d drivers.Driver) ([][]string, error) {
	out := make([][]string, len(s.Keys))
	step := chunk
	if s.Cluster {
		step = 1
	}
	pl, _ := d.(drivers.Pipeliner)
	for lo := 0; lo < len(s.Keys); lo += step {
		hi := min(lo+step, len(s.Keys))
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		if pl != nil && !s.Cluster && !s.mixed {
			done, err := s.strings(cctx, pl, s.Keys[lo:hi], out[lo:hi])
			if err != nil {
				cancel()
				return nil, err
			}
			if done {
				cancel()
				continue
			}
			s.mixed = true // and the script reads this chunk
		}
		r, err := d.Eval(cctx, readScript, s.Keys[lo:hi])
		cancel()
		if err != nil {
			return nil, err
		}
		s.cost["evalsha"]++
		s.cost["mget"]++
		for i, v := range r.Array {
			switch {
			case lo+i >= hi: // the EXISTS, TYPE and ZRANGE calls
				if c := []string{"exists", "type", "zrange"}; lo+i-hi < len(c) && v.Kind == drivers.KindInt && v.Int > 0 {
					s.cost[c[lo+i-hi]] += v.Int
					if c[lo+i-hi] == "zrange" { // counted as HKEYS below
						s.cost["hkeys"] -= v.Int
						if s.cost["hkeys"] == 0 {
							delete(s.cost, "hkeys")
						}
					}
				}
			case v.Kind == drivers.KindString:
				if v.Str != "" { // "": no string under the key
					out[lo+i] = []string{v.Str}
				}
			case v.Kind == drivers.KindArray:
				s.cost["hkeys"]++
				for _, f := range v.Array {
					out[lo+i] = append(out[lo+i], f.Str)
				}
			}
		}
	}
	return out, nil
}

// strings reads keys by MULTI, MGET, EXISTS, EXEC into out (a string
// key's value, nothing for the others) and reports whether that was all
// they held: every key that MGET found no string under is missing
// (EXISTS counted only the strings). Otherwise (false) some key holds
// another type (a hash), which the caller reads by the script.
func (s *Sampler) strings(ctx context.Context, pl drivers.Pipeliner, keys []string, out [][]string) (bool, error) {
	replies, errs := pl.Pipeline(ctx, []string{"MULTI"}, append([]string{"MGET"}, keys...), append([]string{"EXISTS"}, keys...), []string{"EXEC"})
	for _, err := range errs {
		if err != nil {
			return false, err
		}
	}
	for _, c := range []string{"multi", "mget", "exists", "exec"} {
		s.cost[c]++
	}
	r := replies[3]
	if r.Kind != drivers.KindArray || len(r.Array) != 2 || r.Array[0].Kind != drivers.KindArray || len(r.Array[0].Array) != len(keys) || r.Array[1].Kind != drivers.KindInt {
		return false, fmt.Errorf("liveness read: unexpected EXEC reply %v", r)
	}
	var stored int64
	for i, v := range r.Array[0].Array {
		if v.Kind == drivers.KindString {
			stored++
			if v.Str != "" {
				out[i] = []string{v.Str}
			}
		}
	}
	if r.Array[1].Int != stored {
		clear(out)
		return false, nil
	}
	return true, nil
}

func (s *Sampler) sample(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := runtime.NumGoroutine(); g > s.goroutineMax {
		s.goroutineMax = g
	}
	t0 := metrics.Now()
	per := make([][][]string, 0, len(s.Nodes))
	unread := 0
	for _, d := range s.Nodes {
		v, err := s.read(ctx, d)
		if err != nil {
			unread++
			s.readErrors++
			continue
		}
		per = append(per, v)
	}
	if len(per) == 0 {
		return
	}
	t1 := metrics.Now() // every token read was stored by now
	if s.samples == 0 {
		s.first = t0
	}
	s.samples++
	s.last = t0
	t := s.T
	t.mu.Lock()
	defer t.mu.Unlock()
	s.seq++
	seq := s.seq
	seen := map[*entry]struct{}{}
	grace := ShareGrace(t.ttl)
	for ki, key := range s.Keys {
		live, orphan := false, false
		cand := s.shareCand[:0]
		for _, node := range per {
			for _, tok := range node[ki] {
				if len(s.NotTokens) > 0 && slices.Contains(s.NotTokens, tok) {
					continue
				}
				e := t.m[tokKey{key, tok}]
				if e == nil {
					live = true // a token not registered: not ours to judge
					if s.Foreign {
						s.sawForeign(tokKey{key, tok}, t0, seq)
					}
					continue
				}
				if e.seq != seq {
					e.seq, e.seen = seq, 0
				}
				e.seen++
				if e.st == dead && e.since < t0 {
					if !e.orphan {
						e.orphan = true
						t.orphans++
						if !e.exit {
							t.orphanAcquires++
						}
					}
					e.lastSeen = t0
					if e.shareRef == 0 { // a failed acquire's: its lease began by the read's end
						e.shareRef = t1
					}
					orphan = true
					seen[e] = struct{}{}
					cand = append(cand, e)
				} else {
					live = true
				}
			}
		}
		if live { // dead shares beside a live owner's: orphan shares once past the grace
			for _, e := range cand {
				if !e.share && t0-e.shareRef > grace {
					e.share = true
					t.orphanShares++
				}
			}
		}
		clear(cand)
		s.shareCand = cand
		ks := &s.keys[ki]
		switch {
		case orphan && !live:
			if ks.since == 0 {
				ks.since, ks.counted = t0, false
			} else if !ks.counted && t0-ks.since > 3*t.ttl {
				ks.counted = true
				s.heldPastTTL++
			}
		default:
			ks.since = 0
		}
	}
	s.seenLast = seen
	for k, sp := range s.foreign { // tokens gone from this read: their span is over
		if sp.seq != seq {
			s.foreignMax = max(s.foreignMax, sp.last-sp.first)
			delete(s.foreign, k)
		}
	}
	n := len(s.Nodes)
	stored := func(e *entry) int { // nodes that hold e, unread ones counted
		k := unread
		if e.seq == seq {
			k += e.seen
		}
		return k
	}
	for e := range t.watch { // holders' exits: time to free
		if e.since < t0 && stored(e) <= n-s.Quorum {
			e.freed = true
			_ = t.ttf.RecordValue(max(1, (t0 - e.since).Microseconds()))
			delete(t.watch, e)
		}
	}
	// Refused tokens: a read begun after the refusal decides. Gone: never
	// stored, forgotten. Found: an orphan (counted above), kept as the
	// other dead tokens are.
	keep := t.fresh[:0]
	for _, r := range t.fresh {
		switch {
		case !r.live():
		case r.e.since >= t0:
			keep = append(keep, r)
		case stored(r.e) == 0:
			t.forget(r.e)
		default:
			t.aging = append(t.aging, r)
		}
	}
	clear(t.fresh[len(keep):])
	t.fresh = keep
	// The other dead tokens, oldest first: forgotten once gone and older
	// than the retention (a command still in flight may store one late);
	// one still stored is looked at again after the others.
	retain := t.ttl + 10*time.Second
	for k := len(t.aging); k > 0; k-- {
		r := t.aging[0]
		if r.live() && t0-r.e.since <= retain {
			break
		}
		t.aging[0] = deadRef{}
		t.aging = t.aging[1:]
		switch {
		case !r.live():
		case stored(r.e) == 0:
			t.forget(r.e)
		default:
			t.aging = append(t.aging, r)
		}
	}
}

// sawForeign records that the read begun at t0 (sample seq) found k, a
// token of another process.
func (s *Sampler) sawForeign(k tokKey, t0 time.Duration, seq int64) {
	if s.foreign == nil {
		s.foreign = map[tokKey]*span{}
	}
	sp := s.foreign[k]
	if sp == nil {
		sp = &span{first: t0}
		s.foreign[k] = sp
	}
	sp.last, sp.seq = t0, seq
}

// Result returns the liveness figures (call after Stop).
func (s *Sampler) Result() report.Liveness {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.T
	registered, unregistered := t.gather()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := report.Liveness{
		Measured:       true,
		Samples:        s.samples,
		OrphanLocks:    t.orphans,
		OrphanAcquires: t.orphanAcquires,
		OrphanRenewals: t.orphanRenewals.Load(),
		HeldPastTTL:    s.heldPastTTL,
		OrphanShares:   t.orphanShares,
		TimeToFreeMS:   metrics.Summarize(t.ttf),
		GoroutinesMax:  s.goroutineMax,
		ReadErrors:     s.readErrors,
	}
	if s.samples > 1 {
		out.ResolutionMS = float64((s.last-s.first)/time.Duration(s.samples-1)) / 1e6
	}
	ns := t.orphanNS
	for e := range t.dead {
		if e.orphan {
			ns += e.lastSeen - e.since
			if _, ok := s.seenLast[e]; ok {
				out.OrphansAtEnd++
			}
		}
	}
	out.OrphanLockMS = float64(ns) / 1e6
	out.OrphanShareAgeMS = metrics.Summarize(t.shareAgeHist())
	if s.Foreign {
		longest := s.foreignMax
		for _, sp := range s.foreign {
			longest = max(longest, sp.last-sp.first)
		}
		out.ForeignHoldMaxMS = float64(longest) / 1e6
	}
	if registered == 0 && unregistered > 0 {
		out.Measured = false
		out.NotMeasured = "the strategy does not report its tokens"
	}
	return out
}

// OrphanShareAges returns the ages of the orphan shares (µs; call after
// Stop), each from its owner's death to the last read that saw it: the raw
// data of Result's OrphanShareAgeMS (report.HistOrphanShareAge). A share
// still dead at the end counts up to its last read.
func (s *Sampler) OrphanShareAges() *hdrhistogram.Histogram {
	t := s.T
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.shareAgeHist()
}

// shareAgeHist is OrphanShareAges (t.mu held).
func (t *Tracker) shareAgeHist() *hdrhistogram.Histogram {
	h := hdrhistogram.Import(t.shareAges.Export())
	for e := range t.dead {
		if e.share {
			_ = h.RecordValue(max(1, (e.lastSeen - e.since).Microseconds()))
		}
	}
	return h
}

// TimeToFree returns a copy of the time-to-free histogram (µs; call after
// Stop): the raw data of Result's TimeToFreeMS.
func (s *Sampler) TimeToFree() *hdrhistogram.Histogram {
	t := s.T
	t.gather()
	t.mu.Lock()
	defer t.mu.Unlock()
	return hdrhistogram.Import(t.ttf.Export())
}
