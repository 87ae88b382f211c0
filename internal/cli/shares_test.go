package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/testlocks"
)

// orphan_shares end to end, in the result file, --fail-on and show: two
// readers crashed while holding, among readers that keep coming, are 2
// orphan shares with the whole-key lock (failing --fail-on
// orphan_shares==0), none with rwlock.
func TestOrphanSharesFigures(t *testing.T) {
	t.Parallel() // in-process runs with servers of their own
	dir := t.TempDir()
	common := []string{"run", "-q", "--driver", "rueidis", "--workload", "flash-sale", "--skus", "1", "--read-ratio", "1",
		"--clients", "6", "--duration", "5s", "--work", "2ms", "--ttl", "1s",
		"--fault", "crash-after-setnx:at=300ms", "--fault", "crash-after-setnx:at=400ms",
		"--fail-on", "orphan_shares==0", "--fail-on", "orphan_share_max_ms<=1000"}
	// The two runs at once (11.7 s one after another, 2026-12-04).
	runs := runStrategiesIn(t, dir, common, nil, testlocks.WholeKeyReaders, "rwlock")
	bad, badFile, err := runs[testlocks.WholeKeyReaders].sc, runs[testlocks.WholeKeyReaders].file, runs[testlocks.WholeKeyReaders].err
	if l := bad.Liveness; err == nil || l == nil || l.OrphanShares != 2 || l.OrphanShareAgeMS.Count != 2 || l.OrphanShareAgeMS.Max < 2100 {
		t.Fatalf("%s: liveness %+v, --fail-on error %v; want 2 orphan shares older than 2 x TTL and an error", testlocks.WholeKeyReaders, l, err)
	}
	good, err := runs["rwlock"].sc, runs["rwlock"].err
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
