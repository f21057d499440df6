// Package schema holds the JSON Schemas of ctxpack's documents and validates
// documents against them.
package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed pack.schema.json
var packSchema []byte

// PackJSON is the pack's JSON Schema.
func PackJSON() []byte { return packSchema }

var (
	compiled = map[string]*jsonschema.Resolved{}
	mu       sync.Mutex
)

// compile compiles (once) the schema file named url, built from
// decodedSchemas: what json.Unmarshal gives of the file, without its ~4 ms
// (TestDecodedSchemas).
//
// The validator is google/jsonschema-go (draft 2020-12): santhosh-tekuri's,
// used before, compiled every draft's meta-schema in its package init,
// ~4.5 ms of CPU in every process whatever the command (5% of a small
// change's pack). TestValidatorsAgree keeps the two giving the same
// answers, and checks the schemas against their meta-schema.
func compile(url string) (*jsonschema.Resolved, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[url]; ok {
		return s, nil
	}
	build, ok := decodedSchemas[url]
	if !ok {
		return nil, fmt.Errorf("schema %s: not among the schema files", url)
	}
	s, err := build().Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	compiled[url] = s
	return s, nil
}

// PreloadPack compiles the pack schema, so that a caller can have it done
// beside other work; the first validation compiles it (and reports what
// fails) when it is not done.
func PreloadPack() { _, _ = compile("pack.schema.json") }

// ValidatePack checks pack bytes against the pack schema.
func ValidatePack(data []byte) error { return validate("pack.schema.json", data) }

// ValidatePackDocument checks a pack's decoded JSON document (maps, slices,
// strings, float64 numbers, booleans, nil: what json.Unmarshal into an any
// gives) against the pack schema.
func ValidatePackDocument(doc any) error {
	s, err := compile("pack.schema.json")
	if err != nil {
		return err
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("does not match pack.schema.json: %w", err)
	}
	return nil
}

func validate(url string, data []byte) error {
	s, err := compile(url)
	if err != nil {
		return err
	}
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
