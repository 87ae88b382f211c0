package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A written file has the content and mode 0644, in a directory created
// for it; a write that fails leaves neither the file nor a temporary one.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f.json")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "abc"); return err }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(b) != "abc" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("content %q, mode %v, err %v; want abc, 0644", b, fi.Mode().Perm(), err)
	}
	bad := errors.New("boom")
	other := filepath.Join(dir, "sub", "g.json")
	if err := Write(other, func(w io.Writer) error { _, _ = io.WriteString(w, "half"); return bad }); !errors.Is(err, bad) {
		t.Fatalf("error %v, want %v", err, bad)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	if len(entries) != 1 || entries[0].Name() != "f.json" {
		t.Fatalf("directory holds %v, want only f.json", entries)
	}
}
