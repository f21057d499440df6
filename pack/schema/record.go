package schema

import _ "embed"

//go:embed record.schema.json
var recordSchema []byte

// RecordJSON is the transparency record's JSON Schema.
func RecordJSON() []byte { return recordSchema }

// ValidateRecord checks transparency record bytes against the record schema.
func ValidateRecord(data []byte) error {
	return validate("record.schema.json", data)
}

// ptr is a pointer to v, for decoded_schemas.go.
func ptr[T any](v T) *T { return &v }
