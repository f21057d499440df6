package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

func paths(files []pack.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func fileByPath(t *testing.T, files []pack.File, p string) pack.File {
	t.Helper()
	for _, f := range files {
		if f.Path == p {
			return f
		}
	}
	t.Fatalf("no file %q in %v", p, paths(files))
	return pack.File{}
}

func changeByPath(t *testing.T, changes []pack.Change, p string) pack.Change {
	t.Helper()
	for _, c := range changes {
		if c.Path == p {
			return c
		}
	}
	t.Fatalf("no change %q in %+v", p, changes)
	return pack.Change{}
}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWorktreeIgnoresAndEdits(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# demo\n")
	g.Write(".gitignore", "*.log\nbuild/\n")
	g.Write("pkg/.gitignore", "gen_*.go\n!gen_keep.go\n")
	g.Write("pkg/a.go", "package pkg\n")
	g.Commit("init")
	g.Write("pkg/a.go", "package pkg\n\nfunc A() {}\n") // uncommitted edit
	g.Write("pkg/gen_x.go", "package pkg\n")            // ignored (nested)
	g.Write("pkg/gen_keep.go", "package pkg\n")         // negation: kept
	g.Write("debug.log", "noise\n")                     // ignored
	g.Write("build/out.txt", "x\n")                     // ignored dir
	g.Write("new file ü.txt", "hello\n")                // untracked, spaces and non-ASCII

	snap, err := open(t, filepath.Join(g.Dir, "pkg")).Worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(paths(snap.Files), ",")
	want := ".gitignore,README.md,new file ü.txt,pkg/.gitignore,pkg/a.go,pkg/gen_keep.go"
	if got != want {
		t.Fatalf("files = %s\nwant    %s", got, want)
	}
	a := fileByPath(t, snap.Files, "pkg/a.go")
	data, err := a.Read(context.Background())
	if err != nil || !strings.Contains(string(data), "func A") {
		t.Fatalf("uncommitted edit not read: %q %v", data, err)
	}
	if !snap.Source.Dirty || snap.Source.Trigger != "worktree" || snap.Source.Ref != "main" {
		t.Fatalf("source = %+v", snap.Source)
	}
	if c := changeByPath(t, snap.Changes, "pkg/a.go"); c.Status != "modified" || c.Added != 2 || c.Deleted != 0 {
		t.Fatalf("change = %+v", c)
	}
	if c := changeByPath(t, snap.Changes, "new file ü.txt"); c.Status != "added" || c.Added != 1 {
		t.Fatalf("change = %+v", c)
	}
}

func TestCommitChanges(t *testing.T) {
	g := gittest.New(t)
	g.Write("keep.txt", "one\ntwo\nthree\n")
	g.Write("old/name.txt", strings.Repeat("rename me please\n", 20))
	g.Write("gone.txt", "bye\n")
	g.Write("link", "regular file first\n")
	g.Commit("init")
	g.Write("keep.txt", "one\n2\nthree\nfour\n")
	g.Write("new/name.txt", strings.Repeat("rename me please\n", 20))
	g.Remove("old/name.txt")
	g.Remove("gone.txt")
	g.Remove("link")
	g.Symlink("keep.txt", "link")
	g.WriteBytes("bin.dat", []byte{0, 1, 2, 3})
	head := g.Commit("change")

	snap, err := open(t, g.Dir).Commit(context.Background(), "HEAD", policy.ScopeTree)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source.Head != head || snap.Source.Trigger != "commit" || snap.Source.Base == "" {
		t.Fatalf("source = %+v", snap.Source)
	}
	tests := []struct {
		path, status, old string
		added, deleted    int
		binary            bool
	}{
		{"bin.dat", "added", "", 0, 0, true},
		{"gone.txt", "deleted", "", 0, 1, false},
		{"keep.txt", "modified", "", 2, 1, false},
		{"link", "type-changed", "", 1, 1, false},
		{"new/name.txt", "renamed", "old/name.txt", 0, 0, false},
	}
	if len(snap.Changes) != len(tests) {
		t.Fatalf("changes = %+v", snap.Changes)
	}
	for i, tt := range tests {
		c := snap.Changes[i]
		if c.Path != tt.path || c.Status != tt.status || c.OldPath != tt.old || c.Added != tt.added || c.Deleted != tt.deleted || c.Binary != tt.binary {
			t.Errorf("change %d = %+v, want %+v", i, c, tt)
		}
	}
	kc := changeByPath(t, snap.Changes, "keep.txt")
	if !strings.Contains(kc.Diff, "-two\n+2\n") || !strings.Contains(kc.Diff, "+four") || !strings.HasPrefix(kc.Diff, "diff --git a/keep.txt b/keep.txt") {
		t.Fatalf("diff = %q", kc.Diff)
	}
	if f := fileByPath(t, snap.Files, "link"); f.Mode != pack.ModeSymlink || f.Read != nil {
		t.Fatalf("symlink entry = %+v", f)
	}
	if len(snap.Commits) != 1 || snap.Commits[0].Commit != head {
		t.Fatalf("commits = %+v", snap.Commits)
	}
}

func TestRangeListsEveryCommitsAddedLines(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "base\n")
	base := g.Commit("base")
	g.Write("a.txt", "base\nline two\n")
	c1 := g.Commit("c1")
	g.Write("b.txt", "temporary\n")
	c2 := g.Commit("c2")
	g.Remove("b.txt")
	c3 := g.Commit("c3")
	g.Git("tag", "v1")

	for _, aside := range []bool{false, true} {
		t.Run(fmt.Sprintf("aside=%v", aside), func(t *testing.T) {
			r := open(t, g.Dir)
			r.CommitsAside = aside
			snap, err := r.Range(context.Background(), base[:7], "v1", policy.ScopeTree)
			if err != nil {
				t.Fatal(err)
			}
			if aside && snap.Commits != nil {
				t.Fatalf("read aside, Commits = %+v before AwaitCommits", snap.Commits)
			}
			if err := snap.AwaitCommits(); err != nil {
				t.Fatal(err)
			}
			checkRangeCommits(t, snap, c1, c2, c3)
		})
	}
}

func checkRangeCommits(t *testing.T, snap *pack.Snapshot, c1, c2, c3 string) {
	t.Helper()
	var got []string
	for _, c := range snap.Commits {
		got = append(got, c.Commit)
	}
	if strings.Join(got, ",") != strings.Join([]string{c1, c2, c3}, ",") {
		t.Fatalf("commits = %v", got)
	}
	// b.txt was added by c2 and removed by c3: not a change of the range, but
	// its line is in c2's added lines.
	if len(snap.Changes) != 1 || snap.Changes[0].Path != "a.txt" {
		t.Fatalf("changes = %+v", snap.Changes)
	}
	c2files := snap.Commits[1].Files
	if len(c2files) != 1 || c2files[0].Path != "b.txt" || c2files[0].Lines[0] != (pack.Line{Number: 1, Text: "temporary"}) {
		t.Fatalf("c2 added = %+v", c2files)
	}
	if l := snap.Commits[0].Files[0].Lines; len(l) != 1 || l[0] != (pack.Line{Number: 2, Text: "line two"}) {
		t.Fatalf("c1 added = %+v", l)
	}
}

func TestResolveRevisions(t *testing.T) {
	g := gittest.New(t)
	g.Write("a", "1\n")
	first := g.Commit("1")
	g.Write("a", "2\n")
	second := g.Commit("2")
	g.Git("tag", "-a", "v2", "-m", "annotated")
	g.Git("branch", "feature", first)
	r := open(t, g.Dir)
	for rev, want := range map[string]string{
		"HEAD": second, "HEAD~1": first, "main": second, "feature": first,
		"v2": second, first: first, first[:8]: first,
	} {
		h, err := r.Resolve(rev)
		if err != nil || h.String() != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, h, err, want)
		}
	}
	if _, err := r.Resolve("nope"); err == nil || !strings.Contains(err.Error(), `unknown revision "nope"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestEmptyRepository(t *testing.T) {
	g := gittest.New(t)
	r := open(t, g.Dir)
	snap, err := r.Worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Files) != 0 || snap.Source.Head != "" {
		t.Fatalf("snap = %+v", snap)
	}
	if _, err := r.Commit(context.Background(), "HEAD", policy.ScopeTree); !errors.Is(err, ErrNoCommits) {
		t.Fatalf("commit on empty repo: %v", err)
	}
	g.Write("x.txt", "untracked\n")
	snap, err = r.Worktree(context.Background())
	if err != nil || len(snap.Files) != 1 || snap.Changes[0].Status != "added" {
		t.Fatalf("snap = %+v, %v", snap, err)
	}
}

func TestDetachedHeadAndSubmodule(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	first := g.Commit("1")
	g.Git("update-index", "--add", "--cacheinfo", "160000,"+first+",vendored")
	g.Git("commit", "-q", "-m", "submodule")
	g.Git("checkout", "-q", "--detach", "HEAD")
	snap, err := open(t, g.Dir).Worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source.Ref != "HEAD" {
		t.Fatalf("detached ref = %q", snap.Source.Ref)
	}
	if f := fileByPath(t, snap.Files, "vendored"); f.Mode != pack.ModeSubmodule {
		t.Fatalf("submodule = %+v", f)
	}
	if snap.Source.Dirty {
		t.Fatalf("clean detached worktree reported dirty: %+v", snap.Changes)
	}
}

func TestPlainDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("skip/\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "skip"), 0o755)
	os.WriteFile(filepath.Join(dir, "skip", "b.txt"), []byte("b\n"), 0o644)
	t.Setenv("SOURCE_DATE_EPOCH", "1234567890")
	r := open(t, dir)
	if r.IsGit() {
		t.Fatal("plain directory opened as git")
	}
	snap, err := r.Worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Source.Kind != "plain" || strings.Join(paths(snap.Files), ",") != ".gitignore,a.txt" || snap.Time.Unix() != 1234567890 {
		t.Fatalf("snap = %+v %v", snap.Source, paths(snap.Files))
	}
	if _, err := r.Commit(context.Background(), "HEAD", policy.ScopeTree); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("err = %v", err)
	}
}

func TestNonUTF8PathsStayDistinct(t *testing.T) {
	g := gittest.New(t)
	g.Write("caf\xe9.txt", "latin-1 name\n")
	g.Write("caf\xe8.txt", "another\n")
	g.Write("ok.txt", "ok\n")
	g.Commit("odd names")
	g.Write("caf\xe9.txt", "latin-1 name, edited\n")
	r := open(t, g.Dir)
	for name, snapFn := range map[string]func() (*pack.Snapshot, error){
		"commit":   func() (*pack.Snapshot, error) { return r.Commit(context.Background(), "HEAD", policy.ScopeTree) },
		"worktree": func() (*pack.Snapshot, error) { return r.Worktree(context.Background()) },
	} {
		snap, err := snapFn()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := strings.Join(paths(snap.Files), ",")
		if got != `caf\xe8.txt,caf\xe9.txt,ok.txt` {
			t.Fatalf("%s: files = %q", name, got)
		}
		f := fileByPath(t, snap.Files, `caf\xe9.txt`)
		data, err := f.Read(context.Background())
		if err != nil || !strings.HasPrefix(string(data), "latin-1 name") {
			t.Fatalf("%s: read = %q %v", name, data, err)
		}
	}
	snap, _ := r.Worktree(context.Background())
	if c := changeByPath(t, snap.Changes, `caf\xe9.txt`); c.Status != "modified" {
		t.Fatalf("change = %+v", c)
	}
}

func TestCommitAndRangeScopes(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# demo\n")
	g.Write("pkg/.ctxpackignore", "tmp/\n")
	g.Write("pkg/deep/a.go", "package deep\n")
	g.Write("pkg/deep/untouched.go", "package deep\n")
	g.Write("other/b.go", "package other\n")
	base := g.Commit("base")
	g.Write("pkg/deep/a.go", "package deep\n\nvar A = 1\n")
	g.Commit("one")
	g.Remove("other/b.go")
	head := g.Commit("two")
	r := open(t, g.Dir)
	ctx := context.Background()

	const changeScope = "README.md pkg/.ctxpackignore pkg/deep/a.go"
	const wholeTree = "README.md pkg/.ctxpackignore pkg/deep/a.go pkg/deep/untouched.go"
	tests := []struct {
		name, scope, want string
		snap              func(scope string) (*pack.Snapshot, error)
	}{
		{"commit change", policy.ScopeChange, "README.md", func(s string) (*pack.Snapshot, error) { return r.Commit(ctx, "HEAD", s) }},
		{"commit tree", policy.ScopeTree, wholeTree, func(s string) (*pack.Snapshot, error) { return r.Commit(ctx, "HEAD", s) }},
		{"range change", policy.ScopeChange, changeScope, func(s string) (*pack.Snapshot, error) { return r.Range(ctx, base, head, s) }},
		{"range tree", policy.ScopeTree, wholeTree, func(s string) (*pack.Snapshot, error) { return r.Range(ctx, base, head, s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := tt.snap(tt.scope)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(paths(snap.Files), " "); got != tt.want {
				t.Errorf("files %s\nwant  %s", got, tt.want)
			}
			if snap.Source.Scope != tt.scope {
				t.Errorf("source scope %q, want %q", snap.Source.Scope, tt.scope)
			}
			// The scope never hides a change: the deletion is listed either way.
			changeByPath(t, snap.Changes, "other/b.go")
		})
	}
	if _, err := r.Commit(ctx, "HEAD", "everything"); err == nil || !strings.Contains(err.Error(), `scope "everything"`) {
		t.Fatalf("bad scope: %v", err)
	}
}

func TestSafePathRoundTrips(t *testing.T) {
	for _, raw := range []string{"plain.go", "dir/ü.txt", "caf\xe9.txt", "bad\xff\xfe.go", `lit\xe9.txt`, `back\slash`, "mixed\xe9" + `\x41`, "new\nline", ""} {
		p := safePath(raw)
		if !utf8.ValidString(p) {
			t.Errorf("%q: %q is not UTF-8", raw, p)
		}
		if RawPath(p) != raw {
			t.Errorf("%q: escaped %q, back %q", raw, p, RawPath(p))
		}
	}
	if safePath(`lit\xe9.txt`) == safePath("lit\xe9.txt") {
		t.Error("a literal \\xe9 and the byte 0xe9 collide")
	}
	for _, p := range []string{"plain.go", "dir/ü.txt", `back\slash`, "new\nline"} {
		if safePath(p) != p {
			t.Errorf("%q escaped to %q", p, safePath(p))
		}
	}
}

// openEach opens dir with each backend that can read it, closing them at
// the end of the test.
func openEach(t *testing.T, dir string) map[string]*Repo {
	t.Helper()
	out := map[string]*Repo{}
	for _, b := range []string{BackendGoGit, BackendCLI} {
		r, err := OpenWith(dir, OpenOptions{Backend: b})
		if err != nil {
			if b == BackendGoGit {
				continue
			}
			t.Fatal(err)
		}
		if r.Backend() != b {
			t.Fatalf("opened with %s, asked for %s", r.Backend(), b)
		}
		t.Cleanup(func() { r.Close() })
		out[b] = r
	}
	return out
}

// TestResolveWholeIDs: a whole object id names that object on both
// backends, before a ref of the same name (as in git); one not in the
// repository is missing, not unknown, and a blob's is not a commit.
func TestResolveWholeIDs(t *testing.T) {
	g := gittest.New(t)
	g.Write("a", "1\n")
	first := g.Commit("1")
	g.Write("a", "2\n")
	second := g.Commit("2")
	g.Git("update-ref", "refs/heads/"+first, second) // a ref named like first's id
	g.Git("tag", "-a", "v2", "-m", "annotated")
	tag := strings.TrimSpace(g.Git("rev-parse", "v2"))
	blob := strings.TrimSpace(g.Git("rev-parse", "HEAD:a"))
	missing := strings.Repeat("0123456789", 4)
	for _, backend := range []string{BackendGoGit, BackendCLI} {
		r, err := OpenWith(g.Dir, OpenOptions{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ rev, want, err string }{
			{rev: first, want: first},
			{rev: second, want: second},
			{rev: tag, want: second},
			{rev: missing, err: "not in the repository"},
			{rev: blob, err: "is not a commit"},
		} {
			got, err := r.Resolve(tc.rev)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%s: Resolve(%s) = %s, %v; want an error saying %q", backend, tc.rev, got, err, tc.err)
			case tc.err == "" && (err != nil || string(got) != tc.want):
				t.Errorf("%s: Resolve(%s) = %s, %v; want %s", backend, tc.rev, got, err, tc.want)
			}
		}
		r.Close()
	}
}

// TestWorktreeUnmergedListedOnce: a path with a merge conflict has an
// index entry per stage; the work tree lists it once, with what is on
// disk, beside the files around it, on each backend.
func TestWorktreeUnmergedListedOnce(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.txt", "a\n")
	g.Write("conflict.txt", "base\n")
	g.Write("z.txt", "z\n")
	g.Commit("base")
	g.Git("checkout", "-q", "-b", "other")
	g.Write("conflict.txt", "other\n")
	g.Commit("other")
	g.Git("checkout", "-q", "main")
	g.Write("conflict.txt", "main\n")
	g.Commit("main")
	if _, err := g.TryGit(nil, "merge", "-q", "other"); err == nil {
		t.Fatal("the merge did not conflict: the test tests nothing")
	}
	if stages := g.Git("ls-files", "-s", "conflict.txt"); strings.Count(stages, "\n") < 2 {
		t.Fatalf("conflict.txt has no stages: %q", stages)
	}
	for name, r := range openEach(t, g.Dir) {
		snap, err := r.Worktree(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := strings.Join(paths(snap.Files), ","); got != "a.txt,conflict.txt,z.txt" {
			t.Fatalf("%s: files = %s", name, got)
		}
		data, err := fileByPath(t, snap.Files, "conflict.txt").Read(context.Background())
		if err != nil || !strings.Contains(string(data), "<<<<<<<") {
			t.Fatalf("%s: conflict.txt reads %q, %v: want the conflict on disk", name, data, err)
		}
	}
}
