package workloads

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/lockbench/lockbench/internal/metrics"
)

func init() {
	Register("flash-sale", "inventory decrement under the lock: GET stock, work, SET stock-1, INCR sold (--stock, --skus, --work)",
		func() Workload { return &flashSale{} })
}

// flashSale is the articles' seckill: stock S for each of K SKUs; one order
// takes the SKU's lock, reads the stock, spends the critical-section time,
// then writes stock-1 and records the order as two separate commands that
// only the lock protects, and releases. Keys per SKU i share the hash tag
// {sku:i}: <prefix>{sku:i}:lock, :stock and :sold.
//
// Verify: sold = Σ sold counters; final_stock = Σ stock;
// oversell = Σ max(0, sold_i − S); lost_updates = Σ sold_i − (S − stock_i)
// (orders whose stock decrement another holder overwrote).
type flashSale struct {
	lock, stock, sold []string
	soldOut           []atomic.Bool
	left              atomic.Int64 // SKUs not yet seen sold out
}

var _ Workload = (*flashSale)(nil)

func (f *flashSale) Setup(ctx context.Context, env *Env) error {
	p := env.Params
	if p.SKUs < 1 {
		return errors.New("flash-sale: --skus must be >= 1")
	}
	if p.Stock < 1 {
		return errors.New("flash-sale: --stock must be >= 1")
	}
	f.lock = make([]string, p.SKUs)
	f.stock = make([]string, p.SKUs)
	f.sold = make([]string, p.SKUs)
	f.soldOut = make([]atomic.Bool, p.SKUs)
	f.left.Store(int64(p.SKUs))
	env.Oracle = metrics.NewOracle(p.SKUs)
	s := strconv.FormatInt(p.Stock, 10)
	for i := range f.lock {
		base := env.Prefix + "{sku:" + strconv.Itoa(i) + "}:"
		f.lock[i], f.stock[i], f.sold[i] = base+"lock", base+"stock", base+"sold"
		if _, err := env.Data.Do(ctx, "SET", f.stock[i], s); err != nil {
			return err
		}
		if _, err := env.Data.Do(ctx, "SET", f.sold[i], "0"); err != nil {
			return err
		}
	}
	return nil
}

// pick returns a SKU not yet seen sold out, starting at a random one, or
// -1 when every SKU is sold out.
func (f *flashSale) pick(w *Worker) int {
	n := len(f.lock)
	start := 0
	if n > 1 {
		start = w.Rng.IntN(n)
	}
	for k := 0; k < n; k++ {
		i := (start + k) % n
		if !f.soldOut[i].Load() {
			return i
		}
	}
	return -1
}

func (f *flashSale) Op(ctx context.Context, w *Worker) error {
	i := f.pick(w)
	if i < 0 {
		return ErrDone
	}
	lease, err := w.Lock(ctx, f.lock[i])
	if err != nil {
		return err
	}
	env := w.Env
	ioctx, cancel := env.IOContext(ctx)
	defer cancel()

	env.Oracle.Enter(i)
	err = f.critical(ioctx, w, i)
	env.Oracle.Leave(i) // before the release: the next holder may enter at once
	if rerr := w.Unlock(ctx, lease); err == nil {
		err = rerr
	}
	return err
}

// critical is the section the lock protects.
func (f *flashSale) critical(ctx context.Context, w *Worker, i int) error {
	d := w.Env.Data
	r, err := d.Do(ctx, "GET", f.stock[i])
	if err != nil {
		return err
	}
	n, err := r.AsInt()
	if err != nil {
		return err
	}
	if n <= 0 {
		if !f.soldOut[i].Swap(true) && f.left.Add(-1) == 0 {
			return ErrDone
		}
		return ErrSkip
	}
	w.Work()
	if _, err := d.Do(ctx, "SET", f.stock[i], strconv.FormatInt(n-1, 10)); err != nil {
		return err
	}
	_, err = d.Do(ctx, "INCR", f.sold[i])
	return err
}

func (f *flashSale) Verify(ctx context.Context, env *Env) (Result, error) {
	var sold, final, oversell, lost int64
	S := env.Params.Stock
	for i := range f.lock {
		r, err := env.Data.Do(ctx, "MGET", f.stock[i], f.sold[i])
		if err != nil {
			return Result{}, err
		}
		if len(r.Array) != 2 {
			return Result{}, errors.New("flash-sale: MGET returned a malformed reply")
		}
		st, err1 := r.Array[0].AsInt()
		so, err2 := r.Array[1].AsInt()
		if err := errors.Join(err1, err2); err != nil {
			return Result{}, err
		}
		sold += so
		final += st
		oversell += max(0, so-S)
		lost += so - (S - st)
	}
	return Result{
		Figures:    map[string]int64{"sold": sold, "final_stock": final},
		Violations: map[string]int64{"oversell": oversell, "lost_updates": lost},
	}, nil
}
