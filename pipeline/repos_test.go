package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/transparency"
)

// Packs of every kind of repository git opens: the work tree, a commit and a
// range, each built, audited (schema, digests, blobs against the
// repository) and audited again from the file with the repository at hand.

// history is a base commit and two changes on top.
func history(g *gittest.Repo) (base string) {
	g.Write("README.md", "# demo\n")
	g.Write("go.mod", "module example.com/demo\n")
	g.Write("app/main.go", "package main\n\nfunc main() {}\n")
	g.Write("lib/util.go", "package lib\n\nfunc Util() int { return 1 }\n")
	g.Write("docs/notes.md", "# notes\n")
	base = g.Commit("base")
	g.Write("app/main.go", "package main\n\nfunc main() { run() }\n\nfunc run() {}\n")
	g.Commit("one")
	g.Write("lib/util.go", "package lib\n\nfunc Util() int { return 2 }\n")
	g.Write("docs/notes.md", "# notes\n\nmore\n")
	g.Commit("two")
	return base
}

type repoKind struct {
	name    string
	backend string // the backend Open must choose
	// make builds the repository and returns the directory to pack and the
	// base commit of the range.
	make func(t *testing.T) (dir, base string)
}

func repoKinds() []repoKind {
	origin := func(t *testing.T) (*gittest.Repo, string) {
		g := gittest.New(t)
		base := history(g)
		g.Git("config", "uploadpack.allowFilter", "true")
		g.Git("config", "uploadpack.allowAnySHA1InWant", "true")
		return g, base
	}
	clone := func(t *testing.T, g *gittest.Repo, args ...string) *gittest.Repo {
		dir := filepath.Join(t.TempDir(), "clone")
		g.Git(append(append([]string{"clone", "-q"}, args...), "file://"+g.Dir, dir)...)
		return g.At(dir)
	}
	return []repoKind{
		{"sparse cone", source.BackendCLI, func(t *testing.T) (string, string) {
			g, base := origin(t)
			c := clone(t, g)
			c.Git("sparse-checkout", "set", "app")
			return c.Dir, base
		}},
		{"sparse non-cone", source.BackendCLI, func(t *testing.T) (string, string) {
			g, base := origin(t)
			c := clone(t, g)
			c.Git("sparse-checkout", "set", "--no-cone", "/app/", "/*.md", "/go.mod")
			return c.Dir, base
		}},
		{"partial clone", source.BackendCLI, func(t *testing.T) (string, string) {
			g, base := origin(t)
			return clone(t, g, "--filter=blob:none").Dir, base
		}},
		{"sparse partial clone", source.BackendCLI, func(t *testing.T) (string, string) {
			g, base := origin(t)
			c := clone(t, g, "--filter=blob:none", "--sparse")
			c.Git("sparse-checkout", "set", "app")
			return c.Dir, base
		}},
		{"sha256", source.BackendCLI, func(t *testing.T) (string, string) {
			g := gittest.NewWith(t, "--object-format=sha256")
			return g.Dir, history(g)
		}},
		{"linked worktree", source.BackendGoGit, func(t *testing.T) (string, string) {
			g := gittest.New(t)
			base := history(g)
			wt := filepath.Join(t.TempDir(), "wt")
			g.Git("worktree", "add", "-q", "-b", "feature", wt)
			w := g.At(wt)
			w.Write("lib/util.go", "package lib\n\nfunc Util() int { return 3 }\n")
			w.Commit("three")
			return wt, base
		}},
		{"hooksPath and includeIf", source.BackendGoGit, func(t *testing.T) (string, string) {
			g := gittest.New(t)
			inc := filepath.Join(t.TempDir(), "inc.gitconfig")
			if err := os.WriteFile(inc, []byte("[core]\n\thooksPath = .githooks\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			g.Git("config", "core.hooksPath", "hooks-local")
			g.Git("config", "includeIf.gitdir:"+g.Dir+"/.path", inc)
			return g.Dir, history(g)
		}},
	}
}

func TestPackEveryKindOfRepository(t *testing.T) {
	ctx := context.Background()
	for _, kind := range repoKinds() {
		t.Run(kind.name, func(t *testing.T) {
			dir, base := kind.make(t)
			repo, err := source.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if repo.Backend() != kind.backend && os.Getenv(source.BackendEnv) == "" {
				t.Fatalf("opened with %s, want %s", repo.Backend(), kind.backend)
			}
			repo.Close()
			// An uncommitted edit inside the sparse set (app/ is in every one).
			if err := os.WriteFile(filepath.Join(dir, "app", "main.go"), []byte("package main\n\nfunc main() { run(); run() }\n\nfunc run() {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				opts PackOptions
			}{
				{"worktree", PackOptions{Dir: dir, Type: "full"}},
				{"commit", PackOptions{Dir: dir, Commit: "HEAD", Type: "full", Scope: "tree"}},
				{"range", PackOptions{Dir: dir, Base: base, Head: "HEAD", Type: "full"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					run, err := Execute(ctx, tc.opts)
					if err != nil {
						t.Fatal(err)
					}
					defer run.Close()
					if run.Verdict.Status != audit.StatusPass {
						t.Fatalf("verdict %s: %+v", run.Verdict.Status, run.Verdict.Failed)
					}
					p := run.Result.Pack
					if kind.name == "sha256" && (len(p.Source.Head) != 64 || !strings.Contains(string(run.Result.JSON), `"blob":"`)) {
						t.Fatalf("source %+v", p.Source)
					}
					for _, it := range append(append([]pack.Item{}, p.KeyFiles...), p.Contents...) {
						if want := 40; kind.name == "sha256" {
							if len(it.Blob) != 64 {
								t.Fatalf("%s: blob %s", it.Path, it.Blob)
							}
						} else if it.Blob != "" && len(it.Blob) != want {
							t.Fatalf("%s: blob %s", it.Path, it.Blob)
						}
					}
					if tc.name == "worktree" && strings.HasPrefix(kind.name, "sparse") {
						found := false
						for _, e := range p.FileIndex {
							if e.Path == "lib/util.go" {
								found = e.ExclusionReason == pack.ReasonNotCheckedOut
							}
						}
						if !found {
							t.Fatalf("lib/util.go is not listed as not_checked_out: %+v", p.FileIndex)
						}
					}
					// The pack audits clean from the file, against the repository.
					v, err := Audit(ctx, AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: dir})
					if err != nil || v.Status != audit.StatusPass {
						t.Fatalf("audit of the pack file: %+v %v", v, err)
					}
				})
			}
		})
	}
}

// TestNotesThroughTheCLI chains records in a repository only git reads.
func TestNotesThroughTheCLI(t *testing.T) {
	g := gittest.NewWith(t, "--object-format=sha256")
	history(g)
	ctx := context.Background()
	first, err := Execute(ctx, PackOptions{Dir: g.Dir, Commit: "HEAD~1"})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := first.WriteNote(); err != nil {
		t.Fatal(err)
	}
	if note := g.Git("notes", "--ref", "ctxpack", "show", "HEAD~1"); note != strings.TrimSpace(string(first.RecordJSON)) {
		t.Fatalf("note %q", note)
	}
	if err := first.WriteNote(); err != nil { // the same note again: no new notes commit
		t.Fatal(err)
	}
	if n := g.Git("rev-list", "--count", "refs/notes/ctxpack"); n != "1" {
		t.Fatalf("%s notes commits", n)
	}
	second, err := Execute(ctx, PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if second.Record.Previous == "" || second.Record.Previous != transparency.DigestOf(first.RecordJSON) {
		t.Fatalf("previous %q", second.Record.Previous)
	}
}

// TestUnreachablePromisorFailsTheVerdict packs a partial clone whose
// promisor remote is gone: what cannot be read is excluded as not_fetched,
// and a changed file that cannot be read fails the verdict.
func TestUnreachablePromisorFailsTheVerdict(t *testing.T) {
	g := gittest.New(t)
	history(g)
	g.Git("config", "uploadpack.allowFilter", "true")
	dir := filepath.Join(t.TempDir(), "partial")
	g.Git("clone", "-q", "--filter=blob:none", "file://"+g.Dir, dir)
	if err := os.Rename(g.Dir, g.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// HEAD~1's tree: lib/util.go and docs/notes.md are at their base
	// versions, which the clone never fetched.
	run, err := Execute(ctx, PackOptions{Dir: dir, Commit: "HEAD~1", Scope: "tree", Type: "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	reasons := map[string]pack.Reason{}
	for _, e := range run.Result.Pack.FileIndex {
		reasons[e.Path] = e.ExclusionReason
	}
	if reasons["lib/util.go"] != pack.ReasonNotFetched || reasons["app/main.go"] != "" {
		t.Fatalf("file index %+v", run.Result.Pack.FileIndex)
	}
	// HEAD: lib/util.go changed, and its base version cannot be read.
	run, err = Execute(ctx, PackOptions{Dir: dir, Commit: "HEAD", Type: "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if run.Verdict.Status != audit.StatusFail {
		t.Fatal("the verdict passed with unreadable changes")
	}
	var unavailable, history []string
	for _, c := range run.Verdict.Failed {
		switch c.Code {
		case audit.CodeContentUnavailable:
			unavailable = append(unavailable, c.Details["path"].(string))
		case audit.CodeHistoryUnavailable:
			history = append(history, c.Message)
		case audit.CodeInternal:
			t.Fatalf("an unreachable promisor is an internal error: %+v", c)
		}
	}
	if strings.Join(unavailable, " ") != "docs/notes.md lib/util.go" {
		t.Fatalf("content_unavailable for %v: %+v", unavailable, run.Verdict.Failed)
	}
	if len(history) != 1 || !strings.Contains(history[0], "lib/util.go in commit") || !strings.Contains(history[0], "promisor remote reachable") {
		t.Fatalf("history scan: %v", history)
	}
	// secrets.history_unavailable: warn reports the history scan as
	// skipped; the unreadable changes still fail the verdict.
	polFile := filepath.Join(t.TempDir(), "policy.yml")
	if err := os.WriteFile(polFile, []byte("secrets:\n  history_unavailable: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	warned, err := Execute(ctx, PackOptions{Dir: dir, Commit: "HEAD", Type: "full", PolicyFile: polFile})
	if err != nil {
		t.Fatal(err)
	}
	defer warned.Close()
	var skipped []string
	for _, c := range warned.Verdict.Skipped {
		skipped = append(skipped, c.Code)
	}
	for _, c := range warned.Verdict.Failed {
		if c.Code == audit.CodeHistoryUnavailable {
			t.Fatalf("history_unavailable: warn still fails the history scan: %+v", c)
		}
	}
	if warned.Verdict.Status != audit.StatusFail || !slices.Contains(skipped, audit.CodeHistoryUnavailable) {
		t.Fatalf("with history_unavailable: warn: status %s, skipped %v", warned.Verdict.Status, skipped)
	}
	for _, c := range run.Result.Pack.Changes {
		if c.DiffWithheld != pack.ReasonNotFetched || c.Diff != "" {
			t.Fatalf("change %+v", c)
		}
	}
}
