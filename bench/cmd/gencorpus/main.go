// Command gencorpus writes a deterministic benchmark repository: N files from
// internal/corpus in one commit, then a second commit that changes 3 files.
//
//	go run ./bench/cmd/gencorpus -n 10000 DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxpack/ctxpack/internal/corpus"
)

func main() {
	n := flag.Int("n", 1000, "number of files")
	seed := flag.Int64("seed", 1, "generator seed")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gencorpus [-n N] [-seed S] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(dir string, n int, seed int64) error {
	if err := corpus.Generate(dir, n, seed); err != nil {
		return err
	}
	if err := corpus.GitInit(dir); err != nil {
		return err
	}
	// The 3-file commit the commit benchmarks pack.
	for i, p := range []string{"bench_change/a.go", "bench_change/b.py", "README.md"} {
		abs := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(abs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintf(f, "\n// change %d for the commit benchmark\n", i)
		if err := f.Close(); err != nil {
			return err
		}
	}
	if err := corpus.Git(dir, "add", "-A"); err != nil {
		return err
	}
	return corpus.Git(dir, "commit", "-q", "-m", "3-file change")
}
