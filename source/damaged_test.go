package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

// corruptLoose overwrites the loose object id of r with bytes that do not
// inflate.
func corruptLoose(t *testing.T, r *gittest.Repo, id string) {
	t.Helper()
	f := filepath.Join(r.Dir, ".git", "objects", id[:2], id[2:])
	if err := os.Chmod(f, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("not zlib at all"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A damaged object is reported as damaged by both backends, naming the
// file and the commit, and saying what to do; never as missing.
func TestDamagedObject(t *testing.T) {
	r := gittest.New(t)
	r.Write("a/a.go", "package a\n")
	r.Commit("one")
	r.Write("b/b.go", "package b\n\nconst B = 1\n")
	head := r.Commit("two")
	blob := r.Git("rev-parse", "HEAD:b/b.go")
	corruptLoose(t, r, blob)
	for name, repo := range openEach(t, r.Dir) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			snap, err := repo.Commit(ctx, "HEAD", policy.ScopeTree)
			if err == nil { // a backend that lists before it reads
				for _, f := range snap.Files {
					if f.Path == "b/b.go" {
						_, err = f.Read(ctx)
					}
				}
			}
			if err == nil {
				t.Fatal("a damaged blob was read")
			}
			msg := err.Error()
			for _, want := range []string{"b/b.go", head[:12], blob, "damaged", "git fsck", "clone"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "not in the repository") {
				t.Errorf("a damaged object called missing: %q", msg)
			}
			if _, err := repo.ReadBlob(ctx, ObjectID(blob)); err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "git fsck") {
				t.Errorf("ReadBlob: %v", err)
			}
		})
	}
}
