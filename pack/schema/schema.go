// Package schema holds the JSON Schemas of ctxpack's documents and validates
// documents against them.
package schema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed pack.schema.json
var packSchema []byte

// PackJSON is the pack's JSON Schema.
func PackJSON() []byte { return packSchema }

var (
	compiled = map[string]*jsonschema.Schema{}
	mu       sync.Mutex
)

// compile compiles (once) the schema registered under url.
func compile(url string, doc []byte) (*jsonschema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[url]; ok {
		return s, nil
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, parsed); err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	compiled[url] = s
	return s, nil
}

// ValidatePack checks pack bytes against the pack schema.
func ValidatePack(data []byte) error { return validate("pack.schema.json", packSchema, data) }

// ValidatePackDocument checks a pack's decoded JSON document (maps, slices,
// strings, float64 numbers, booleans, nil: what json.Unmarshal into an any
// gives) against the pack schema.
func ValidatePackDocument(doc any) error {
	s, err := compile("pack.schema.json", packSchema)
	if err != nil {
		return err
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("does not match pack.schema.json: %w", err)
	}
	return nil
}

func validate(url string, schemaDoc, data []byte) error {
	s, err := compile(url, schemaDoc)
	if err != nil {
		return err
	}
	// json.Unmarshal decodes in place; jsonschema.UnmarshalJSON's Decoder
	// would first copy a pack of tens of MB into a buffer twice its size.
	// Numbers become float64, which the validator accepts (the documents'
	// integers are far below 2^53).
	var inst any
	if err := json.Unmarshal(data, &inst); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("does not match %s: %w", url, err)
	}
	return nil
}
