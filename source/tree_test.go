package source

import (
	"context"
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
