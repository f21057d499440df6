package transparency

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/source"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

func openGit(t testing.TB, dir string) *git.Repository {
	t.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func commits(t *testing.T, r *gittest.Repo, n int) []string {
	t.Helper()
	var out []string
	for i := 1; i <= n; i++ {
		r.Write(fmt.Sprintf("f%d.txt", i), fmt.Sprintf("file %d\n", i))
		out = append(out, r.Commit(fmt.Sprintf("commit %d", i)))
	}
	return out
}

func TestNotesGitInterop(t *testing.T) {
	r := gittest.New(t)
	cs := commits(t, r, 3)
	repo := openGit(t, r.Dir)

	if _, ok, err := ReadNote(repo, hash(cs[0])); err != nil || ok {
		t.Fatalf("no notes ref yet: ok=%v err=%v", ok, err)
	}
	rec := []byte(`{"record_version":1,"pack_id":"pk_aaaaaaaa"}` + "\n")
	if err := WriteNote(repo, hash(cs[0]), rec); err != nil {
		t.Fatal(err)
	}
	// git reads what go-git wrote.
	if got := r.Git("notes", "--ref=ctxpack", "show", cs[0]); got+"\n" != string(rec) {
		t.Fatalf("git notes show = %q", got)
	}
	if msg := r.Git("log", "-1", "--format=%s", "refs/notes/ctxpack"); msg != "ctxpack: record for "+cs[0] {
		t.Fatalf("notes commit message %q", msg)
	}
	// go-git reads what git wrote.
	r.Git("notes", "--ref=ctxpack", "add", "-m", "written by git", cs[1])
	if got, ok, err := ReadNote(repo, hash(cs[1])); err != nil || !ok || string(got) != "written by git\n" {
		t.Fatalf("ReadNote of a git note = %q %v %v", got, ok, err)
	}
	// Writing keeps the other notes; replacing changes one.
	if err := WriteNote(repo, hash(cs[2]), []byte("third\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteNote(repo, hash(cs[0]), []byte("replaced\n")); err != nil {
		t.Fatal(err)
	}
	list := r.Git("notes", "--ref=ctxpack", "list")
	if n := len(strings.Split(list, "\n")); n != 3 {
		t.Fatalf("git notes list has %d notes:\n%s", n, list)
	}
	for c, want := range map[string]string{cs[0]: "replaced", cs[1]: "written by git", cs[2]: "third"} {
		if got := r.Git("notes", "--ref=ctxpack", "show", c); got != want {
			t.Fatalf("note of %s = %q, want %q", c, got, want)
		}
	}
	// Each write is a commit on the notes ref whose parent is the old tip
	// (1 + git's + 2 = 4), and rewriting the same bytes adds none.
	if err := WriteNote(repo, hash(cs[2]), []byte("third\n")); err != nil {
		t.Fatal(err)
	}
	if n := r.Git("rev-list", "--count", "refs/notes/ctxpack"); n != "4" {
		t.Fatalf("notes history has %s commits, want 4", n)
	}
	r.Git("fsck", "--strict", "--no-dangling")

	// After gc the notes ref is packed and the objects are in a pack.
	r.Git("gc", "-q")
	if err := WriteNote(repo, hash(cs[1]), []byte("after gc\n")); err != nil {
		t.Fatal(err)
	}
	if got := r.Git("notes", "--ref=ctxpack", "show", cs[1]); got != "after gc" {
		t.Fatalf("after gc git shows %q", got)
	}
	if got, ok, err := ReadNote(openGit(t, r.Dir), hash(cs[2])); err != nil || !ok || string(got) != "third\n" {
		t.Fatalf("after gc ReadNote = %q %v %v", got, ok, err)
	}

	if err := WriteNote(repo, plumbing.NewHash(strings.Repeat("ab", 20)), []byte("x")); err == nil {
		t.Fatal("a note for a commit that does not exist was written")
	}
}

// TestNotesFanOut builds a notes tree in git's fan-out layout (ab/cdef…) with
// plumbing and checks it is read, and that replacing such a note leaves one.
func TestNotesFanOut(t *testing.T) {
	r := gittest.New(t)
	cs := commits(t, r, 2)
	write := func(name, content string) string {
		f := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return r.Git("hash-object", "-w", f)
	}
	fanned, flat := cs[0], cs[1]
	blobA := write("a", "fanned note\n")
	blobB := write("b", "flat note\n")
	// A notes tree built through a scratch index: ab/cdef… and a flat entry.
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	gitEnv := func(args ...string) string {
		out, err := r.TryGit(env, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	gitEnv("update-index", "--add", "--cacheinfo", "100644,"+blobA+","+fanned[:2]+"/"+fanned[2:])
	gitEnv("update-index", "--add", "--cacheinfo", "100644,"+blobB+","+flat)
	root := gitEnv("write-tree")
	commit := r.Git("commit-tree", root, "-m", "fan-out notes")
	r.Git("update-ref", "refs/notes/ctxpack", commit)
	if got := r.Git("notes", "--ref=ctxpack", "show", fanned); got != "fanned note" {
		t.Fatalf("the fixture is not a valid fan-out layout for git: %q", got)
	}

	repo := openGit(t, r.Dir)
	for c, want := range map[string]string{fanned: "fanned note\n", flat: "flat note\n"} {
		got, ok, err := ReadNote(repo, hash(c))
		if err != nil || !ok || string(got) != want {
			t.Fatalf("ReadNote(%s) = %q %v %v", c, got, ok, err)
		}
	}
	// Every reader of the chain indexes both layouts alike.
	for name, objs := range chainReaders(t, r.Dir) {
		ns, err := loadNotes(context.Background(), objs)
		if err != nil || len(ns.index) != 2 {
			t.Fatalf("%s: index %v %v", name, ns.index, err)
		}
		for c, want := range map[string]string{fanned: "fanned note\n", flat: "flat note\n"} {
			got, ok, err := ns.get(source.ObjectID(c))
			if err != nil || !ok || string(got) != want {
				t.Fatalf("%s: note of %s = %q %v %v", name, c, got, ok, err)
			}
		}
	}
	if err := WriteNote(repo, hash(fanned), []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if got := r.Git("notes", "--ref=ctxpack", "show", fanned); got != "new" {
		t.Fatalf("after replace git shows %q", got)
	}
	if list := r.Git("notes", "--ref=ctxpack", "list"); len(strings.Split(list, "\n")) != 2 {
		t.Fatalf("replacing a fanned-out note left a duplicate:\n%s", list)
	}
	if tree := r.Git("ls-tree", "refs/notes/ctxpack"); strings.Contains(tree, "\t"+fanned[:2]+"\n") || strings.HasSuffix(tree, "\t"+fanned[:2]) {
		t.Fatalf("the emptied fan-out directory is still there:\n%s", tree)
	}
	r.Git("fsck", "--strict", "--no-dangling")
}

func TestPreviousDigest(t *testing.T) {
	r := gittest.New(t)
	cs := commits(t, r, 3)
	repo := openGit(t, r.Dir)
	tests := []struct {
		name   string
		commit string
		setup  func()
		want   func() string
	}{
		{"root commit", cs[0], nil, func() string { return "" }},
		{"parent without note", cs[1], nil, func() string { return "" }},
		{"parent with note", cs[1], func() {
			if err := WriteNote(repo, hash(cs[0]), []byte("record 1\n")); err != nil {
				t.Fatal(err)
			}
		}, func() string { return DigestOf([]byte("record 1\n")) }},
		{"grandparent note does not count", cs[2], nil, func() string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			got, err := PreviousDigest(repo, hash(tt.commit))
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

// TestConcurrentWritersLoseNoNote: writers with their own repository
// handles (as separate processes have) write notes of different commits at
// once, starting with no notes ref: every note is there afterwards.
func TestConcurrentWritersLoseNoNote(t *testing.T) {
	for round := 0; round < 5; round++ {
		r := gittest.New(t)
		cs := commits(t, r, 6)
		var wg sync.WaitGroup
		errs := make(chan error, len(cs))
		start := make(chan struct{})
		for i, c := range cs {
			repo := openGit(t, r.Dir)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- WriteNote(repo, hash(c), []byte(fmt.Sprintf("note %d\n", i)))
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		repo := openGit(t, r.Dir)
		for i, c := range cs {
			data, ok, err := ReadNote(repo, hash(c))
			if err != nil || !ok || string(data) != fmt.Sprintf("note %d\n", i) {
				t.Fatalf("round %d: note of commit %d lost: %q %v %v", round, i+1, data, ok, err)
			}
		}
		if out := r.Git("notes", "--ref=ctxpack", "list"); strings.Count(out, "\n")+1 != len(cs) {
			t.Fatalf("git notes list:\n%s", out)
		}
	}
}
