package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/claims"
)

// TestClaimsQuick runs every claim at reduced size on real redis-server
// processes: each row gets a verdict (or "needs baseline" for a strategy
// not built in), and the safety claims whose outcome is exact on any
// machine — S1, S2, S3, S5 and S10 — are reproduced. Every performance
// row ran its experiment 3 times and shows the interval it was judged on.
// It asserts no speed (a performance row's verdict may be any of them), so
// it runs beside the package's other tests: its lockbench process starts
// servers of its own. The process is started before t.Parallel, so that it
// runs while the package's serial tests do, and the test waits for it in
// the parallel phase: started there, its 106 s were the parallel phase's
// longest path (lane 1's internal/cli 335 s, 2026-12-04).
func TestClaimsQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every claim experiment, the performance ones 3 times (at most 150 s: 134 s on an idle 2-core machine, 2026-12-04)")
	}
	dir := t.TempDir()
	claimsRun := startLockbench(t, nil, "claims", "--quick", "--out-dir", dir)
	t.Parallel()
	r := claimsRun.wait(t)
	if r.code != 0 {
		t.Fatalf("claims --quick exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("claims --quick:\n%s", r.stdout)
	// Progress on stderr: the time elapsed, which claim of how many, which
	// run of how many.
	n := len(claims.Table())
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\[ *[0-9.]+s elapsed\] claim 1 of ` + strconv.Itoa(n) + ` \(S1\): run crash \(run 1 of [0-9]+\)$`),
		regexp.MustCompile(`(?m)^\[ *[0-9.]+s elapsed\] claim [0-9]+ of ` + strconv.Itoa(n) + ` \(P1\): run segments, repeat 3 of 3 \(run [0-9]+ of [0-9]+\)$`),
		regexp.MustCompile(`(?m)^\[ *[0-9.]+s elapsed\] claim ` + strconv.Itoa(n) + ` of ` + strconv.Itoa(n) + ` \(P8\): [a-z -]+$`),
	} {
		if !want.MatchString(r.stderr) {
			t.Errorf("stderr lacks a progress line matching %s:\n%s", want, r.stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "claims-*.json"))
	mds, _ := filepath.Glob(filepath.Join(dir, "claims-*.md"))
	if len(files) != 1 || len(mds) != 1 {
		t.Fatalf("report files: %v %v, want one .json and one .md", files, mds)
	}
	rep, err := claims.ReadJSON(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if rep.Meta.Mode != "quick" || len(rep.Rows) != len(claims.Table()) {
		t.Fatalf("mode %q, %d rows; want quick and %d", rep.Meta.Mode, len(rep.Rows), len(claims.Table()))
	}
	md, _ := os.ReadFile(mds[0])
	for _, row := range rep.Rows {
		if !row.Verdict.Counted() && row.Verdict != claims.NeedsBaseline {
			t.Errorf("%s: verdict %q (%s), want a verdict", row.ID, row.Verdict, row.Measured)
		}
		if row.Verdict.Counted() && len(row.Figures) == 0 {
			t.Errorf("%s: verdict without measured figures", row.ID)
		}
		if !strings.Contains(r.stdout, row.ID) || !strings.Contains(string(md), "| "+row.ID+" |") {
			t.Errorf("%s missing from the table or the Markdown report", row.ID)
		}
	}
	// "6.5x [6.1x, 6.9x] (min-max, 75 %, n=3)": an interval and its real
	// confidence, not called 95 %.
	interval := regexp.MustCompile(`\[[^],]+, [^]]+\].*\(min-max, 75 %, n=3\)|\(min-max, 75 %, n=3\).*\[[^],]+, [^]]+\]`)
	for _, row := range rep.Rows {
		if !strings.HasPrefix(row.ID, "P") || row.Verdict == claims.NeedsBaseline {
			continue
		}
		if !interval.MatchString(row.Measured) || !strings.Contains(string(md), row.Measured) {
			t.Errorf("%s: measured %q, want an interval with its confidence (in the Markdown too)", row.ID, row.Measured)
		}
		if row.Repeats != claims.QuickRepeats || len(row.Intervals) == 0 {
			t.Errorf("%s: %d repeats, %d intervals; want %d repeats", row.ID, row.Repeats, len(row.Intervals), claims.QuickRepeats)
		}
		for name, iv := range row.Intervals {
			if iv.N != claims.QuickRepeats || !(iv.Lo <= iv.Median && iv.Median <= iv.Hi) {
				t.Errorf("%s: %s interval %+v", row.ID, name, iv)
			}
		}
	}
	if !strings.Contains(r.stdout, "each experiment ran 3 times") || !strings.Contains(r.stdout, "inconclusive") {
		t.Errorf("stdout lacks the interval note or the inconclusive count:\n%s", r.stdout)
	}
	if rep.Meta.ResultFiles["segments-r3"] == "" {
		t.Errorf("result files %v: want one per repeat (segments-r1..r3)", rep.Meta.ResultFiles)
	}
	want := map[string]bool{"S1": true, "S2": true, "S3": true, "S5": true, "S10": true}
	for _, row := range rep.Rows {
		if want[row.ID] && row.Verdict != claims.Reproduced {
			t.Errorf("%s: %s (%s), want reproduced", row.ID, row.Verdict, row.Measured)
		}
	}
	if len(rep.Meta.ResultFiles) == 0 {
		t.Fatal("no run result files recorded")
	}
	for _, f := range rep.Meta.ResultFiles {
		// Every run's servers are gone (each result file records them).
		assertServersGone(t, readDoc(t, f)["meta"].(map[string]any))
	}
}
