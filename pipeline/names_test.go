package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/source"
)

// hostileNames are names git accepts that once failed ctxpack's own audit:
// a newline (the id pattern), Latin-1 and invalid UTF-8 (blob_mismatch,
// change_unaccounted), a terminal escape, a workflow command, and a name
// that literally reads like an escape.
var hostileNames = []string{"new\nline.txt", "caf\xe9.txt", "bad\xff\xfe.go", "esc\x1b[31m.txt", "::warning::pwned.txt", `lit\xe9.txt`, "sub/d\xe9j\xe0/x.go"}

// TestNamesGitAcceptsPackAndAudit: every pack of a change touching such
// names validates, audits clean against the repository (commit, range,
// work tree, push), and each name in the pack decodes to the name git holds.
func TestNamesGitAcceptsPackAndAudit(t *testing.T) {
	g := gittest.New(t)
	g.Write("README.md", "# names\n")
	base := g.Commit("base")
	for i, n := range hostileNames {
		g.Write(n, strings.Repeat("line\n", i+1))
	}
	g.Commit("names")
	listed := strings.Split(strings.TrimRight(g.Git("ls-files", "-z"), "\x00"), "\x00")

	repo, err := source.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	pusher, err := NewPusher(repo, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Resolve("HEAD")
	pushed, err := pusher.Run(context.Background(), PushTarget{Head: head, Known: []source.ObjectID{source.ObjectID(base)}, Ref: "refs/heads/main"})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]*Run{"push": pushed.Run}
	for name, opts := range map[string]PackOptions{
		"commit":   {Dir: g.Dir, Commit: "HEAD"},
		"range":    {Dir: g.Dir, Base: base, Head: "HEAD"},
		"worktree": {Dir: g.Dir},
		"tree":     {Dir: g.Dir, Commit: "HEAD", Scope: "tree"},
	} {
		run, err := Execute(context.Background(), opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runs[name] = run
	}
	for name, run := range runs {
		if err := schema.ValidatePack(run.Result.JSON); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !utf8.Valid(run.Result.JSON) || strings.Contains(string(run.Result.JSON), `\ufffd`) {
			t.Fatalf("%s: a name collapsed into U+FFFD", name)
		}
		if run.Verdict.Status != audit.StatusPass {
			t.Fatalf("%s: verdict %+v", name, run.Verdict.Failed)
		}
		v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
		if err != nil || v.Status != audit.StatusPass {
			t.Fatalf("%s: audit %v %+v", name, err, v)
		}
		for _, e := range run.Result.Pack.FileIndex {
			if raw := source.RawPath(e.Path); !slices.Contains(listed, raw) {
				t.Errorf("%s: %q decodes to %q, which git does not list", name, e.Path, raw)
			}
		}
		if n := len(run.Result.Pack.FileIndex); n != len(listed) {
			t.Errorf("%s: %d index entries for %d files", name, n, len(listed))
		}
	}
}
