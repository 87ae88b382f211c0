package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The committed schema copies are what the generator makes of the types
// now: a field added, renamed or retyped in internal/report without
// `make schema` fails here (and the writes of every test that writes a
// result file, when it breaks them).
func TestSchemaCurrent(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range outputs {
		got, err := os.ReadFile(filepath.Join(root, out))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what internal/report/schemagen generates from the types now: run make schema (go run ./internal/report/schemagen) and commit both copies", out)
		}
	}
}

type selfMarshaled struct {
	A int `json:"a"`
}

func (selfMarshaled) MarshalJSON() ([]byte, error) { return []byte(`"a"`), nil }

type holder struct {
	X selfMarshaled `json:"x"`
	Y []int         `json:"y"`
	Z []int         `json:"z,omitempty"`
}

// A type of the result file that marshals itself needs an override;
// without one the generator refuses, rather than describe fields the
// files do not have.
func TestSchemaRefusesUnknownMarshaler(t *testing.T) {
	s := reflector().Reflect(holder{})
	err := fixTypes(s, reflect.TypeFor[holder]())
	if err == nil || !strings.Contains(err.Error(), "selfMarshaled marshals itself") {
		t.Fatalf("error %v, want one saying selfMarshaled marshals itself", err)
	}
}

// A nil slice without omitempty is written as null: its schema takes
// null too; with omitempty it is left out, not null.
func TestSchemaNullable(t *testing.T) {
	type plain struct {
		Y []int `json:"y"`
		Z []int `json:"z,omitempty"`
	}
	s := reflector().Reflect(plain{})
	if err := fixTypes(s, reflect.TypeFor[plain]()); err != nil {
		t.Fatal(err)
	}
	def := s.Definitions["plain"]
	y, _ := def.Properties.Get("y")
	z, _ := def.Properties.Get("z")
	if len(y.AnyOf) != 2 || y.AnyOf[1].Type != "null" || y.AnyOf[0].Type != "array" {
		t.Errorf("y: %+v, want anyOf array, null", y)
	}
	if z.Type != "array" || len(z.AnyOf) != 0 {
		t.Errorf("z: %+v, want an array", z)
	}
}
