package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/registry"
	"github.com/lockbench/lockbench/strategies"
)

func init() {
	Register("transfer", "moves money between accounts under every involved account's lock (--accounts, --transfer-keys, --order sorted|given): multi-key locks; the balances' sum must not change",
		[]registry.Param{
			{Name: "accounts", Doc: "number of accounts, each a Redis key with its own lock", Default: 100, Check: registry.Between(2, 1_000_000)},
			{Name: "balance", Doc: "initial balance of each account", Default: int64(1000), Check: registry.Between(int64(0), int64(1e12))},
			{Name: "transfer-keys", Doc: "accounts one transfer locks and writes (the first pays each of the others)", Default: 2, Check: registry.Between(2, 16)},
			{Name: "order", Doc: "key order of a lock without multi-key acquire: sorted (the deadlock-avoidance rule) or given (hold and wait, can deadlock)",
				Default: strategies.OrderSorted, Check: registry.OneOf(strategies.OrderSorted, strategies.OrderGiven)},
			zipfParam,
		},
		func(v registry.Values) Workload {
			return &transfer{accounts: v.Int("accounts"), balance: v.Int64("balance"), k: v.Int("transfer-keys"),
				order: v.String("order"), zipfS: v.Float("zipf")}
		})
}

// Figures of the transfer workload (Result.Figures; see
// docs/workloads-and-faults.md, "transfer").
const (
	// FigureBalanceDrift is |Σ final balances − Σ initial balances| of one
	// end check: money a broken lock created or destroyed (a transfer's
	// debit or credit overwritten by another holder's write). 0 for a
	// correct lock. Absent when a balance key was missing at the end (the
	// sum is unknown). Summed over combined runs (each run's own drift).
	FigureBalanceDrift = "balance_drift"
	// FigureMultiTimeouts are the acquires that timed out (or whose retry
	// policy gave up) while they held some of their keys: with order=given,
	// the deadlocks that the acquire timeout broke (and, for a lock whose
	// library gives up, its give-ups while holding a key). Always 0 with
	// order=sorted and with a strategies.MultiLocker, which give back
	// what they hold before they wait again.
	FigureMultiTimeouts = "multi_timeouts"
)

// transferWrite sets KEYS[i] to ARGV[i], keeping each key's safety TTL:
// a transfer's new balances and write counts, all at once.
var transferWrite = drivers.NewScript(`for i, k in ipairs(KEYS) do
	redis.call('set', k, ARGV[i], 'KEEPTTL')
end
return #KEYS`)

// transfer is the bank-transfer workload: A accounts (accounts), each a
// balance key with its own lock and a count of the writes made to it. A
// transfer picks k distinct accounts (transfer-keys; the key distribution
// of --zipf, as hot-key's), takes every one's lock (Worker.HoldMulti: the
// strategy's TryAcquireMulti, or one acquire per key in order), reads
// their balances and counts (one MGET), spends the work time, and writes
// back the first account's balance less (k−1) x amount and each other's
// plus amount, with every count plus one (one script): a read-modify-write
// that only the locks protect, so that a broken lock creates or destroys
// money. amount is 1..100.
//
// Keys of account i share the hash tag {acct:i} (on a Cluster every
// account shares {acct}, so that a transfer's keys, and a multi-key lock
// script's, are in one slot): <prefix>{acct:i}:lock, :balance, :writes.
//
// Verify: balance_initial = accounts x balance; balance_final = Σ
// balances; balance_drift = |final − initial|; transfers = transfers
// acknowledged; multi_timeouts (see FigureMultiTimeouts); lost_updates =
// Σ over accounts of max(0, writes acknowledged − the account's write
// count): a write another holder overwrote, counted per account.
type transfer struct {
	accounts, k int
	balance     int64
	order       string
	zipfS       float64
	locks       []string
	bal, writes []string
	acked       []atomic.Int64 // writes acknowledged, per account
	zipf        []*rand.Zipf   // per worker, made on first use
	done        atomic.Int64   // transfers acknowledged
	timeouts    atomic.Int64   // multi_timeouts
	// pooled are the acknowledged writes summed over every execution
	// segment (SetCounts); -1: this process's alone.
	pooled atomic.Int64
}

var (
	_ Workload  = (*transfer)(nil)
	_ LockKeyer = (*transfer)(nil)
	_ Pooled    = (*transfer)(nil)
)

func (t *transfer) Setup(ctx context.Context, env *Env) error {
	if strategies.IsLockless(env.Locker) {
		return errors.New("transfer: needs a lock (the strategy takes none)")
	}
	if g := env.Params.Guard; g != "" && g != GuardNone {
		return fmt.Errorf("transfer: guard %q: the transfer's write takes no guard (only %s)", g, GuardNone)
	}
	if t.k > t.accounts {
		return fmt.Errorf("transfer: transfer-keys %d exceeds accounts %d", t.k, t.accounts)
	}
	n := t.accounts
	t.locks, t.bal, t.writes = make([]string, n), make([]string, n), make([]string, n)
	t.acked = make([]atomic.Int64, n)
	t.pooled.Store(-1)
	for i := range n {
		tag := "{acct:" + strconv.Itoa(i) + "}:"
		if env.Cluster {
			tag = "{acct}:" + strconv.Itoa(i) + ":"
		}
		base := env.Prefix + tag
		t.locks[i], t.bal[i], t.writes[i] = base+"lock", base+"balance", base+"writes"
	}
	t.zipf = make([]*rand.Zipf, max(env.Clients, 1))
	env.SetLocks(n)
	step := batch
	for lo := 0; lo < n; lo += step {
		var keys, vals []string
		for i := lo; i < min(lo+step, n); i++ {
			keys = append(keys, t.bal[i], t.writes[i])
			vals = append(vals, strconv.FormatInt(t.balance, 10), "0")
		}
		if err := SetData(ctx, env, keys, vals); err != nil {
			return err
		}
	}
	return nil
}

// LockKeys lists every account's lock key.
func (t *transfer) LockKeys() []string { return t.locks }

// one draws an account from the key distribution.
func (t *transfer) one(w *Worker) int {
	if z := t.zipfS; z > 1 && w.ID < len(t.zipf) {
		if t.zipf[w.ID] == nil {
			t.zipf[w.ID] = rand.NewZipf(w.Rng, z, 1, uint64(t.accounts-1))
		}
		return int(t.zipf[w.ID].Uint64())
	}
	return w.Rng.IntN(t.accounts)
}

// pick draws k distinct accounts, in the order the transfer names them
// (the payer first); a draw that repeats an account is drawn again, up
// to 64 times, then the next free account after it is taken.
func (t *transfer) pick(w *Worker) []int {
	out := make([]int, 0, t.k)
	for len(out) < t.k {
		a := t.one(w)
		for try := 0; try < 64 && slices.Contains(out, a); try++ {
			a = t.one(w)
		}
		for slices.Contains(out, a) {
			a = (a + 1) % t.accounts
		}
		out = append(out, a)
	}
	return out
}

func (t *transfer) Op(ctx context.Context, w *Worker) error {
	acc := t.pick(w)
	keys := make([]string, len(acc))
	for j, a := range acc {
		keys[j] = t.locks[a]
	}
	amount := int64(1 + w.Rng.IntN(100))
	err := w.HoldMulti(ctx, acc, keys, t.order, func(ctx context.Context, l strategies.Lease) error {
		return t.move(ctx, w, acc, amount, l)
	})
	if pe := (*strategies.PartialError)(nil); errors.As(err, &pe) {
		t.timeouts.Add(1)
	}
	return err
}

// move is the critical section: read every account's balance and write
// count, work, write them back moved by amount and counted.
func (t *transfer) move(ctx context.Context, w *Worker, acc []int, amount int64, l strategies.Lease) error {
	args := make([]string, 0, 1+2*len(acc))
	args = append(args, "MGET")
	for _, a := range acc {
		args = append(args, t.bal[a], t.writes[a])
	}
	r, err := w.Env.Data.Do(ctx, args...)
	if err != nil {
		return err
	}
	if len(r.Array) != 2*len(acc) {
		return errors.New("transfer: MGET returned a malformed reply")
	}
	keys, vals := args[1:], make([]string, 2*len(acc))
	for j := range acc {
		b, err1 := intOrZero(r.Array[2*j])
		n, err2 := intOrZero(r.Array[2*j+1])
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if j == 0 {
			b -= amount * int64(len(acc)-1)
		} else {
			b += amount
		}
		vals[2*j], vals[2*j+1] = strconv.FormatInt(b, 10), strconv.FormatInt(n+1, 10)
	}
	w.Work()
	if LostAny(l) {
		w.Obs.WriteRejected()
		return ErrRejected
	}
	w.BeforeWrite()
	if _, err := w.Env.Data.Eval(ctx, transferWrite, keys, vals...); err != nil {
		return err
	}
	for _, a := range acc {
		t.acked[a].Add(1)
	}
	t.done.Add(1)
	w.WroteMulti(l)
	return nil
}

// Counts are the acknowledged transfers and writes and the multi-key
// timeouts (workloads.Pooled).
func (t *transfer) Counts() map[string]int64 {
	var writes int64
	for i := range t.acked {
		writes += t.acked[i].Load()
	}
	return map[string]int64{"transfers": t.done.Load(), "writes": writes, FigureMultiTimeouts: t.timeouts.Load()}
}

// SetCounts sets them to the sums over every segment.
func (t *transfer) SetCounts(m map[string]int64) {
	if v, ok := m["transfers"]; ok {
		t.done.Store(v)
	}
	if v, ok := m["writes"]; ok {
		t.pooled.Store(v)
	}
	if v, ok := m[FigureMultiTimeouts]; ok {
		t.timeouts.Store(v)
	}
}

func (t *transfer) Verify(ctx context.Context, env *Env) (Result, error) {
	var final, lost, missing, writes, acked int64
	for lo := 0; lo < t.accounts; lo += batch {
		hi := min(lo+batch, t.accounts)
		args := []string{"MGET"}
		for i := lo; i < hi; i++ {
			args = append(args, t.bal[i], t.writes[i])
		}
		r, err := env.Data.Do(ctx, args...)
		if err != nil {
			return Result{}, err
		}
		if len(r.Array) != len(args)-1 {
			return Result{}, errors.New("transfer: MGET returned a malformed reply")
		}
		for i := lo; i < hi; i++ {
			if r.Array[2*(i-lo)].IsNil() {
				missing++ // its node lost it: the sum is unknown
				continue
			}
			b, err1 := intOrZero(r.Array[2*(i-lo)])
			n, err2 := intOrZero(r.Array[2*(i-lo)+1])
			if err := errors.Join(err1, err2); err != nil {
				return Result{}, err
			}
			final += b
			writes += n
			a := t.acked[i].Load()
			acked += a
			lost += max(0, a-n)
		}
	}
	if p := t.pooled.Load(); p >= 0 && p != acked {
		lost = max(0, p-writes) // other segments' writes: judged in all
	}
	initial := int64(t.accounts) * t.balance
	res := Result{
		Figures: map[string]int64{"balance_initial": initial, "balance_final": final, "transfers": t.done.Load(),
			FigureMultiTimeouts: t.timeouts.Load()},
		Violations: map[string]int64{LostUpdates: lost},
	}
	if missing > 0 {
		res.Figures["missing_keys"] = missing
	} else {
		res.Figures[FigureBalanceDrift] = max(final-initial, initial-final)
	}
	return res, nil
}
