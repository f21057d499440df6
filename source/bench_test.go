package source

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

// benchRepo is a repository of files files in directories of 100, then
// commits small commits of 3 changed files each (git fast-import).
func benchRepo(b *testing.B, files, commits int) *gittest.Repo {
	b.Helper()
	g := gittest.New(b)
	var s strings.Builder
	mark := 0
	blob := func(content string) int {
		mark++
		fmt.Fprintf(&s, "blob\nmark :%d\ndata %d\n%s\n", mark, len(content), content)
		return mark
	}
	path := func(i int) string { return fmt.Sprintf("d%d/s%02d/f%d.go", i/10000, i/100%100, i) }
	marks := make([]int, files)
	for i := range files {
		marks[i] = blob(fmt.Sprintf("package s%d\n\n// F%d is generated.\nfunc F%d() int { return %d }\n", i/100, i, i, i))
	}
	commit := func(n int, ops string) { // fast-import chains commits on a branch
		msg := fmt.Sprintf("commit %d\n", n)
		fmt.Fprintf(&s, "commit refs/heads/main\ncommitter B <b@example.com> %d +0000\ndata %d\n%s%s\n", 1700000000+n*60, len(msg), msg, ops)
	}
	var ops strings.Builder
	for i := range files {
		fmt.Fprintf(&ops, "M 100644 :%d %s\n", marks[i], path(i))
	}
	commit(0, ops.String())
	for c := 1; c <= commits; c++ {
		ops.Reset()
		for k := range 3 {
			i := (c*3 + k) * 7919 % files
			m := blob(fmt.Sprintf("package s%d\n\n// F%d, edited by commit %d.\nfunc F%d() int { return %d }\n", i/100, i, c, i, c))
			fmt.Fprintf(&ops, "M 100644 :%d %s\n", m, path(i))
		}
		commit(c, ops.String())
	}
	if out, err := g.TryGitStdin(s.String(), "fast-import", "--quiet"); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	g.Git("reset", "-q", "--hard", "main")
	g.Git("gc", "-q")
	return g
}

// BenchmarkSnapshots times the snapshots with each backend, and with the
// automatic choice, on a 10,000-file repository with 2,000 commits of
// history: a 3-commit range, one commit, the work tree.
func BenchmarkSnapshots(b *testing.B) {
	g := benchRepo(b, 10000, 2000)
	ctx := context.Background()
	for _, backend := range []string{BackendGoGit, BackendCLI, BackendAuto} {
		for _, tc := range []struct {
			name string
			snap func(r *Repo) error
		}{
			{"range", func(r *Repo) error { _, err := r.Range(ctx, "HEAD~3", "HEAD", policy.ScopeChange); return err }},
			{"commit", func(r *Repo) error { _, err := r.Commit(ctx, "HEAD", policy.ScopeChange); return err }},
			{"worktree", func(r *Repo) error { _, err := r.Worktree(ctx); return err }},
		} {
			name := backend
			if name == BackendAuto {
				name = "auto"
			}
			b.Run(name+"/"+tc.name, func(b *testing.B) {
				for b.Loop() {
					r, err := OpenWith(g.Dir, OpenOptions{Backend: backend})
					if err != nil {
						b.Fatal(err)
					}
					if err := tc.snap(r); err != nil {
						b.Fatal(err)
					}
					r.Close()
				}
			})
		}
	}
}
