package schema

import (
	"fmt"
	"maps"
	"testing"
)

// BenchmarkValidatePackParts checks the document of a full-tree pack of
// 5,000 files (an index entry and an item each, as the change pack's
// testdata has them: an included file with its size, and its content with
// blob and size) in parts, as the audit does (validateInParts): the validator's cost per
// element, which a large pack's check is most of. Run it with -cpu 1 to
// see the work, not the cores.
func BenchmarkValidatePackParts(b *testing.B) {
	doc := changePackDocument(b)
	entry := maps.Clone(doc["file_index"].([]any)[0].(map[string]any))
	item := maps.Clone(doc["contents"].([]any)[0].(map[string]any))
	delete(item, "original_withheld")
	item["blob"], item["original_size_bytes"] = "0123456789abcdef0123456789abcdef01234567", 14.0
	const files = 5000
	entries, items := make([]any, files), make([]any, files)
	for i := range files {
		path := fmt.Sprintf("internal/svc%d/handler.go", i)
		e, it := maps.Clone(entry), maps.Clone(item)
		e["path"], it["path"], it["id"] = path, path, path+":1:2"
		entries[i], items[i] = e, it
	}
	doc["file_index"], doc["contents"] = entries, items
	if err := validateInParts(doc); err != nil {
		b.Fatalf("the document fails: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := validateInParts(doc); err != nil {
			b.Fatal(err)
		}
	}
}
