package pack_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/corpus"
	"github.com/ctxpack/ctxpack/pipeline"
)

var (
	corpusOnce sync.Once
	corpusDir  string
	corpusErr  error
)

// benchRepo is a generated 5,000-file repository with one commit, shared by
// the benchmarks of this package.
func benchRepo(b *testing.B) string {
	corpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctxpack-bench-")
		if err != nil {
			corpusErr = err
			return
		}
		corpusDir = filepath.Join(dir, "corpus5k")
		if corpusErr = corpus.Generate(corpusDir, 5000, 1); corpusErr == nil {
			corpusErr = corpus.GitInit(corpusDir)
		}
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return corpusDir
}

// BenchmarkFullPack packs the 5,000-file repository's work tree as a Full
// pack with the default limits (the content budget decides what fits). The
// first iteration fills the scan cache under .git/ctxpack; later ones
// measure a warm cache.
func BenchmarkFullPack(b *testing.B) {
	dir := benchRepo(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pipeline.Pack(context.Background(), pipeline.PackOptions{Dir: dir, Type: "full"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChangePack packs the repository's last commit as a change pack
// (intent, diff, regions and relations within the token budget).
func BenchmarkChangePack(b *testing.B) {
	dir := benchRepo(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pipeline.Pack(context.Background(), pipeline.PackOptions{Dir: dir, Commit: "HEAD"}); err != nil {
			b.Fatal(err)
		}
	}
}
