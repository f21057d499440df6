package audit

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/corpus"
)

// generatedItems are the text files of a generated 2,000-file tree
// (internal/corpus, what bench/run scans), in path order: ~3.5 MB of Go,
// TypeScript, Python, Rust, Java, Markdown, JSON and YAML.
var generatedItems = sync.OnceValue(func() []ScanItem {
	var items []ScanItem
	for p, data := range corpus.Files(2000, 1) {
		if strings.IndexByte(string(data[:min(len(data), 8000)]), 0) < 0 {
			items = append(items, ScanItem{Path: p, Content: data})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Path < items[j].Path })
	return items
})

// BenchmarkScanGenerated scans the generated tree file by file on one
// goroutine: the scanner NewScanner builds (fast) and gitleaks' detector
// alone (stock): the same findings, the difference is the work.
func BenchmarkScanGenerated(b *testing.B) {
	items := generatedItems()
	benchScanItems(b, items)
}

// BenchmarkScanMixed is the same comparison on BenchmarkScan's corpus
// (configs, fixtures and planted secrets, ~1 MB).
func BenchmarkScanMixed(b *testing.B) {
	benchScanItems(b, benchCorpus(1<<20))
}

// BenchmarkScanTree is the same comparison on a real tree's text files:
// CTXPACK_SCAN_TREE=DIR (a checkout; .git is skipped).
//
//	CTXPACK_SCAN_TREE=/tmp/prom go test -run '^$' -bench ScanTree -benchtime 3x ./audit/
func BenchmarkScanTree(b *testing.B) {
	dir := os.Getenv("CTXPACK_SCAN_TREE")
	if dir == "" {
		b.Skip("CTXPACK_SCAN_TREE is not set")
	}
	var items []ScanItem
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) < 0 {
			items = append(items, ScanItem{Path: filepath.ToSlash(p[len(dir):]), Content: data})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	benchScanItems(b, items)
}

func benchScanItems(b *testing.B, items []ScanItem) {
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	for _, mode := range []string{"fast", "stock"} {
		b.Run(mode, func(b *testing.B) {
			s, err := NewScanner(ScannerOptions{})
			if err != nil {
				b.Fatal(err)
			}
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
	items := generatedItems()
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

// BenchmarkLiterals is the one pass over a text that finds gitleaks'
// keywords and the rules' anchors, and the one that finds the credential
// words, over the generated tree's texts or CTXPACK_SCAN_TREE's:
//
//	CTXPACK_SCAN_TREE=/tmp/hugo go test -run '^$' -bench Literals ./audit/
func BenchmarkLiterals(b *testing.B) {
	var texts []string
	if os.Getenv("CTXPACK_SCAN_TREE") != "" {
		for _, s := range treeTexts(b) {
			texts = append(texts, asciiLower(s))
		}
	} else {
		for _, it := range generatedItems() {
			texts = append(texts, asciiLower(string(it.Content)))
		}
	}
	total := 0
	for _, s := range texts {
		total += len(s)
	}
	f, _ := defaultFast(b)
	for _, c := range []struct {
		name string
		lits *literals
	}{{"rules", f.rules.lits}, {"credentials", credentialNeedles()}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(total))
			n := 0
			for b.Loop() {
				for _, s := range texts {
					c.lits.scan(s, nil, func(int, int) { n++ })
				}
			}
			if n == 0 {
				b.Fatal("no occurrence found")
			}
		})
	}
}
