//go:build unix

package source

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// A FIFO in the index's place is not read (its open would block for a
// writer): the search hashes its files, as without an index.
func TestIndexStatsFIFO(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.go", "package a\n")
	g.Commit("init")
	index := filepath.Join(g.Dir, ".git", "index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(index, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.loadIndexStats(1)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading the index blocked on a FIFO")
	}
	if indexed := r.indexed.Load(); indexed != nil && len(*indexed) > 0 {
		t.Errorf("entries read from a FIFO: %v", *indexed)
	}
}
