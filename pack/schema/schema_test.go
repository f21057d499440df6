package schema

import (
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
