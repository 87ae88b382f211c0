package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// ViolationKinds and Violations agree: every field (but merge's
// cross-process counts and a semaphore's max_holders) has exactly one kind
// whose Key is its json tag, every kind has a field, in the same order,
// and each kind's accessor reads and writes its own field.
func TestViolationKindsMatchStruct(t *testing.T) {
	typ := reflect.TypeOf(Violations{})
	var tags []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() == reflect.Pointer && (tag == "cross_overlap" || tag == "cross_overlap_possible" || tag == "max_holders") {
			continue // merge's cross-process counts: absent unless checked, not kinds (see Violations)
		}
		if f.Name == "EndCheck" {
			continue // whether the end checks ran: not a kind
		}
		if f.Type.Kind() != reflect.Int64 || tag == "" || tag == "-" {
			t.Fatalf("field %s (%s, json %q): want an int64 with a json name", f.Name, f.Type, tag)
		}
		tags = append(tags, tag)
	}
	var keys []string
	seen := map[string]bool{}
	for _, k := range ViolationKinds {
		if seen[k.Key] {
			t.Errorf("kind %q listed twice", k.Key)
		}
		seen[k.Key] = true
		if k.Name == "" || k.Short == "" || k.Doc == "" || k.field == nil {
			t.Errorf("kind %q lacks a name, short name, doc or field: %+v", k.Key, k)
		}
		keys = append(keys, k.Key)
	}
	if !reflect.DeepEqual(tags, keys) {
		t.Fatalf("Violations' json tags %v, ViolationKinds' keys %v: want the same, in order", tags, keys)
	}
	// Each kind's accessor is its own field: set kind i to i+1 alone and
	// the JSON has i+1 under that key and 0 elsewhere.
	for i, k := range ViolationKinds {
		var v Violations
		k.Set(&v, int64(i+1))
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]int64
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for key, n := range m {
			if want := map[bool]int64{true: int64(i + 1)}[key == k.Key]; n != want {
				t.Errorf("kind %q set to %d: JSON %s", k.Key, i+1, b)
			}
		}
		if v.Get(k.Key) != int64(i+1) || v.Total() != int64(i+1) || v.Map()[k.Key] != int64(i+1) {
			t.Errorf("kind %q: Get %d, Total %d, Map %v", k.Key, v.Get(k.Key), v.Total(), v.Map())
		}
	}
}

// Add sums every kind; Map has every kind, zeros included.
func TestViolationsAddMap(t *testing.T) {
	var a, b Violations
	for i, k := range ViolationKinds {
		k.Set(&a, int64(i+1))
		k.Set(&b, 100)
	}
	a.Add(b)
	m := a.Map()
	if len(m) != len(ViolationKinds) {
		t.Fatalf("Map has %d kinds, want %d", len(m), len(ViolationKinds))
	}
	for i, k := range ViolationKinds {
		if m[k.Key] != int64(101+i) {
			t.Errorf("%s = %d after Add, want %d", k.Key, m[k.Key], 101+i)
		}
	}
	if len((Violations{}).Map()) != len(ViolationKinds) || (Violations{}).Get("no_such_kind") != 0 {
		t.Fatal("Map of zeros lacks kinds, or Get of an unknown kind is not 0")
	}
}
