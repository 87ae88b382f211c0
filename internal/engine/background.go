package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/workloads"
)

// Background is non-lock traffic on the lock's servers while a scenario
// runs (--background get=20000/s,set=5000/s): each command kind at its
// own rate, open loop, from connections of its own, on keys of its own
// inside the run's key prefix (PREFIX + "bg:"...), with its own counts and
// latency (report.Background). It shows how a lock behaves on a server
// busy with other work, and what the lock's traffic costs that work.
//
// Each command kind has a pacer of its own (constant spacing, or Poisson
// when the scenario's open loop is: Spec.Poisson) from the scenario's
// start, warm-up included; an arrival goes to a free connection (Conns of
// them per node, each with one command in flight, as memtier_benchmark's
// and redis-benchmark's clients without pipelining), or is dropped when
// none is free within the scenario's drop bound (DropAfter, 100 ms by
// default). Latency runs from the intended start (coordinated omission
// corrected). Only the arrivals due in the measured window are counted.
type Background struct {
	// Rates are the commands per second of each kind, in BackgroundCommands
	// order; 0: not sent.
	Rates [numBgCmds]float64
	// Keys is the key space (keys 0..Keys-1 of each kind), Size the bytes
	// of a SET's or HSET's value, Conns the connections per node.
	Keys, Size, Conns int
}

// The command kinds of background traffic.
const (
	bgGet = iota
	bgSet
	bgIncr
	bgHGet
	bgHSet
	numBgCmds
)

// BackgroundCommands are the command kinds --background takes, by
// Background.Rates index.
var BackgroundCommands = [numBgCmds]string{"get", "set", "incr", "hget", "hset"}

// Background's defaults and bounds.
const (
	BackgroundKeys  = 10000
	BackgroundSize  = 64
	BackgroundConns = 8
	maxBgRate       = 1e6
	maxBgKeys       = 10_000_000
	maxBgSize       = 1 << 20
	maxBgConns      = 256
)

// ParseBackground reads --background's value: comma-separated
// CMD=RATE/s (get, set, incr, hget, hset; a plural, gets=, is the same;
// the /s may be left out), and optionally keys=N (the key space, default
// 10000), size=B (value bytes, default 64) and conns=N (connections per
// node, default 8). At least one command needs a rate. "" is no
// background (nil).
func ParseBackground(s string) (*Background, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	b := &Background{Keys: BackgroundKeys, Size: BackgroundSize, Conns: BackgroundConns}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not CMD=RATE/s, keys=N, size=B or conns=N", part)
		}
		k = strings.ToLower(k)
		if seen[k] || seen[strings.TrimSuffix(k, "s")] {
			return nil, fmt.Errorf("%s is given twice", k)
		}
		seen[k] = true
		switch k {
		case "keys", "size", "conns":
			n, err := strconv.Atoi(v)
			lo, hi := 1, map[string]int{"keys": maxBgKeys, "size": maxBgSize, "conns": maxBgConns}[k]
			if err != nil || n < lo || n > hi {
				return nil, fmt.Errorf("%s=%s: want a whole number from %d to %d", k, v, lo, hi)
			}
			switch k {
			case "keys":
				b.Keys = n
			case "size":
				b.Size = n
			default:
				b.Conns = n
			}
			continue
		}
		i := bgIndex(k)
		if i < 0 {
			return nil, fmt.Errorf("%q is not a command it sends (%s) nor keys, size or conns", k, strings.Join(BackgroundCommands[:], ", "))
		}
		seen[BackgroundCommands[i]] = true
		r, err := strconv.ParseFloat(strings.TrimSuffix(v, "/s"), 64)
		if err != nil || math.IsNaN(r) || r <= 0 || r > maxBgRate {
			return nil, fmt.Errorf("%s=%s: want a rate like 2000/s, above 0 and at most %g/s", k, v, float64(maxBgRate))
		}
		b.Rates[i] = r
	}
	if b.Total() == 0 {
		return nil, fmt.Errorf("%q gives no command a rate (like get=2000/s)", s)
	}
	return b, nil
}

// bgIndex is the index of command k (or its plural); -1: none.
func bgIndex(k string) int {
	for i, c := range BackgroundCommands {
		if k == c || k == c+"s" {
			return i
		}
	}
	return -1
}

// Total is the commands per second of every kind together, per node.
func (b *Background) Total() float64 {
	var t float64
	for _, r := range b.Rates {
		t += r
	}
	return t
}

// String is b in ParseBackground's grammar, every setting spelt out:
// get=2000/s,set=500/s,keys=10000,size=64,conns=8.
func (b *Background) String() string {
	var parts []string
	for i, r := range b.Rates {
		if r > 0 {
			parts = append(parts, BackgroundCommands[i]+"="+strconv.FormatFloat(r, 'f', -1, 64)+"/s")
		}
	}
	parts = append(parts, "keys="+strconv.Itoa(b.Keys), "size="+strconv.Itoa(b.Size), "conns="+strconv.Itoa(b.Conns))
	return strings.Join(parts, ",")
}

// bgCounts are one command kind's counts on one node, the measured
// window's (the arrivals due in it).
type bgCounts struct {
	mu                 sync.Mutex // guards hist and sample
	hist               *hdrhistogram.Histogram
	sample             string
	sent, done, errs   atomic.Int64
	dropped, undecided atomic.Int64
	issued             atomic.Int64 // every command sent, warm-up included (the servers' cost)
}

// bgRun is the background traffic of one scenario while it runs.
type bgRun struct {
	b       *Background
	prefix  string
	value   string
	warmEnd time.Time
	counts  [numBgCmds]bgCounts
	ds      []drivers.Driver // Conns per node, node after node
	wg      sync.WaitGroup
}

// openBackground opens the background's connections: Conns drivers of
// one connection each (PoolSize 1) on every node, none shared with the
// clients, and creates the keys of every command kind in use (bgFill, in
// batches of 500), each with the scenario's safety TTL, before the clock
// starts: GET and HGET find values, and SET (KEEPTTL), INCR and HSET
// keep the TTL. The caller closes the
// drivers (bgRun.close). Errors: a connection or the fill.
func (r *run) openBackground() (*bgRun, error) {
	sc := &r.sc
	b := sc.Background
	bg := &bgRun{b: b, prefix: r.prefix + "bg:", value: strings.Repeat("x", b.Size)}
	c := sc.Client
	c.PoolSize = 1
	for _, n := range r.nodes {
		for i := 0; i < b.Conns; i++ {
			ds, err := OpenClient(r.ctx, sc.Driver, []Node{n}, 1, c)
			if err != nil {
				bg.close()
				return nil, fmt.Errorf("--background: %w", err)
			}
			bg.ds = append(bg.ds, ds[0])
		}
	}
	if sc.Env.Follower {
		return bg, nil
	}
	ctx, cancel := context.WithTimeout(r.bg, 30*time.Second)
	defer cancel()
	ttl := strconv.FormatInt((sc.Warmup + sc.Duration + workloads.SafetyMargin).Milliseconds(), 10)
	for _, f := range []struct {
		used       bool
		kind, name string
	}{
		{b.Rates[bgGet] > 0 || b.Rates[bgSet] > 0, "s", ""},
		{b.Rates[bgIncr] > 0, "n", "n:"},
		{b.Rates[bgHGet] > 0 || b.Rates[bgHSet] > 0, "h", "h:"},
	} {
		if !f.used {
			continue
		}
		for node := range r.nodes {
			d := bg.ds[node*b.Conns]
			for lo := 0; lo < b.Keys; lo += 500 {
				var keys []string
				for k := lo; k < min(lo+500, b.Keys); k++ {
					keys = append(keys, bg.prefix+f.name+strconv.Itoa(k))
				}
				if _, err := d.Eval(ctx, bgFill, keys, ttl, f.kind, bg.value); err != nil {
					bg.close()
					return nil, fmt.Errorf("--background: filling its keys: %w", err)
				}
			}
		}
	}
	return bg, nil
}

// bgFill creates the keys KEYS of one family of background keys, each
// with the TTL ARGV[1] ms (the scenario's safety TTL: warm-up + duration
// + workloads.SafetyMargin), by kind ARGV[2]: "s" a string ARGV[3] (what
// GET reads and SET KEEPTTL overwrites), "n" a string 0 (INCR's
// counters), "h" a hash with field f = ARGV[3] (HGET, HSET). The
// commands during the run keep that TTL (SET with KEEPTTL, INCR, HSET),
// so no background key outlives a killed run by more than it.
var bgFill = drivers.NewScript(`for _, k in ipairs(KEYS) do
	if ARGV[2] == 'h' then
		redis.call('hset', k, 'f', ARGV[3])
		redis.call('pexpire', k, ARGV[1])
	elseif ARGV[2] == 'n' then
		redis.call('set', k, '0', 'PX', ARGV[1])
	else
		redis.call('set', k, ARGV[3], 'PX', ARGV[1])
	end
end
return #KEYS`)

// close closes the background's connections.
func (g *bgRun) close() {
	for _, d := range g.ds {
		d.Close()
	}
}

// bgJob is one arrival: its intended start and command kind.
type bgJob struct {
	at  time.Time
	cmd int
}

// start runs the background from start until ctx ends: per node, a
// scheduler per command kind and Conns workers. wait waits for every
// command sent to end.
func (g *bgRun) start(ctx context.Context, start, warmEnd, end time.Time, poisson bool, seed uint64, dropAfter time.Duration) {
	g.warmEnd = warmEnd
	b := g.b
	for i := range g.counts {
		if b.Rates[i] > 0 {
			g.counts[i].hist = metrics.NewHistogram()
		}
	}
	nodes := len(g.ds) / b.Conns
	for node := 0; node < nodes; node++ {
		jobs := make(chan bgJob)
		for cmd, rate := range b.Rates {
			if rate <= 0 {
				continue
			}
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				rng := rand.New(rand.NewPCG(seed, 1<<42|uint64(node)<<8|uint64(cmd)))
				g.schedule(ctx, NewPacer(start, rate, poisson, rng), cmd, end, jobs, dropAfter)
			}()
		}
		for i := 0; i < b.Conns; i++ {
			d := g.ds[node*b.Conns+i]
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				g.work(ctx, d, jobs, seed, uint64(node*b.Conns+i))
			}()
		}
	}
}

// wait waits for the schedulers and the workers to end (after ctx ended:
// the commands in flight finish, so every command sent is done or failed).
func (g *bgRun) wait() { g.wg.Wait() }

// counted reports whether an arrival due at at is the measured window's.
func (g *bgRun) counted(at time.Time) bool { return !at.Before(g.warmEnd) }

// schedule hands command cmd's arrivals from p to a free worker through
// jobs, as the lock's open loop does (schedule): an arrival that finds no
// worker free within dropAfter of its intended time is dropped; those
// due before the stop that were neither are undecided; arrivals due at
// or after end are not offered.
func (g *bgRun) schedule(ctx context.Context, p *Pacer, cmd int, end time.Time, jobs chan<- bgJob, dropAfter time.Duration) {
	c := &g.counts[cmd]
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	finish := func(at time.Time) {
		stop := time.Now()
		if end.Before(stop) {
			stop = end
		}
		for ; at.Before(stop); at = p.Next() {
			if g.counted(at) {
				c.undecided.Add(1)
			}
		}
	}
	drop := func(at time.Time) {
		if g.counted(at) {
			c.dropped.Add(1)
		}
	}
	for {
		at := p.Next()
		if !at.Before(end) {
			<-ctx.Done()
			return
		}
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				finish(at)
				return
			case <-timer.C:
			}
		}
		j := bgJob{at: at, cmd: cmd}
		select {
		case jobs <- j:
			continue
		case <-ctx.Done():
			finish(at)
			return
		default:
		}
		wait := time.Until(at.Add(dropAfter))
		if wait <= 0 {
			drop(at)
			continue
		}
		timer.Reset(wait)
		select {
		case jobs <- j:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
			drop(at)
		case <-ctx.Done():
			finish(at)
			return
		}
	}
}

// work sends the commands handed to it on d, one at a time, until ctx
// ends; each runs on a context the stop does not cancel (the driver's
// timeouts bound it), so every command sent ends done or failed.
func (g *bgRun) work(ctx context.Context, d drivers.Driver, jobs <-chan bgJob, seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, 1<<43|stream))
	call := context.WithoutCancel(ctx)
	for {
		var j bgJob
		select {
		case <-ctx.Done():
			return
		case j = <-jobs:
		}
		c := &g.counts[j.cmd]
		k := strconv.Itoa(rng.IntN(g.b.Keys))
		var err error
		switch j.cmd {
		case bgGet:
			_, err = d.Do(call, "GET", g.prefix+k)
		case bgSet:
			_, err = d.Do(call, "SET", g.prefix+k, g.value, "KEEPTTL")
		case bgIncr:
			_, err = d.Do(call, "INCR", g.prefix+"n:"+k)
		case bgHGet:
			_, err = d.Do(call, "HGET", g.prefix+"h:"+k, "f")
		case bgHSet:
			_, err = d.Do(call, "HSET", g.prefix+"h:"+k, "f", g.value)
		}
		took := time.Since(j.at)
		c.issued.Add(1)
		if !g.counted(j.at) {
			continue
		}
		c.sent.Add(1)
		if err != nil {
			c.errs.Add(1)
			c.mu.Lock()
			if c.sample == "" {
				c.sample = err.Error()
			}
			c.mu.Unlock()
			continue
		}
		c.done.Add(1)
		c.mu.Lock()
		metrics.Record(c.hist, took)
		c.mu.Unlock()
	}
}

// raw is the measured window's counts as the result keeps them.
func (g *bgRun) raw() *report.BackgroundRaw {
	out := &report.BackgroundRaw{Commands: map[string]report.BackgroundCounts{}}
	for i := range g.counts {
		if g.b.Rates[i] <= 0 {
			continue
		}
		c := &g.counts[i]
		sent, dropped := c.sent.Load(), c.dropped.Load()
		out.Commands[BackgroundCommands[i]] = report.BackgroundCounts{
			Offered: sent + dropped, Sent: sent, Done: c.done.Load(), Errors: c.errs.Load(),
			Dropped: dropped, Undecided: c.undecided.Load(), Hist: report.EncodeHist(c.hist), ErrorSample: c.sample,
		}
	}
	return out
}

// issued is every command sent, warm-up included, by command name (the
// servers' commandstats count them: the lock's cost leaves them out).
func (g *bgRun) issued() map[string]int64 {
	m := map[string]int64{}
	for i := range g.counts {
		if n := g.counts[i].issued.Load(); n > 0 {
			m[BackgroundCommands[i]] = n
		}
	}
	return m
}
