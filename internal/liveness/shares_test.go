package liveness_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/liveness"
	"github.com/lockbench/lockbench/internal/metrics"
	"github.com/lockbench/lockbench/internal/topology/topotest"
	"github.com/lockbench/lockbench/strategies"
)

// Two multi-owner locks of readers' shares in one hash (field = reader,
// as rwlock keeps them), each arrival or renewal of a reader one script
// call. ARGV[1] = lease ms, ARGV[2] = the reader.
var (
	// wholeKeyArrive extends the whole hash at every arrival: a dead
	// reader's share lives as long as other readers keep coming.
	wholeKeyArrive = drivers.NewScript(`redis.call('hset', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])`)
	// perShareArrive keeps each share's deadline (server time, ms) as its
	// value, drops the expired shares at every call and sets the key to
	// expire with its last live share.
	perShareArrive = drivers.NewScript(`local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('hset', KEYS[1], ARGV[2], now + tonumber(ARGV[1]))
local last = 0
local kv = redis.call('hgetall', KEYS[1])
for i = 1, #kv, 2 do
	local d = tonumber(kv[i + 1])
	if d <= now then
		redis.call('hdel', KEYS[1], kv[i])
	else
		last = math.max(last, d)
	end
end
redis.call('pexpire', KEYS[1], last - now)`)
)

// Readers 0 and 1 crash holding their shares and reader 2's acquire fails
// after its share was stored (a lost reply), while reader 3 stays and
// renews its share every 100 ms for 4 s (4 TTLs), then releases; a
// single-owner key's dead token is kept alive alone by a renewer beside
// them. Read on a real redis-server: with the lock that extends the whole
// hash, the three dead shares live on beside reader 3's and are exactly 3
// orphan shares, each about 4 s old; with per-share expiry none is (each
// dead share is dropped at the first renewal past its lease). The lone
// dead token is held past 3 x the TTL either way, never an orphan share.
func TestSamplerOrphanShares(t *testing.T) {
	for _, tc := range []struct {
		name   string
		arrive *drivers.Script
		want   int64
	}{{"whole-key", wholeKeyArrive, 3}, {"per-share", perShareArrive, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, _ := topotest.Server(t)
			ctx := context.Background()
			const ttl = time.Second
			lease := strconv.FormatInt(ttl.Milliseconds(), 10)
			tr := liveness.NewTracker(5, ttl)
			cl := func(id int) context.Context { return strategies.WithClient(ctx, strategies.Client{ID: id}) }
			arrive := func(reader string) {
				t.Helper()
				if _, err := d.Eval(ctx, tc.arrive, []string{"s:rw"}, lease, reader); err != nil {
					t.Fatal(err)
				}
			}
			for id, reader := range []string{"r0", "r1", "r2", "r3"} {
				tr.Sent(cl(id), "s:rw", reader)
				arrive(reader)
				switch id {
				case 0, 1: // crashed holding
					tr.Acquired(id, "s:rw", reader)
					tr.Exit(id, "s:rw", reader, liveness.Abandoned, metrics.Now())
				case 2: // the reply was lost: the acquire failed, the share is stored
					tr.Failed(id)
				case 3:
					tr.Acquired(id, "s:rw", reader)
				}
			}
			tr.Sent(cl(4), "s:solo", "dead")
			if _, err := d.SetNX(ctx, "s:solo", "dead", ttl); err != nil {
				t.Fatal(err)
			}
			tr.Acquired(4, "s:solo", "dead")
			tr.Exit(4, "s:solo", "dead", liveness.Abandoned, metrics.Now())
			smp := &liveness.Sampler{T: tr, Nodes: []drivers.Driver{d}, Quorum: 1, Keys: []string{"s:rw", "s:solo"}, Interval: 5 * time.Millisecond}
			smp.Start(ctx)
			for end := time.Now().Add(4 * ttl); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				arrive("r3")
				if _, err := d.Do(ctx, "PEXPIRE", "s:solo", lease); err != nil {
					t.Fatal(err)
				}
			}
			start := metrics.Now()
			if _, err := d.Do(ctx, "HDEL", "s:rw", "r3"); err != nil {
				t.Fatal(err)
			}
			tr.Exit(3, "s:rw", "r3", liveness.Released, start)
			time.Sleep(ttl + 200*time.Millisecond) // every key expires
			smp.Stop()
			l := smp.Result()
			if l.OrphanShares != tc.want {
				t.Fatalf("orphan_shares %d, want %d: %+v", l.OrphanShares, tc.want, l)
			}
			ages := smp.OrphanShareAges()
			if ages.TotalCount() != tc.want || l.OrphanShareAgeMS.Count != tc.want {
				t.Fatalf("%d ages (summary %+v), want %d", ages.TotalCount(), l.OrphanShareAgeMS, tc.want)
			}
			// The whole-key lock's dead shares live the 4 s of renewals and
			// up to the last lease after them, less a loaded machine's
			// stalls (allowed 1 s).
			if tc.want > 0 && (float64(ages.Min())/1000 < 3000 || l.OrphanShareAgeMS.Max > 5500) {
				t.Fatalf("orphan share ages %+v, want about 4 to 5 s", l.OrphanShareAgeMS)
			}
			if l.OrphanLocks != 4 || l.HeldPastTTL != 1 || l.OrphansAtEnd != 0 {
				t.Fatalf("%+v; want 4 orphans (3 shares and the lone token), the lone one held past 3 x TTL, none at the end", l)
			}
		})
	}
}
