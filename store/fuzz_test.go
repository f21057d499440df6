package store

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// Documents come from agents: parsing, canonical form, the strings the
// secret scan reads and the refs must never panic, and a parsed document
// parses again to the same bytes.
func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{`{}`, `{"scope":{"description":"x","refs":["a.go:1-2"]}}`, `{"a":{"a":1,"a":2}}`,
		`{"findings":[{"refs":["x:1",2,null]}],"qa":{"verdict":"pass"}}`, `[1]`, `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, `{"a":1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDocument(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("not a contract error: %v", err)
			}
			return
		}
		_ = d.strings()
		for _, r := range d.refs() {
			if r.ok {
				_, _ = ParseRef(r.text)
			}
		}
		for _, k := range d.Keys() {
			_ = hasSubstance(decodeSection(d[k]))
		}
		canon, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseDocument(canon)
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, canon)
		}
		if b, _ := again.MarshalJSON(); !bytes.Equal(b, canon) {
			t.Fatalf("canonical form is not stable:\n%s\n%s", canon, b)
		}
	})
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"a.go:1-2", "a:b.go:3", "x:0", "/etc/passwd:1", "a/../b:1", "a.go:2-1", "a.go:99999999", "a.go:1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		if r.StartLine < 1 || r.EndLine < r.StartLine || r.EndLine > maxLine || checkRefPath(r.Path) != nil {
			t.Fatalf("accepted a bad ref %q: %+v", s, r)
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("%q -> %q does not round-trip: %+v %v", s, r.String(), again, err)
		}
	})
}

// Artifacts are downloaded from CI: a zip of any shape must fail cleanly.
func FuzzReadZip(f *testing.F) {
	f.Add(zipBytes(f, map[string][]byte{"pack.json": []byte("{}"), "pack.record.json": []byte("{}")}))
	f.Add(zipBytes(f, map[string][]byte{"a/pack.json": []byte("{}"), "b/pack.json": []byte("{}")}))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ReadZip(bytes.NewReader(data), int64(len(data)))
		if err == nil && (in.Pack == nil || in.Record == nil) {
			t.Fatal("success without both files")
		}
	})
}

// linesOf maps the items a pack sends for a path onto file lines, whole or
// truncated (head, marker, tail), and never guesses a line's place.
func TestLinesOf(t *testing.T) {
	whole := "a\nb\nc\n"
	head := "l1\nl2\n"
	tail := "l9\nl10\n"
	p := &pack.Pack{Contents: []pack.Item{
		{ID: "w.go:1:3", Path: "w.go", Encoding: "utf-8", Content: whole, SHA256: sha256Hex([]byte(whole)), Redactions: []pack.Redaction{{Line: 2, RuleID: "r"}}},
		{ID: "t.go:1:10", Path: "t.go", Encoding: "utf-8", Truncated: true, Content: head + pack.TruncationMarker + tail, SHA256: "stale"},
	}}
	w := linesOf(p, "w.go")
	if w.stale || len(w.text) != 3 || w.text[3] != "c" || !w.redacted[2] || w.redacted[1] {
		t.Fatalf("whole item: %+v", w)
	}
	tr := linesOf(p, "t.go")
	// head lines 1-2; the tail's first line may be cut, so only line 10.
	if !tr.stale || tr.text[1] != "l1" || tr.text[2] != "l2" || tr.text[10] != "l10" || len(tr.text) != 3 {
		t.Fatalf("truncated item: %+v", tr.text)
	}
	if linesOf(p, "none.go") != nil {
		t.Fatal("lines for a path the pack does not send")
	}
}
