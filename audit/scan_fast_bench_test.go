package audit

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/corpus"
)

var (
	genOnce  sync.Once
	genItems []ScanItem
	genErr   error
)

// generatedItems are the text files of a generated 2,000-file tree
// (internal/corpus, what bench/run scans): ~3.5 MB of Go, TypeScript, Python,
// Rust, Java, Markdown, JSON and YAML.
func generatedItems(b *testing.B) []ScanItem {
	genOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctxpack-scan-")
		if err != nil {
			genErr = err
			return
		}
		defer os.RemoveAll(dir)
		if genErr = corpus.Generate(dir, 2000, 1); genErr != nil {
			return
		}
		genErr = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil || strings.IndexByte(string(data[:min(len(data), 8000)]), 0) >= 0 {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			genItems = append(genItems, ScanItem{Path: filepath.ToSlash(rel), Content: data})
			return nil
		})
	})
	if genErr != nil {
		b.Fatal(genErr)
	}
	return genItems
}

// BenchmarkScanGenerated scans the generated tree file by file on one
// goroutine, with ctxpack's fast path (fast) and with gitleaks' detector
// alone (stock): the same findings, the difference is the work.
func BenchmarkScanGenerated(b *testing.B) {
	items := generatedItems(b)
	benchScanItems(b, items)
}

// BenchmarkScanMixed is the same comparison on BenchmarkScan's corpus
// (configs, fixtures and planted secrets, ~1 MB).
func BenchmarkScanMixed(b *testing.B) {
	benchScanItems(b, benchCorpus(1<<20))
}

func benchScanItems(b *testing.B, items []ScanItem) {
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	for _, mode := range []string{"fast", "stock"} {
		b.Run(mode, func(b *testing.B) {
			s := newDefaultScanner(b)
			if mode == "stock" {
				s.fast = nil
			}
			b.SetBytes(int64(total))
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				for _, it := range items {
					if _, err := s.Scan(ctx, it.Path, it.Content); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkMayDecode is the check that replaces the decoder's first search
// on fragments with nothing to decode.
func BenchmarkMayDecode(b *testing.B) {
	items := generatedItems(b)
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = string(it.Content)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			mayDecode(t)
		}
	}
}
