package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/claims"
)

// TestClaimsQuick runs every claim at reduced size on real redis-server
// processes: each row gets a verdict (or "needs baseline" for a strategy
// not built in), and the safety claims whose outcome is exact on any
// machine — S1, S2, S3, S5 and S10 — are reproduced.
func TestClaimsQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every claim experiment (about 2 minutes)")
	}
	dir := t.TempDir()
	r := lockbench(t, "claims", "--quick", "--out-dir", dir)
	if r.code != 0 {
		t.Fatalf("claims --quick exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
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
