package pack

import (
	"fmt"
	"strings"
	"testing"
)

// quoteCases are strings whose escapes encoding/json writes in every way,
// and each escape at every offset of an eight-byte word, in long strings.
func quoteCases() []string {
	cases := []string{"", "plain", "a\"b\\c", "\n\r\t\b\f", "\x00\x01\x1f\x7f", "<a>&b", "é中😀",
		"\u2028\u2029", "\xff\xfe", "a\xe2\x80", "\xed\xa0\x80", strings.Repeat("x\ny\"", 100)}
	for _, special := range []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", " ", "é", "\u2028", "\xff", "\xe2\x80"} {
		for at := range 17 {
			cases = append(cases, strings.Repeat("a", at)+special+strings.Repeat("b", 17-at))
		}
	}
	// Two bytes side by side at every offset: each special next to
	// another, and next to the byte one above it ('#' after '"', ']'
	// after '\\', ' ' after a control), where a borrow between bytes
	// would mark the neighbour too.
	pairs := []string{"\"", "#", "\\", "]", "\x00", "\x01", "\n", "\t", "\x0b", " ", "!", "\x7f", "\x80", "é"}
	for _, a := range pairs {
		for _, b := range pairs {
			for at := range 9 {
				cases = append(cases, strings.Repeat("a", at)+a+b+strings.Repeat("b", 9-at))
			}
		}
	}
	return cases
}

// TestQuote: appendQuoted writes, and quotedLen measures, what
// encoding/json writes.
func TestQuote(t *testing.T) {
	for _, s := range quoteCases() {
		want := referenceJSON(t, s)
		want = want[:len(want)-1]
		if got := appendQuoted(nil, s); string(got) != string(want) {
			t.Errorf("appendQuoted(%q) = %s, encoding/json writes %s", s, got, want)
		}
		if got := quotedLen(s); got != len(want) {
			t.Errorf("quotedLen(%q) = %d, encoding/json writes %d bytes", s, got, len(want))
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range quoteCases() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := referenceJSON(t, s)
		want = want[:len(want)-1]
		if got := appendQuoted([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("appendQuoted(%q) = %s, encoding/json writes %s", s, got[1:], want)
		}
		if got := quotedLen(s); got != len(want) {
			t.Fatalf("quotedLen(%q) = %d, encoding/json writes %d bytes", s, got, len(want))
		}
	})
}

// TestSerializedSizeBound: Finalize's buffer is never too small for a
// pack, and not a tenth larger than it for a large one (a buffer a half too
// large is +12 MB of live heap at a 10,000-file audit's peak).
func TestSerializedSizeBound(t *testing.T) {
	packs := map[string]*Pack{}
	for name, v := range documentPacks(t) {
		if p, ok := v.(*Pack); ok && p != nil {
			packs[name] = p
		}
	}
	large := &Pack{SchemaVersion: 1, Type: "full"}
	size, dist := int64(4000), 1
	for i := range 2000 {
		path := fmt.Sprintf("internal/svc%d/handler.go", i)
		content := strings.Repeat(fmt.Sprintf("func Handle%d(w http.ResponseWriter) {\n\tfmt.Fprintf(w, \"<%%s>\\n\", \"é\")\n}\n", i), 40)
		large.FileIndex = append(large.FileIndex, IndexEntry{Path: path, Type: TypeText, Category: CatSource, SizeBytes: &size, Included: true})
		large.Contents = append(large.Contents, Item{ID: path + ":1:120", Path: path, Role: RoleRelated, Encoding: "utf-8", Content: content,
			SHA256: strings.Repeat("a", 64), Blob: strings.Repeat("b", 40), OriginalSizeBytes: &size, Redactions: []Redaction{},
			StartLine: 1, EndLine: 120, Distance: &dist, Relationship: []string{"calls"}})
	}
	packs["large"] = large
	for name, p := range packs {
		data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		bound := serializedSizeBound(p)
		if bound < len(data) {
			t.Errorf("%s: bound %d under the %d bytes of the serialization", name, bound, len(data))
		}
		if name == "large" && float64(bound) > 1.01*float64(len(data)) {
			t.Errorf("%s: bound %d is %.2f times the %d bytes of the serialization", name, bound, float64(bound)/float64(len(data)), len(data))
		}
	}
}

// BenchmarkQuotedLen measures source code (this package's files, their
// newlines, tabs and quotes every few words) as a string of the pack.
func BenchmarkQuotedLen(b *testing.B) {
	var src strings.Builder
	for _, data := range globFiles(b, "*.go") {
		src.Write(data)
	}
	s := src.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		quotedLen(s)
	}
}
