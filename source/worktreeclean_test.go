package source

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestWorktreeCleanEntries: an index entry whose file has the size and
// modification time the index recorded, from before the index was
// written, is clean with either backend (its content is read on demand,
// its blob is the index's); an entry whose time is not before the index's
// (racily clean, as git calls it) is not, and its file is read and hashed:
// racy.txt, edited after it was indexed to the same size and given back
// the same time, is found changed. Before, go-git's index.Merged (stage 1)
// was taken for an unconflicted entry's stage (0): no entry was ever clean
// with go-git.
func TestWorktreeCleanEntries(t *testing.T) {
	g := gittest.New(t)
	g.Write("old.txt", "indexed long ago\n")
	g.Write("racy.txt", "indexed at once\n")
	g.Write("edited.txt", "edited later\n")
	hourAgo := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, p := range []string{"old.txt", "edited.txt"} {
		if err := os.Chtimes(filepath.Join(g.Dir, p), hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	g.Commit("init")
	// racy.txt: indexed with a time after the index's own, then edited
	// to the same size and given that time back.
	future := time.Now().Add(time.Hour).Truncate(time.Second)
	racy := filepath.Join(g.Dir, "racy.txt")
	if err := os.Chtimes(racy, future, future); err != nil {
		t.Fatal(err)
	}
	g.Git("update-index", "--refresh")
	if err := os.WriteFile(racy, []byte("edited at once!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(racy, future, future); err != nil {
		t.Fatal(err)
	}
	g.Write("edited.txt", "edited later, longer\n")

	// go-git first: git status may write the index it refreshes.
	for _, backend := range []string{BackendGoGit, BackendCLI} {
		t.Run(backend, func(t *testing.T) {
			r, err := OpenWith(g.Dir, OpenOptions{Backend: backend})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			entries, _, err := r.worktreeBackend().worktree(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			clean := map[string]bool{}
			for _, e := range entries {
				clean[e.Path] = e.Clean
			}
			want := map[string]bool{"old.txt": true, "racy.txt": false, "edited.txt": false}
			for p, w := range want {
				if clean[p] != w {
					t.Errorf("%s clean %v, want %v", p, clean[p], w)
				}
			}
			snap, err := r.Worktree(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			changed := map[string]bool{}
			for _, c := range snap.Changes {
				changed[c.Path] = true
			}
			if !changed["racy.txt"] || !changed["edited.txt"] || changed["old.txt"] {
				t.Errorf("changes %v, want racy.txt and edited.txt", changed)
			}
		})
	}
}
