package source

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestHeadTreeDir lists directories of a commit's tree in any order: each
// directory's tree is remembered, and a lookup starts from the nearest
// directory already looked up, so the answers must not depend on the order.
func TestHeadTreeDir(t *testing.T) {
	g := gittest.New(t)
	g.Write("top.go", "package top\n")
	g.Write("a/b/c/d.go", "package c\n")
	g.Write("a/b/c/e.go", "package c\n")
	g.Write("a/b/f.go", "package b\n")
	g.Write("a/x/y.go", "package x\n")
	g.Commit("tree")
	snap, err := open(t, g.Dir).Commit(context.Background(), "HEAD", "change")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, want string }{
		{"a/b/c", "a/b/c/d.go a/b/c/e.go"}, // deepest first: nothing known yet
		{"a/b", "a/b/f.go"},
		{"", "top.go"},
		{"a", ""},
		{"a/x", "a/x/y.go"},
		{"a/b/c/d.go", ""}, // a file, not a directory
		{"a/nope/deeper", ""},
		{"a/b/c", "a/b/c/d.go a/b/c/e.go"}, // again, from memory
	}
	for _, tt := range tests {
		got, err := snap.Tree.Dir(context.Background(), tt.dir)
		if err != nil {
			t.Fatalf("Dir(%q): %v", tt.dir, err)
		}
		if s := strings.Join(got, " "); s != tt.want {
			t.Errorf("Dir(%q) = %q, want %q", tt.dir, s, tt.want)
		}
	}
}

// LinesWith finds the same lines through git grep and through the
// repository reader (no git on PATH), at the commit asked for.
func TestLinesWith(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.go", "package a\n\nx := 1 // gitleaks:allow\n")
	g.Write("dir/b.txt", "one gitleaks:allow\r\ntwo\nthree gitleaks:allow\n")
	g.WriteBytes("bin.dat", []byte("gitleaks:allow\x00binary"))
	g.Write("c.txt", "nothing here\n")
	first := g.Commit("one")
	g.Write("a.go", "package a\n")
	g.Commit("two")
	r, err := Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[string][]string{
		"a.go":      {"x := 1 // gitleaks:allow"},
		"dir/b.txt": {"one gitleaks:allow", "three gitleaks:allow"},
	}
	ctx := context.Background()
	viaGit, err := r.LinesWith(ctx, first, "gitleaks:allow")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	viaReader, err := r.LinesWith(ctx, first, "gitleaks:allow")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaGit, want) {
		t.Errorf("git grep: %q, want %q", viaGit, want)
	}
	if !reflect.DeepEqual(viaReader, want) {
		t.Errorf("reader: %q, want %q", viaReader, want)
	}
	if none, err := r.LinesWith(ctx, "", "gitleaks:allow"); err != nil || len(none) != 0 {
		t.Errorf("no commit: %v %v", none, err)
	}
}
