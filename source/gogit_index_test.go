package source

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestBufferedIndexes: a pack index opened through bufferedIndexes reads as its
// file, through a buffer; any other file is the file itself; and go-git
// reads a packed repository through it.
func TestBufferedIndexes(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	head := g.Commit("one")
	g.Git("gc", "--quiet")
	packDir := filepath.Join(g.Dir, ".git", "objects", "pack")
	idxs, err := filepath.Glob(filepath.Join(packDir, "*.idx"))
	if err != nil || len(idxs) != 1 {
		t.Fatalf("pack indexes %v, %v", idxs, err)
	}
	want, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	fs := bufferedIndexes{osfs.New(packDir)}
	f, err := fs.Open(filepath.Base(idxs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(*bufferedIndex); !ok {
		t.Fatalf("an index opened as %T, want it buffered", f)
	}
	got, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("read %d bytes (%v), want the index's %d", len(got), err, len(want))
	}
	packs, _ := filepath.Glob(filepath.Join(packDir, "*.pack"))
	p, err := fs.Open(filepath.Base(packs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, ok := p.(*bufferedIndex); ok {
		t.Error("a pack file opened buffered")
	}

	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c, err := r.commit(context.Background(), ObjectID(head)); err != nil || c.ID != ObjectID(head) {
		t.Errorf("read the packed commit: %+v, %v", c, err)
	}
}
