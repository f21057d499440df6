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
// the same time, is found changed, and with go-git so is restored.txt,
// rewritten to the same size with its time put back (cp -p, rsync -t: its
// change time tells). Before, go-git's index.Merged (stage 1)
// was taken for an unconflicted entry's stage (0): no entry was ever clean
// with go-git.
func TestWorktreeCleanEntries(t *testing.T) {
	g := gittest.New(t)
	g.Write("old.txt", "indexed long ago\n")
	g.Write("racy.txt", "indexed at once\n")
	g.Write("edited.txt", "edited later\n")
	g.Write("restored.txt", "rewritten, its time put back\n")
	hourAgo := time.Now().Add(-time.Hour).Truncate(time.Second).Add(123456789)
	for _, p := range []string{"old.txt", "edited.txt", "restored.txt"} {
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
	// restored.txt: the same size, its time put back (cp -p, rsync -t,
	// touch -r): only its change time (and git's) tells.
	g.Write("restored.txt", "REWRITTEN, its time put back\n")
	if err := os.Chtimes(filepath.Join(g.Dir, "restored.txt"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}

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
			if backend == BackendGoGit {
				// git (2.39) compares change times to the second: an
				// edit in the second of the indexing is its blind spot,
				// which go-git's listing, to the nanosecond, lacks.
				want["restored.txt"] = false
			}
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
			if backend == BackendGoGit && !changed["restored.txt"] {
				t.Errorf("changes %v: restored.txt is not among them", changed)
			}
		})
	}
}

// TestBeforeIndex: an entry is before the index's writing to the
// nanosecond when it has them, else to the second (git without them).
func TestBeforeIndex(t *testing.T) {
	index := time.Unix(1000, 500)
	for _, tc := range []struct {
		modified time.Time
		want     bool
	}{
		{time.Unix(1000, 499), true},
		{time.Unix(1000, 500), false},
		{time.Unix(1000, 501), false},
		{time.Unix(1000, 0), false}, // no sub-second time: the same second is racy
		{time.Unix(999, 0), true},
		{time.Unix(999, 999999999), true},
	} {
		if got := beforeIndex(tc.modified, index); got != tc.want {
			t.Errorf("beforeIndex(%v, %v) = %v, want %v", tc.modified, index, got, tc.want)
		}
	}
}

// TestIndexedReaderHashesOnce: a clean file's reader hashes the bytes of
// its first read (the blob: taken), and takes later reads as read (the
// audit hashes what it reads itself): a file rewritten between two reads
// reads as rewritten the second time. A file whose first read is not the
// blob reads as the blob from the object store, every time.
func TestIndexedReaderHashesOnce(t *testing.T) {
	g := gittest.New(t)
	g.Write(".gitattributes", "crlf.txt text eol=crlf\n")
	g.Write("plain.txt", "as committed\n")
	g.Write("crlf.txt", "as committed\n")
	g.Commit("init")
	if err := os.Remove(filepath.Join(g.Dir, "crlf.txt")); err != nil {
		t.Fatal(err)
	}
	g.Git("checkout", "--", "crlf.txt") // CRLF in the work tree
	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for _, tc := range []struct{ path, id, second string }{
		{"plain.txt", g.Git("rev-parse", "HEAD:plain.txt"), "AS REWRITTEN\n"},
		{"crlf.txt", g.Git("rev-parse", "HEAD:crlf.txt"), "as committed\n"},
	} {
		read := r.indexedReader(tc.path, filepath.Join(g.Dir, tc.path), ObjectID(tc.id))
		first, err := read(ctx)
		if err != nil || string(first) != "as committed\n" {
			t.Fatalf("%s: first read %q, %v", tc.path, first, err)
		}
		g.Write(tc.path, "AS REWRITTEN\n")
		second, err := read(ctx)
		if err != nil || string(second) != tc.second {
			t.Errorf("%s: second read %q, %v; want %q", tc.path, second, err, tc.second)
		}
	}
}

// TestTrackedFileTakesBackendStat: go-git's listing looks at each tracked
// file once (os.Lstat, against the index's stat data) and the snapshot's
// entry takes its size and mode from that look instead of asking the
// file system again; an entry without one (a file the listing did not
// find, or the CLI's, which asks git status) is looked at then.
func TestTrackedFileTakesBackendStat(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "twelve bytes")
	g.Commit("init")
	r, entries := goGitListing(t, g)
	if len(entries) != 1 || entries[0].Info == nil || entries[0].Info.Size() != 12 {
		t.Fatalf("entries %+v: want a.txt with the listing's look at it (12 bytes)", entries)
	}
	e := entries[0]
	// The file grows after the listing: the entry says what was listed.
	g.Write("a.txt", "now it is 20 bytes.\n")
	f, _, err := r.trackedFile(e)
	if err != nil || f == nil || f.Size != 12 {
		t.Fatalf("tracked file %+v, %v: want the listing's 12 bytes", f, err)
	}
	e.Info = nil
	if f, _, err = r.trackedFile(e); err != nil || f == nil || f.Size != 20 {
		t.Fatalf("tracked file %+v, %v: want the file's 20 bytes, looked at now", f, err)
	}
}

// TestTrackedFileReadsNoSymlink: a tracked file the listing saw as a
// regular file and that became a symlink before it was read (to a file
// outside the work tree) is not followed: the read fails.
func TestTrackedFileReadsNoSymlink(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "committed\n")
	g.Commit("init")
	g.Write("a.txt", "edited, not clean\n")
	r, entries := goGitListing(t, g)
	if len(entries) != 1 || entries[0].Clean || entries[0].Info == nil {
		t.Fatalf("entries %+v: want a.txt listed, not clean", entries)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("not the repository's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(g.Dir, "a.txt")
	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, abs); err != nil {
		t.Fatal(err)
	}
	f, s, err := r.trackedFile(entries[0])
	if err == nil {
		t.Fatalf("read through the symlink put in place of a.txt: %+v %q", f, s.text)
	}
}

// goGitListing opens g's repository with go-git and lists its index
// against the work tree; the repository is closed when the test ends.
func goGitListing(t *testing.T, g *gittest.Repo) (*Repo, []indexEntry) {
	t.Helper()
	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	entries, _, err := r.worktreeBackend().worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, entries
}
