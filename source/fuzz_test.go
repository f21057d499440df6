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

// FuzzParseGrep: git grep's -z -o output names files the repository
// chose; any bytes parse without a panic into sorted, distinct paths of
// valid UTF-8 for each word, every path written as safePath writes it.
func FuzzParseGrep(f *testing.F) {
	f.Add([]byte("c0ffee:a.go\x00send\nc0ffee:b/c.go\x00join\nc0ffee:a.go\x00send\n"), false)
	f.Add([]byte("c0ffee:caf\xe9.js\x00Send\nc0ffee:x\x00"), true)
	f.Add([]byte("no separator\n\x00\x00\n"), false)
	f.Fuzz(func(t *testing.T, res []byte, lower bool) {
		out := parseGrep(res, "c0ffee:", lower, map[string][]string{})
		for w, paths := range out {
			for i, p := range paths {
				if !utf8.ValidString(p) || safePath(RawPath(p)) != p {
					t.Fatalf("word %q: path %q is not a safe path", w, p)
				}
				if i > 0 && paths[i-1] >= p {
					t.Fatalf("word %q: paths %q are not sorted and distinct", w, paths)
				}
			}
		}
	})
}

// FuzzParseLsTree: git ls-tree's -r -z output names files the repository
// chose; any bytes parse without a panic, into records that each have a
// path, a valid object id and a mode, or into an error.
func FuzzParseLsTree(f *testing.F) {
	id := "0123456789abcdef0123456789abcdef01234567"
	f.Add([]byte("100644 blob " + id + "\ta.go\x00120000 blob " + id + "\tdir/l\x00160000 commit " + id + "\tsub\x00"))
	f.Add([]byte("100644 blob " + id + "\tcaf\xe9\tx\n.go\x00"))
	f.Add([]byte("100644 blob " + id + "\t\x00"))
	f.Add([]byte("100644 blob short\tp\x00no nul"))
	f.Fuzz(func(t *testing.T, out []byte) {
		files, err := parseLsTree(out)
		if err != nil {
			return
		}
		for _, fl := range files {
			if fl.path == "" {
				t.Fatalf("a record without a path: %+v", fl)
			}
			if _, err := ParseID(string(fl.id)); err != nil {
				t.Fatalf("record %+v: %v", fl, err)
			}
		}
	})
}
