package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// TestSecretInRefNeverLeaves: a branch named by a secret, and a repository
// named by one, leave only redacted, in every output and every secrets
// action; the finding is a source event, and a fail action fails.
func TestSecretInRefNeverLeaves(t *testing.T) {
	f := secrettest.Make(707)
	g := gittest.New(t)
	g.Write("main.go", "package main\n")
	base := g.Commit("base")
	branch := "feat/" + f.GitHub
	g.Git("checkout", "-q", "-b", branch)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Commit("main")
	secrets := []string{f.GitHub, f.AWSKeyID}

	for _, action := range []string{"redact", "exclude", "fail"} {
		for _, opts := range []PackOptions{{}, {Commit: "HEAD"}, {Base: base, Head: branch}} {
			opts.Dir, opts.SecretsAction, opts.Repository = g.Dir, action, "acme/"+f.AWSKeyID
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for where, data := range outputs(t, run) {
				assertNoFragment(t, action+" "+where, data, secrets)
			}
			src := run.Result.Pack.Source
			if want := "feat/[REDACTED:github-pat]"; src.Ref != want && opts.Commit == "" {
				t.Errorf("%s %+v: ref %q, want %q", action, opts, src.Ref, want)
			}
			if !strings.Contains(src.Repository, "[REDACTED:aws-access-token]") {
				t.Errorf("%s %+v: repository %q is not redacted", action, opts, src.Repository)
			}
			rules := map[string]bool{}
			for _, e := range run.Result.Secrets {
				if e.Where == pack.WhereSource {
					rules[e.RuleID] = true
				}
			}
			if !rules["aws-access-token"] || (opts.Commit == "" && !rules["github-pat"]) {
				t.Errorf("%s %+v: source findings %v", action, opts, rules)
			}
			if failed := run.Verdict.Status == audit.StatusFail; failed != (action == "fail") {
				t.Errorf("%s %+v: verdict %s: %+v", action, opts, run.Verdict.Status, run.Verdict.Failed)
			}
		}
	}
}
