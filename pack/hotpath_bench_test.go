package pack

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/corpus"
)

type benchFile struct {
	path string
	data []byte
}

var (
	hotOnce  sync.Once
	hotFiles []benchFile
	hotErr   error
)

// hotCorpus is a generated 2,000-file tree (internal/corpus), read into memory.
func hotCorpus(b *testing.B) []benchFile {
	hotOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctxpack-hot-")
		if err != nil {
			hotErr = err
			return
		}
		defer os.RemoveAll(dir)
		if hotErr = corpus.Generate(dir, 2000, 1); hotErr != nil {
			return
		}
		hotErr = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			hotFiles = append(hotFiles, benchFile{filepath.ToSlash(rel), data})
			return err
		})
	})
	if hotErr != nil {
		b.Fatal(hotErr)
	}
	return hotFiles
}

// BenchmarkClassify is the per-file classification of the builder: the type
// by name, the content sniff (binary or text, and the encoding), the decode
// to text and the category and key-file importance, over 2,000 generated
// files (one op = all of them).
func BenchmarkClassify(b *testing.B) {
	files := hotCorpus(b)
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
