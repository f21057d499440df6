package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/source"
)

// TestWorktreeLineEndings: a file git checks out with CRLF line ends
// (eol=crlf) is clean in the index with other bytes than its blob. A
// work-tree pack of it, with either backend, sends the blob git holds (LF)
// under that blob's id, lists no change, and passes its audit, which
// re-derives every blob id from what the repository state reads. Before,
// both listings sent the CRLF bytes under the LF blob's id (the audit
// failed: blob_mismatch); go-git's, before it took any entry as clean,
// hashed them into a change the work tree does not have.
func TestWorktreeLineEndings(t *testing.T) {
	g := gittest.New(t)
	g.Write(".gitattributes", "*.txt text eol=crlf\n")
	g.Write("notes.txt", "first line\nsecond line\n")
	g.Commit("init")
	// Checked out again: the work tree's file now has CRLF line ends.
	if err := os.Remove(filepath.Join(g.Dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	g.Git("checkout", "--", "notes.txt")
	disk, err := os.ReadFile(filepath.Join(g.Dir, "notes.txt"))
	if err != nil || string(disk) != "first line\r\nsecond line\r\n" {
		t.Fatalf("checked out %q, %v: want CRLF line ends", disk, err)
	}
	g.Git("update-index", "--refresh")
	withEachBackend(t, g.Dir, func(t *testing.T, run *Run) {
		if n := len(run.Result.Pack.Changes); n != 0 || run.Result.Pack.Source.Dirty {
			t.Errorf("%d changes, dirty %v: the work tree is clean", n, run.Result.Pack.Source.Dirty)
		}
		blob := g.Git("rev-parse", "HEAD:notes.txt")
		found := false
		for _, it := range run.Result.Pack.Contents {
			if it.Path == "notes.txt" {
				found = true
				if it.Content != "first line\nsecond line\n" || it.Blob != blob {
					t.Errorf("notes.txt sent as %q (blob %s), want the blob %s as git holds it", it.Content, it.Blob, blob)
				}
			}
		}
		if !found {
			t.Error("notes.txt is not in the pack")
		}
	})
}

// TestWorktreeLineEndingsStaged: a staged edit of a file git converts on
// checkout (CRLF in the work tree, LF in the blob the index names) is
// diffed as the blob: its diff's lines are the blob's, without the CR the
// work tree's bytes carry, with either backend.
func TestWorktreeLineEndingsStaged(t *testing.T) {
	g := gittest.New(t)
	g.Write(".gitattributes", "*.txt text eol=crlf\n")
	g.Write("notes.txt", "first line\nsecond line\n")
	g.Commit("init")
	g.Write("notes.txt", "first line\r\nsecond line\r\nthird line\r\n")
	g.Git("add", "notes.txt")
	g.Git("update-index", "--refresh")
	withEachBackend(t, g.Dir, func(t *testing.T, run *Run) {
		var diff string
		for _, c := range run.Result.Pack.Changes {
			if c.Path == "notes.txt" {
				diff = c.Diff
			}
		}
		if !strings.Contains(diff, "+third line\n") || strings.Contains(diff, "\r") {
			t.Errorf("notes.txt diffed as %q, want the blob's lines (+third line, no CR)", diff)
		}
	})
}

// withEachBackend packs dir's work tree (--type full) with each backend, a
// subtest each, and hands check the run, whose verdict must pass.
func withEachBackend(t *testing.T, dir string, check func(t *testing.T, run *Run)) {
	for _, backend := range []string{source.BackendGoGit, source.BackendCLI} {
		t.Run(backend, func(t *testing.T) {
			t.Setenv(source.BackendEnv, backend)
			run, err := Execute(context.Background(), PackOptions{Dir: dir, Type: "full"})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			if run.Verdict.Status != audit.StatusPass {
				t.Fatalf("verdict %s: %+v", run.Verdict.Status, run.Verdict.Failed)
			}
			check(t, run)
		})
	}
}
