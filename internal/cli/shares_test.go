package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/report"
	"github.com/lockbench/lockbench/strategies"
)

// cli-whole-key-readers (this test binary only) is a lock of shares only
// (every holder a reader) in one hash whose field is the holder's owner
// id, as rwlock's readers, except that each acquire extends the whole
// hash (PEXPIRE): a dead reader's share lives as long as other readers
// keep arriving.
func init() {
	strategies.Register("cli-whole-key-readers", strategies.Info{Desc: "test only: readers' shares in one hash, every acquire extending the whole hash"},
		func(c strategies.Config) (strategies.Locker, error) {
			return cliReaders{d: c.Nodes[0], ttl: c.TTL, tokens: c.Tokens}, nil
		})
}

var (
	cliReadersTake = drivers.NewScript(`redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return 1`)
	cliReadersDrop = drivers.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return 0
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
	redis.call('hdel', KEYS[1], ARGV[1])
end
return 1`)
)

type cliReaders struct {
	d      drivers.Driver
	ttl    time.Duration
	tokens strategies.TokenTracker
}

func (r cliReaders) TryAcquire(ctx context.Context, key string) (strategies.Lease, error) {
	owner := strategies.ClientFrom(ctx).Owner
	if r.tokens != nil {
		r.tokens.Sent(ctx, key, owner)
	}
	if _, err := r.d.Eval(ctx, cliReadersTake, []string{key}, strconv.FormatInt(r.ttl.Milliseconds(), 10), owner); err != nil {
		return nil, err
	}
	return cliReaderLease{r: r, key: key, owner: owner}, nil
}

type cliReaderLease struct {
	r          cliReaders
	key, owner string
}

func (l cliReaderLease) Key() string   { return l.key }
func (l cliReaderLease) Token() string { return l.owner }
func (l cliReaderLease) Release(ctx context.Context) error {
	v, err := l.r.d.Eval(ctx, cliReadersDrop, []string{l.key}, l.owner)
	if err != nil {
		return err
	}
	if v.Int == 0 {
		return strategies.ErrNotOwner
	}
	return nil
}

// orphan_shares end to end, in the result file, --fail-on and show: two
// readers crashed while holding, among readers that keep coming, are 2
// orphan shares with the whole-key lock (failing --fail-on
// orphan_shares==0), none with rwlock.
func TestOrphanSharesFigures(t *testing.T) {
	dir := t.TempDir()
	common := []string{"run", "-q", "--driver", "rueidis", "--workload", "flash-sale", "--skus", "1", "--read-ratio", "1",
		"--clients", "6", "--duration", "5s", "--work", "2ms", "--ttl", "1s",
		"--fault", "crash-after-setnx:at=300ms", "--fault", "crash-after-setnx:at=400ms",
		"--fail-on", "orphan_shares==0", "--fail-on", "orphan_share_max_ms<=1000"}
	run := func(strategy string) (report.Scenario, string, error) {
		t.Helper()
		out := filepath.Join(dir, strategy+".json")
		_, err := inProcess(t, append(append([]string{}, common...), "--strategy", strategy, "--out", out)...)
		r, rerr := report.ReadFile(out)
		if rerr != nil {
			t.Fatalf("%s: %v (run: %v)", strategy, rerr, err)
		}
		return r.Scenarios[0], out, err
	}
	bad, badFile, err := run("cli-whole-key-readers")
	if l := bad.Liveness; err == nil || l == nil || l.OrphanShares != 2 || l.OrphanShareAgeMS.Count != 2 || l.OrphanShareAgeMS.Max < 2100 {
		t.Fatalf("cli-whole-key-readers: liveness %+v, --fail-on error %v; want 2 orphan shares older than 2 x TTL and an error", l, err)
	}
	good, _, err := run("rwlock")
	if l := good.Liveness; err != nil || l == nil || !l.Measured || l.OrphanShares != 0 || l.OrphanLocks != 2 {
		t.Fatalf("rwlock: liveness %+v, error %v; want the 2 crashed readers' orphans, no orphan share, no --fail-on error", l, err)
	}
	out, err := inProcess(t, "show", badFile, "--columns", "strategy,orphan_shares,other")
	if err != nil || !strings.Contains(out, "orphan shares 2") || !strings.Contains(out, "2 (max ") {
		t.Fatalf("show: %v, want the other cell and the orphan_shares column:\n%s", err, out)
	}
	t.Logf("show:\n%s", out)
	b, _ := os.ReadFile(badFile)
	for _, want := range []string{`"orphan_shares": 2`, `"orphan_share_age_ms"`, `"orphan_share_age"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("the result file lacks %s", want)
		}
	}
}
