package schema

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
)

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
// splitSchemas finds where; any other array is put back whole into top.
// When several elements fail, the error is the first one's, in name then
// index order.
func ValidatePackParts(top map[string]any, lens map[string]int, element func(name string, i int) (any, error)) error {
	s, err := compile("pack.schema.json")
	if err != nil {
		return err
	}
	split, err := packSplit()
	if err != nil {
		return err
	}
	type array struct {
		name  string
		start int // index of its first element among all split elements
		items *jsonschema.Resolved
	}
	var arrays []array
	total := 0
	names := make([]string, 0, len(lens))
	for name := range lens {
		names = append(names, name)
	}
	slices.Sort(names)
	doc := make(map[string]any, len(top)+len(lens))
	for k, v := range top {
		doc[k] = v
	}
	for _, name := range names {
		if items := split[name]; items != nil {
			doc[name] = []any{}
			arrays = append(arrays, array{name, total, items})
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
	if total == 0 {
		return nil
	}
	// Elements are handed out in order, so when the one at index k fails,
	// every one before it has been handed out: the workers finish those
	// and stop, and the first failure is the same on every run.
	var (
		next     atomic.Int64
		mu       sync.Mutex
		failedAt = total // guarded by mu, as failure is
		failure  error
		wg       sync.WaitGroup
	)
	stopAt := func() int { mu.Lock(); defer mu.Unlock(); return failedAt }
	check := func(k int) error {
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
		if err := a.items.Validate(v); err != nil {
			return fmt.Errorf("does not match pack.schema.json: /%s/%d: %w", a.name, i, err)
		}
		return nil
	}
	for range min(runtime.GOMAXPROCS(0), total) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= stopAt() {
					return
				}
				if err := check(k); err != nil {
					mu.Lock()
					if k < failedAt {
						failedAt, failure = k, err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return failure
}

var packSplit = sync.OnceValues(func() (map[string]*jsonschema.Resolved, error) {
	return splitSchemas("pack.schema.json")
})

// splitSchemas compiles, for each top-level property of the schema file url
// whose elements can be checked one by one, the schema an element must
// match. That is a property whose schema is {"type": "array", "items": X}
// and nothing else, under a root schema no other keyword of which reaches
// into a property (only type, required, additionalProperties, properties,
// $defs and annotations): the array is valid exactly when each element
// matches X. The element schema is X under a root that has the file's $defs
// (and its $id), for X's references.
func splitSchemas(url string) (map[string]*jsonschema.Resolved, error) {
	build, ok := decodedSchemas[url]
	if !ok {
		return nil, fmt.Errorf("schema %s: not among the schema files", url)
	}
	root := build()
	rest := *root
	rest.Schema, rest.ID, rest.Title, rest.Description = "", "", "", ""
	rest.Type, rest.Required, rest.AdditionalProperties, rest.Properties, rest.Defs = "", nil, nil, nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil, nil
	}
	split := map[string]*jsonschema.Resolved{}
	for name, prop := range root.Properties {
		only := *prop
		only.Type, only.Items = "", nil
		if prop.Type != "array" || prop.Items == nil || !reflect.ValueOf(only).IsZero() {
			continue
		}
		// A fresh copy of the file for each: a schema is resolved once.
		fresh := build()
		element := &jsonschema.Schema{Schema: fresh.Schema, ID: fresh.ID, Defs: fresh.Defs,
			AllOf: []*jsonschema.Schema{fresh.Properties[name].Items}}
		r, err := element.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("schema %s: the items of %s: %w", url, name, err)
		}
		split[name] = r
	}
	return split, nil
}
