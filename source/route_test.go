package source

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestRouteLarge checks the measures routeLarge decides by, against git's,
// and that a large index sends the work-tree listing to git.
func TestRouteLarge(t *testing.T) {
	g := gittest.New(t)
	for i := range largeIndex + 1 {
		g.Write(fmt.Sprintf("d%d/f%d.txt", i/100, i), fmt.Sprintf("%d\n", i))
	}
	g.Commit("many files")
	g.Git("gc", "-q")
	inPack := ""
	for _, line := range strings.Split(g.Git("count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(line, "in-pack: "); ok {
			inPack = v
		}
	}
	gitDir := filepath.Join(g.Dir, ".git")
	if got := fmt.Sprint(packedObjects(gitDir)); got != inPack {
		t.Fatalf("packed objects %s, git says %s", got, inPack)
	}
	if got := indexEntries(gitDir); got != largeIndex+1 {
		t.Fatalf("index entries %d", got)
	}
	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Backend() != BackendGoGit || r.worktreeBackend().name() != BackendCLI {
		t.Fatalf("objects read with %s, work tree listed with %s", r.Backend(), r.worktreeBackend().name())
	}
	snap, err := r.Worktree(context.Background())
	if err != nil || len(snap.Files) != largeIndex+1 || snap.Source.Dirty {
		t.Fatalf("worktree: %d files, dirty %v, %v", len(snap.Files), snap.Source.Dirty, err)
	}
}

// TestRoutedSnapshotsAndNotes routes a repository's objects to git as a
// large one would be: the same snapshots as go-git's, notes through git.
func TestRoutedSnapshotsAndNotes(t *testing.T) {
	g := gittest.New(t)
	base, head := buildHistory(g)
	dirtyWorktree(g)
	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.routeLarge(-1, -1) // every repository is large
	if _, routed := r.b.(*routedBackend); !routed || r.Git() != nil || r.Backend() != BackendCLI {
		t.Fatalf("not routed: %T", r.b)
	}
	gg, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	defer gg.Close()
	checkHistory(t, sameSnapshots(t, map[string]*Repo{BackendGoGit: gg, BackendCLI: r}, base, head))
	ctx := context.Background()
	parent := g.Git("rev-parse", head+"~1")
	write := func(commit string) []byte {
		var got []byte
		err := r.WriteNote(ctx, "refs/notes/ctxpack", ObjectID(commit), func(p []byte, ok bool) ([]byte, error) {
			got = append([]byte(fmt.Sprintf("parent:%v:", ok)), p...)
			return append([]byte("record of "+commit[:7]+"\n"), got...), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := write(parent); string(got) != "parent:false:" {
		t.Fatalf("the parent's parent has a note: %q", got)
	}
	if got := write(head); string(got) != "parent:true:record of "+parent[:7]+"\nparent:false:" {
		t.Fatalf("head bound to %q", got)
	}
	data, ok, err := r.ReadNote(ctx, "refs/notes/ctxpack", ObjectID(head))
	if err != nil || !ok || !strings.HasPrefix(string(data), "record of "+head[:7]) || !strings.HasPrefix(g.Git("notes", "--ref", "ctxpack", "show", head), "record of") {
		t.Fatalf("note %q %v %v", data, ok, err)
	}
	if refs := g.Git("for-each-ref", "refs/notes/"); strings.Count(refs, "\n") != 0 {
		t.Fatalf("a private notes ref was left behind:\n%s", refs)
	}
	if _, ok, err := r.ReadNote(ctx, "refs/notes/ctxpack", ObjectID(base)); ok || err != nil {
		t.Fatalf("a note on a commit without one: %v %v", ok, err)
	}
}
