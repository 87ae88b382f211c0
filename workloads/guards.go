package workloads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

// The write guards shared by the workloads that write an integer under
// their lock (flash-sale's stock, the counter workloads' counters), as Lua
// scripts. KEYS[1] is the integer written; every SET keeps the key's
// safety TTL (KEEPTTL; INCR keeps it anyway). A script applies the write
// and returns 1, or refuses it and returns 0.
var (
	// casWrite is the optimistic check: set KEYS[1] to ARGV[2] only if it
	// still holds ARGV[1], the value the holder read; KEYS[2], when given,
	// is incremented with the write (flash-sale's sold counter).
	casWrite = drivers.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('set', KEYS[1], ARGV[2], 'KEEPTTL')
	if KEYS[2] then redis.call('incr', KEYS[2]) end
	return 1
end
return 0`)
	// fenceRead: KEYS[1] = the integer, KEYS[2] = the highest fencing
	// token seen for it, KEYS[3], when given, the count of refusals
	// (Env.Rejections). Returns -1 for a token ARGV[1] below the highest
	// seen (and increments KEYS[3]), else records the token and returns
	// the integer (0 if missing).
	fenceRead = drivers.NewScript(`local f = tonumber(ARGV[1])
local hi = tonumber(redis.call('get', KEYS[2]) or '0')
if f < hi then
	if KEYS[3] then redis.call('incr', KEYS[3]) end
	return -1
end
if f > hi then redis.call('set', KEYS[2], ARGV[1], 'KEEPTTL') end
return tonumber(redis.call('get', KEYS[1]) or '0')`)
	// fenceWrite: KEYS[1] = the integer, KEYS[2] = the highest fencing
	// token seen; with ARGV[3] = "1" the last key is the count of
	// refusals (Env.Rejections); KEYS[3], when given before it, a counter
	// incremented with the write. Sets KEYS[1] to ARGV[2] unless token
	// ARGV[1] is below the highest seen (then it returns 0, and counts
	// the refusal), and records the token.
	fenceWrite = drivers.NewScript(`local f = tonumber(ARGV[1])
local hi = tonumber(redis.call('get', KEYS[2]) or '0')
local n = #KEYS
if ARGV[3] == '1' then n = n - 1 end
if f < hi then
	if ARGV[3] == '1' then redis.call('incr', KEYS[#KEYS]) end
	return 0
end
redis.call('set', KEYS[2], ARGV[1], 'KEEPTTL')
redis.call('set', KEYS[1], ARGV[2], 'KEEPTTL')
if n >= 3 then redis.call('incr', KEYS[3]) end
return 1`)
)

// errNoFence: the fence guard with a lease that carries no fencing token.
var errNoFence = errors.New("the fence guard needs a strategy with fencing tokens (fencing)")

// rmw is one guarded read-modify-write of the integer at key: read it
// (readValue), work, then write a new value (write). also, when not "",
// is a counter incremented with the write (flash-sale's sold); seen is
// the key of the highest fencing token seen for key (the fence guard).
type rmw struct {
	guard, key, also, seen string
	// zero: a missing key reads 0 (the counters); else the plain read
	// of a missing key is drivers.ErrNil (flash-sale: a stock lost with
	// its server is an error, not a sold-out item).
	zero  bool
	fence string // the holder's fencing token, decimal (fence guard)
	read  int64  // the value read
}

// readValue reads the integer at r.key under lease l (nil for a lock-free
// strategy) into r.read: with GuardFence through fenceRead, which records
// l's fencing token as the highest seen or, for a token below it, refuses
// (Obs.WriteRejected, ErrRejected; fenceRead reads a missing key as 0);
// otherwise a plain GET (a missing key: see zero).
func (r *rmw) readValue(ctx context.Context, w *Worker, l strategies.Lease) error {
	d := w.Env.Data
	if r.guard == GuardFence {
		fl, ok := l.(strategies.Fenced)
		if !ok {
			return errNoFence
		}
		r.fence = strconv.FormatInt(fl.Fence(), 10)
		rep, err := d.Eval(ctx, fenceRead, r.fenceKeys(w.Env, false), r.fence)
		if err != nil {
			return err
		}
		if rep.Int < 0 {
			w.Obs.WriteRejected()
			return ErrRejected
		}
		r.read = rep.Int
		return nil
	}
	rep, err := d.Do(ctx, "GET", r.key)
	if err != nil {
		return err
	}
	if r.zero {
		r.read, err = intOrZero(rep)
	} else {
		r.read, err = rep.AsInt()
	}
	return err
}

// fenceKeys are the scripts' KEYS for the fence guard: the integer, the
// highest token seen, for the write also when given, and the count of
// refusals (env.Rejections) when the server counts them.
func (r *rmw) fenceKeys(env *Env, write bool) []string {
	keys := []string{r.key, r.seen}
	if write && r.also != "" {
		keys = append(keys, r.also)
	}
	if env.Rejections != "" {
		keys = append(keys, env.Rejections)
	}
	return keys
}

// write sets r.key to next through the guard: GuardNone a plain SET (then
// INCR also, a second command), GuardCAS casWrite (the value must still be
// r.read), GuardFence fenceWrite (the token must not be below the highest
// seen). A refused write is counted (Obs.WriteRejected) and returns
// ErrRejected. Other guards are the workload's own (decr, incr): an error.
func (r *rmw) write(ctx context.Context, w *Worker, next int64) error {
	d := w.Env.Data
	val := strconv.FormatInt(next, 10)
	var rep drivers.Reply
	var err error
	switch r.guard {
	case GuardNone:
		if _, err := d.Do(ctx, "SET", r.key, val, "KEEPTTL"); err != nil || r.also == "" {
			return err
		}
		_, err := d.Do(ctx, "INCR", r.also)
		return err
	case GuardCAS:
		keys := []string{r.key}
		if r.also != "" {
			keys = append(keys, r.also)
		}
		rep, err = d.Eval(ctx, casWrite, keys, strconv.FormatInt(r.read, 10), val)
	case GuardFence:
		counted := "0"
		if w.Env.Rejections != "" {
			counted = "1"
		}
		rep, err = d.Eval(ctx, fenceWrite, r.fenceKeys(w.Env, true), r.fence, val, counted)
	default:
		return fmt.Errorf("workloads: guard %q is not a read-modify-write guard", r.guard)
	}
	if err != nil {
		return err
	}
	if rep.Int != 1 {
		w.Obs.WriteRejected()
		return ErrRejected
	}
	return nil
}

// Guarder is implemented by workloads that write protected data: Guards
// lists the write guards (Guard* constants) their write runs. A workload
// that does not implement it writes no data and runs GuardNone only.
type Guarder interface {
	Guards() []string
}

// Guards lists the write guards workload name runs (see Guarder), GuardNone
// first; nil for an unknown name.
func Guards(name string) []string {
	e, ok := reg.Get(name)
	if !ok {
		return nil
	}
	if g, ok := e.Value(registry.Defaults(e.Params)).(Guarder); ok {
		return g.Guards()
	}
	return []string{GuardNone}
}

// RunsGuard reports whether workload name runs write guard g.
func RunsGuard(name, g string) bool { return slices.Contains(Guards(name), g) }

// GuardedBy lists the workloads that run write guard g, sorted.
func GuardedBy(g string) []string {
	var out []string
	for _, n := range Names() {
		if RunsGuard(n, g) {
			out = append(out, n)
		}
	}
	return out
}

// AutoGuard is the guard workload name runs for a strategy that asks for
// g (strategies.Info.Guard; "" asks for none): g when the workload runs
// it; the increment in place (GuardIncr) for the conditional decrement
// on a workload with a counter instead of a stock (the lock-free
// strategies' own write on hot-key, long-task and nested); else GuardNone
// (a workload with no data, such as lock-cycle, guards nothing).
func AutoGuard(name, g string) string {
	switch {
	case g == "":
		return GuardNone
	case RunsGuard(name, g):
		return g
	case g == GuardDecr && RunsGuard(name, GuardIncr):
		return GuardIncr
	}
	return GuardNone
}
