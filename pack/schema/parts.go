package schema

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ctxpack/ctxpack/internal/workers"
)

// splitMin is the fewest elements ValidatePackParts checks apart: the
// arrays' schema costs a compilation (~2 ms), which a small pack's whole
// document does not.
const splitMin = 512

// ValidatePackParts is ValidatePackDocument of the pack document top with,
// under each name in lens, an array of lens[name] elements, the i-th being
// element(name, i): the same verdict, without the whole document at once.
// A large pack's document is tens of thousands of small maps, and the
// validator is ~10–25 µs per item: top is checked with those arrays empty,
// then the elements in chunks of chunkLen, each chunk an array of its
// own, on GOMAXPROCS goroutines, each chunk's documents made, checked and
// let go. element may be called from several goroutines at once.
//
// That is the whole document's verdict only where the pack schema says
// nothing of such an array but its type and its items' schema, and nothing
// at the top level can look inside it (no applicator besides properties):
// splitSchema finds where; any other array, and every array of a pack with
// fewer than splitMin elements in all, is put back whole into top. When
// several elements fail, the error is the first one's, in name then index
// order.
func ValidatePackParts(top map[string]any, lens map[string]int, element func(name string, i int) (any, error)) error {
	return validatePackParts(top, lens, element, splitMin)
}

func validatePackParts(top map[string]any, lens map[string]int, element func(name string, i int) (any, error), splitMin int) error {
	s, err := compile("pack.schema.json")
	if err != nil {
		return err
	}
	names := make([]string, 0, len(lens))
	total := 0
	for name, n := range lens {
		names = append(names, name)
		total += n
	}
	slices.Sort(names)
	var split *splitPack
	if total >= splitMin {
		if split, err = packSplit(); err != nil {
			return err
		}
	}
	// The split arrays are checked in chunks of up to chunkLen elements of
	// one array, each chunk an array under its name.
	type chunk struct {
		name       string
		start, end int // the chunk's elements' indexes in the array
	}
	var chunks []chunk
	doc := make(map[string]any, len(top)+len(lens))
	for k, v := range top {
		doc[k] = v
	}
	for _, name := range names {
		if split != nil && split.names[name] {
			doc[name] = []any{}
			for i := 0; i < lens[name]; i += chunkLen {
				chunks = append(chunks, chunk{name, i, min(i+chunkLen, lens[name])})
			}
			continue
		}
		whole := make([]any, lens[name])
		for i := range whole {
			if whole[i], err = element(name, i); err != nil {
				return err
			}
		}
		doc[name] = whole
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("does not match pack.schema.json: %w", err)
	}
	// When several chunks fail, workers.Each reports the first in order,
	// and the first element that fails in it is named: the same error on
	// every run.
	return workers.Each(context.Background(), len(chunks), runtime.GOMAXPROCS(0), func(_ context.Context, k int) error {
		c := chunks[k]
		elems := make([]any, c.end-c.start)
		for i := range elems {
			v, err := element(c.name, c.start+i)
			if err != nil {
				return err
			}
			elems[i] = v
		}
		if split.arrays.Validate(map[string]any{c.name: elems}) == nil {
			return nil
		}
		// The element alone under its array's name: the element schema
		// checks it against that array's items.
		elements, err := split.elements()
		if err != nil {
			return err
		}
		for i, v := range elems {
			if err := elements.Validate(map[string]any{c.name: v}); err != nil {
				return fmt.Errorf("does not match pack.schema.json: /%s/%d: %w", c.name, c.start+i, err)
			}
		}
		return fmt.Errorf("does not match pack.schema.json: /%s: elements %d to %d fail together but none alone", c.name, c.start, c.end-1)
	})
}

// chunkLen is the most elements of an array checked in one call: the
// validator's cost of a call, beside its elements', is ~13% of an index
// entry's alone (hugo's 2,547 entries: 30.2 → 26.2 ms in chunks of 64).
const chunkLen = 64

// splitPack is what checking a pack's large arrays apart takes.
type splitPack struct {
	// names are the top-level arrays whose elements are checked apart.
	names map[string]bool
	// arrays is an object schema whose property of each such name is its
	// array's schema ({"type": "array", "items": X}): {name: chunk} is
	// valid exactly when each element of the chunk is.
	arrays *jsonschema.Resolved
	// elements is the object schema whose property of each such name is
	// its array's items schema X: {name: element} is valid exactly when
	// the element is. Compiled when a chunk fails, to name the element.
	elements func() (*jsonschema.Resolved, error)
}

var packSplit = sync.OnceValues(func() (*splitPack, error) {
	return splitSchema("pack.schema.json")
})

// splitSchema finds the top-level properties of the schema file url whose
// elements can be checked apart, and compiles the schema that checks them
// (and, when asked, the one that checks an element alone). Such a
// property's schema is {"type": "array", "items": X} and nothing else,
// under a root schema no other keyword of which reaches into a property
// (only type, required, additionalProperties, properties, $defs and
// annotations): the array is valid exactly when each element matches X,
// and so is any part of it. Both schemas have the file's $defs (and its
// $id), for X's references, and each such property with its array's
// schema or with X.
func splitSchema(url string) (*splitPack, error) {
	build, ok := decodedSchemas[url]
	if !ok {
		return nil, fmt.Errorf("schema %s: not among the schema files", url)
	}
	root := build()
	split := &splitPack{names: map[string]bool{}}
	rest := *root
	rest.Schema, rest.ID, rest.Title, rest.Description = "", "", "", ""
	rest.Type, rest.Required, rest.AdditionalProperties, rest.Properties, rest.Defs = "", nil, nil, nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return split, nil
	}
	arrays := &jsonschema.Schema{Schema: root.Schema, ID: root.ID, Defs: root.Defs, Properties: map[string]*jsonschema.Schema{}}
	for name, prop := range root.Properties {
		only := *prop
		only.Type, only.Items = "", nil
		if prop.Type != "array" || prop.Items == nil || !reflect.ValueOf(only).IsZero() {
			continue
		}
		split.names[name] = true
		arrays.Properties[name] = prop
	}
	if len(split.names) == 0 {
		return split, nil
	}
	var err error
	if split.arrays, err = arrays.Resolve(nil); err != nil {
		return nil, fmt.Errorf("schema %s: the arrays' schema: %w", url, err)
	}
	// The element schema is made of a schema of its own (a schema is
	// resolved once).
	split.elements = sync.OnceValues(func() (*jsonschema.Resolved, error) {
		root := build()
		elements := &jsonschema.Schema{Schema: root.Schema, ID: root.ID, Defs: root.Defs, Properties: map[string]*jsonschema.Schema{}}
		for name := range split.names {
			elements.Properties[name] = root.Properties[name].Items
		}
		r, err := elements.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("schema %s: the element schema: %w", url, err)
		}
		return r, nil
	})
	return split, nil
}
