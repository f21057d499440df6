package source

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// indexFixture is a work tree whose index holds a regular file, an
// executable, a symlink, a file in a directory, names sharing prefixes
// (version 4 compresses them), a racily clean one (modified after the
// index was written: its time is in the future) and, with flags, a
// skip-worktree entry and an intent-to-add entry (extended flags, which
// version 2 cannot hold: git then writes version 3).
func indexFixture(t testing.TB, flags bool) *gittest.Repo {
	g := gittest.New(t)
	g.Write("a.go", "package a\n")
	g.Write("dir/b.go", "package b\n")
	g.Write("dir/bb.go", "package bb\n")
	g.Write("dir/sub/c.txt", "c\n")
	g.Write("run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(g.Dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	g.Symlink("a.go", "link.go")
	g.Write("skipped.go", "package skipped\n")
	g.Write("racy.go", "package racy\n")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(g.Dir, "racy.go"), future, future); err != nil {
		t.Fatal(err)
	}
	g.Commit("init")
	if flags {
		g.Git("update-index", "--skip-worktree", "skipped.go")
		g.Write("new.go", "package new\n")
		g.Git("add", "-N", "new.go")
	}
	return g
}

// parseIndexStats reads what go-git's decoder reads, at index versions 2,
// 3 (extended flags) and 4 (prefix-compressed names), and keeps the
// entries a file may be taken as by its stat: not a symlink, not
// skip-worktree, not intent-to-add, not racily clean.
func TestParseIndexStats(t *testing.T) {
	for _, version := range []int{2, 3, 4} {
		t.Run("v"+strconv.Itoa(version), func(t *testing.T) {
			flags := version > 2
			g := indexFixture(t, flags)
			g.Git("update-index", "--index-version", strconv.Itoa(version))
			name := filepath.Join(g.Dir, ".git", "index")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseIndexStats(data, fi.ModTime())
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var idx index.Index
			if err := index.NewDecoder(f).Decode(&idx); err != nil {
				t.Fatal(err)
			}
			if idx.Version != uint32(version) {
				t.Fatalf("index version %d, want %d", idx.Version, version)
			}
			want := map[string]bool{"a.go": true, "dir/b.go": true, "dir/bb.go": true, "dir/sub/c.txt": true, "run.sh": true, "skipped.go": !flags}
			for _, e := range idx.Entries {
				s, ok := got[e.Name]
				if ok != want[e.Name] {
					t.Errorf("%s (mode %v, skip-worktree %v, intent-to-add %v): kept %v, want %v", e.Name, e.Mode, e.SkipWorktree, e.IntentToAdd, ok, want[e.Name])
					continue
				}
				if !ok {
					continue
				}
				if s.id != ObjectID(e.Hash.String()) || s.size != e.Size || !s.mtime.Equal(e.ModifiedAt) || !s.ctime.Equal(e.CreatedAt) || s.inode != e.Inode {
					t.Errorf("%s: read %+v, go-git %+v", e.Name, s, e)
				}
				if e.Mode != filemode.Regular && e.Mode != filemode.Executable {
					t.Errorf("%s: kept with mode %v", e.Name, e.Mode)
				}
			}
			for p := range got {
				if !want[p] {
					t.Errorf("%s kept, not in the index's entries to keep", p)
				}
			}
		})
	}
}

// A work-tree file the index recorded, with the stat it has, is taken as
// the index's blob without hashing it; one whose stat changed (an edit:
// its change time moves) is hashed, and read from the object store when
// it is another blob.
func TestWorktreeBlobTakesIndexStat(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.go", "package a // one\n")
	g.Write("b.go", "package b // one\n")
	g.Commit("init")
	g.Write("b.go", "package b // two\n") // same size, not added
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			r, err := OpenWith(g.Dir, OpenOptions{Backend: backendName})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// A search of no file is not worth the index; a later one of
			// two, in an index of two, is.
			r.loadIndexStats(0)
			if indexed := r.indexed.Load(); indexed != nil {
				t.Fatalf("index read for a search of no file: %v", *indexed)
			}
			r.loadIndexStats(2)
			indexed := r.indexed.Load()
			if indexed == nil || len(*indexed) != 2 {
				t.Fatalf("index stats %v, want a.go and b.go", indexed)
			}
			ctx := context.Background()
			a, b := (*indexed)["a.go"], (*indexed)["b.go"]
			if data, ok := r.worktreeBlob(ctx, "b.go", b.id); ok {
				t.Errorf("b.go, edited since it was added, read from the work tree as its blob: %q", data)
			}
			// a.go's entry made to name b.go's blob: a file whose stat is
			// the entry's is taken as the entry's blob, unhashed (what
			// git's index says of a clean file is what git takes too).
			forged := map[string]indexStat{"a.go": {id: b.id, size: a.size, mtime: a.mtime, ctime: a.ctime, inode: a.inode}}
			r.indexed.Store(&forged)
			if data, ok := r.worktreeBlob(ctx, "a.go", b.id); !ok || string(data) != "package a // one\n" {
				t.Errorf("a.go as the forged entry's blob: %q, %v; want the file's bytes taken by their stat", data, ok)
			}
			forged["a.go"] = indexStat{id: b.id, size: a.size, mtime: a.mtime.Add(time.Second), ctime: a.ctime, inode: a.inode}
			r.worktreeMisses.Delete("a.go")
			if data, ok := r.worktreeBlob(ctx, "a.go", b.id); ok {
				t.Errorf("a.go, its time not the entry's, taken as the entry's blob: %q", data)
			}
		})
	}
}

// FuzzParseIndexStats: any bytes as an index give entries or an error,
// never a panic, and an entry's name is never empty.
func FuzzParseIndexStats(f *testing.F) {
	g := indexFixture(f, true)
	for _, version := range []string{"3", "4"} {
		g.Git("update-index", "--index-version", version)
		data, err := os.ReadFile(filepath.Join(g.Dir, ".git", "index"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("DIRC\x00\x00\x00\x04\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseIndexStats(data, time.Now().Add(time.Hour))
		if err != nil {
			return
		}
		for name := range m {
			if name == "" {
				t.Errorf("an entry with an empty name kept")
			}
		}
	})
}

// BenchmarkParseIndexStats reads an index of 2,500 entries (hugo's has
// 2,547) with parseIndexStats and with go-git's decoder, which it
// replaces for this.
func BenchmarkParseIndexStats(b *testing.B) {
	g := gittest.New(b)
	for i := range 2500 {
		g.Write(fmt.Sprintf("pkg%02d/file%04d.go", i%50, i), fmt.Sprintf("package pkg%02d // %d\n", i%50, i))
	}
	g.Commit("files")
	name := filepath.Join(g.Dir, ".git", "index")
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	written := time.Now().Add(time.Hour)
	b.Run("parseIndexStats", func(b *testing.B) {
		for b.Loop() {
			if m, err := parseIndexStats(data, written); err != nil || len(m) != 2500 {
				b.Fatalf("%d entries, %v", len(m), err)
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			var idx index.Index
			if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil || len(idx.Entries) != 2500 {
				b.Fatalf("%d entries, %v", len(idx.Entries), err)
			}
		}
	})
}
