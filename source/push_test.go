package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestUnpublishedMatchesRevList checks the walk against `git rev-list head
// --not known…` on a history with branches and merges.
func TestUnpublishedMatchesRevList(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	root := g.Commit("root")
	g.Write("a.txt", "a2\n")
	g.Commit("main 1")
	g.Git("checkout", "-q", "-b", "side")
	g.Write("s.txt", "s\n")
	side1 := g.Commit("side 1")
	g.Git("checkout", "-q", "main")
	g.Write("b.txt", "b\n")
	main2 := g.Commit("main 2")
	g.Git("merge", "-q", "--no-edit", "side")
	merge := g.Git("rev-parse", "HEAD")
	g.Write("c.txt", "c\n")
	main3 := g.Commit("main 3")
	g.Git("checkout", "-q", "side")
	g.Write("s.txt", "s2\n")
	side2 := g.Commit("side 2")

	r := open(t, g.Dir)
	cases := []struct {
		head  string
		known []string
	}{
		{main3, nil},
		{main3, []string{root}},
		{main3, []string{main2}},
		{main3, []string{side1}},
		{main3, []string{side2}},
		{main3, []string{side2, main2}},
		{main3, []string{merge}},
		{main3, []string{main3}},
		{side2, []string{main3}},
		{side2, []string{root}},
		{merge, []string{side1, main2}},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s --not %s", tc.head[:7], strings.Join(shorts(tc.known), " "))
		t.Run(name, func(t *testing.T) {
			var known []ObjectID
			args := []string{"rev-list", "--topo-order", tc.head}
			if len(tc.known) > 0 {
				args = append(args, "--not")
			}
			for _, k := range tc.known {
				known = append(known, ObjectID(k))
				args = append(args, k)
			}
			want := strings.Fields(g.Git(args...))
			sort.Strings(want)
			u, err := r.Unpublished(context.Background(), ObjectID(tc.head), known)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			pos := map[string]int{}
			for i, c := range u.Commits {
				got = append(got, c.ID.String())
				pos[c.ID.String()] = i
			}
			// Parents come before children.
			for _, c := range u.Commits {
				for _, p := range c.Parents {
					if i, ok := pos[p.String()]; ok && i > pos[c.ID.String()] {
						t.Fatalf("%s listed after its child %s", p, c.ID)
					}
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("got %v\nwant %v", shorts(got), shorts(want))
			}
		})
	}

	// The diff base is the first known commit on the first-parent line.
	u, err := r.Unpublished(context.Background(), ObjectID(main3), []ObjectID{ObjectID(side2)})
	if err != nil {
		t.Fatal(err)
	}
	if u.Base == nil || u.Base.ID.String() != g.Git("rev-parse", main3+"~3") {
		// main3 → merge → main2 → main 1 (known through side 1's parent)
		t.Fatalf("base %v", u.Base)
	}
	u, err = r.Unpublished(context.Background(), ObjectID(main3), nil)
	if err != nil || u.Base != nil {
		t.Fatalf("base with nothing known: %v %v", u.Base, err)
	}
}

func shorts(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h[:7]
	}
	return out
}

// TestPushedScope checks what a pushed change lists: the changed files, the
// top-level files and the .ctxpackignore files on the way, not the rest of
// the tree; and the per-commit patches of exactly the new commits.
func TestPushedScope(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# demo\n")
	g.Write("go.mod", "module demo\n")
	g.Write(".ctxpackignore", "*.gen\n")
	g.Write("pkg/.ctxpackignore", "tmp/\n")
	g.Write("pkg/deep/a.go", "package deep\n")
	g.Write("pkg/deep/untouched.go", "package deep\n")
	g.Write("other/.ctxpackignore", "x\n")
	g.Write("other/b.go", "package other\n")
	g.Write("gone/old.go", "package gone\n")
	base := g.Commit("base")
	g.Write("pkg/deep/a.go", "package deep\n\nvar A = 1\n")
	c1 := g.Commit("one")
	g.Remove("gone/old.go")
	g.Write("pkg/new.go", "package pkg\n")
	c2 := g.Commit("two")

	r := open(t, g.Dir)
	p, err := r.Pushed(context.Background(), ObjectID(c2), []ObjectID{ObjectID(base)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Base != base || strings.Join(p.Commits, " ") != c1+" "+c2 {
		t.Fatalf("base %s commits %v", p.Base, p.Commits)
	}
	want := ".ctxpackignore README.md go.mod pkg/.ctxpackignore pkg/deep/a.go pkg/new.go"
	if got := strings.Join(paths(p.Snapshot.Files), " "); got != want {
		t.Fatalf("files %s\nwant  %s", got, want)
	}
	changeByPath(t, p.Snapshot.Changes, "gone/old.go")
	changeByPath(t, p.Snapshot.Changes, "pkg/new.go")
	if len(p.Snapshot.Commits) != 2 || p.Snapshot.Commits[0].Commit != c1 {
		t.Fatalf("commit patches %+v", p.Snapshot.Commits)
	}
	f := fileByPath(t, p.Snapshot.Files, "pkg/deep/a.go")
	data, err := f.Read(context.Background())
	if err != nil || string(data) != "package deep\n\nvar A = 1\n" || f.Size != int64(len(data)) {
		t.Fatalf("read %q %v size %d", data, err, f.Size)
	}

	// ChangeScope re-derives the same scope from the pack's base and head.
	cs, err := r.ChangeScope(context.Background(), p.Base, c2)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(paths(cs.Files), " "); got != want || fmt.Sprint(cs.Changes) != fmt.Sprint(p.Snapshot.Changes) || len(cs.Commits) != 0 {
		t.Fatalf("ChangeScope files %s changes %v", got, cs.Changes)
	}

	// Nothing new: no snapshot.
	p, err = r.Pushed(context.Background(), ObjectID(c1), []ObjectID{ObjectID(c2)})
	if err != nil || p.Snapshot != nil || len(p.Commits) != 0 {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestTrackingRefsAndPeel(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	c := g.Commit("a")
	g.Git("update-ref", "refs/remotes/origin/main", c)
	g.Git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	g.Git("update-ref", "refs/remotes/other/main", c)
	g.Git("tag", "-a", "-m", "t", "v1")
	r := open(t, g.Dir)
	hs, err := r.TrackingRefs("origin")
	if err != nil || len(hs) != 1 || hs[0].String() != c {
		t.Fatalf("%v %v", hs, err)
	}
	if hs, _ := r.TrackingRefs("nope"); len(hs) != 0 {
		t.Fatalf("%v", hs)
	}
	tag := g.Git("rev-parse", "v1")
	h, kind, err := r.Peel(ObjectID(tag))
	if err != nil || kind != KindCommit || h.String() != c {
		t.Fatalf("%s %s %v", h, kind, err)
	}
	tree := g.Git("rev-parse", "HEAD^{tree}")
	if _, kind, _ := r.Peel(ObjectID(tree)); kind != KindTree {
		t.Fatal(kind)
	}
	if _, kind, _ := r.Peel(ObjectID(strings.Repeat("1", 40))); kind != KindMissing {
		t.Fatal(kind)
	}
}

// TestPushChangesMatchesTreeChanges compares the narrow tree diff, read by
// each backend, with go-git's own DiffTree on adds, deletes, edits, renames,
// mode and type changes.
func TestPushChangesMatchesTreeChanges(t *testing.T) {
	g := gittest.New(t)
	g.Write("keep/a.txt", "a\n")
	g.Write("edit/b.txt", "b\n")
	g.Write("gone/c.txt", "c\n")
	g.Write("gone/deep/d.txt", "d\n")
	g.Write("mv/long.txt", strings.Repeat("line of text\n", 20))
	g.Write("flip", "a file that becomes a directory\n")
	g.Write("dir2file/x.txt", "x\n")
	g.Write("run.sh", "#!/bin/sh\n")
	base := g.Commit("base")
	g.Write("edit/b.txt", "b2\n")
	g.Remove("gone/c.txt")
	g.Remove("gone/deep/d.txt")
	g.Remove("mv/long.txt")
	g.Write("moved/long.txt", strings.Repeat("line of text\n", 20)+"one more\n")
	g.Remove("flip")
	g.Write("flip/inner.txt", "now a dir\n")
	g.Remove("dir2file/x.txt")
	if err := os.Remove(filepath.Join(g.Dir, "dir2file")); err != nil {
		t.Fatal(err)
	}
	g.Write("dir2file", "now a file\n")
	g.Write("new/n.txt", "n\n")
	g.Git("update-index", "--add", "--chmod=+x", "run.sh")
	head := g.Commit("head")

	gg, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	defer gg.Close()
	gr := gg.Git()
	tree := func(rev string) *object.Tree {
		c, err := gr.CommitObject(plumbing.NewHash(rev))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.Tree()
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	id := func(tr *object.Tree) ObjectID {
		if tr == nil {
			return ""
		}
		return ObjectID(tr.Hash.String())
	}
	bt, ht := tree(base), tree(head)
	for _, r := range openEach(t, g.Dir) {
		for _, pair := range [][2]*object.Tree{{bt, ht}, {ht, bt}, {nil, ht}, {bt, nil}} {
			want, wantAdded, err := goGitChanges(gg, pair[0], pair[1])
			if err != nil {
				t.Fatal(err)
			}
			got, gotAdded, _, err := r.treeChanges(context.Background(), id(pair[0]), id(pair[1]), ObjectID(head), 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if pair[0] != nil && pair[1] != nil {
				if c := changeByPath(t, got, map[bool]string{true: "moved/long.txt", false: "mv/long.txt"}[pair[1] == ht]); c.Status != "renamed" {
					t.Fatalf("rename not detected: %+v", c)
				}
			}
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				t.Fatalf("changes\n got %+v\nwant %+v", got, want)
			}
			if fmt.Sprintf("%+v", gotAdded) != fmt.Sprintf("%+v", wantAdded) {
				t.Fatalf("added lines differ")
			}
		}
	}
}

// goGitChanges is the oracle for treeChanges: go-git's own DiffTree (which
// reads every sibling subtree) with the same rename options, and go-git's
// UnifiedEncoder for the diffs (goGitUnified).
func goGitChanges(r *Repo, from, to *object.Tree) ([]pack.Change, []pack.AddedLines, error) {
	raw, err := object.DiffTreeWithOptions(context.Background(), from, to, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, nil, err
	}
	sideOf := func(e object.ChangeEntry) (*side, error) {
		if e.Name == "" {
			return nil, nil
		}
		s := &side{path: safePath(e.Name), mode: e.TreeEntry.Mode, id: ObjectID(e.TreeEntry.Hash.String())}
		if e.TreeEntry.Mode == filemode.Submodule {
			s.text, s.loaded = "Subproject commit "+e.TreeEntry.Hash.String()+"\n", true
			return s, nil
		}
		data, err := r.b.blob(context.Background(), s.id)
		s.text, s.loaded = string(data), true
		return s, err
	}
	var out []pack.Change
	var added []pack.AddedLines
	for _, c := range raw {
		fromSide, err := sideOf(c.From)
		if err != nil {
			return nil, nil, err
		}
		toSide, err := sideOf(c.To)
		if err != nil {
			return nil, nil, err
		}
		ch, lines := fileDiff(fromSide, toSide, ObjectID(plumbing.ZeroHash.String()), false)
		if want := goGitUnified(fromSide, toSide, ch.Binary); ch.Diff != want {
			return nil, nil, fmt.Errorf("%s: diff\n%s\ngo-git's encoder\n%s", ch.Path, ch.Diff, want)
		}
		if ch.Diff != "" {
			ch.Old = r.oldFile(fromSide, "") // the blob the diff's old side is
		}
		out = append(out, ch)
		if len(lines) > 0 {
			added = append(added, pack.AddedLines{Path: ch.Path, Lines: lines})
		}
	}
	sortChanges(out)
	sort.Slice(added, func(i, j int) bool { return added[i].Path < added[j].Path })
	return out, added, nil
}
