package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
)

// manyHunkRepo has a last commit of many hunks in many files: its change
// pack's listing alone is over a small token limit.
func manyHunkRepo(t *testing.T) *gittest.Repo {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/many\n")
	g.Write("README.md", "# many\n\nMany packages, each with a handful of functions.\n")
	body := func(i, v int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%02d\n", i)
		for f := range 4 {
			fmt.Fprintf(&b, "\n// F%d returns a number.\nfunc F%d() int {\n\tx := %d\n\ty := x * 2\n\tz := y + 1\n\treturn z\n}\n", f, f, v*100+f)
		}
		return b.String()
	}
	for i := range 12 {
		g.Write(fmt.Sprintf("p%02d/p.go", i), body(i, 1))
	}
	g.Commit("base")
	for i := range 12 {
		g.Write(fmt.Sprintf("p%02d/p.go", i), body(i, 2))
	}
	g.Commit("renumber every function")
	return g
}

// An explicit limits.max_tokens (or --max-tokens) binds every pack the
// builder makes, Full or Summary, with changes or without: the pack fits
// it, says so in budget.max_tokens, and the audit passes it.
func TestExplicitTokenLimitBindsEveryPack(t *testing.T) {
	g := manyHunkRepo(t)
	const limit = 1500
	for _, c := range []struct {
		name, commit, typ, wantType string
	}{
		{"change, auto", "HEAD", "", "summary"},
		{"change, summary", "HEAD", "summary", "summary"},
		{"tree, full", "", "full", "full"},
		{"tree, summary", "", "summary", "summary"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: c.commit, Type: c.typ, MaxTokens: limit})
			if err != nil {
				t.Fatal(err)
			}
			p := run.Result.Pack
			tokens, err := pack.CountTokens(string(run.Result.JSON))
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != c.wantType || tokens > limit || p.Budget.MaxTokens != limit {
				t.Fatalf("type %s (%s), %d tokens, budget %+v", p.Type, p.Metadata.SelectionReason, tokens, p.Budget)
			}
			if run.Verdict.Status != audit.StatusPass {
				t.Fatalf("verdict = %s", codes(run.Verdict.Failed))
			}
		})
	}
	// Too small for even the listing: an error that names the limit.
	if _, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD", MaxTokens: 300}); err == nil || !strings.Contains(err.Error(), "max_tokens 300") {
		t.Fatalf("err = %v", err)
	}
}

// The audit checks an explicit max_tokens whatever the pack's type.
func TestAuditChecksMaxTokensOfEveryPack(t *testing.T) {
	g := manyHunkRepo(t)
	pol := filepath.Join(t.TempDir(), "policy.yml")
	if err := os.WriteFile(pol, []byte("limits:\n  max_tokens: 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"summary", "full"} {
		for _, commit := range []string{"HEAD", ""} {
			run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: commit, Type: typ})
			if err != nil {
				t.Fatal(err)
			}
			v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir, PolicyFile: pol})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != audit.StatusFail || !strings.Contains(codes(v.Failed), audit.CodeOverLimit) {
				t.Errorf("%s pack of %q (%d tokens) against max_tokens 1000: %s", typ, commit, run.Result.Pack.Budget.EstimatedTokens, codes(v.Failed))
			}
		}
	}
}

// A pack under an explicit limit fits it as written, pack id and counts
// included, at every limit near its size: the audit counts those bytes.
func TestChangePackFitsItsLimitAsWritten(t *testing.T) {
	g := manyHunkRepo(t)
	step := 5
	if raceEnabled {
		step = 15
	}
	for _, c := range []struct {
		typ      string
		from, to int
	}{{"full", 3600, 3700}, {"summary", 1400, 1500}} {
		for limit := c.from; limit <= c.to; limit += step {
			checkFitsAsWritten(t, g, c.typ, limit)
		}
	}
}

func checkFitsAsWritten(t *testing.T, g *gittest.Repo, typ string, limit int) {
	t.Helper()
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD", Type: typ, MaxTokens: limit})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := pack.CountTokens(string(run.Result.JSON))
	if err != nil {
		t.Fatal(err)
	}
	if tokens > limit || run.Verdict.Status != audit.StatusPass {
		t.Fatalf("%s, max_tokens %d: %d tokens as written, verdict %s", typ, limit, tokens, codes(run.Verdict.Failed))
	}
}
