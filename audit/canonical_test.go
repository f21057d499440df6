package audit

import (
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// TestCanonicalStreamsMatchPack checks the streaming comparison against
// pack.Marshal, which the builder uses.
func TestCanonicalStreamsMatchPack(t *testing.T) {
	p := &pack.Pack{SchemaVersion: pack.SchemaVersion, PackID: "pk_abcdefgh", Type: "full",
		Contents: []pack.Item{{ID: "a.go:1:2", Path: "a.go", Content: "x <b> & \"y\"\n\u2028", Redactions: []pack.Redaction{}}}}
	p.Budget.UsedChars = 1234
	data, err := pack.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pack.ContentDigest(p)
	if err != nil {
		t.Fatal(err)
	}
	if ok, digest, err := canonicalDigest(p, data); err != nil || !ok || digest != want {
		t.Fatalf("canonicalDigest = %v, %x, %v on pack.Marshal's own bytes; want the digest %x", ok, digest, err, want)
	}
	for _, other := range [][]byte{data[:len(data)-1], append(append([]byte{}, data...), ' '), []byte(strings.Replace(string(data), "x", "z", 1)), nil} {
		if ok, digest, _ := canonicalDigest(p, other); ok || digest != want {
			t.Fatalf("canonicalDigest accepts %q, or its digest %x is not the pack's", other, digest)
		}
	}
}
