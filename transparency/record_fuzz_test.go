package transparency

import (
	"testing"
)

// FuzzParseRecord reads records from files and notes a repository (or
// anyone with push access to its notes) controls.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"record_version":1,"pack_id":"pk_aaaaaaaa","source":{"repository":"r","kind":"git","trigger":"commit","scope":"change","config":{"from":"base"}},"verdict":null}`))
	f.Add([]byte("not a record\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := ParseRecord(data)
		if err != nil {
			return
		}
		_ = CheckPair(rec, data, rec.PackID)
		_ = IsCanonical(data)
	})
}
