package pack

import (
	"sort"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/corpus"
)

type benchFile struct {
	path string
	data []byte
}

// hotFiles is a generated 2,000-file tree (internal/corpus), in path order.
var hotFiles = sync.OnceValue(func() []benchFile {
	var out []benchFile
	for p, data := range corpus.Files(2000, 1) {
		out = append(out, benchFile{p, data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
})

// BenchmarkClassify is the per-file classification of the builder: the type
// by name, the content sniff (binary or text, and the encoding), the decode
// to text and the category and key-file importance, over 2,000 generated
// files (one op = all of them).
func BenchmarkClassify(b *testing.B) {
	files := hotFiles()
	total := 0
	for _, f := range files {
		total += len(f.data)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			typ := typeByName(f.path)
			binary, enc := sniff(f.data)
			if binary {
				typ = TypeBinary
			} else if _, err := decode(f.data, enc); err != nil {
				b.Fatal(err)
			}
			classify(f.path, typ)
		}
	}
}
