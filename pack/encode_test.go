package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func referenceJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type embedded struct{ A int }

type withEmbedded struct {
	embedded
	B []string `json:"b"`
}

type quotedNumber struct {
	N int   `json:"n,string"`
	L []int `json:"l"`
}

type ptrMarshaler struct{ V string }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal("ptr:" + p.V) }

type withPtrMarshalers struct {
	One  ptrMarshaler   `json:"one"`
	Many []ptrMarshaler `json:"many"`
	Skip string         `json:"-"`
	Map  map[string]int `json:"map,omitempty"`
	Raw  []byte         `json:"raw"`
	Bare string
}

// TestEncodeMatchesJSON: streaming a value field by field gives exactly
// what encoding/json gives for the whole.
func TestEncodeMatchesJSON(t *testing.T) {
	values := map[string]any{
		"empty pack":  &Pack{},
		"empty lists": &Pack{FileIndex: []IndexEntry{}, Changes: []Change{}, KeyFiles: []KeyFile{}, Contents: []Item{}, RiskHotspots: []RiskHotspot{}},
		"summary":     &Pack{Type: "summary", RepoSummary: &RepoSummary{Description: "d"}, Entrypoints: []Entrypoint{{Path: "main.go"}}},
		"escapes": &Pack{Contents: []Item{{Path: "a<b>&c.go", Content: "x\u2028y\x00z \xff \"q\"\n", Redactions: []Redaction{{Line: 1, RuleID: "r"}}}},
			Metadata: Metadata{ExclusionsByReason: map[Reason]int{ReasonBinary: 2, ReasonCache: 1}}},
		"struct value":       Pack{PackID: "pk_x", FileIndex: []IndexEntry{{Path: "a"}}},
		"embedded":           &withEmbedded{embedded{1}, []string{"x"}},
		"string option":      &quotedNumber{N: 3, L: []int{1, 2}},
		"pointer marshalers": &withPtrMarshalers{One: ptrMarshaler{"a"}, Many: []ptrMarshaler{{"b"}, {"c"}}, Skip: "s", Raw: []byte("raw"), Bare: "b"},
		"nil pointer":        (*Pack)(nil),
		"not a struct":       []string{"a", "b"},
	}
	for g, p := range goldenPacks(t) {
		values[g] = p
	}
	for name, v := range values {
		var got bytes.Buffer
		if err := Encode(&got, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := referenceJSON(t, v); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s:\n got  %s\n want %s", name, got.Bytes(), want)
		}
	}
	if !strings.Contains(string(referenceJSON(t, values["pointer marshalers"])), "ptr:b") {
		t.Fatal("the reference does not call the pointer method: the case tests nothing")
	}
}

// TestEncodeDigest: one serialization gives both Marshal's bytes and the
// digest of the pack with pack_id and used_chars cleared, serialized on its
// own.
func TestEncodeDigest(t *testing.T) {
	packs := map[string]*Pack{
		"empty":   {},
		"summary": {Type: "summary", PackID: "pk_abcdefgh", RepoSummary: &RepoSummary{Description: "d"}, Budget: Budget{UsedChars: 987, EstimatedTokens: 5, Cut: []string{"x"}}},
		"full": {SchemaVersion: 1, PackID: "pk_zzzzzzzz", Type: "full", Budget: Budget{UsedChars: 12},
			Contents: []Item{{ID: "a:1:1", Path: "a", Content: "x\u2028<&>\xff\n", Redactions: []Redaction{}}}},
	}
	for g, p := range goldenPacks(t) {
		packs[g] = p
	}
	for name, p := range packs {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			digest, err := EncodeDigest(&got, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := referenceJSON(t, p); !bytes.Equal(got.Bytes(), want) {
				t.Errorf("written:\n got  %s\n want %s", got.Bytes(), want)
			}
			c := *p
			c.PackID, c.Budget.UsedChars = "", 0
			if want := sha256.Sum256(referenceJSON(t, &c)); digest != want {
				t.Errorf("digest %x, want %x", digest, want)
			}
		})
	}
}

// goldenPacks are the packs of testdata/*.golden.json, by file name.
func goldenPacks(t testing.TB) map[string]*Pack {
	t.Helper()
	out := map[string]*Pack{}
	for g, data := range globFiles(t, filepath.Join("testdata", "*.golden.json")) {
		var p Pack
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		out[g] = &p
	}
	return out
}

// globFiles reads the files pattern names, by name; at least one.
func globFiles(t testing.TB, pattern string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil || len(names) == 0 {
		t.Fatalf("no files %s (%v)", pattern, err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	return out
}

// FuzzEncodeItem: an item whose content is written apart from its other
// fields (itemBytes) is still exactly what encoding/json writes, whatever
// its strings hold (a path or id that looks like the content's key, too).
func FuzzEncodeItem(f *testing.F) {
	f.Add("a.go:1:2", "a.go", "utf-8", "package a\n\tx := \"y\"\n", "r")
	f.Add(`","content":"`, `"content":""`, `content`, "\u2028\xff\x00", `"content":"`)
	f.Add("", "", "", "x", "")
	f.Fuzz(func(t *testing.T, id, path, encoding, content, rule string) {
		size := int64(len(content))
		p := &Pack{Contents: []Item{
			{ID: id, Path: path, Role: "related", Encoding: encoding, Content: content, SHA256: rule,
				OriginalSizeBytes: &size, Redactions: []Redaction{{Line: 1, RuleID: rule}}},
			{ID: content, Path: id, Importance: path, Encoding: encoding, Content: path + content},
		}}
		var got bytes.Buffer
		if err := Encode(&got, p); err != nil {
			t.Fatal(err)
		}
		if want := referenceJSON(t, p); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("\n got  %s\n want %s", got.Bytes(), want)
		}
	})
}
