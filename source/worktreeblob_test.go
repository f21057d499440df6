package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

// TestWorktreeBlob: a file of a commit is read from the work tree only
// when the file there holds exactly its blob, with either backend:
// same.txt and samebig.txt (unchanged) are, and read as committed
// without the object store; edited.txt (same length, other bytes),
// mid.txt and big.txt (same size, other bytes), grown.txt (longer),
// linked.txt (now a symlink to a file of the same content, never
// followed), dir/inner.txt (dir now a symlink to a directory outside the
// work tree holding the same file) and gone.txt (removed) are read from
// the object store, as committed, every time it is read (edited.txt,
// twice). The blob's size is asked only of the files of askSizeFrom
// bytes or more (samebig.txt, big.txt, grown.txt), once.
func TestWorktreeBlob(t *testing.T) {
	mid := strings.Repeat("0123456789abcdef", 4<<10)          // 64 KiB
	big := strings.Repeat("0123456789abcdef", askSizeFrom/16) // askSizeFrom bytes
	files := map[string]string{"same.txt": "unchanged\n", "edited.txt": "committed\n", "mid.txt": mid, "big.txt": big,
		"samebig.txt": "s" + big, "grown.txt": "g" + big,
		"linked.txt": "linked content\n", "gone.txt": "removed from the work tree\n", "dir/inner.txt": "inner content\n"}
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			g := gittest.New(t)
			for p, s := range files {
				g.Write(p, s)
			}
			g.Commit("init")
			g.Write("edited.txt", "different\n")
			g.Write("mid.txt", strings.ToUpper(mid))
			g.Write("big.txt", strings.ToUpper(big))
			g.Write("grown.txt", files["grown.txt"]+"more\n")
			g.Remove("linked.txt")
			g.Write("untracked.txt", files["linked.txt"])
			g.Symlink("untracked.txt", "linked.txt")
			g.Remove("gone.txt")
			// dir becomes a symlink to a directory outside the work tree
			// that holds inner.txt as committed
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "inner.txt"), []byte(files["dir/inner.txt"]), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(g.Dir, "dir")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(g.Dir, "dir")); err != nil {
				t.Fatal(err)
			}

			r, counter := openCounted(t, g.Dir, backendName)
			ctx := context.Background()
			snap, err := r.Commit(ctx, "HEAD", policy.ScopeTree)
			if err != nil {
				t.Fatal(err)
			}
			// The commit's own diff reads every file, and keeps them
			// (TestBlobReaderTakesTheMemo): forgotten, to see where a
			// read goes.
			clear(counter.blobs)
			clear(counter.sizes)
			r.blobs.reset()
			for _, f := range snap.Files {
				want, ok := files[f.Path]
				if !ok {
					continue
				}
				rounds := 1
				if f.Path == "edited.txt" {
					rounds = 2
				}
				for range rounds {
					data, err := f.Read(ctx)
					if err != nil {
						t.Fatalf("%s: %v", f.Path, err)
					}
					if string(data) != want {
						t.Errorf("%s: read %.40q, want %.40q", f.Path, data, want)
					}
				}
				wantStore := rounds
				if f.Path == "same.txt" || f.Path == "samebig.txt" {
					wantStore = 0
				}
				if n := counter.blobs[ObjectID(f.Blob)]; n != wantStore {
					t.Errorf("%s: %d reads from the object store, want %d", f.Path, n, wantStore)
				}
				wantSizes := 0
				if len(want) >= askSizeFrom {
					wantSizes = 1
				}
				if n := counter.sizes[ObjectID(f.Blob)]; n != wantSizes {
					t.Errorf("%s (%d bytes): its size asked %d times, want %d", f.Path, len(want), n, wantSizes)
				}
			}
		})
	}
}

// TestBlobReaderTakesTheMemo: a file whose blob a diff or a search has
// read is read again from the repository's memo, neither from the object
// store nor from the work tree, where it may differ: as committed.
func TestBlobReaderTakesTheMemo(t *testing.T) {
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("a.txt", "first\n")
			g.Write("b.txt", "kept\n")
			g.Commit("init")
			g.Write("a.txt", "second\n")
			g.Commit("edit")
			g.Write("a.txt", "in the work tree only\n")
			r, counter := openCounted(t, g.Dir, backendName)
			ctx := context.Background()
			snap, err := r.Commit(ctx, "HEAD", policy.ScopeTree)
			if err != nil {
				t.Fatal(err)
			}
			clear(counter.blobs)
			for _, f := range snap.Files {
				if f.Path != "a.txt" {
					continue
				}
				data, err := f.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if string(data) != "second\n" {
					t.Errorf("a.txt reads %q, want it as committed", data)
				}
				if n := counter.blobs[ObjectID(f.Blob)]; n != 0 {
					t.Errorf("a.txt: %d reads from the object store after the diff read it", n)
				}
			}
		})
	}
}
