package source

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// TestGrepWords: the head tree's search finds, for each word, the files
// git grep -F -w finds it in, both ways it searches — git grep's one Perl
// pattern (a bare repository), and in process, each file read from the
// work tree where it holds the head's blob: words that are prefixes of
// others, underscores and digits next to a word, non-ASCII letters next
// to one, case, a word in a binary file or under another extension, a
// symlink, and files the work tree changed, removed or replaced with a
// symlink (the head's blob is searched, never the work tree's file).
func TestGrepWords(t *testing.T) {
	g := gittest.New(t)
	files := map[string]string{
		"a.js":     "res.sendFile(p)\nresend()\n",
		"b.js":     "send(x); join_(y)\n",
		"c.js":     "éjoin() + sendé\n",
		"d.js":     "Send(); JOIN()\n",
		"e.js":     "x_y = a1 + a12\n",
		"f.js":     "$send() + send$\n",
		"g.txt":    "send join\n",
		"h.js":     "send\x00join\n",
		"sub/i.js": "// join the sendFile callers\n",
		"j.js":     "a1()\n",
	}
	for p, s := range files {
		g.Write(p, s)
	}
	if err := os.Symlink("b.js", filepath.Join(g.Dir, "link.js")); err != nil {
		t.Fatal(err)
	}
	g.Commit("words")
	// The work tree moves on: the search is of the commit's tree.
	g.Write("b.js", "nothing here\n")
	g.Write("d.js", "send(); join()\n")
	if err := os.Remove(filepath.Join(g.Dir, "sub", "i.js")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(g.Dir, "j.js")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d.js", filepath.Join(g.Dir, "j.js")); err != nil {
		t.Fatal(err)
	}
	words := []string{"send", "sendFile", "join", "x_y", "a1", "Send", "missing"}
	opts := pack.GrepOptions{Exts: []string{".js"}}

	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	tree, head := headTreeOf(t, r)
	if _, ok := wordPattern(words, opts); !ok {
		t.Fatal("these words should take the Perl pattern")
	}
	fixed, err := r.fetchGit(ctx, nil, "grep", "-z", "-o", "-I", "-F", "-w", "-e", "send", "-e", "sendFile", "-e", "join",
		"-e", "x_y", "-e", "a1", "-e", "Send", "-e", "missing", string(head), "--", "*.js")
	if err != nil {
		t.Fatal(err)
	}
	want := parseGrep(fixed, string(head)+":", false, map[string][]string{})
	// sendFile( and resend are not send; join_ is not join; é and $ are
	// not word characters to git; Send is not send; h.js is binary; a
	// symlink is not searched.
	if s, j, a := []string{"b.js", "c.js", "f.js"}, []string{"c.js", "sub/i.js"}, []string{"e.js", "j.js"}; !slices.Equal(want["send"], s) || !slices.Equal(want["join"], j) || !slices.Equal(want["a1"], a) {
		t.Fatalf("git grep: send in %v, join in %v, a1 in %v; want %v, %v, %v", want["send"], want["join"], want["a1"], s, j, a)
	}

	viaGit, ok, err := tree.gitGrep(ctx, words, opts)
	if err != nil || !ok {
		t.Fatalf("gitGrep: %v %v", ok, err)
	}
	if !maps.EqualFunc(viaGit, want, slices.Equal) {
		t.Errorf("gitGrep = %v\ngit grep -F -w = %v", viaGit, want)
	}
	got, err := tree.Grep(ctx, words, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Grep (in process, through the work tree) = %v\ngit grep -F -w = %v", got, want)
	}
	for _, backend := range []string{BackendGoGit} {
		r2, err := OpenWith(g.Dir, OpenOptions{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		tree2, _ := headTreeOf(t, r2)
		got2, err := tree2.Grep(ctx, words, opts)
		r2.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !maps.EqualFunc(got2, want, slices.Equal) {
			t.Errorf("Grep through %s = %v\ngit grep -F -w = %v", backend, got2, want)
		}
	}

	// A git built without PCRE refuses -P: the fixed strings answer alike.
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = -P ]; then echo 'fatal: cannot use Perl-compatible regexes when not compiled with USE_LIBPCRE' >&2; exit 128; fi; done\nexec '%s' \"$@\"\n", real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	withoutPCRE, ok, err := tree.gitGrep(ctx, words, opts)
	if err != nil || !ok {
		t.Fatalf("gitGrep without PCRE: %v %v", ok, err)
	}
	if !maps.EqualFunc(withoutPCRE, want, slices.Equal) {
		t.Errorf("gitGrep without PCRE = %v\ngit grep -F -w = %v", withoutPCRE, want)
	}
	if _, err := r.fetchGit(ctx, nil, "grep", "-P", "-e", "x", string(head)); err == nil {
		t.Error("the git on PATH runs -P")
	}
}

// A bare repository has no work tree to read: git grep searches it, and
// finds what the in-process search finds.
func TestGrepBare(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.go", "func Send() {}\n")
	g.Write("b.go", "x.Send()\n")
	g.Write("c.py", "Send()\n")
	g.Commit("one")
	bare := filepath.Join(t.TempDir(), "bare.git")
	g.Git("clone", "-q", "--bare", g.Dir, bare)
	r, err := OpenWith(bare, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tree, _ := headTreeOf(t, r)
	ctx := context.Background()
	opts := pack.GrepOptions{Exts: []string{".go"}}
	got, err := tree.Grep(ctx, []string{"Send"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	inProcess, err := tree.grepFiles(ctx, []string{"Send"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.go", "b.go"}; !slices.Equal(got["Send"], want) || !maps.EqualFunc(got, inProcess, slices.Equal) {
		t.Errorf("Grep = %v, in process %v; want Send in %v", got, inProcess, want)
	}
}

// Which words go to git as one Perl pattern: case-sensitive whole words of
// word characters only; anything else keeps -F.
func TestWordPattern(t *testing.T) {
	for _, c := range []struct {
		words []string
		opts  pack.GrepOptions
		want  string
	}{
		{[]string{"send", "x_1"}, pack.GrepOptions{}, "(?<![0-9A-Za-z_])(?:send|x_1)(?![0-9A-Za-z_])"},
		{[]string{"send", "$http"}, pack.GrepOptions{}, ""},
		{[]string{"naïve"}, pack.GrepOptions{}, ""},
		{[]string{"a.b"}, pack.GrepOptions{}, ""},
		{[]string{"(?x)"}, pack.GrepOptions{}, ""},
		{[]string{""}, pack.GrepOptions{}, ""},
		{[]string{"send"}, pack.GrepOptions{IgnoreCase: true}, ""},
		{[]string{"send"}, pack.GrepOptions{Substring: true}, ""},
	} {
		got, ok := wordPattern(c.words, c.opts)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("wordPattern(%q, %+v) = %q, %v; want %q", c.words, c.opts, got, ok, c.want)
		}
	}
}

// A change scope whose changed code or tests call a name worth looking up
// lists the tree ahead of its search; a tree scope, deleted files, prose
// and configuration, generated code, or added lines that call nothing
// (comments, short names) never do.
func TestSearchesTree(t *testing.T) {
	calls := "@@ -1 +1,2 @@\n x := 1\n+y := lookupRow(x)\n"
	for _, c := range []struct {
		changes []pack.Change
		scope   string
		want    bool
	}{
		{[]pack.Change{{Path: "a.go", Status: "modified", Diff: calls}}, policy.ScopeChange, true},
		{[]pack.Change{{Path: "README.md", Status: "added", Diff: calls}, {Path: "x/b.py", Status: "renamed", Diff: calls}}, policy.ScopeChange, true},
		{[]pack.Change{{Path: "test/app.all.js", Status: "modified", Diff: calls}}, policy.ScopeChange, true},
		{[]pack.Change{{Path: "a.go", Status: "modified", Diff: calls}}, policy.ScopeTree, false},
		{[]pack.Change{{Path: "a.go", Status: "deleted", Diff: calls}, {Path: "LICENSE", Status: "modified", Diff: calls}}, policy.ScopeChange, false},
		{[]pack.Change{{Path: "README.md", Status: "modified", Diff: calls}, {Path: ".github/workflows/ci.yml", Status: "modified", Diff: calls}}, policy.ScopeChange, false},
		{[]pack.Change{{Path: "api/v1.pb.go", Status: "modified", Diff: calls}}, policy.ScopeChange, false},
		{[]pack.Change{{Path: "a.go", Status: "modified", Diff: "@@ -1 +1,2 @@\n x := 1\n+// a comment\n+y := f(x)\n-z := lookupRow(x)\n"}}, policy.ScopeChange, false},
		{[]pack.Change{{Path: "a.go", Status: "modified", Diff: "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n" + calls}}, policy.ScopeChange, true},
		{[]pack.Change{{Path: "a.go", Status: "modified", Diff: "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1,2 @@\n x := 1\n+y := f(x) // short\n"}}, policy.ScopeChange, false},
		{nil, policy.ScopeChange, false},
	} {
		if got := searchesTree(c.changes, c.scope); got != c.want {
			t.Errorf("searchesTree(%v, %s) = %v, want %v", c.changes, c.scope, got, c.want)
		}
	}
}

// TestGrepPartialCloneUnreachablePromisor: the files a search reads from
// the object store in one exchange include blobs a partial clone never
// fetched, and its promisor is gone: cat-file dies at the first one, the
// rest are read one by one, and the search leaves out what was not
// fetched instead of failing.
func TestGrepPartialCloneUnreachablePromisor(t *testing.T) {
	origin := gittest.New(t)
	origin.Write("same.go", "func Send() {}\n")
	for _, p := range []string{"a.go", "b.go", "c.go"} {
		origin.Write(p, "x.Send()\n")
	}
	old := origin.Commit("old")
	for _, p := range []string{"a.go", "b.go", "c.go"} {
		origin.Write(p, "nothing\n")
	}
	origin.Commit("new")
	origin.Git("config", "uploadpack.allowFilter", "true")
	origin.Git("config", "uploadpack.allowAnySHA1InWant", "true")
	dir := filepath.Join(t.TempDir(), "partial")
	origin.Git("clone", "-q", "--filter=blob:none", "file://"+origin.Dir, dir)
	if err := os.Rename(origin.Dir, origin.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	r, err := OpenWith(dir, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	c, err := r.commit(ctx, ObjectID(old))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.headTree(c).grepFiles(ctx, []string{"Send"}, pack.GrepOptions{Exts: []string{".go"}})
	if err != nil {
		t.Fatalf("the search failed on blobs it could not fetch: %v", err)
	}
	if want := []string{"same.go"}; !slices.Equal(got["Send"], want) {
		t.Fatalf("Send in %v, want %v (the old versions of a, b and c were never fetched)", got["Send"], want)
	}
}

// TestGrepKeepsWhatItFound: a file the search found a word in is read
// next (the relations read the callers and callees it found) from what
// the search read, as committed, not again from the object store or the
// work tree; a file it found nothing in is read as before.
func TestGrepKeepsWhatItFound(t *testing.T) {
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("stored.js", "send(a)\n")
			g.Write("worktree.js", "send(b)\n")
			g.Write("none.js", "nothing\n")
			g.Commit("init")
			g.Write("stored.js", "changed in the work tree\n") // searched as committed, from the store
			g.Write("none.js", "changed too\n")
			r, counter := openCounted(t, g.Dir, backendName)
			tree, _ := headTreeOf(t, r)
			ctx := context.Background()
			hits, err := tree.Grep(ctx, []string{"send"}, pack.GrepOptions{Exts: []string{".js"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := hits["send"]; !slices.Equal(got, []string{"stored.js", "worktree.js"}) {
				t.Fatalf("send found in %v", got)
			}
			clear(counter.blobs)
			for p, want := range map[string]string{"stored.js": "send(a)\n", "worktree.js": "send(b)\n", "none.js": "nothing\n"} {
				f, ok, err := tree.File(ctx, p)
				if err != nil || !ok {
					t.Fatalf("%s: %v %v", p, ok, err)
				}
				data, err := f.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if string(data) != want {
					t.Errorf("%s reads %q, want %q as committed", p, data, want)
				}
				wantStore := 0
				if p == "none.js" {
					wantStore = 1 // not kept: its work tree copy differs
				}
				if n := counter.blobs[ObjectID(f.Blob)]; n != wantStore {
					t.Errorf("%s: %d reads from the object store, want %d", p, n, wantStore)
				}
			}
		})
	}
}

// TestGrepStoredErrorIsTheFirst: of the files the search reads from the
// object store, however their reads interleave with the work tree's, the
// one an error names is the first in the tree's order that could not be
// read, on every run and with either backend.
func TestGrepStoredErrorIsTheFirst(t *testing.T) {
	for _, backendName := range []string{BackendGoGit, BackendCLI} {
		t.Run(backendName, func(t *testing.T) {
			g := gittest.New(t)
			names := []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go"}
			for _, p := range names {
				g.Write(p, "x.Send() // "+p+"\n")
			}
			g.Commit("init")
			for _, p := range names[:5] { // f.go is read from the work tree
				g.Write(p, "changed in the work tree\n")
			}
			for _, p := range []string{"b.go", "d.go"} {
				id := g.Git("rev-parse", "HEAD:"+p)
				if err := os.Remove(filepath.Join(g.Dir, ".git", "objects", id[:2], id[2:])); err != nil {
					t.Fatal(err)
				}
			}
			r, err := OpenWith(g.Dir, OpenOptions{Backend: backendName})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			tree, _ := headTreeOf(t, r)
			for range 5 {
				_, err := tree.grepFiles(context.Background(), []string{"Send"}, pack.GrepOptions{Exts: []string{".go"}})
				if err == nil || !strings.Contains(err.Error(), "b.go") || strings.Contains(err.Error(), "d.go") {
					t.Fatalf("error %v, want b.go's", err)
				}
			}
		})
	}
}
