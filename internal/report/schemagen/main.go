// Command schemagen writes the JSON Schema of lockbench's result file,
// generated from internal/report's Go types (github.com/invopop/jsonschema),
// to the two committed copies: internal/report/schemacheck/schema.json
// (embedded; report.WriteFile validates against it under tests) and
// results/schema.json (for readers). Run it from anywhere in the module,
// after changing a type of the result file:
//
//	make schema        # or: go run ./internal/report/schemagen
//
// With -check it writes nothing and exits 1 when a copy is out of date.
package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/lockbench/lockbench/internal/report"
)

const module = "github.com/lockbench/lockbench"

// outputs are the committed copies of the schema, relative to the module
// root.
var outputs = []string{"internal/report/schemacheck/schema.json", "results/schema.json"}

// commentDirs are the packages whose doc comments become descriptions.
var commentDirs = []string{"internal/report", "internal/metrics"}

func main() {
	check := flag.Bool("check", false, "write nothing; exit 1 when a committed copy differs from the generated schema")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	b, err := generate(root)
	if err != nil {
		return err
	}
	var stale []string
	for _, out := range outputs {
		path := filepath.Join(root, out)
		if check {
			if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, b) {
				stale = append(stale, out)
			}
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%s out of date: run make schema", strings.Join(stale, " and "))
	}
	return nil
}

// moduleRoot is the directory of lockbench's go.mod, found upwards from
// the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+module+"\n")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("not inside the lockbench module (no go.mod of " + module + " above the working directory)")
		}
		dir = up
	}
}

// generate returns the schema of report.Run, indented, with the doc
// comments of the packages in commentDirs under root as descriptions.
func generate(root string) ([]byte, error) {
	r := reflector()
	if err := addComments(r, root); err != nil {
		return nil, err
	}
	runType := reflect.TypeFor[report.Run]()
	s := r.ReflectFromType(runType)
	s.ID = "https://github.com/lockbench/lockbench/results/schema.json"
	s.Title = "lockbench result file"
	s.Description = fmt.Sprintf("A result file of lockbench run, sweep or merge, schema %d (results/README.md). Generated from the Go types of internal/report by internal/report/schemagen; do not edit.", report.Schema)
	if err := fixTypes(s, runType); err != nil {
		return nil, err
	}
	p, ok := s.Definitions["Run"].Properties.Get("schema")
	if !ok {
		return nil, errors.New("report.Run has no schema field")
	}
	p.Const = report.Schema
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		// Later versions add fields (schema 1 keeps every name): a file of
		// a newer lockbench still matches.
		AllowAdditionalProperties: true,
		Anonymous:                 true,
	}
}

// addComments loads the doc comments of commentDirs into r.CommentMap,
// each on one line. invopop's AddGoComments keys them by the directory
// as given, so it runs from root.
func addComments(r *jsonschema.Reflector, root string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	defer os.Chdir(wd) //nolint:errcheck // back where it was; nothing else to do on failure
	for _, dir := range commentDirs {
		if err := r.AddGoComments(module, "./"+dir); err != nil {
			return fmt.Errorf("doc comments of %s: %w", dir, err)
		}
	}
	for k, v := range r.CommentMap {
		r.CommentMap[k] = strings.Join(strings.Fields(v), " ")
	}
	return nil
}

// overrides give the schema of the types whose MarshalJSON writes
// something other than their fields: each adjusts the type's reflected
// definition. generate fails on a type of the file that marshals itself
// and has none, so that the schema cannot silently disagree with the
// files written.
var overrides = map[reflect.Type]func(def *jsonschema.Schema){
	// Liveness.MarshalJSON leaves out, when the oracle measured nothing
	// (measured false), the counts it would have made: only measured and
	// deadline_overshoots are always there; the rest when measured is
	// true.
	reflect.TypeFor[report.Liveness](): func(def *jsonschema.Schema) {
		full := def.Required
		def.Required = []string{"measured", "deadline_overshoots"}
		def.If = &jsonschema.Schema{
			Properties: jsonschema.NewProperties(),
			Required:   []string{"measured"},
		}
		def.If.Properties.Set("measured", &jsonschema.Schema{Const: true})
		def.Then = &jsonschema.Schema{Required: full}
	},
	// Violations.MarshalJSON leaves out, in a follower segment's file
	// (end_check "not_run"), the kinds it did not measure (Known); every
	// other file has them all.
	reflect.TypeFor[report.Violations](): func(def *jsonschema.Schema) {
		full := def.Required
		follower := report.Violations{EndCheck: report.EndCheckNotRun}
		def.Required = slices.DeleteFunc(slices.Clone(full), func(key string) bool {
			for _, k := range report.ViolationKinds {
				if k.Key == key && !k.Known(follower) {
					return true
				}
			}
			return false
		})
		def.If = &jsonschema.Schema{
			Properties: jsonschema.NewProperties(),
			Required:   []string{"end_check"},
		}
		def.If.Properties.Set("end_check", &jsonschema.Schema{Const: report.EndCheckNotRun})
		def.Else = &jsonschema.Schema{Required: full}
	},
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// fixTypes walks every struct type of the file from t and adjusts its
// definition in s to what encoding/json writes:
//   - a slice, map or pointer field without omitempty or omitzero is
//     written as null when nil: its schema also accepts null;
//   - a type in overrides gets its adjustment; another type that
//     marshals itself is an error.
func fixTypes(s *jsonschema.Schema, t reflect.Type) error {
	seen := map[reflect.Type]bool{}
	names := map[string]reflect.Type{}
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map && t.Key().Kind() != reflect.String {
				return fmt.Errorf("%v: map keys other than strings are not handled", t)
			}
			t = t.Elem()
		}
		if seen[t] {
			return nil
		}
		seen[t] = true
		fix, overridden := overrides[t]
		if !overridden && (t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
			t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
			return fmt.Errorf("%v marshals itself (MarshalJSON or MarshalText): add its schema to overrides in internal/report/schemagen", t)
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		if o, ok := names[t.Name()]; ok && o != t {
			return fmt.Errorf("two types named %s (%v, %v) would share one definition", t.Name(), o, t)
		}
		names[t.Name()] = t
		def := s.Definitions[t.Name()]
		if def == nil {
			return fmt.Errorf("no definition of %v", t)
		}
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			if f.Anonymous {
				return fmt.Errorf("%v.%s: embedded fields are not handled", t, f.Name)
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			}
			optList := strings.Split(opts, ",")
			if slices.Contains(optList, "string") {
				return fmt.Errorf("%v.%s: the ,string option is not handled", t, f.Name)
			}
			omitted := slices.Contains(optList, "omitempty") || slices.Contains(optList, "omitzero")
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
				if !omitted {
					p, ok := def.Properties.Get(name)
					if !ok {
						return fmt.Errorf("%v.%s: no property %q", t, f.Name, name)
					}
					def.Properties.Set(name, &jsonschema.Schema{
						Description: p.Description,
						AnyOf:       []*jsonschema.Schema{withoutDescription(p), {Type: "null"}},
					})
				}
			}
			if err := walk(f.Type); err != nil {
				return err
			}
		}
		if overridden {
			fix(def)
		}
		return nil
	}
	return walk(t)
}

// withoutDescription is a copy of p without its description (moved to
// the anyOf around it).
func withoutDescription(p *jsonschema.Schema) *jsonschema.Schema {
	c := *p
	c.Description = ""
	return &c
}
