package schema

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// referenceValidator compiles a schema with santhosh-tekuri/jsonschema,
// the validator ctxpack used before google/jsonschema-go (whose start-up
// is ~4.5 ms less per process): the two must accept and refuse the same
// documents.
func referenceValidator(t *testing.T, url string, doc []byte) *santhosh.Schema {
	t.Helper()
	parsed, err := santhosh.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := santhosh.NewCompiler()
	if err := c.AddResource(url, parsed); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mutations of one JSON value: what an attacker or a bug could put in a
// document's place.
var mutations = []func(r *rand.Rand, v any) (any, bool){
	func(*rand.Rand, any) (any, bool) { return nil, true },
	func(*rand.Rand, any) (any, bool) { return "x", true },
	func(*rand.Rand, any) (any, bool) { return "", true },
	func(*rand.Rand, any) (any, bool) { return -1.0, true },
	func(*rand.Rand, any) (any, bool) { return 1.5, true },
	func(*rand.Rand, any) (any, bool) { return 0.0, true },
	func(*rand.Rand, any) (any, bool) { return true, true },
	func(*rand.Rand, any) (any, bool) { return map[string]any{}, true },
	func(*rand.Rand, any) (any, bool) { return []any{}, true },
	func(_ *rand.Rand, v any) (any, bool) { // an unknown property
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		m["zz_unknown"] = "x"
		return m, true
	},
	func(r *rand.Rand, v any) (any, bool) { // a property left out
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			return nil, false
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		delete(m, keys[r.IntN(len(keys))])
		return m, true
	},
	func(_ *rand.Rand, v any) (any, bool) { // an element twice
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return nil, false
		}
		return append(a, a[0]), true
	},
	func(_ *rand.Rand, v any) (any, bool) { // a string lengthened, a number raised
		switch x := v.(type) {
		case string:
			return x + "-z", true
		case float64:
			return x + 1e9, true
		}
		return nil, false
	},
}

// mutate replaces one value of doc, reached by a random walk, with a
// mutation of it; false when the mutation does not apply there.
func mutate(r *rand.Rand, doc any) (any, bool) {
	if r.IntN(4) == 0 {
		return mutations[r.IntN(len(mutations))](r, doc)
	}
	switch x := doc.(type) {
	case map[string]any:
		if len(x) == 0 {
			return mutations[r.IntN(len(mutations))](r, doc)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		k := keys[r.IntN(len(keys))]
		v, ok := mutate(r, x[k])
		x[k] = v
		return x, ok
	case []any:
		if len(x) == 0 {
			return mutations[r.IntN(len(mutations))](r, doc)
		}
		i := r.IntN(len(x))
		v, ok := mutate(r, x[i])
		x[i] = v
		return x, ok
	}
	return mutations[r.IntN(len(mutations))](r, doc)
}

// TestValidatorsAgree: on ctxpack's own packs and records, and on
// thousands of mutations of them, the pack and record schemas accept and
// refuse exactly what the reference validator does.
func TestValidatorsAgree(t *testing.T) {
	cases := []struct {
		url    string
		schema []byte
		docs   []string
	}{
		{"pack.schema.json", packSchema, []string{"../testdata/full_commit.golden.json", "../testdata/summary_commit.golden.json",
			"../testdata/summary_range_tight.golden.json", "testdata/change_pack.json"}},
		{"record.schema.json", recordSchema, []string{"../../transparency/testdata/record.golden.json"}},
	}
	rounds := 600
	if testing.Short() {
		rounds = 100
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range cases {
		ref := referenceValidator(t, tc.url, tc.schema)
		for _, f := range tc.docs {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for i := range rounds + 1 {
				var doc any
				if err := json.Unmarshal(data, &doc); err != nil {
					t.Fatal(err)
				}
				if i > 0 {
					var ok bool
					if doc, ok = mutate(r, doc); !ok {
						continue
					}
				}
				mutated, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				got := validate(tc.url, mutated)
				want := ref.Validate(doc)
				if (got == nil) != (want == nil) {
					t.Fatalf("%s, mutation %d: this validator says %v, the reference %v\n%s", f, i, got, want, mutated)
				}
				if m, ok := doc.(map[string]any); ok && tc.url == "pack.schema.json" {
					if parts := validateInParts(m); (parts == nil) != (want == nil) {
						t.Fatalf("%s, mutation %d: in parts this validator says %v, the reference %v\n%s", f, i, parts, want, mutated)
					}
				}
				if i == 0 && got != nil {
					t.Fatalf("%s does not match %s: %v", f, tc.url, got)
				}
				if got != nil {
					refused++
				}
			}
			if refused < rounds/4 {
				t.Fatalf("%s: only %d of %d mutations refused: the mutations do not reach the schema", f, refused, rounds)
			}
		}
	}
}

// validateInParts checks a pack document by ValidatePackParts: each
// non-empty array at its top level given element by element, and checked
// so however few its elements.
func validateInParts(doc map[string]any) error {
	top, lens := map[string]any{}, map[string]int{}
	for k, v := range doc {
		if a, ok := v.([]any); ok && len(a) > 0 {
			lens[k] = len(a)
		} else {
			top[k] = v
		}
	}
	return validatePackParts(top, lens, func(name string, i int) (any, error) { return doc[name].([]any)[i], nil }, 1)
}
