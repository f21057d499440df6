package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/source"
)

// planted writes each fake secret in a realistic setting.
func planted(f secrettest.Fake) map[string]string {
	return map[string]string{
		"deploy/aws.sh":       "#!/bin/sh\nexport AWS_ACCESS_KEY_ID=" + f.AWSKeyID + "\nexport AWS_SECRET_ACCESS_KEY=" + f.AWSSecret + "\n",
		"ci/github.yml":       "steps:\n  - run: curl -H 'Authorization: token " + f.GitHub + "' https://api.github.com/user\n",
		"notify/slack.py":     "SLACK_BOT = \"" + f.Slack + "\"\n",
		"certs/server_key.go": "package certs\n\nconst serverKey = `" + f.RSAKey + "`\n",
		"web/session.js":      "const jwt = \"" + f.JWT + "\";\n",
		"billing/stripe.rb":   "Stripe.api_key = \"" + f.Stripe + "\"\n",
		"config/app.ini":      "[service]\napi_key = " + f.APIKey + "\n",
		"config/db.yaml":      "database:\n  url: postgres://app:" + f.DBPassword + "@db.internal:5432/app\n",
	}
}

func values(f secrettest.Fake) []string {
	out := []string{f.AWSKeyID, f.AWSSecret, f.GitHub, f.Slack, f.JWT, f.Stripe, f.APIKey, f.DBPassword}
	return append(out, strings.Split(f.RSAKey, "\n")[1:13]...)
}

// assertNoFragment fails when any 12-character window of any value appears.
func assertNoFragment(t *testing.T, where string, data []byte, secrets []string) {
	t.Helper()
	s := string(data)
	for _, v := range secrets {
		for i := 0; i+12 <= len(v); i += 6 {
			if strings.Contains(s, v[i:i+12]) {
				t.Fatalf("%s holds a fragment of a planted secret (%q…)", where, v[:4])
			}
		}
	}
}

func TestPlantedSecretsNeverLeave(t *testing.T) {
	f := secrettest.Make(2024)
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	for p := range planted(f) {
		g.Write(p, "# configuration\n") // so the secrets arrive as a modification, in a diff
	}
	g.Commit("base")
	for p, content := range planted(f) {
		g.Write(p, "# configuration\n"+content)
	}
	g.Commit("add config")
	for _, opts := range []PackOptions{{Commit: "HEAD"}, {Base: "HEAD~1", Head: "HEAD"}, {}} {
		opts.Dir = g.Dir
		run, err := Execute(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		assertNoFragment(t, "pack", run.Result.JSON, values(f))
		assertNoFragment(t, "record", run.RecordJSON, values(f))
		for _, c := range append(append([]audit.Check{}, run.Verdict.Failed...), run.Verdict.Warnings...) {
			assertNoFragment(t, "verdict", []byte(c.Message), values(f))
		}
		rules := map[string]bool{}
		for _, e := range run.Result.Secrets {
			rules[e.RuleID] = true
		}
		for _, want := range []string{"aws-access-token", "github-pat", "slack-bot-token", "private-key", "jwt", "stripe-access-token"} {
			if !rules[want] {
				t.Errorf("%+v: no %s finding (got %v)", opts, want, rules)
			}
		}
		if !strings.Contains(string(run.Result.JSON), "[REDACTED:private-key]") {
			t.Errorf("%+v: private key not replaced whole", opts)
		}
		inDiff := 0
		for _, e := range run.Result.Secrets {
			if e.Where == "diff" {
				inDiff++
			}
		}
		if opts.Commit != "" && inDiff < 8 {
			t.Errorf("%+v: %d findings in diffs, want the planted ones", opts, inDiff)
		}
		if opts.Commit != "" && run.Verdict.Status != audit.StatusFail {
			t.Errorf("%+v: secrets introduced by the commit did not fail the verdict", opts)
		}
	}
}

func TestSecretAddedThenRemovedInRangeFails(t *testing.T) {
	f := secrettest.Make(77)
	g := gittest.New(t)
	g.Write("app.go", "package app\n")
	base := g.Commit("base")
	g.Write("app.go", "package app\n\nfunc A() {}\n")
	g.Commit("one")
	g.Write("notes.txt", "temporary token "+f.GitHub+"\n")
	second := g.Commit("two adds a secret")
	g.Remove("notes.txt")
	g.Commit("three removes it")

	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusFail {
		t.Fatalf("verdict = %+v", run.Verdict)
	}
	var hit *audit.Check
	for i, c := range run.Verdict.Failed {
		if c.Code == audit.CodeSecretInHistory {
			hit = &run.Verdict.Failed[i]
		}
	}
	if hit == nil || hit.Details["commit"] != second || hit.Details["path"] != "notes.txt" || hit.Details["line"] != 1 {
		t.Fatalf("history check = %+v", hit)
	}
	assertNoFragment(t, "pack", run.Result.JSON, []string{f.GitHub})
	assertNoFragment(t, "record", run.RecordJSON, []string{f.GitHub})
	if !strings.Contains(string(run.RecordJSON), second) {
		t.Fatal("record does not name the commit")
	}

	// A policy the range itself brings (or the work tree holds) does not
	// apply to it: the base's does.
	g.Write(".ctxpack.yml", "secrets:\n  history: warn\n")
	g.Commit("four relaxes the policy")
	run, err = Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusFail || run.Result.Pack.Source.Config == nil || run.Result.Pack.Source.Config.Note == "" {
		t.Fatalf("the range's own policy applied: %+v %+v", run.Verdict, run.Result.Pack.Source.Config)
	}
	// The operator's policy can lower it to a warning.
	opFile := filepath.Join(t.TempDir(), "policy.yml")
	os.WriteFile(opFile, []byte("secrets:\n  history: warn\n"), 0o644)
	run, err = Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD", PolicyFile: opFile})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusPass || !strings.Contains(codes(run.Verdict.Warnings), audit.CodeSecretInHistory) {
		t.Fatalf("with history: warn, verdict = %+v", run.Verdict)
	}
}

func TestSecretsActionExcludeAndFail(t *testing.T) {
	f := secrettest.Make(5)
	g := gittest.New(t)
	g.Write("cfg/app.py", "TOKEN = \""+f.GitHub+"\"\n")
	g.Write("ok.go", "package ok\n")
	g.Commit("x")
	for _, action := range []string{"exclude", "fail"} {
		run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, SecretsAction: action})
		if err != nil {
			t.Fatal(err)
		}
		var reason string
		for _, e := range run.Result.Pack.FileIndex {
			if e.Path == "cfg/app.py" {
				reason = string(e.ExclusionReason)
			}
		}
		if reason != "credentials" {
			t.Errorf("%s: cfg/app.py reason %q", action, reason)
		}
		wantFail := action == "fail"
		if (run.Verdict.Status == audit.StatusFail) != wantFail {
			t.Errorf("%s: verdict %s", action, run.Verdict.Status)
		}
		assertNoFragment(t, action, run.Result.JSON, []string{f.GitHub})
	}
}

func TestGitleaksAllowAndIgnoreFile(t *testing.T) {
	f := secrettest.Make(9)
	g := gittest.New(t)
	g.Write("a.py", "TOKEN = \""+f.GitHub+"\"  # gitleaks:allow\n")
	g.Write("b.py", "STRIPE = \""+f.Stripe+"\"\n")
	g.Commit("x")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	var fp string
	for _, e := range run.Result.Secrets {
		if e.Path == "a.py" {
			t.Fatalf("gitleaks:allow ignored: %+v", e)
		}
		if e.Path == "b.py" {
			fp = e.Fingerprint
		}
	}
	if fp == "" {
		t.Fatal("no finding in b.py")
	}
	g.Write(".gitleaksignore", fp+"\n")
	run, err = Execute(context.Background(), PackOptions{Dir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range run.Result.Secrets {
		if e.Path == "b.py" {
			t.Fatalf(".gitleaksignore fingerprint %s ignored", fp)
		}
	}
}

func TestScannerFailureFailsClosed(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.go", "package a\n")
	g.Write(".gitleaks.toml", "[[rules]]\nid = \"broken\"\nregex = '''(unclosed'''\n")
	g.Commit("x")
	_, err := Execute(context.Background(), PackOptions{Dir: g.Dir})
	if err == nil || !strings.Contains(err.Error(), ".gitleaks.toml") {
		t.Fatalf("err = %v", err)
	}
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, []byte("{}")), RepoDir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != audit.StatusFail || !strings.Contains(codes(v.Failed), audit.CodeInternal) {
		t.Fatalf("audit with a broken scanner = %+v", v)
	}
}

// TestSecretsTheHistoryScanReadsAsThePackWould: a secret only an "evil"
// merge brings (in neither parent: a conflict's resolution, a file of
// its own) and one in a UTF-16 file, each removed again by a later
// commit, fail the range, the merge packed alone and the push, naming
// the commit that added them.
func TestSecretsTheHistoryScanReadsAsThePackWould(t *testing.T) {
	f := secrettest.Make(91)
	g := gittest.New(t)
	g.Write("app.go", "package app\n")
	base := g.Commit("base")
	g.Git("checkout", "-q", "-b", "side")
	g.Write("side.go", "package app\n\nfunc Side() {}\n")
	g.Commit("side")
	g.Git("checkout", "-q", "-b", "pr", base)
	g.Write("pr.go", "package app\n\nfunc PR() {}\n")
	g.Commit("pr")
	g.Git("merge", "-q", "--no-ff", "--no-commit", "side")
	g.Write("cfg.go", "package app\n\nvar tok = \""+f.GitHub+"\"\n")
	g.Git("add", "cfg.go")
	merge := g.Commit("merge side")
	g.WriteBytes("notes.txt", utf16le("notes\nslack "+f.Slack+"\n"))
	notes := g.Commit("notes")
	g.Remove("cfg.go")
	g.Remove("notes.txt")
	g.Commit("remove them")
	added := func(run *Run) map[string]string {
		out := map[string]string{}
		for _, c := range run.Verdict.Failed {
			if c.Code == audit.CodeSecretInHistory {
				out[c.Details["path"].(string)] = c.Details["commit"].(string)
			}
		}
		return out
	}
	for _, opts := range []PackOptions{{Base: base, Head: "HEAD"}, {Commit: merge}} {
		opts.Dir = g.Dir
		run, err := Execute(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		got := added(run)
		if run.Verdict.Status != audit.StatusFail || got["cfg.go"] != merge || opts.Commit == "" && got["notes.txt"] != notes {
			t.Fatalf("%+v: secrets in history %v, verdict %s: %s", opts, got, run.Verdict.Status, codes(run.Verdict.Failed))
		}
		assertNoFragment(t, "record", run.RecordJSON, []string{f.GitHub, f.Slack})
	}
	repo, err := source.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	pusher, err := NewPusher(repo, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Resolve("HEAD")
	pushed, err := pusher.Run(context.Background(), PushTarget{Head: head, Known: []source.ObjectID{source.ObjectID(base)}, Ref: "refs/heads/pr"})
	if err != nil || pushed.Run == nil {
		t.Fatalf("push run: %+v %v", pushed, err)
	}
	if got := added(pushed.Run); got["cfg.go"] != merge || got["notes.txt"] != notes {
		t.Fatalf("push: secrets in history %v: %s", got, codes(pushed.Run.Verdict.Failed))
	}
}
