package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Every kind of repository git opens, built with the git CLI, snapshotted
// as a work tree, a commit, a range and a push; where both backends can
// read a repository, they must give the same snapshot.

// buildHistory makes the fixture history: a base commit, then a commit that
// edits and adds, then one that renames, deletes, edits and flips modes.
func buildHistory(g *gittest.Repo) (base, head string) {
	g.Write("README.md", "# demo\n")
	g.Write("go.mod", "module example.com/demo\n")
	g.Write(".gitignore", "*.log\n")
	g.Write("a/x.go", "package a\n\nfunc X() int { return 1 }\n")
	g.Write("a/deep/y.go", "package deep\n\nconst Y = 2\n")
	g.Write("b/keep.txt", "one\ntwo\nthree\n")
	g.Write("b/rename-me.txt", strings.Repeat("rename me please\n", 20))
	g.Write("docs/guide.md", "# guide\n")
	g.WriteBytes("b/blob.bin", []byte{0, 1, 2, 3})
	g.Write("run.sh", "#!/bin/sh\necho hi\n")
	base = g.Commit("base")
	g.Write("a/x.go", "package a\n\nfunc X() int { return 10 }\n\nfunc Z() {}\n")
	g.Write("c/new.txt", "new file\n")
	g.Commit("one")
	g.Remove("b/rename-me.txt")
	g.Write("b/renamed.txt", strings.Repeat("rename me please\n", 20)+"and one more line\n")
	g.Remove("docs/guide.md")
	g.Write("b/keep.txt", "one\n2\nthree\nfour\n")
	g.Symlink("../README.md", "c/link")
	if err := os.Chmod(filepath.Join(g.Dir, "run.sh"), 0o755); err != nil {
		panic(err)
	}
	head = g.Commit("two")
	return base, head
}

// dirtyWorktree adds what a work-tree snapshot must see: an edit, a
// deletion, untracked and ignored files.
func dirtyWorktree(g *gittest.Repo) {
	g.Write("a/x.go", "package a\n\nfunc X() int { return 11 }\n\nfunc Z() {}\n")
	g.Remove("b/keep.txt")
	g.Write("untracked/u.txt", "untracked\n")
	g.Write("debug.log", "ignored\n")
	g.Write("caf\xe9.txt", "latin-1 name\n")
}

// dump renders a snapshot for comparison, contents included.
func dump(t *testing.T, snap *pack.Snapshot) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "source %+v\ntime %s\n", snap.Source, snap.Time.UTC())
	for _, f := range snap.Files {
		fmt.Fprintf(&b, "file %s size=%d mode=%d blob=%s", f.Path, f.Size, f.Mode, f.Blob)
		if f.Read != nil {
			data, err := f.Read(context.Background())
			var u *pack.Unavailable
			switch {
			case errors.As(err, &u):
				fmt.Fprintf(&b, " unavailable=%s", u.Reason)
			case err != nil:
				t.Fatalf("read %s: %v", f.Path, err)
			default:
				fmt.Fprintf(&b, " content=%q", data)
			}
		}
		b.WriteString("\n")
	}
	for _, c := range snap.Changes {
		fmt.Fprintf(&b, "change %+v\n", c)
		if c.Old != nil {
			data, err := c.Old.Read(context.Background())
			var u *pack.Unavailable
			switch {
			case errors.As(err, &u):
				fmt.Fprintf(&b, "old unavailable=%s\n", u.Reason)
			case err != nil:
				t.Fatalf("read %s before the change: %v", c.Path, err)
			default:
				fmt.Fprintf(&b, "old size=%d content=%q\n", c.Old.Size, data)
			}
		}
	}
	for _, c := range snap.Commits {
		fmt.Fprintf(&b, "commit %+v\n", c)
	}
	return b.String()
}

var idPattern = regexp.MustCompile(`\b([0-9a-f]{64}|[0-9a-f]{40})\b`)

// maskIDs replaces object ids, to compare a SHA-1 and a SHA-256 repository.
func maskIDs(s string) string { return idPattern.ReplaceAllString(s, "<id>") }

// snapshots takes every kind of snapshot of r.
func snapshots(t *testing.T, r *Repo, base, head string) map[string]*pack.Snapshot {
	t.Helper()
	ctx := context.Background()
	out := map[string]*pack.Snapshot{}
	add := func(name string, snap *pack.Snapshot, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s (%s): %v", name, r.Backend(), err)
		}
		out[name] = snap
	}
	if !r.Bare() {
		snap, err := r.Worktree(ctx)
		add("worktree", snap, err)
	}
	snap, err := r.Commit(ctx, head, policy.ScopeTree)
	add("commit tree", snap, err)
	snap, err = r.Commit(ctx, head, policy.ScopeChange)
	add("commit change", snap, err)
	snap, err = r.Commit(ctx, head+"~1", policy.ScopeChange)
	add("commit parent", snap, err)
	snap, err = r.Range(ctx, base, head, policy.ScopeTree)
	add("range tree", snap, err)
	snap, err = r.Range(ctx, base, head, policy.ScopeChange)
	add("range change", snap, err)
	snap, err = r.ChangeScope(ctx, base, head)
	add("change scope", snap, err)
	p, err := r.Pushed(ctx, ObjectID(head), []ObjectID{ObjectID(base)})
	if err == nil && p.Snapshot == nil {
		err = errors.New("nothing to push")
	}
	if err == nil {
		snap = p.Snapshot
	}
	add("push", snap, err)
	return out
}

// sameSnapshots fails unless every backend gives the same snapshots.
func sameSnapshots(t *testing.T, repos map[string]*Repo, base, head string) map[string]string {
	t.Helper()
	var want map[string]string
	wantFrom := ""
	for _, name := range []string{BackendGoGit, BackendCLI} {
		r, ok := repos[name]
		if !ok {
			continue
		}
		got := map[string]string{}
		for kind, snap := range snapshots(t, r, base, head) {
			got[kind] = dump(t, snap)
		}
		if want == nil {
			want, wantFrom = got, name
			continue
		}
		for kind := range want {
			if got[kind] != want[kind] {
				t.Errorf("%s snapshot: %s and %s differ:\n%s\n---\n%s", kind, wantFrom, name, want[kind], got[kind])
			}
		}
	}
	return want
}

// checkHistory checks what the fixture history must show, whatever the backend.
func checkHistory(t *testing.T, dumps map[string]string) {
	t.Helper()
	for kind, want := range map[string][]string{
		"range change":  {"Path:b/renamed.txt Status:renamed OldPath:b/rename-me.txt", "Path:docs/guide.md Status:deleted", "Path:c/link Status:added", "Path:run.sh Status:modified", "+func Z() {}", "file a/x.go"},
		"commit tree":   {"file a/deep/y.go", "file b/blob.bin", "Path:b/keep.txt Status:modified OldPath: Added:2 Deleted:1"},
		"commit parent": {"Path:a/x.go Status:modified", "Path:c/new.txt Status:added"},
		"push":          {"Trigger:push", "commit {Commit:"},
	} {
		for _, s := range want {
			if !strings.Contains(dumps[kind], s) {
				t.Errorf("%s snapshot lacks %q:\n%s", kind, s, dumps[kind])
			}
		}
	}
	if w, ok := dumps["worktree"]; ok {
		for _, s := range []string{`file caf\xe9.txt`, "file untracked/u.txt", "Path:b/keep.txt Status:deleted", "return 11"} {
			if !strings.Contains(w, s) {
				t.Errorf("worktree snapshot lacks %q:\n%s", s, w)
			}
		}
		if strings.Contains(w, "debug.log") {
			t.Errorf("worktree snapshot lists an ignored file:\n%s", w)
		}
	}
}

func TestBackendsGiveTheSameSnapshots(t *testing.T) {
	t.Run("repository", func(t *testing.T) {
		g := gittest.New(t)
		base, head := buildHistory(g)
		dirtyWorktree(g)
		checkHistory(t, sameSnapshots(t, openEach(t, g.Dir), base, head))
	})
	t.Run("bare clone", func(t *testing.T) {
		g := gittest.New(t)
		base, head := buildHistory(g)
		dir := filepath.Join(t.TempDir(), "bare.git")
		g.Git("clone", "-q", "--bare", g.Dir, dir)
		repos := openEach(t, dir)
		for _, r := range repos {
			if !r.Bare() {
				t.Fatalf("%s: not bare", r.Backend())
			}
			if _, err := r.Worktree(context.Background()); err == nil || !strings.Contains(err.Error(), "bare repository") {
				t.Fatalf("%s: worktree of a bare repository: %v", r.Backend(), err)
			}
		}
		checkHistory(t, sameSnapshots(t, repos, base, head))
	})
	t.Run("linked worktree", func(t *testing.T) {
		g := gittest.New(t)
		base, _ := buildHistory(g)
		wt := filepath.Join(t.TempDir(), "linked")
		g.Git("worktree", "add", "-q", "-b", "feature", wt)
		w := g.At(wt)
		w.Write("a/x.go", "package a\n\nfunc X() int { return 12 }\n\nfunc Z() {}\n")
		head := w.Commit("on the feature branch")
		dirtyWorktree(w)
		repos := openEach(t, filepath.Join(wt, "a"))
		for _, r := range repos {
			gitDir, common, err := r.GitDirs()
			if err != nil || filepath.Dir(filepath.Dir(gitDir)) != common || common != filepath.Join(g.Dir, ".git") {
				t.Fatalf("%s: git dirs %s %s %v", r.Backend(), gitDir, common, err)
			}
			if r.StateDir() != filepath.Join(g.Dir, ".git", "ctxpack") || r.Root != wt {
				t.Fatalf("%s: state %s root %s", r.Backend(), r.StateDir(), r.Root)
			}
		}
		dumps := sameSnapshots(t, repos, base, head)
		if !strings.Contains(dumps["worktree"], "Ref:feature") || !strings.Contains(dumps["worktree"], "return 11") {
			t.Errorf("worktree snapshot of the linked worktree:\n%s", dumps["worktree"])
		}
	})
	t.Run("hooksPath and includeIf", func(t *testing.T) {
		g := gittest.New(t)
		inc := filepath.Join(t.TempDir(), "included.gitconfig")
		if err := os.WriteFile(inc, []byte("[core]\n\thooksPath = .githooks\n[remote \"origin\"]\n\turl = https://example.com/org/included-name.git\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		g.Git("config", "includeIf.gitdir:"+g.Dir+"/.path", inc)
		base, head := buildHistory(g)
		dirtyWorktree(g)
		repos := openEach(t, g.Dir)
		for _, r := range repos {
			if r.Name != "org/included-name" {
				t.Errorf("%s: name %q, want the included origin's", r.Backend(), r.Name)
			}
			dir, from, err := r.HooksDir(context.Background())
			if err != nil || dir != filepath.Join(g.Dir, ".githooks") || from != inc {
				t.Errorf("%s: hooks %s from %s (%v)", r.Backend(), dir, from, err)
			}
		}
		checkHistory(t, sameSnapshots(t, repos, base, head))
	})
}

// crissCrossHistory is a history with criss-cross merges (main and x each
// merged into the other), a commit on each after them, and an unrelated
// root; ids are its commits.
func crissCrossHistory(t *testing.T) (*gittest.Repo, []string) {
	t.Helper()
	g := gittest.New(t)
	g.Write("a", "0\n")
	root := g.Commit("root")
	g.Git("checkout", "-q", "-b", "x")
	g.Write("x", "1\n")
	x1 := g.Commit("x1")
	g.Git("checkout", "-q", "main")
	g.Write("m", "1\n")
	m1 := g.Commit("m1")
	g.Git("merge", "-q", "--no-edit", "x") // main: m1 + x1
	mm := g.Git("rev-parse", "HEAD")
	g.Git("checkout", "-q", "x")
	g.Git("merge", "-q", "--no-edit", m1) // x: x1 + m1 (criss-cross)
	xm := g.Git("rev-parse", "HEAD")
	g.Write("x", "2\n")
	x2 := g.Commit("x2")
	g.Git("checkout", "-q", "main")
	g.Write("m", "2\n")
	m2 := g.Commit("m2")
	g.Git("checkout", "-q", "--orphan", "other")
	g.Write("o", "o\n")
	other := g.Commit("unrelated root")
	return g, []string{root, x1, m1, mm, xm, x2, m2, other}
}

// gitHistory is git's answer to the two history questions about a and b:
// their merge bases and the commits of a not in b, each sorted.
func gitHistory(g *gittest.Repo, a, b string) (bases, list []string) {
	out, _ := g.TryGit(nil, "merge-base", "--all", a, b) // exit 1: none
	bases = strings.Fields(out)
	sort.Strings(bases)
	list = strings.Fields(g.Git("rev-list", a, "--not", b))
	sort.Strings(list)
	return bases, list
}

// TestMergeBasesAndRevListMatchGit compares both backends' history walks
// with git's on a history with criss-cross merges and an unrelated root.
func TestMergeBasesAndRevListMatchGit(t *testing.T) {
	g, ids := crissCrossHistory(t)
	ctx := context.Background()
	for name, r := range openEach(t, g.Dir) {
		for _, a := range ids {
			for _, b := range ids {
				want, wantList := gitHistory(g, a, b)
				got, err := r.b.mergeBases(ctx, ObjectID(a), ObjectID(b))
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: merge-base %s %s = %v, git says %v", name, a[:7], b[:7], got, want)
				}
				want = wantList
				list, err := r.b.revList(ctx, ObjectID(a), []ObjectID{ObjectID(b)})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(list) != fmt.Sprint(want) {
					t.Errorf("%s: rev-list %s --not %s = %v, git says %v", name, a[:7], b[:7], list, want)
				}
			}
		}
	}
}

// originWithHistory is a repository with the fixture history that serves
// partial clones.
func originWithHistory(t *testing.T) (g *gittest.Repo, base, head string) {
	g = gittest.New(t)
	base, head = buildHistory(g)
	g.Git("config", "uploadpack.allowFilter", "true")
	g.Git("config", "uploadpack.allowAnySHA1InWant", "true")
	return g, base, head
}

// goGitDumps are the snapshots go-git makes of a complete repository: what a
// repository only git can read must give, for the same commits.
func goGitDumps(t *testing.T, dir, base, head string) map[string]string {
	t.Helper()
	r, err := OpenWith(dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]string{}
	for kind, snap := range snapshots(t, r, base, head) {
		snap.Source.Repository = ""
		out[kind] = dump(t, snap)
	}
	return out
}

func TestSparseCheckout(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
	}{
		{"cone", []string{"sparse-checkout", "set", "a"}},
		{"non-cone", []string{"sparse-checkout", "set", "--no-cone", "/a/", "/*.md", "/go.mod", "/.gitignore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			origin, base, head := originWithHistory(t)
			dir := filepath.Join(t.TempDir(), "sparse")
			origin.Git("clone", "-q", origin.Dir, dir)
			c := origin.At(dir)
			c.Git(tc.set...)
			if _, err := os.Stat(filepath.Join(dir, "b", "keep.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("b/keep.txt is checked out: %v", err)
			}
			r := open(t, dir)
			defer r.Close()
			if r.Backend() != BackendCLI {
				t.Fatalf("a sparse checkout opened with %s", r.Backend())
			}
			if _, err := OpenWith(dir, OpenOptions{Backend: BackendGoGit}); err == nil || !strings.Contains(err.Error(), "worktreeconfig") {
				t.Fatalf("go-git opened the sparse checkout: %v", err)
			}
			// Commits and ranges read every file from the objects: the same
			// snapshots as the complete repository's.
			want := goGitDumps(t, origin.Dir, base, head)
			for kind, snap := range snapshots(t, r, base, head) {
				if kind == "worktree" {
					continue
				}
				snap.Source.Repository = ""
				if got := dump(t, snap); got != want[kind] {
					t.Errorf("%s snapshot of the sparse checkout:\n%s\nwant\n%s", kind, got, want[kind])
				}
			}
			// The work tree: the files outside the sparse set are listed,
			// not_checked_out, and unchanged.
			snap, err := r.Worktree(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Changes) != 0 || snap.Source.Dirty {
				t.Fatalf("clean sparse checkout has changes: %+v", snap.Changes)
			}
			f := fileByPath(t, snap.Files, "b/keep.txt")
			_, err = f.Read(context.Background())
			var u *pack.Unavailable
			if !errors.As(err, &u) || u.Reason != pack.ReasonNotCheckedOut || !strings.Contains(u.Detail, "b/keep.txt") || f.Blob == "" {
				t.Fatalf("b/keep.txt outside the sparse set: %+v %v", f, err)
			}
			if data, err := fileByPath(t, snap.Files, "a/x.go").Read(context.Background()); err != nil || !strings.Contains(string(data), "func Z") {
				t.Fatalf("a/x.go: %q %v", data, err)
			}
			c.Write("a/x.go", "package a\n")
			snap, err = r.Worktree(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Changes) != 1 || snap.Changes[0].Path != "a/x.go" {
				t.Fatalf("changes %+v", snap.Changes)
			}
		})
	}
}

func TestPartialClone(t *testing.T) {
	origin, base, head := originWithHistory(t)
	dir := filepath.Join(t.TempDir(), "partial")
	origin.Git("clone", "-q", "--filter=blob:none", "file://"+origin.Dir, dir)
	c := origin.At(dir)
	oldKeep := origin.Git("rev-parse", base+":b/keep.txt")
	missing := func() bool { // rev-list --missing does not fetch
		return strings.Contains(c.Git("rev-list", "--objects", "--missing=print", base), "?"+oldKeep)
	}
	if !missing() {
		t.Fatal("the base's blob is already in the partial clone")
	}
	r := open(t, dir)
	defer r.Close()
	if r.Backend() != BackendCLI {
		t.Fatalf("a partial clone opened with %s", r.Backend())
	}
	// Missing blobs are fetched as they are read: the same snapshots as the
	// complete repository's.
	want := goGitDumps(t, origin.Dir, base, head)
	for kind, snap := range snapshots(t, r, base, head) {
		if kind == "worktree" {
			if snap.Source.Dirty || len(snap.Changes) != 0 {
				t.Errorf("a fresh partial clone's work tree has changes: %+v", snap.Changes)
			}
			continue
		}
		snap.Source.Repository = ""
		if got := dump(t, snap); got != want[kind] {
			t.Errorf("%s snapshot of the partial clone:\n%s\nwant\n%s", kind, got, want[kind])
		}
	}
	if missing() {
		t.Fatal("the base's blob was not fetched")
	}
}

func TestPartialCloneUnreachablePromisor(t *testing.T) {
	origin, base, head := originWithHistory(t)
	dir := filepath.Join(t.TempDir(), "partial")
	origin.Git("clone", "-q", "--filter=blob:none", "file://"+origin.Dir, dir)
	if err := os.Rename(origin.Dir, origin.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	defer r.Close()
	ctx := context.Background()

	// The head commit: its tree was checked out (fetched); the parent's
	// version of b/keep.txt was not.
	snap, err := r.Commit(ctx, head, policy.ScopeTree)
	if err != nil {
		t.Fatal(err)
	}
	keep := changeByPath(t, snap.Changes, "b/keep.txt")
	if keep.DiffWithheld != pack.ReasonNotFetched || keep.Diff != "" || keep.Status != "modified" {
		t.Fatalf("b/keep.txt change: %+v", keep)
	}
	if len(snap.Commits) != 1 || !strings.Contains(strings.Join(snap.Commits[0].Unread, " "), "b/keep.txt") {
		t.Fatalf("commit patches %+v", snap.Commits)
	}
	if data, err := fileByPath(t, snap.Files, "b/keep.txt").Read(ctx); err != nil || !strings.Contains(string(data), "four") {
		t.Fatalf("head's b/keep.txt: %q %v", data, err)
	}
	// The parent commit's tree: b/keep.txt is not in the clone.
	snap, err = r.Commit(ctx, head+"~1", policy.ScopeTree)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fileByPath(t, snap.Files, "b/keep.txt").Read(ctx)
	var u *pack.Unavailable
	if !errors.As(err, &u) || u.Reason != pack.ReasonNotFetched {
		t.Fatalf("b/keep.txt at the parent: %v", err)
	}
	parent := origin.At(dir).Git("rev-parse", head+"~1")
	for _, s := range []string{"b/keep.txt", parent[:12], "promisor remote", "pack again"} {
		if !strings.Contains(u.Detail, s) {
			t.Errorf("not-fetched detail lacks %q: %s", s, u.Detail)
		}
	}
	// FileAt says the same.
	if _, err := r.FileAt(ctx, base, "b/keep.txt", 1<<20); !errors.As(err, &u) {
		t.Fatalf("FileAt: %v", err)
	}
}

func TestSHA256Repository(t *testing.T) {
	g256 := gittest.NewWith(t, "--object-format=sha256")
	base256, head256 := buildHistory(g256)
	dirtyWorktree(g256)
	g1 := gittest.New(t)
	base1, head1 := buildHistory(g1)
	dirtyWorktree(g1)
	if len(head256) != 64 || len(head1) != 40 {
		t.Fatalf("ids %s %s", head256, head1)
	}
	if _, err := OpenWith(g256.Dir, OpenOptions{Backend: BackendGoGit}); err == nil || !strings.Contains(err.Error(), "objectformat") {
		t.Fatalf("go-git opened a SHA-256 repository: %v", err)
	}
	r := open(t, g256.Dir)
	defer r.Close()
	if r.Backend() != BackendCLI || r.ObjectFormat() != "sha256" {
		t.Fatalf("backend %s format %s", r.Backend(), r.ObjectFormat())
	}
	want := map[string]string{}
	r1 := open(t, g1.Dir)
	defer r1.Close()
	for kind, snap := range snapshots(t, r1, base1, head1) {
		snap.Source.Repository = ""
		want[kind] = maskIDs(dump(t, snap))
	}
	for kind, snap := range snapshots(t, r, base256, head256) {
		if snap.Source.Head != "" && len(snap.Source.Head) != 64 {
			t.Errorf("%s: head %s", kind, snap.Source.Head)
		}
		for _, f := range snap.Files {
			if f.Blob != "" && len(f.Blob) != 64 {
				t.Errorf("%s: %s blob %s", kind, f.Path, f.Blob)
			}
		}
		snap.Source.Repository = ""
		if got := maskIDs(dump(t, snap)); got != want[kind] {
			t.Errorf("%s snapshot, SHA-256 and SHA-1:\n%s\nwant\n%s", kind, got, want[kind])
		}
	}
	// An untracked file's blob id is the SHA-256 one git computes.
	snap, err := r.Worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f := fileByPath(t, snap.Files, "untracked/u.txt"); f.Blob != g256.Git("hash-object", "untracked/u.txt") {
		t.Fatalf("blob %s, git says %s", f.Blob, g256.Git("hash-object", "untracked/u.txt"))
	}
}

func TestParseID(t *testing.T) {
	for in, ok := range map[string]bool{
		strings.Repeat("a", 40): true, strings.Repeat("B", 64): true, strings.Repeat("a", 41): false,
		strings.Repeat("g", 40): false, "": false,
	} {
		id, err := ParseID(in)
		if (err == nil) != ok || (ok && string(id) != strings.ToLower(in)) {
			t.Errorf("ParseID(%q) = %q, %v", in, id, err)
		}
	}
}

// TestCommitPatchesFirstErrorInOrder: the commits of a range are diffed
// at once, and when two of them cannot be read, the error is the earlier
// commit's, as when they were diffed in turn.
func TestCommitPatchesFirstErrorInOrder(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# demo\n")
	base := g.Commit("base")
	g.Write("first.txt", "one\n")
	g.Commit("add first")
	g.Remove("first.txt")
	g.Commit("remove first")
	g.Write("second.txt", "two\n")
	g.Commit("add second")
	g.Remove("second.txt")
	g.Commit("remove second")
	g.DropBlob("one\n")
	g.DropBlob("two\n")
	for _, backend := range []string{BackendGoGit, BackendCLI} {
		r, err := OpenWith(g.Dir, OpenOptions{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			_, err := r.Range(context.Background(), base, "HEAD", policy.ScopeChange)
			if err == nil || !strings.Contains(err.Error(), "first.txt") {
				t.Errorf("%s: Range = %v, want the error of first.txt's commit", backend, err)
			}
		}
		// Read aside, the snapshot comes back and its commits' error with
		// AwaitCommits.
		r.CommitsAside = true
		for range 5 {
			snap, err := r.Range(context.Background(), base, "HEAD", policy.ScopeChange)
			if err != nil {
				t.Fatalf("%s: Range aside = %v", backend, err)
			}
			if err := snap.AwaitCommits(); err == nil || !strings.Contains(err.Error(), "first.txt") {
				t.Errorf("%s: AwaitCommits = %v, want the error of first.txt's commit", backend, err)
			}
		}
		r.Close()
	}
}

// TestPrefetchSides: where the backend reads many blobs in one exchange
// (the CLI's cat-file), a diff's sides are read so, each the blob's bytes
// (a large one too, which the memo does not keep); the small ones are
// then in the memo, and a second diff asks only for the large. The go-git
// backend, with no such exchange, asks for none at once
// (TestBackendsGiveTheSameSnapshots holds the diffs the same).
func TestPrefetchSides(t *testing.T) {
	g := gittest.New(t)
	large := strings.Repeat("a large blob, over the memo's bound for one\n", 4000)
	g.Write("a.txt", "one\n")
	g.Write("b.txt", "two\n")
	g.Write("big.txt", large)
	base := g.Commit("base")
	g.Write("a.txt", "one, changed\n")
	g.Write("b.txt", "two, changed\n")
	g.Write("big.txt", large+"and a line\n")
	head := g.Commit("head")
	for backend, r := range openEach(t, g.Dir) {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			bc, err := r.commit(ctx, ObjectID(base))
			if err != nil {
				t.Fatal(err)
			}
			hc, err := r.commit(ctx, ObjectID(head))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := r.diffTrees(ctx, bc.Tree, hc.Tree, hc.ID)
			if err != nil || len(raw) != 3 {
				t.Fatalf("changes %v, %v", raw, err)
			}
			pre := r.prefetchSides(ctx, raw)
			if backend == BackendGoGit {
				if pre != nil {
					t.Fatalf("go-git prefetched %d blobs", len(pre))
				}
				return
			}
			if len(pre) != 6 {
				t.Fatalf("prefetched %d blobs, want the 6 sides'", len(pre))
			}
			for _, c := range raw {
				for _, e := range []*entryAt{c.from, c.to} {
					data, err := r.b.blob(ctx, e.id)
					if err != nil || pre[e.id] != string(data) {
						t.Errorf("%s %s: prefetched %d bytes, the blob %d (%v)", e.path, e.id, len(pre[e.id]), len(data), err)
					}
				}
			}
			// Again: the small ones are in the memo, big.txt's two are not.
			again := r.prefetchSides(ctx, raw)
			for id := range again {
				if len(again[id]) < len(large) {
					t.Errorf("a second diff asked again for %s (%d bytes), which the memo holds", id, len(again[id]))
				}
			}
			if len(again) != 2 {
				t.Errorf("a second diff asked for %d blobs, want big.txt's 2", len(again))
			}
		})
	}
}
