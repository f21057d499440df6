package pack

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// decodedDocument is what the audit decoded before Document: the generic
// value json.Unmarshal gives for Marshal(v).
func decodedDocument(t testing.TB, v any) any {
	t.Helper()
	data, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func documentPacks(t testing.TB) map[string]any {
	t.Helper()
	size, dist := int64(7), 2
	values := map[string]any{
		"empty pack":  &Pack{},
		"empty lists": &Pack{FileIndex: []IndexEntry{}, Changes: []Change{}, KeyFiles: []KeyFile{}, Contents: []Item{}, RiskHotspots: []RiskHotspot{}},
		"summary":     &Pack{Type: "summary", RepoSummary: &RepoSummary{Description: "d"}, Entrypoints: []Entrypoint{{Path: "main.go"}}, Intent: &Intent{}},
		"full": &Pack{SchemaVersion: 1, PackID: "pk_abcdefgh", Type: "full",
			FileIndex: []IndexEntry{{Path: "a<b>&c.go", SizeBytes: &size, Included: true}, {Path: "x", ExclusionReason: ReasonBinary}},
			Contents: []Item{{Path: "a<b>&c.go", Content: "x\u2028y\x00z \"q\"\n\t\\", Redactions: []Redaction{{Line: 1, RuleID: "r"}},
				OriginalSizeBytes: &size, Distance: &dist, Score: 0.1 + 0.2, Relationship: []string{"calls"}}},
			Budget:   Budget{UsedChars: 1 << 60, MaxContentBytes: math.MaxInt64, Cut: []string{}},
			Metadata: Metadata{ExclusionsByReason: map[Reason]int{ReasonBinary: 2, ReasonCache: 1}, DirectoryTree: &DirNode{Children: []*DirNode{{Name: "a"}}}}},
		"struct value": Pack{PackID: "pk_x", FileIndex: []IndexEntry{{Path: "a"}}},
		"nil pointer":  (*Pack)(nil),
		"not a struct": []string{"a", "b"},
		"nil map":      map[string]int(nil),
	}
	for g, p := range goldenPacks(t) {
		values[g] = p
	}
	return values
}

// TestDocumentIsTheDecodedSerialization: Document gives the very value a
// decode of Marshal's bytes gives, which the schema validates.
func TestDocumentIsTheDecodedSerialization(t *testing.T) {
	for name, v := range documentPacks(t) {
		t.Run(name, func(t *testing.T) {
			got, err := Document(v)
			if err != nil {
				t.Fatal(err)
			}
			if want := decodedDocument(t, v); !reflect.DeepEqual(got, want) {
				t.Errorf("Document:\n got  %#v\n want %#v", got, want)
			}
		})
	}
}

// TestDocumentRefuses: what Document does not derive the way encoding/json
// writes it is an error (the caller decodes the bytes), never a guess.
func TestDocumentRefuses(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"marshaler", &withPtrMarshalers{}, "serializes itself"},
		{"bytes", struct{ B []byte }{[]byte("x")}, "base64"},
		{"embedded", &withEmbedded{}, "treats specially"},
		{"string option", &quotedNumber{}, "treats specially"},
		{"invalid UTF-8", &Pack{Type: "\xff"}, "not UTF-8"},
		{"invalid UTF-8 key", map[string]int{"\xff": 1}, "not UTF-8"},
		{"int keys", map[int]string{1: "a"}, "not strings"},
		{"NaN", &Item{Score: math.NaN()}, "not a JSON number"},
		{"float32", struct{ F float32 }{1.1}, "not covered"},
		{"duplicate name", struct {
			A string `json:"X"`
			X string
		}{}, "two fields"},
		{"duplicate name, one omitted", struct {
			A string `json:"X,omitempty"`
			X string
		}{X: "x"}, "two fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Document(tt.v); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// addPackSeeds adds the serializations of the document packs under 4 KB
// to a fuzzer's corpus (the golden packs' size slows a fuzzer down to a
// crawl).
func addPackSeeds(f *testing.F) {
	for _, v := range documentPacks(f) {
		if p, ok := v.(*Pack); ok && p != nil {
			data, err := Marshal(p)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) < 4<<10 {
				f.Add(data)
			}
		}
	}
}

// FuzzDocument: for any pack a document decodes to, Document of that pack
// (and DocumentParts, put together) is the decode of its canonical
// serialization.
func FuzzDocument(f *testing.F) {
	addPackSeeds(f)
	f.Add([]byte(`{"contents":[{"score":1e-7,"distance":-0}],"budget":{"used_chars":9007199254740993}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Pack
		if json.Unmarshal(data, &p) != nil {
			return
		}
		got, err := Document(&p)
		if err != nil {
			t.Fatal(err)
		}
		want := decodedDocument(t, &p)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Document:\n got  %#v\n want %#v", got, want)
		}
		if parts, _ := documentFromParts(t, &p); !reflect.DeepEqual(any(parts), want) {
			t.Fatalf("DocumentParts put together:\n got  %#v\n want %#v", parts, want)
		}
	})
}

// BenchmarkDocument derives the document of a pack of 2,000 items.
func BenchmarkDocument(b *testing.B) {
	size := int64(100)
	p := &Pack{SchemaVersion: 1, Type: "full", Metadata: Metadata{ExclusionsByReason: map[Reason]int{}}}
	for i := range 2000 {
		path := "dir/file" + strings.Repeat("x", i%7) + ".go"
		p.FileIndex = append(p.FileIndex, IndexEntry{Path: path, Type: TypeText, Category: CatSource, SizeBytes: &size, Included: true})
		p.Contents = append(p.Contents, Item{ID: path + ":1:10", Path: path, Role: RolePrimary, Encoding: "utf-8",
			Content: strings.Repeat("func f() {}\n", 100), SHA256: strings.Repeat("0", 64), Redactions: []Redaction{}, StartLine: 1, EndLine: 100})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Document(p); err != nil {
			b.Fatal(err)
		}
	}
}

// documentFromParts is the document DocumentParts gives of p, its arrays
// put back from their elements.
func documentFromParts(t testing.TB, p *Pack) (doc map[string]any, lens map[string]int) {
	t.Helper()
	top, lens, element, err := DocumentParts(p)
	if err != nil {
		t.Fatal(err)
	}
	doc = map[string]any{}
	for k, v := range top {
		doc[k] = v
	}
	for name, n := range lens {
		if _, ok := top[name]; ok {
			t.Fatalf("%s is both in top and in parts", name)
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = element(name, i); err != nil {
				t.Fatal(err)
			}
		}
		doc[name] = a
	}
	return doc, lens
}

// TestDocumentPartsIsTheDocument: the top of DocumentParts with each array
// put back from its elements is Document of the pack.
func TestDocumentPartsIsTheDocument(t *testing.T) {
	for name, v := range documentPacks(t) {
		p, ok := v.(*Pack)
		if !ok || p == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			got, lens := documentFromParts(t, p)
			want, err := Document(p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(any(got), want) {
				t.Fatalf("DocumentParts put together:\n got  %#v\n want %#v", got, want)
			}
			if name == "full" && lens["contents"] != 1 {
				t.Fatalf("lens = %v: the contents are not given in parts", lens)
			}
		})
	}
}

// TestStringsIsTheSerialization: Strings lists the strings of the decoded
// serialization, in its order, whether Document covers the value or not
// (a string that is not UTF-8 is serialized as U+FFFD).
func TestStringsIsTheSerialization(t *testing.T) {
	values := documentPacks(t)
	values["not UTF-8"] = &Pack{PackID: "pk_\xff", FileIndex: []IndexEntry{{Path: "a\xfe.go"}}}
	for name, v := range values {
		want := appendStrings(nil, decodedDocument(t, v))
		if got := Strings(v); !slices.Equal(got, want) {
			t.Errorf("%s: Strings = %q, want %q", name, got, want)
		}
		// A pack Document covers is listed in parts, never whole.
		if p, ok := v.(*Pack); ok && p != nil && name != "not UTF-8" {
			if got, err := packStrings(p); err != nil || !slices.Equal(got, want) {
				t.Errorf("%s: packStrings = %q, %v; want %q", name, got, err, want)
			}
		}
	}
}
