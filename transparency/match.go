package transparency

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// CheckPair reports whether rec is the record of the pack whose bytes are
// packJSON: the record names the pack's id and the sha256 of its bytes. A
// pack and a record from two runs (a write that was interrupted between
// them, a file copied from elsewhere) never pass for one another.
func CheckPair(rec *Record, packJSON []byte, packID string) error {
	sum := sha256.Sum256(packJSON)
	got := "sha256:" + hex.EncodeToString(sum[:])
	switch {
	case rec.PackID != packID:
		return fmt.Errorf("the record is of pack %s, not of this pack %s", orNone(rec.PackID), orNone(packID))
	case rec.Digests.PackSHA256 != got:
		return fmt.Errorf("the record names pack bytes sha256 %s, but this pack's bytes are %s", orNone(rec.Digests.PackSHA256), got)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
