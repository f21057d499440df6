package source

import (
	"context"
	"reflect"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

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
