package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestValidatePackRejects(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not JSON", `{"schema_version":`, "not valid JSON"},
		{"trailing data", `{}{}`, "not valid JSON"},
		{"empty object", `{}`, "does not match pack.schema.json"},
		{"wrong schema version", `{"schema_version": 2}`, "does not match pack.schema.json"},
		{"fractional count", `{"schema_version": 1.5}`, "does not match pack.schema.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidatePack([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateRecordRejectsAPack(t *testing.T) {
	if err := ValidateRecord([]byte(`{"schema_version": 1}`)); err == nil || !strings.Contains(err.Error(), "record.schema.json") {
		t.Fatalf("err = %v", err)
	}
}

// TestValidatePackDocumentAgrees: a decoded document gets the verdict its
// bytes get, valid or not.
func TestValidatePackDocumentAgrees(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "change_pack.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{string(valid), strings.Replace(string(valid), `"schema_version":1`, `"schema_version":2`, 1), `{}`, `null`, `[]`} {
		var inst any
		if err := json.Unmarshal([]byte(doc), &inst); err != nil {
			t.Fatal(err)
		}
		bytesErr, docErr := ValidatePack([]byte(doc)), ValidatePackDocument(inst)
		if (bytesErr == nil) != (docErr == nil) {
			t.Fatalf("%.40s: the bytes get %v, the document %v", doc, bytesErr, docErr)
		}
	}
	if ValidatePack(valid) != nil || ValidatePackDocument(nil) == nil {
		t.Fatal("the valid pack fails, or a null document passes: the cases test nothing")
	}
}

// TestValidatePackPartsSplitsTheArrays: the pack's four large arrays are
// checked element by element, and of several failing elements the error
// names the first, in name then index order, on every run.
func TestValidatePackPartsSplitsTheArrays(t *testing.T) {
	split, err := packSplit()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"changes", "contents", "file_index", "key_files"} {
		if !split.names[name] {
			t.Fatalf("%s is not checked element by element (split: %v)", name, slices.Sorted(maps.Keys(split.names)))
		}
	}
	doc := changePackDocument(t)
	if err := validateInParts(doc); err != nil {
		t.Fatalf("the valid pack fails in parts: %v", err)
	}
	doc["key_files"].([]any)[1].(map[string]any)["role"] = "boss"
	doc["file_index"].([]any)[3].(map[string]any)["zz_unknown"] = 1
	doc["file_index"].([]any)[2].(map[string]any)["zz_unknown"] = 1
	for range 20 {
		err := validateInParts(doc)
		if err == nil || !strings.Contains(err.Error(), "/file_index/2:") {
			t.Fatalf("err = %v, want the first failing element, /file_index/2", err)
		}
	}
}

// TestValidatePackPartsChunks: elements checked in chunks name the first
// that fails, past the first chunk too, and a long valid array passes.
func TestValidatePackPartsChunks(t *testing.T) {
	doc := changePackDocument(t)
	entry := doc["file_index"].([]any)[0].(map[string]any)
	entries := make([]any, 3*chunkLen+5)
	for i := range entries {
		e := maps.Clone(entry)
		e["path"] = fmt.Sprintf("f%d.go", i)
		entries[i] = e
	}
	doc["file_index"] = entries
	if err := validateInParts(doc); err != nil {
		t.Fatalf("the valid pack fails in parts: %v", err)
	}
	entries[2*chunkLen+1].(map[string]any)["size_bytes"] = -1
	entries[chunkLen+6].(map[string]any)["included"] = "yes"
	for range 10 {
		err := validateInParts(doc)
		if want := fmt.Sprintf("/file_index/%d:", chunkLen+6); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want the first failing element, %s", err, want)
		}
	}
}

// TestValidatePackPartsWholeArray: a property the schema does not let be
// checked element by element is put back whole: an array where an object
// must be fails.
func TestValidatePackPartsWholeArray(t *testing.T) {
	doc := changePackDocument(t)
	source := doc["source"]
	delete(doc, "source")
	err := ValidatePackParts(doc, map[string]int{"source": 1}, func(string, int) (any, error) { return source, nil })
	if err == nil || !strings.Contains(err.Error(), "source") {
		t.Fatalf("err = %v, want source refused as an array", err)
	}
}

// changePackDocument is testdata/change_pack.json decoded.
func changePackDocument(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "change_pack.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPackSchemaTiesFields: the fields the pack schema makes depend on
// one another (an index entry's exclusion reason on its inclusion, its
// size on the withheld original; an item's blob and size on it; a withheld
// change's diff), checked both ways on each of the valid pack's elements,
// by this validator, in parts, and by the reference.
func TestPackSchemaTiesFields(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(doc map[string]any)
		valid bool
	}{
		{"unchanged", func(map[string]any) {}, true},
		{"an excluded entry with its reason", func(d map[string]any) {
			e := entry(d, "file_index", 0)
			e["included"], e["exclusion_reason"] = false, "policy"
		}, true},
		{"an excluded entry without a reason", func(d map[string]any) { entry(d, "file_index", 0)["included"] = false }, false},
		{"an included entry with a reason", func(d map[string]any) { entry(d, "file_index", 0)["exclusion_reason"] = "policy" }, false},
		{"an entry without its size", func(d map[string]any) { delete(entry(d, "file_index", 0), "size_bytes") }, false},
		{"an entry with its size and a withheld original", func(d map[string]any) { entry(d, "file_index", 0)["original_withheld"] = "secret" }, false},
		{"a withheld entry with its size", func(d map[string]any) { entry(d, "file_index", 2)["size_bytes"] = 3.0 }, false},
		{"a withheld entry without it", func(d map[string]any) { delete(entry(d, "file_index", 2), "original_withheld") }, false},
		{"a withheld item with a blob", func(d map[string]any) { entry(d, "contents", 0)["blob"] = strings.Repeat("a", 40) }, false},
		{"a withheld item with its size", func(d map[string]any) { entry(d, "contents", 0)["original_size_bytes"] = 3.0 }, false},
		{"a withheld item with its blob and its size", func(d map[string]any) {
			e := entry(d, "contents", 0)
			e["blob"], e["original_size_bytes"] = strings.Repeat("a", 40), 3.0
		}, false},
		{"an item neither withheld nor with blob and size", func(d map[string]any) { delete(entry(d, "contents", 0), "original_withheld") }, false},
		{"an item with blob and size", func(d map[string]any) {
			e := entry(d, "contents", 0)
			delete(e, "original_withheld")
			e["blob"], e["original_size_bytes"] = strings.Repeat("a", 40), 3.0
		}, true},
		{"an item with its blob only", func(d map[string]any) {
			e := entry(d, "contents", 0)
			delete(e, "original_withheld")
			e["blob"] = strings.Repeat("a", 40)
		}, false},
		{"a withheld change's diff naming its blobs", func(d map[string]any) { entry(d, "changes", 0)["diff"] = "@@ -0,0 +1 @@\nindex 1..2\n" }, false},
		{"a withheld change's diff without them", func(d map[string]any) { entry(d, "changes", 0)["diff"] = "@@ -0,0 +1 @@\n+x\n" }, true},
		{"a change's diff naming its blobs", func(d map[string]any) {
			e := entry(d, "changes", 0)
			delete(e, "original_withheld")
			e["diff"] = "index 1..2\n"
		}, true},
	}
	ref := referenceValidator(t, "pack.schema.json", packSchema)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := changePackDocument(t)
			tt.edit(doc)
			whole, parts, want := ValidatePackDocument(doc), validateInParts(doc), ref.Validate(doc)
			if (whole == nil) != tt.valid || (parts == nil) != tt.valid || (want == nil) != tt.valid {
				t.Fatalf("valid = %v; whole: %v; in parts: %v; the reference: %v", tt.valid, whole, parts, want)
			}
			// The audit's verdict quotes the error: one rule broken, one
			// message, on every run (the validator walks a schema's
			// properties in map order).
			for range 20 {
				if again := ValidatePackDocument(doc); fmt.Sprint(again) != fmt.Sprint(whole) {
					t.Fatalf("the error changed from one run to the next:\n%v\n%v", whole, again)
				}
			}
		})
	}
}

// entry is the i-th element of the array doc[name].
func entry(doc map[string]any, name string, i int) map[string]any {
	return doc[name].([]any)[i].(map[string]any)
}
