package pack_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/pack"
)

// TestFinalizeSettlesUsedChars builds packs whose size crosses a power of
// ten, where used_chars gains a digit by counting itself.
func TestFinalizeSettlesUsedChars(t *testing.T) {
	base := func(content string) *pack.Pack {
		return &pack.Pack{SchemaVersion: pack.SchemaVersion, Type: "full",
			Contents: []pack.Item{{ID: "a.go:1:1", Path: "a.go", Content: content, Redactions: []pack.Redaction{}}}}
	}
	empty, err := pack.Finalize(base(""))
	if err != nil {
		t.Fatal(err)
	}
	n0 := utf8.RuneCount(empty)
	deltaStep := 1
	if pack.RaceEnabled {
		deltaStep = 3
	}
	for _, target := range []int{999, 1000, 9999, 10000, 100000} {
		for delta := -12; delta <= 12; delta += deltaStep {
			for _, unit := range []string{"x", "é", "\u2028"} { // 1, 2 and 3 bytes; \u2028 is escaped as 6 characters
				width := utf8.RuneCountInString(unit)
				if unit == "\u2028" {
					width = 6
				}
				n := (target + delta - n0) / width
				if n < 0 {
					continue
				}
				p := base(strings.Repeat(unit, n))
				data, err := pack.Finalize(p)
				if err != nil {
					t.Fatalf("%d×%q: %v", n, unit, err)
				}
				if got := utf8.RuneCount(data); p.Budget.UsedChars != got {
					t.Fatalf("%d×%q: used_chars %d, the bytes have %d characters", n, unit, p.Budget.UsedChars, got)
				}
				digest, err := pack.ContentDigest(p)
				if err != nil || p.PackID != pack.ID(digest) {
					t.Fatalf("%d×%q: pack id %s does not derive from the content digest", n, unit, p.PackID)
				}
				again, err := pack.Marshal(p)
				if err != nil || string(again) != string(data) {
					t.Fatalf("%d×%q: Finalize's bytes are not the canonical serialization", n, unit)
				}
			}
		}
	}
}
