package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

// jsonDepth is the deepest nesting of objects and arrays in a JSON text.
func jsonDepth(t *testing.T, data []byte) int {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return deepest
}

// TestDeepPathPacksAndAudits: a commit with a file 5,000 directories deep
// (a path no work tree can hold: it is built with git plumbing) packs as a
// whole-tree pack of bounded size and nesting, and ctxpack's own audit,
// which re-derives everything from the repository, passes it.
func TestDeepPathPacksAndAudits(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Commit("base")
	// Under the race detector, 2,500 (still a path twice PATH_MAX): the
	// cost grows with the square of the depth.
	depth := 5000
	if raceEnabled {
		depth = 2500
	}
	deep := strings.Repeat("d/", depth) + "deep.go"
	// fast-import writes the 5,000 trees as one pack: loose objects would
	// take the test's time in fsyncs.
	ref, head := g.Git("symbolic-ref", "HEAD"), g.Git("rev-parse", "HEAD")
	script := "commit " + ref + "\ncommitter T <t@example.com> 1700000100 +0000\ndata 4\ndeep\nfrom " + head +
		"\nM 100644 inline " + deep + "\ndata 13\npackage deep\n\n"
	if _, err := g.TryGitStdin(script, "fast-import", "--quiet"); err != nil {
		t.Fatal(err)
	}
	g.Git("reset", "-q", "--soft", "HEAD")

	tests := []struct {
		name     string
		opts     PackOptions
		wantTree bool
	}{
		{"change pack", PackOptions{Dir: g.Dir, Commit: "HEAD"}, false},
		{"whole-tree summary", PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: policy.ScopeTree, Type: policy.TypeSummary}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := Execute(context.Background(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict.Status != audit.StatusPass {
				t.Fatalf("build verdict = %+v", run.Verdict)
			}
			p := run.Result.Pack
			if tree := p.Metadata.DirectoryTree; (tree != nil) != tt.wantTree {
				t.Fatalf("directory tree %v, want %v", tree != nil, tt.wantTree)
			}
			if d := jsonDepth(t, run.Result.JSON); d > 40 {
				t.Fatalf("the pack nests %d levels", d)
			}
			if n := len(run.Result.JSON); n > 200_000 {
				t.Fatalf("the pack is %d bytes", n)
			}
			if tt.wantTree && p.Metadata.Totals.Directories != depth {
				t.Fatalf("directories = %d, want %d", p.Metadata.Totals.Directories, depth)
			}
			listed := false
			for _, e := range p.FileIndex {
				listed = listed || e.Path == deep
			}
			if !listed {
				t.Fatal("the deep file is not in the file index")
			}
			v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != audit.StatusPass {
				t.Fatalf("audit = %s: %+v", codes(v.Failed), v.Failed)
			}
		})
	}
}
