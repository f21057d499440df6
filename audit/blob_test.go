package audit

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

// provenBlobID is git's blob id, SHA-1 or SHA-256, of bytes that show no
// collision attack.
func TestProvenBlobID(t *testing.T) {
	for _, data := range []string{"", "package main\n", strings.Repeat("x", 100_000)} {
		for _, idLen := range []int{40, 64} {
			id, ok := provenBlobID([]byte(data), idLen)
			if want := gitBlobID([]byte(data), idLen); !ok || id != want {
				t.Errorf("%d bytes, %d-digit ids: %s %v, want %s", len(data), idLen, id, ok, want)
			}
		}
	}
}

// An item stands for its file's bytes only when it says it is the file as
// it is, the file is a regular one whose blob the item names, and the
// item's bytes prove that blob id; any other is re-derived from the file.
func TestContentAsBlob(t *testing.T) {
	const content = "package main\n\nfunc main() {}\n"
	read := func(context.Context) ([]byte, error) { return []byte(content), nil }
	for _, idLen := range []int{40, 64} {
		blob := gitBlobID([]byte(content), idLen)
		whole := func() (*pack.Item, *pack.File) {
			return &pack.Item{Path: "main.go", Content: content, Blob: blob, Encoding: pack.EncUTF8, Redactions: []pack.Redaction{}},
				&pack.File{Path: "main.go", Blob: blob, Read: read}
		}
		it, f := whole()
		if got := contentAsBlob(it, f, provenBlobID); string(got) != content {
			t.Fatalf("%d-digit ids: a whole UTF-8 item of its blob: %q", idLen, got)
		}
		for name, edit := range map[string]func(*pack.Item, *pack.File){
			"not a regular file": func(_ *pack.Item, f *pack.File) { f.Read = nil },
			"no blob id known":   func(_ *pack.Item, f *pack.File) { f.Blob = "" },
			"another blob named": func(it *pack.Item, _ *pack.File) { it.Blob = strings.Repeat("0", idLen) },
			"decoded":            func(it *pack.Item, _ *pack.File) { it.Encoding = pack.EncLatin1 },
			"truncated":          func(it *pack.Item, _ *pack.File) { it.Truncated = true },
			"redacted":           func(it *pack.Item, _ *pack.File) { it.Redactions = []pack.Redaction{{Line: 1, RuleID: "r"}} },
			"other bytes":        func(it *pack.Item, _ *pack.File) { it.Content += "\n" },
		} {
			it, f := whole()
			edit(it, f)
			if got := contentAsBlob(it, f, provenBlobID); got != nil {
				t.Errorf("%d-digit ids, %s: taken for the file's bytes", idLen, name)
			}
		}
		// Bytes whose hash shows a collision attack are not taken for the
		// blob they hash to.
		colliding := func(data []byte, idLen int) (string, bool) {
			id, _ := provenBlobID(data, idLen)
			return id, false
		}
		it, f = whole()
		if got := contentAsBlob(it, f, colliding); got != nil {
			t.Errorf("%d-digit ids: bytes that show a collision attack are taken for the file's", idLen)
		}
	}
}
