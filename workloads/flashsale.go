package workloads

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

func init() {
	Register("flash-sale", "inventory decrement under the lock: GET stock, work, SET stock-1, INCR sold (--stock, --skus, --work)",
		[]registry.Param{
			{Name: "stock", Doc: "initial stock per item", Default: int64(1000), Check: registry.Between(int64(1), int64(1e15))},
			{Name: "skus", Doc: "number of items, each with its own lock", Default: 1, Check: registry.Between(1, 100_000)},
			{Name: "read-ratio", Doc: "share of operations that only read (0..1), under rwlock's read side or the lock itself", Default: 0.0,
				Check: registry.Between(0.0, 1.0)},
		},
		func(v registry.Values) Workload {
			return &flashSale{stock: v.Int64("stock"), skus: v.Int("skus"), readRatio: v.Float("read-ratio")}
		})
}

// decrWrite is flash-sale's own guard, the conditional decrement: KEYS[1]
// = stock, KEYS[2] = sold; stock = stock - 1 where stock >= 1, and the
// order recorded (the other guards are in guards.go). The SET keeps the
// key's safety TTL.
var decrWrite = drivers.NewScript(`local n = tonumber(redis.call('get', KEYS[1]) or '0')
if n >= 1 then
	redis.call('set', KEYS[1], n - 1, 'KEEPTTL')
	redis.call('incr', KEYS[2])
	return 1
end
return 0`)

// flashSale is the articles' seckill: stock S for each of K SKUs; one order
// takes the SKU's lock, reads the stock, spends the critical-section time,
// then writes stock-1 and records the order as two separate commands that
// only the lock protects, and releases.
//
// With Params.Segments = N > 1 (the `segmented` strategy), each SKU's stock
// is split into N shares with a lock each; an order starts at the segment
// its order id hashes to and moves on while segments are sold out.
// Params.Guard adds a check to the write (see the Guard* constants).
//
// Keys per slot (SKU i, segment j) share the hash tag {sku:i:j}:
// <prefix>{sku:i:j}:lock, :stock, :sold, :fence-seen.
//
// Verify: sold = Σ sold counters; final_stock = Σ stock;
// oversell = Σ max(0, sold_slot − share_slot); lost_updates =
// Σ sold_slot − (share_slot − stock_slot) (orders whose decrement another
// holder overwrote).
type flashSale struct {
	// rows holds the stock in SQL rows instead of Redis (sql-rowlock,
	// sql-guard); lockless runs each order with no lock (redis-guard,
	// sql-guard): only the guarded write protects the stock.
	rows      strategies.RowStore
	lockless  bool
	stock     int64   // initial stock per SKU
	skus      int     // items
	readRatio float64 // share of read-only operations
	segs      int
	slots     []slot
	left      atomic.Int64 // slots not yet seen sold out
	guard     string
	acked     atomic.Int64 // orders whose writes the server acknowledged
}

type slot struct {
	lock, stock, sold, fence string
	share                    int64
	soldOut                  atomic.Bool
}

var (
	_ Workload   = (*flashSale)(nil)
	_ Guarder    = (*flashSale)(nil)
	_ RoleRunner = (*flashSale)(nil)
)

// Roles: flash-sale's read role reads the stock and the orders under the
// lock's read side (the read-ratio operation).
func (*flashSale) Roles() []string { return []string{RoleRead} }

// Guards: flash-sale's write takes every guard but the increment in place.
func (*flashSale) Guards() []string { return []string{GuardNone, GuardCAS, GuardDecr, GuardFence} }

func (f *flashSale) Setup(ctx context.Context, env *Env) error {
	p := env.Params
	f.segs = max(p.Segments, 1)
	if f.guard = p.Guard; f.guard == "" {
		f.guard = GuardNone
	}
	if !slices.Contains(f.Guards(), f.guard) {
		return fmt.Errorf("flash-sale: guard %q is not one of %s", p.Guard, strings.Join(f.Guards(), ", "))
	}
	f.lockless = strategies.IsLockless(env.Locker)
	if rs, ok := env.Locker.(strategies.RowStore); ok {
		f.rows = rs
	}
	f.slots = make([]slot, f.skus*f.segs)
	f.left.Store(int64(len(f.slots)))
	env.SetLocks(len(f.slots))
	for i := 0; i < f.skus; i++ {
		for j := 0; j < f.segs; j++ {
			s := &f.slots[i*f.segs+j]
			base := env.Prefix + "{sku:" + strconv.Itoa(i) + ":" + strconv.Itoa(j) + "}:"
			s.lock, s.stock, s.sold, s.fence = base+"lock", base+"stock", base+"sold", base+"fence-seen"
			s.share = f.stock / int64(f.segs)
			if int64(j) < f.stock%int64(f.segs) {
				s.share++
			}
		}
	}
	if f.rows != nil { // one row per slot, keyed by its lock key
		keys, shares := make([]string, len(f.slots)), make([]int64, len(f.slots))
		for i := range f.slots {
			keys[i], shares[i] = f.slots[i].lock, f.slots[i].share
		}
		return f.rows.CreateRows(ctx, env.Prefix, keys, shares)
	}
	// Initial stock in batches (one slot per batch on a cluster), each key
	// with the safety TTL; the fence guard's highest token seen starts at 0
	// too, so that no key is created later without one.
	step := batchSize(env)
	for lo := 0; lo < len(f.slots); lo += step {
		var keys, vals []string
		for i := lo; i < min(lo+step, len(f.slots)); i++ {
			s := &f.slots[i]
			keys = append(keys, s.stock, s.sold)
			vals = append(vals, strconv.FormatInt(s.share, 10), "0")
			if f.guard == GuardFence {
				keys, vals = append(keys, s.fence), append(vals, "0")
			}
		}
		if err := SetData(ctx, env, keys, vals); err != nil {
			return err
		}
	}
	return nil
}

func intOrZero(r drivers.Reply) (int64, error) {
	if r.IsNil() {
		return 0, nil
	}
	return r.AsInt()
}

// batch is how many slots one MSET or MGET covers.
const batch = 500

// batchSize is batch, or 1 on a cluster, where a multi-key command must
// stay in one hash slot (a flash-sale slot's keys share one hash tag).
func batchSize(env *Env) int {
	if env.Cluster {
		return 1
	}
	return batch
}

// LockKeys lists every slot's lock key.
func (f *flashSale) LockKeys() []string {
	keys := make([]string, len(f.slots))
	for i := range f.slots {
		keys[i] = f.slots[i].lock
	}
	return keys
}

// pick returns a slot not yet seen sold out: a random SKU, and within it
// the segment the order id hashes to, then the next ones; -1 when every
// slot is sold out.
func (f *flashSale) pick(w *Worker) int {
	skus := len(f.slots) / f.segs
	sku0, seg0 := 0, 0
	if skus > 1 {
		sku0 = w.Rng.IntN(skus)
	}
	if f.segs > 1 {
		w.orders++
		seg0 = int(mix(uint64(w.ID)<<32|w.orders) % uint64(f.segs))
	}
	for a := 0; a < skus; a++ {
		sku := (sku0 + a) % skus
		for b := 0; b < f.segs; b++ {
			i := sku*f.segs + (seg0+b)%f.segs
			if !f.slots[i].soldOut.Load() {
				return i
			}
		}
	}
	return -1
}

// mix is the splitmix64 finaliser: a hash of the order id.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// hold runs body for slot i under its lock (the read side when read), or
// with no lock for the lock-free strategies.
func (f *flashSale) hold(ctx context.Context, w *Worker, i int, read bool, body func(context.Context, strategies.Lease) error) error {
	if f.lockless {
		return w.Unlocked(ctx, body)
	}
	return w.Hold(ctx, i, f.slots[i].lock, read, body)
}

func (f *flashSale) Op(ctx context.Context, w *Worker) error {
	i := f.pick(w)
	if i < 0 {
		return ErrDone
	}
	s := &f.slots[i]
	if p := f.readRatio; w.Role == RoleRead || p > 0 && w.Rng.Float64() < p {
		read := func(ctx context.Context, _ strategies.Lease) error {
			var err error
			if f.rows != nil {
				_, err = f.rows.ReadRow(ctx, s.lock)
			} else {
				_, err = w.Env.Data.Do(ctx, "MGET", s.stock, s.sold)
			}
			if err == nil {
				w.Work()
			}
			return err
		}
		err := f.hold(ctx, w, i, true, read)
		if err == nil {
			w.Obs.Read()
		}
		return err
	}
	order := func(ctx context.Context, l strategies.Lease) error {
		err := f.critical(ctx, w, s, l)
		if err == nil {
			f.acked.Add(1)
			w.Wrote(l)
		}
		return err
	}
	err := f.hold(ctx, w, i, false, order)
	if errors.Is(err, errSoldOut) {
		if !s.soldOut.Swap(true) && f.left.Add(-1) == 0 {
			return ErrDone
		}
		return ErrSkip
	}
	return err
}

var errSoldOut = errors.New("sold out")

// critical is the section the lock protects (with a lock-free strategy,
// the section its guard protects; lease is then nil).
func (f *flashSale) critical(ctx context.Context, w *Worker, s *slot, lease strategies.Lease) error {
	if f.rows != nil {
		return f.criticalRows(ctx, w, s, lease)
	}
	r := rmw{guard: f.guard, key: s.stock, also: s.sold, seen: s.fence}
	if err := r.readValue(ctx, w, lease); err != nil {
		if errors.Is(err, errNoFence) {
			return fmt.Errorf("flash-sale: %w", err)
		}
		return err
	}
	n := r.read
	if n <= 0 {
		return errSoldOut
	}
	w.Work()
	// A holder told of its loss (watchdog found the token gone, Redlock's
	// validity ran out) must not write: the lock may be someone else's.
	if Lost(lease) {
		w.Obs.WriteRejected()
		return ErrRejected
	}
	w.BeforeWrite()
	if f.guard != GuardDecr {
		return r.write(ctx, w, n-1)
	}
	rep, err := w.Env.Data.Eval(ctx, decrWrite, []string{s.stock, s.sold})
	if err != nil {
		return err
	}
	if rep.Int != 1 {
		w.Obs.WriteRejected()
		return ErrRejected
	}
	return nil
}

// criticalRows is critical on SQL rows. Under sql-rowlock's row lock (guard
// none): the stock read by SELECT ... FOR UPDATE, work, then UPDATE n =
// read - 1, sold = sold + 1 in the transaction, which Release commits.
// With sql-guard (decr): a plain read, work, then the guarded UPDATE ...
// WHERE n >= 1; a refused one is counted in Rejected.
func (f *flashSale) criticalRows(ctx context.Context, w *Worker, s *slot, lease strategies.Lease) error {
	if f.guard == GuardNone {
		rl, ok := lease.(strategies.RowLease)
		if !ok {
			return errors.New("flash-sale: an unguarded write to SQL rows needs the row lock (sql-rowlock)")
		}
		n := rl.Value()
		if n <= 0 {
			return errSoldOut
		}
		w.Work()
		if Lost(lease) {
			w.Obs.WriteRejected()
			return ErrRejected
		}
		return rl.WriteRow(ctx, n-1, 1)
	}
	n, err := f.rows.ReadRow(ctx, s.lock)
	if err != nil {
		return err
	}
	if n <= 0 {
		return errSoldOut
	}
	w.Work()
	ok, err := f.rows.Decrement(ctx, s.lock)
	if err != nil {
		return err
	}
	if !ok {
		w.Obs.WriteRejected()
		return ErrRejected
	}
	return nil
}

// tally adds up the end state of the slots into Verify's figures.
type tally struct{ sold, final, oversell, lost, unrecorded, missing int64 }

// add counts one slot with initial share, final stock st and sold so.
func (t *tally) add(share, st, so int64) {
	t.sold += so
	t.final += st
	t.oversell += max(0, so-share)
	// A stock decrement with no recorded order (the INCR after the SET
	// failed) must not cancel a lost update elsewhere.
	if d := so - (share - st); d >= 0 {
		t.lost += d
	} else {
		t.unrecorded -= d
	}
}

// result is the tally with acked, the orders the store acknowledged.
func (t *tally) result(acked int64) Result {
	return Result{
		Figures: map[string]int64{"sold": t.sold, "final_stock": t.final, "unrecorded_orders": t.unrecorded,
			"acked_orders": acked, "missing_keys": t.missing},
		Violations: map[string]int64{Oversell: t.oversell, LostUpdates: t.lost,
			LostAckedWrites: max(0, acked-t.sold)},
	}
}

// verifyRows is Verify on SQL rows: the same figures from n (stock) and
// sold of each slot's row.
func (f *flashSale) verifyRows(ctx context.Context) (Result, error) {
	stock, soldRows, err := f.rows.Rows(ctx)
	if err != nil {
		return Result{}, err
	}
	var t tally
	for i := range f.slots {
		t.add(f.slots[i].share, stock[i], soldRows[i])
	}
	return t.result(f.acked.Load()), nil
}

// Counts are the orders the store acknowledged (workloads.Pooled).
func (f *flashSale) Counts() map[string]int64 { return map[string]int64{"acked": f.acked.Load()} }

// SetCounts sets the acknowledged orders to the sum over every segment.
func (f *flashSale) SetCounts(m map[string]int64) {
	if v, ok := m["acked"]; ok {
		f.acked.Store(v)
	}
}

func (f *flashSale) Verify(ctx context.Context, env *Env) (Result, error) {
	if f.rows != nil {
		return f.verifyRows(ctx)
	}
	var t tally
	step := batchSize(env)
	for lo := 0; lo < len(f.slots); lo += step {
		hi := min(lo+step, len(f.slots))
		args := []string{"MGET"}
		for i := lo; i < hi; i++ {
			args = append(args, f.slots[i].stock, f.slots[i].sold)
		}
		r, err := env.Data.Do(ctx, args...)
		if err != nil {
			return Result{}, err
		}
		if len(r.Array) != len(args)-1 {
			return Result{}, errors.New("flash-sale: MGET returned a malformed reply")
		}
		for i := lo; i < hi; i++ {
			// A stock key missing at the end (its node restarted empty, or a
			// failover to a replica that never had it): the slot's end state
			// is unknown and left out of oversell and lost updates.
			if r.Array[2*(i-lo)].IsNil() {
				t.missing++
				so, _ := intOrZero(r.Array[2*(i-lo)+1])
				t.sold += so
				continue
			}
			st, err1 := intOrZero(r.Array[2*(i-lo)])
			so, err2 := intOrZero(r.Array[2*(i-lo)+1])
			if err := errors.Join(err1, err2); err != nil {
				return Result{}, err
			}
			t.add(f.slots[i].share, st, so)
		}
	}
	return t.result(f.acked.Load()), nil
}
