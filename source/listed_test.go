package source

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

func TestShallowCloneAvailability(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	a := g.Commit("a")
	g.Write("b.txt", "b\n")
	b := g.Commit("b")

	full, err := Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if full.Shallow() || !full.HasCommit(a) || !full.RangeAvailable(a, b) || !full.CommitAvailable(b) || !full.CommitAvailable(a) {
		t.Fatal("a full repository reports missing history")
	}

	dir := filepath.Join(t.TempDir(), "shallow")
	g.Git("clone", "-q", "--depth", "1", "file://"+g.Dir, dir)
	sh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !sh.Shallow() || sh.HasCommit(a) || !sh.HasCommit(b) || sh.RangeAvailable(a, b) || sh.CommitAvailable(b) {
		t.Fatal("a depth-1 clone reports history it does not have")
	}
	if sh.HasCommit("") || sh.HasCommit("nosuch") {
		t.Fatal("bad revisions")
	}

	changes := []pack.Change{{Path: "b.txt", Status: "added", Added: 1}}
	snap, err := sh.TreeWithChanges(context.Background(), b, a, changes, policy.ScopeTree)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source.Head != b || snap.Source.Base != a || len(snap.Files) != 2 || len(snap.Changes) != 1 || len(snap.Commits) != 0 {
		t.Fatalf("snapshot %+v", snap.Source)
	}
	if _, err := sh.TreeWithChanges(context.Background(), b, "main", changes, policy.ScopeTree); err == nil {
		t.Fatal("a base that is not a commit id was accepted")
	}
	if _, err := sh.TreeWithChanges(context.Background(), a, "", nil, policy.ScopeTree); err == nil {
		t.Fatal("a missing head was accepted")
	}
	plain, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if plain.Shallow() || plain.HasCommit("HEAD") {
		t.Fatal("plain directory")
	}
	if _, err := plain.TreeWithChanges(context.Background(), "HEAD", "", nil, policy.ScopeTree); err == nil {
		t.Fatal("plain directory snapshot")
	}
}

// TestListedChangesNamingImpossiblePaths is the regression case of an API
// file list naming an absolute path: the change-scope walk recursed forever.
func TestListedChangesNamingImpossiblePaths(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	head := g.Commit("a")
	r := open(t, g.Dir)
	for _, p := range []string{"/etc/passwd", "/", "a//b", "./a.txt", "../x", "a/../b", "a\x00b", ""} {
		_, err := r.TreeWithChanges(context.Background(), head, "", []pack.Change{{Path: p, Status: "modified"}}, policy.ScopeChange)
		if err == nil {
			t.Errorf("%q: accepted", p)
		}
		// The walk itself never recurses on them either.
		c, _ := r.commit(context.Background(), ObjectID(head))
		if _, err := r.scopeFiles(context.Background(), c, []pack.Change{{Path: p, Status: "modified"}, {Path: "x", OldPath: p, Status: "renamed"}}); err != nil {
			t.Errorf("%q: scope walk: %v", p, err)
		}
	}
	for _, p := range []string{"a.txt", "dir/.hidden", "we ird/ü", "back\\slash"} {
		if !TreePath(p) {
			t.Errorf("%q refused", p)
		}
	}
}
