package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Any bytes: ReadFile errors or returns a run that survives an
// encode/decode round trip with every count intact.
func FuzzReadFile(f *testing.F) {
	good, _ := json.Marshal(sample())
	f.Add(good)
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`{"schema":1,"scenarios":[{"ops":-1,"violations":{"overlap":9007199254740993}}]}`))
	f.Add([]byte(`{"schema":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.json")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadFile(in)
		if err != nil {
			return
		}
		out := filepath.Join(dir, "out.json")
		if err := WriteFile(out, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadFile(out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if len(back.Scenarios) != len(r.Scenarios) {
			t.Fatalf("%d scenarios became %d", len(r.Scenarios), len(back.Scenarios))
		}
		for i := range r.Scenarios {
			a, b := r.Scenarios[i], back.Scenarios[i]
			if a.Ops != b.Ops || !reflect.DeepEqual(a.Violations, b.Violations) || !reflect.DeepEqual(a.Counters, b.Counters) || !reflect.DeepEqual(a.Figures, b.Figures) {
				t.Fatalf("scenario %d counts changed in the round trip", i)
			}
		}
	})
}
