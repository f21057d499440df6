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

// splitMin is the fewest elements ValidatePackParts checks one by one: the
// element schema costs a compilation (~2 ms), which a small pack's whole
// document does not.
const splitMin = 512

// ValidatePackParts is ValidatePackDocument of the pack document top with,
// under each name in lens, an array of lens[name] elements, the i-th being
// element(name, i): the same verdict, without the whole document at once.
// A large pack's document is tens of thousands of small maps, and the
// validator is ~25 µs per item: top is checked with those arrays empty,
// then each element against its array's item schema, on GOMAXPROCS
// goroutines, each element's document made, checked and let go. element
// may be called from several goroutines at once.
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
	type array struct {
		name  string
		start int // index of its first element among all split elements
	}
	var arrays []array
	doc := make(map[string]any, len(top)+len(lens))
	for k, v := range top {
		doc[k] = v
	}
	total = 0
	for _, name := range names {
		if split != nil && split.names[name] {
			doc[name] = []any{}
			arrays = append(arrays, array{name, total})
			total += lens[name]
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
	// When several elements fail, workers.Each reports the first in
	// order: the same error on every run.
	return workers.Each(context.Background(), total, runtime.GOMAXPROCS(0), func(_ context.Context, k int) error {
		a := arrays[0]
		for _, x := range arrays[1:] {
			if k >= x.start {
				a = x
			}
		}
		i := k - a.start
		v, err := element(a.name, i)
		if err != nil {
			return err
		}
		// The element alone under its array's name: the element schema
		// checks it against that array's items.
		if err := split.elements.Validate(map[string]any{a.name: v}); err != nil {
			return fmt.Errorf("does not match pack.schema.json: /%s/%d: %w", a.name, i, err)
		}
		return nil
	})
}

// splitPack is what checking a pack's arrays element by element takes.
type splitPack struct {
	// names are the top-level arrays whose elements are checked one by one.
	names map[string]bool
	// elements is an object schema whose property of each such name is
	// its array's items schema: {name: element} is valid exactly when the
	// element is.
	elements *jsonschema.Resolved
}

var packSplit = sync.OnceValues(func() (*splitPack, error) {
	return splitSchema("pack.schema.json")
})

// splitSchema finds the top-level properties of the schema file url whose
// elements can be checked one by one, and compiles the schema that checks
// them. Such a property's schema is {"type": "array", "items": X} and
// nothing else, under a root schema no other keyword of which reaches into
// a property (only type, required, additionalProperties, properties, $defs
// and annotations): the array is valid exactly when each element matches
// X. The element schema has the file's $defs (and its $id), for X's
// references, and each such property with its X.
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
	elements := &jsonschema.Schema{Schema: root.Schema, ID: root.ID, Defs: root.Defs, Properties: map[string]*jsonschema.Schema{}}
	for name, prop := range root.Properties {
		only := *prop
		only.Type, only.Items = "", nil
		if prop.Type != "array" || prop.Items == nil || !reflect.ValueOf(only).IsZero() {
			continue
		}
		split.names[name] = true
		elements.Properties[name] = prop.Items
	}
	if len(split.names) == 0 {
		return split, nil
	}
	var err error
	if split.elements, err = elements.Resolve(nil); err != nil {
		return nil, fmt.Errorf("schema %s: the element schema: %w", url, err)
	}
	return split, nil
}
