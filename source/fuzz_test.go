package source

import (
	"testing"
	"unicode/utf8"
)

// FuzzSafePath: every name git can hold is written as valid UTF-8 and
// decodes back to itself.
func FuzzSafePath(f *testing.F) {
	f.Add("caf\xe9.txt")
	f.Add(`lit\xe9\x5c`)
	f.Add("ok/ü")
	f.Fuzz(func(t *testing.T, raw string) {
		p := safePath(raw)
		if !utf8.ValidString(p) || RawPath(p) != raw {
			t.Fatalf("%q → %q → %q", raw, p, RawPath(p))
		}
	})
}

// FuzzTreePath: what an API's change list names is accepted only when a
// tree could hold it.
func FuzzTreePath(f *testing.F) {
	f.Add("a/b")
	f.Add("/abs")
	f.Add("a/../b")
	f.Fuzz(func(t *testing.T, p string) {
		if TreePath(p) && (p == "" || p[0] == '/' || p[len(p)-1] == '/') {
			t.Fatalf("TreePath(%q) accepted", p)
		}
	})
}
