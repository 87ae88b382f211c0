package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workloads"
)

// The workload, registered as "seats": a box office that books the seats
// of --shows shows, each show behind a lock of its own, until every show
// is full. A booking takes the show's lock, reads the seats booked, spends
// the critical-section time (--work), writes the count plus one and
// releases: only the lock keeps two bookings from taking one seat.
func init() {
	workloads.Register("seats", "example outside workload: book the seats of --shows shows, one lock each, until all are full (examples/custom-workload)",
		[]workloads.Param{
			{Name: "seats", Doc: "seats per show", Default: 100, Check: atLeastOne},
			{Name: "shows", Doc: "shows, each with its own lock", Default: 1, Check: atLeastOne},
		},
		func(v workloads.Values) workloads.Workload {
			return &boxOffice{seats: int64(v.Int("seats")), shows: make([]show, v.Int("shows"))}
		})
}

func atLeastOne(v any) error {
	if n, _ := v.(int); n < 1 {
		return fmt.Errorf("must be at least 1, got %d", n)
	}
	return nil
}

type boxOffice struct {
	seats int64
	shows []show
	open  atomic.Int64 // shows not yet seen full
}

type show struct {
	lock, booked string       // the show's lock key and its count of seats booked
	acked        atomic.Int64 // bookings whose write the server acknowledged
	full         atomic.Bool
}

// Setup names the keys, writes every show's count (0, with the data keys'
// safety TTL) and tells the scenario how many locks there are.
func (b *boxOffice) Setup(ctx context.Context, env *workloads.Env) error {
	for i := range b.shows {
		s := &b.shows[i]
		tag := env.Prefix + "{show:" + strconv.Itoa(i) + "}:" // one hash slot per show
		s.lock, s.booked = tag+"lock", tag+"booked"
		if err := workloads.SetData(ctx, env, []string{s.booked}, []string{"0"}); err != nil {
			return err
		}
	}
	b.open.Store(int64(len(b.shows)))
	env.SetLocks(len(b.shows))
	return nil
}

var errFull = errors.New("seats: show full")

// Op books one seat of a show that is not full, under the show's lock.
func (b *boxOffice) Op(ctx context.Context, w *workloads.Worker) error {
	i := b.pick(w)
	if i < 0 {
		return workloads.ErrDone
	}
	s := &b.shows[i]
	err := w.Hold(ctx, i, s.lock, false, func(ctx context.Context, l strategies.Lease) error {
		r, err := w.Env.Data.Do(ctx, "GET", s.booked)
		if err != nil {
			return err
		}
		n, err := r.AsInt()
		if err != nil {
			return err
		}
		if n >= b.seats {
			return errFull
		}
		w.Work()
		if workloads.Lost(l) { // the strategy said the lock is gone: do not write
			w.Obs.WriteRejected()
			return workloads.ErrRejected
		}
		w.BeforeWrite()
		if _, err := w.Env.Data.Do(ctx, "SET", s.booked, strconv.FormatInt(n+1, 10), "KEEPTTL"); err != nil {
			return err
		}
		s.acked.Add(1)
		w.Wrote(l)
		return nil
	})
	if errors.Is(err, errFull) {
		if !s.full.Swap(true) && b.open.Add(-1) == 0 {
			return workloads.ErrDone
		}
		return workloads.ErrSkip
	}
	return err
}

// pick returns a random show not yet seen full, or -1.
func (b *boxOffice) pick(w *workloads.Worker) int {
	first := w.Rng.IntN(len(b.shows))
	for k := range b.shows {
		if i := (first + k) % len(b.shows); !b.shows[i].full.Load() {
			return i
		}
	}
	return -1
}

// Verify reads every show's count. booked is what the data says;
// acked_bookings what the clients were told. A booking beyond a show's
// seats is an oversell, and one the count lacks (another holder wrote
// over it) a lost update.
func (b *boxOffice) Verify(ctx context.Context, env *workloads.Env) (workloads.Result, error) {
	var booked, acked, oversell, lost int64
	for i := range b.shows {
		s := &b.shows[i]
		r, err := env.Data.Do(ctx, "GET", s.booked)
		if err != nil {
			return workloads.Result{}, err
		}
		n, err := r.AsInt()
		if err != nil {
			return workloads.Result{}, err
		}
		a := s.acked.Load()
		booked, acked = booked+n, acked+a
		oversell += max(0, a-b.seats)
		lost += max(0, a-n)
	}
	return workloads.Result{
		Figures:    map[string]int64{"booked": booked, "acked_bookings": acked},
		Violations: map[string]int64{workloads.Oversell: oversell, workloads.LostUpdates: lost},
	}, nil
}

// LockKeys lists the shows' lock keys, for the stuck-lock check at the end.
func (b *boxOffice) LockKeys() []string {
	keys := make([]string, len(b.shows))
	for i := range b.shows {
		keys[i] = b.shows[i].lock
	}
	return keys
}
