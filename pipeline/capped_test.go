package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// keyBody is a private key's base64 lines, without its BEGIN and END lines:
// the part a leak of a cut key shows.
func keyBody(key string) string {
	lines := strings.Split(key, "\n")
	return strings.Join(lines[1:len(lines)-1], "\n")
}

// TestCappedIntentNeverLeaves: a secret that a cap of the intent cuts (a
// token at the end of a long commit subject, goal, task or pull request
// title; a private key whose END line falls past a body's cap) is redacted
// before the cap, in every secrets action, and no part of it is in
// anything the run lets out.
func TestCappedIntentNeverLeaves(t *testing.T) {
	f := secrettest.Make(611)
	key := strings.Repeat("x", 700) + "\n" + f.RSAKey // its END line past the cap of 1,200
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Commit("base")
	g.Write("main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	g.Commit(strings.Repeat("a", 180) + " " + f.GitHub + "\n\ndeploy key:\n" + key)
	secrets := []string{f.GitHub, keyBody(f.RSAKey)}
	for _, action := range []string{"redact", "exclude", "fail"} {
		for _, opts := range []PackOptions{
			{Commit: "HEAD"},
			{
				Commit: "HEAD",
				Goal:   strings.Repeat("b", 590) + " " + f.GitHub,
				Task:   &pack.Task{Title: strings.Repeat("c", 290) + " " + f.GitHub, Body: strings.Repeat("c", 3990) + " " + f.GitHub},
				PullRequest: &pack.PullRequest{Number: 3, Title: strings.Repeat("d", 290) + " " + f.GitHub,
					Body: strings.Repeat("d", 3500) + "\n" + f.RSAKey},
			},
		} {
			opts.Dir, opts.SecretsAction = g.Dir, action
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for where, data := range outputs(t, run) {
				assertNoFragment(t, action+" "+where, data, secrets)
			}
			in := run.Result.Pack.Intent
			if in == nil || !in.Truncated || len(in.Commits) != 1 || !strings.Contains(in.Commits[0].Body, "deploy key:") {
				t.Fatalf("%s: intent %+v", action, in)
			}
		}
	}
}

// TestManifestFromSecretFilesNeverLeaves: the manifest's purpose comes from
// a README or a package.json description whose secret lang would cut at
// its cap (a private key's first lines, a token's first characters); in
// every pack type no part of it is in anything the run lets out.
func TestManifestFromSecretFilesNeverLeaves(t *testing.T) {
	f := secrettest.Make(612)
	for _, src := range []struct{ name, path, content string }{
		{"readme", "README.md", "# p\n\nDeploys with the deploy key\n" + f.RSAKey + "\n"},
		{"package.json", "package.json", `{"name": "p", "description": "dd ` + strings.Repeat("e", 280) + f.GitHub + `"}` + "\n"},
	} {
		g := gittest.New(t)
		g.Write("main.go", "package main\n\nfunc main() {}\n")
		g.Write(src.path, src.content)
		g.Commit("base")
		g.Write("main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
		g.Commit("hi")
		for _, opts := range []PackOptions{{}, {Commit: "HEAD"}, {Type: "summary"}, {Commit: "HEAD", Scope: "tree"}} {
			opts.Dir = g.Dir
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for where, data := range outputs(t, run) {
				assertNoFragment(t, src.name+" "+where, data, []string{f.GitHub, keyBody(f.RSAKey)})
			}
			if p := run.Result.Pack.Manifest.PurposeGuess; !strings.Contains(p, "[REDACTED:") {
				t.Errorf("%s %+v: purpose %q, want it with the secret redacted", src.name, opts, p)
			}
		}
	}
}
