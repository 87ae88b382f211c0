// Package schemacheck validates result files against the JSON Schema of
// the result-file format, schema.json: generated from internal/report's
// types by internal/report/schemagen (make schema), and committed twice,
// here for go:embed and as results/schema.json for readers.
package schemacheck

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:generate go run ../schemagen

// Schema is the JSON Schema of a result file (JSON Schema 2020-12).
//
//go:embed schema.json
var Schema []byte

// schemaURL is the schema's $id: the committed results/schema.json.
const schemaURL = "https://github.com/lockbench/lockbench/results/schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, fmt.Errorf("schemacheck: schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schemacheck: schema.json: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: schema.json: %w", err)
	}
	return s, nil
})

// Validate checks that b, a result file's JSON, matches Schema. The error
// names each place that does not.
func Validate(b []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(inst)
}
