package lang

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLex tokenizes this repository's Go source as JavaScript (the
// C-family lexer the JavaScript, TypeScript, Java and Rust extractors
// share), and BenchmarkExtractJS extracts the facts of the same text.
func BenchmarkLex(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		lex(src, lexOpts{js: true})
	}
}

func BenchmarkExtractJS(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Extract("bench.js", src)
	}
}

func benchSource(b *testing.B) string {
	b.Helper()
	files, err := filepath.Glob("../pack/*.go")
	if err != nil || len(files) == 0 {
		b.Fatalf("no source to read: %v", err)
	}
	var src []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, data...)
	}
	return string(src)
}
