package segment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/history"
	"github.com/lockbench/lockbench/internal/metrics"
)

// ErrRefused marks a barrier that refused this instance: another plan, a
// segment already claimed, another segment count (bad input: exit 2).
var ErrRefused = errors.New("refused")

// ErrTimeout marks a barrier whose segments did not all arrive in time.
var ErrTimeout = errors.New("barrier timeout")

// StartDelay is how far after the server's clock the leader sets the
// common start of a scenario, for every segment to see it and sleep until
// it.
var StartDelay = 500 * time.Millisecond

// Poll is how often a waiting segment reads the barrier.
var Poll = 10 * time.Millisecond

// NewNonce returns a random 64-bit nonce, hex.
func NewNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Prefix is the key namespace of run id: "lockbench:<id>:".
func Prefix(runID string) string { return "lockbench:" + runID + ":" }

// BarrierPrefix is the namespace of the barrier's keys under run id:
// "lockbench:<id>:barrier:".
func BarrierPrefix(runID string) string { return Prefix(runID) + "barrier:" }

// Barrier is one segment's side of the barrier of a run in Redis. Its keys
// (all under BarrierPrefix, each with the TTL KeyTTL so that a killed run
// leaves none for long):
//
//	barrier:run        hash: plan -> plan hash, count -> N, leader -> the
//	                   leader's nonce, seg:<i> -> segment i's nonce
//	barrier:gone       hash: segment -> why (a process known dead: every
//	                   barrier counts it as arrived)
//	barrier:<n>        hash: segment -> nonce, those at scenario n's start
//	barrier:<n>:start  the common start of scenario n, server µs
//	barrier:<n>:end    hash: segment -> nonce, those done with scenario n
//	barrier:<n>:counts hash: name -> sum of the segments' counts
//
// Join claims the segment; Scenario(n) gives scenario n's engine.Sync.
// Only the leader deletes keys (Clean).
type Barrier struct {
	D        drivers.Driver
	RunID    string
	Seg      Segment
	Nonce    string // this instance's (NewNonce)
	PlanHash string
	// Timeout bounds every wait (--barrier-timeout).
	Timeout time.Duration
	// KeyTTL is every barrier key's TTL.
	KeyTTL time.Duration

	// LeaderNonce is the leader's nonce, once Join (leader) or a scenario's
	// start (follower) has read it: the run's nonce, the same in every
	// segment's result.
	LeaderNonce string
}

func (b *Barrier) key(parts ...string) string {
	return BarrierPrefix(b.RunID) + strings.Join(parts, ":")
}

func (b *Barrier) ttl() string {
	return strconv.FormatInt(max(b.KeyTTL, time.Minute).Milliseconds(), 10)
}

// Join registers this instance for the run: its plan hash (the first
// registered must match), the segment count, and its claim on its segment
// (HSETNX: a second claim is refused). Errors wrap ErrRefused for a plan
// or count mismatch and a segment already claimed (by another live
// instance, or by an earlier run with the same id whose keys are left).
func (b *Barrier) Join(ctx context.Context) error {
	run := b.key("run")
	field := "seg:" + strconv.Itoa(b.Seg.Index)
	stale := fmt.Sprintf("(or an earlier run with run id %s left its barrier keys: use a new --run-id, or delete them with lockbench clean --run-id %s)", b.RunID, b.RunID)
	fields := []string{"plan", b.PlanHash, "count", strconv.Itoa(b.Seg.Count), field, b.Nonce}
	if b.Seg.Leader() {
		fields = append(fields, "leader", b.Nonce)
	}
	if err := hashWrite(ctx, b.D, run, b.ttl(), "hsetnx", fields...); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	r, err := b.D.Do(ctx, "HMGET", run, "plan", "count", field, "leader")
	if err != nil || len(r.Array) != 4 {
		return fmt.Errorf("barrier: HMGET %s: %v", run, err)
	}
	plan, count, claim, leader := r.Array[0].Str, r.Array[1].Str, r.Array[2].Str, r.Array[3].Str
	switch {
	case plan != b.PlanHash:
		return fmt.Errorf("%w: segment %s's plan (hash %s) is not the plan registered for run id %s (hash %s): every segment must run the same scenarios with the same parameters %s",
			ErrRefused, b.Seg, b.PlanHash, b.RunID, plan, stale)
	case count != strconv.Itoa(b.Seg.Count):
		return fmt.Errorf("%w: segment %s: run id %s was registered with %s segments %s", ErrRefused, b.Seg, b.RunID, count, stale)
	case claim != b.Nonce:
		return fmt.Errorf("%w: segment %d of run id %s is already claimed by another instance (nonce %s; this one's %s): two instances were given the same segment %s",
			ErrRefused, b.Seg.Index, b.RunID, claim, b.Nonce, stale)
	case b.Seg.Leader() && leader != b.Nonce:
		return fmt.Errorf("%w: run id %s already has a leader (nonce %s) %s", ErrRefused, b.RunID, leader, stale)
	}
	if b.Seg.Leader() {
		b.LeaderNonce = b.Nonce
	}
	return nil
}

// Gone records that segment i's process is dead (a proc-kill, a crash), so
// that the barriers of the run stop waiting for it. d is any driver on the
// run's first node.
func Gone(ctx context.Context, d drivers.Driver, runID string, i int, why string) error {
	k := BarrierPrefix(runID) + "gone"
	return hashWrite(ctx, d, k, strconv.FormatInt((time.Hour).Milliseconds(), 10), "hset", strconv.Itoa(i), why)
}

// hashWriteScript runs ARGV[2] (hset, hsetnx or hincrby) on hash KEYS[1]
// for each field and value from ARGV[3] on, and sets the hash's TTL to
// ARGV[1] ms, in one call: a process killed in between cannot leave a
// barrier key without a TTL.
var hashWriteScript = drivers.NewScript(`for i = 3, #ARGV, 2 do
	redis.call(ARGV[2], KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('pexpire', KEYS[1], ARGV[1])
return 1`)

// hashWrite runs hashWriteScript: op on hash k for fieldValues (field,
// value, ...), then k's TTL set to ttl ms.
func hashWrite(ctx context.Context, d drivers.Driver, k, ttl, op string, fieldValues ...string) error {
	_, err := d.Eval(ctx, hashWriteScript, []string{k}, append([]string{ttl, op}, fieldValues...)...)
	return err
}

// arrived returns the segments in hash k and in barrier:gone, and the
// missing ones.
func (b *Barrier) arrived(ctx context.Context, k string) (missing []int, err error) {
	have := map[int]bool{}
	for _, key := range []string{k, b.key("gone")} {
		r, err := b.D.Do(ctx, "HKEYS", key)
		if err != nil {
			return nil, err
		}
		for _, f := range r.Array {
			if i, err := strconv.Atoi(f.Str); err == nil {
				have[i] = true
			}
		}
	}
	for i := 1; i <= b.Seg.Count; i++ {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	return missing, nil
}

// wait polls hash k until every segment is in it (or gone). Errors:
// ErrTimeout naming the missing segments, ctx's error.
func (b *Barrier) wait(ctx context.Context, k, what string) error {
	deadline := time.Now().Add(b.Timeout)
	for {
		missing, err := b.arrived(ctx, k)
		if err != nil {
			return fmt.Errorf("barrier: %w", err)
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			names := make([]string, len(missing))
			for i, m := range missing {
				names[i] = strconv.Itoa(m)
			}
			return fmt.Errorf("%w: %s: waited %v (--barrier-timeout) for segment(s) %s of %d of run id %s, which did not arrive (start them with --segment i/%d --run-id %s and the same flags)",
				ErrTimeout, what, b.Timeout, strings.Join(names, ", "), b.Seg.Count, b.RunID, b.Seg.Count, b.RunID)
		}
		if err := sleep(ctx, Poll); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// register adds this segment to hash k, with the keys' TTL.
func (b *Barrier) register(ctx context.Context, k string) error {
	if err := hashWrite(ctx, b.D, k, b.ttl(), "hset", strconv.Itoa(b.Seg.Index), b.Nonce); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	return nil
}

// ServerTime reads the server's clock and returns it with the offset of
// the local (wall) clock to it: server = local + offset. The offset is
// history.MeasureOffset's over 5 TIME round trips (the shortest one's,
// Cristian's algorithm). Errors: every round trip failed, or a malformed
// TIME reply.
func ServerTime(ctx context.Context, d drivers.Driver) (server time.Time, offset time.Duration, err error) {
	o, err := history.MeasureOffset(ctx, d, 5)
	if err != nil {
		return time.Time{}, 0, err
	}
	now := time.Now()
	server = time.Unix(0, int64(metrics.Mono(now)+o.Offset))
	return server, server.Sub(now), nil
}

// Sync is scenario n's barrier (engine.Sync).
type Sync struct {
	b *Barrier
	// n is the scenario's index in the plan (0-based, as in its keys'
	// namespace); label its number as messages give it (1-based, as the
	// progress and the errors count scenarios).
	n, label string
}

// Scenario returns the engine.Sync of scenario n (its index in the plan,
// from 0, as in its keys' namespace).
func (b *Barrier) Scenario(n int) *Sync {
	return &Sync{b: b, n: strconv.Itoa(n), label: strconv.Itoa(n + 1)}
}

// Start registers the segment at the scenario's start barrier and waits
// for every segment; the leader then publishes a start StartDelay after
// the server's clock, and every segment returns it on its own clock
// (server time - its offset). Errors wrap ErrTimeout naming the missing
// segments.
func (s *Sync) Start(ctx context.Context) (time.Time, error) {
	b := s.b
	k := b.key(s.n)
	if err := b.register(ctx, k); err != nil {
		return time.Time{}, err
	}
	what := "scenario " + s.label + "'s start barrier"
	if err := b.wait(ctx, k, what); err != nil {
		return time.Time{}, err
	}
	startKey := b.key(s.n, "start")
	server, offset, err := ServerTime(ctx, b.D)
	if err != nil {
		return time.Time{}, fmt.Errorf("barrier: %w", err)
	}
	if b.Seg.Leader() {
		at := server.Add(StartDelay)
		if _, err := b.D.Do(ctx, "SET", startKey, strconv.FormatInt(at.UnixMicro(), 10), "PX", b.ttl()); err != nil {
			return time.Time{}, fmt.Errorf("barrier: %w", err)
		}
		return at.Add(-offset), nil
	}
	deadline := time.Now().Add(b.Timeout)
	for {
		r, err := b.D.Do(ctx, "GET", startKey)
		if err != nil {
			return time.Time{}, fmt.Errorf("barrier: %w", err)
		}
		if !r.IsNil() {
			us, err := r.AsInt()
			if err != nil {
				return time.Time{}, fmt.Errorf("barrier: %s: %w", startKey, err)
			}
			if b.LeaderNonce == "" {
				if r, err := b.D.Do(ctx, "HGET", b.key("run"), "leader"); err == nil {
					b.LeaderNonce = r.Str
				}
			}
			return time.UnixMicro(us).Add(-offset), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%w: %s: the leader (segment 1) did not publish the start within %v", ErrTimeout, what, b.Timeout)
		}
		if err := sleep(ctx, Poll); err != nil {
			return time.Time{}, err
		}
	}
}

// End adds counts to the scenario's sums and registers the segment at its
// end barrier. A follower returns at once (nil sums); the leader waits for
// every segment (or Timeout: ErrTimeout naming the missing ones) and
// returns the sums.
func (s *Sync) End(ctx context.Context, counts map[string]int64) (map[string]int64, error) {
	b := s.b
	ck := b.key(s.n, "counts")
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	slices.Sort(names)
	if len(names) > 0 {
		var fv []string
		for _, k := range names {
			fv = append(fv, k, strconv.FormatInt(counts[k], 10))
		}
		if err := hashWrite(ctx, b.D, ck, b.ttl(), "hincrby", fv...); err != nil {
			return nil, fmt.Errorf("barrier: %w", err)
		}
	}
	ek := b.key(s.n, "end")
	if err := b.register(ctx, ek); err != nil {
		return nil, err
	}
	if !b.Seg.Leader() {
		return nil, nil
	}
	if err := b.wait(ctx, ek, "scenario "+s.label+"'s end barrier"); err != nil {
		return nil, err
	}
	r, err := b.D.Do(ctx, "HGETALL", ck)
	if err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	sums := map[string]int64{}
	for i := 0; i+1 < len(r.Array); i += 2 {
		v, err := r.Array[i+1].AsInt()
		if err != nil {
			return nil, fmt.Errorf("barrier: %s: %w", ck, err)
		}
		sums[r.Array[i].Str] = v
	}
	// The scenario's barrier keys: every segment is past them.
	for _, k := range []string{b.key(s.n), b.key(s.n, "start"), ek, ck} { // one by one: a Cluster
		_, _ = b.D.Do(ctx, "DEL", k)
	}
	return sums, nil
}
