package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
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
