package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/report"
)

// Runs started in the same second get result files of their own: the
// second takes <stamp>-2.json, and each name holds a placeholder until
// the run writes over it.
func TestReserveOut(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 30, 7, 22, 4, 0, time.UTC)
	var got []string
	for range 3 {
		p, _, err := reserveOut(dir, now, "0a1b2c3d")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(p))
	}
	want := []string{"20261130T072204Z.json", "20261130T072204Z-2.json", "20261130T072204Z-3.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("names %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, want[0]))
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Run
	if err := json.Unmarshal(b, &doc); err != nil || doc.Schema != report.Schema || doc.Failed == "" || len(doc.Scenarios) != 0 || doc.Meta.RunID != "0a1b2c3d" {
		t.Fatalf("placeholder %s: %v", b, err)
	}
	// A run that ends before it writes removes its placeholder, and only
	// that: a written result stays.
	removeUnwritten(filepath.Join(dir, want[0]), b)
	if _, err := os.Stat(filepath.Join(dir, want[0])); !os.IsNotExist(err) {
		t.Fatalf("placeholder left after removeUnwritten: %v", err)
	}
	written := filepath.Join(dir, want[1])
	if err := os.WriteFile(written, []byte(`{"schema":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	removeUnwritten(written, b)
	if _, err := os.Stat(written); err != nil {
		t.Fatalf("a written result was removed: %v", err)
	}
}
