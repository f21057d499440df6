package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// fakeGitHubToken builds a realistic-looking (but fake) GitHub token at run
// time, so no token-shaped string sits in the repository.
func fakeGitHubToken(seed int64) string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewSource(seed))
	b := make([]byte, 36)
	for i := range b {
		b[i] = alnum[r.Intn(len(alnum))]
	}
	return "ghp" + "_" + string(b)
}

func repoWithChange(t *testing.T) *gittest.Repo {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("secret/plan.md", "# internal plan\n")
	g.Commit("base")
	g.Write("util.go", "package main\n\nfunc util() int { return 1 }\n")
	g.Write("secret/plan.md", "# internal plan\n\nstep two\n")
	g.Commit("change")
	return g
}

func writePack(t *testing.T, data []byte) string {
	p := filepath.Join(t.TempDir(), "pack.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func codes(cs []audit.Check) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Code)
	}
	return strings.Join(out, ",")
}

// refinalize re-serializes an edited pack with fixed digests, as a careful
// attacker would.
func refinalize(t *testing.T, p *pack.Pack) []byte {
	data, err := pack.Finalize(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAuditCleanPackPasses(t *testing.T) {
	g := repoWithChange(t)
	g.Write("lib/deep/helper.go", "package deep\n")
	g.Commit("unrelated")
	g.Write("util.go", "package main\n\nfunc util() int { return 2 }\n")
	g.Commit("change again")
	tests := []struct {
		scope     string // "" is the default
		wantScope string
		wantDeep  bool
	}{
		{"", policy.ScopeChange, false},
		{"change", policy.ScopeChange, false},
		{"tree", policy.ScopeTree, true},
	}
	for _, tt := range tests {
		t.Run("scope "+tt.scope, func(t *testing.T) {
			run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: tt.scope})
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict.Status != audit.StatusPass {
				t.Fatalf("build verdict = %+v", run.Verdict)
			}
			p := run.Result.Pack
			deep := false
			for _, e := range p.FileIndex {
				deep = deep || e.Path == "lib/deep/helper.go"
			}
			if p.Source.Scope != tt.wantScope || deep != tt.wantDeep {
				t.Fatalf("scope %q, unchanged deep file listed: %v", p.Source.Scope, deep)
			}
			// The audit re-derives the snapshot in the pack's own scope.
			v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != audit.StatusPass {
				t.Fatalf("audit = %+v", v.Failed)
			}
		})
	}
	if _, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: "repo"}); err == nil || !strings.Contains(err.Error(), `--scope "repo"`) {
		t.Fatalf("bad scope: %v", err)
	}
}

// Built is given the pack's final bytes once, before the history scan and
// the audit start; a run that fails before a pack is built never calls it.
func TestBuiltGetsTheFinalPack(t *testing.T) {
	g := repoWithChange(t)
	var got [][]byte
	var events []string
	opts := PackOptions{Dir: g.Dir, Commit: "HEAD",
		Built: func(res *pack.Result) {
			got = append(got, bytes.Clone(res.JSON))
			events = append(events, "built")
		},
		Progress: func(p Progress) { events = append(events, p.Stage) },
	}
	run, err := Execute(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !bytes.Equal(got[0], run.Result.JSON) {
		t.Fatalf("Built called %d times, not with the pack's bytes", len(got))
	}
	if i := slices.Index(events, "built"); i < 0 || i+1 >= len(events) || !strings.Contains(events[i+1], "auditing") {
		t.Fatalf("events %q: Built must come just before the audit", events)
	}
	got = nil
	opts.Commit = "no-such-revision"
	if _, err := Execute(context.Background(), opts); err == nil || len(got) != 0 {
		t.Fatalf("err %v, Built called %d times", err, len(got))
	}
}

func TestAuditTamperedPacks(t *testing.T) {
	g := repoWithChange(t)
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *pack.Pack {
		var p pack.Pack
		if err := json.Unmarshal(run.Result.JSON, &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	policyFile := func(doc string) string {
		f := filepath.Join(t.TempDir(), "policy.yml")
		os.WriteFile(f, []byte(doc), 0o644)
		return f
	}
	tests := []struct {
		name   string
		data   func() []byte
		policy string
		want   string
	}{
		{"edited content", func() []byte {
			p := fresh()
			p.Contents[0].Content += "// sneaky\n"
			data, _ := pack.Marshal(p)
			return data
		}, "", audit.CodeContentMismatch},
		{"wrong pack id", func() []byte {
			p := fresh()
			data := refinalize(t, p)
			return []byte(strings.Replace(string(data), p.PackID, "pk_aaaaaaaa", 1))
		}, "", audit.CodePackIDMismatch},
		{"injected secret", func() []byte {
			p := fresh()
			p.Contents[0].Content += "const token = \"" + fakeGitHubToken(7) + "\"\n"
			p.Contents[0].SHA256 = sha(p.Contents[0].Content)
			return refinalize(t, p)
		}, "", audit.CodeSecretUnredacted},
		{"forbidden path", func() []byte { return run.Result.JSON }, "egress:\n  forbid: [\"util.go\"]\n", audit.CodeForbiddenContent},
		{"oversize", func() []byte { return run.Result.JSON }, "limits:\n  max_content_bytes: 10\n", audit.CodeOverLimit},
		{"over tier", func() []byte { return run.Result.JSON }, "pack: {tier: cheap}\negress:\n  destinations: [{name: tiny, max_chars: 100}]\n", audit.CodeOverDestination},
		{"missing changed file", func() []byte {
			p := fresh()
			p.Changes = p.Changes[:1]
			return refinalize(t, p)
		}, "", audit.CodeChangeUnaccounted},
		{"excluded path included", func() []byte {
			p := fresh()
			it := p.Contents[0]
			it.Path, it.ID = ".env", ".env:1:1"
			p.Contents = append(p.Contents, it)
			return refinalize(t, p)
		}, "", audit.CodeExcludedIncluded},
		{"not json", func() []byte { return []byte("{") }, "", audit.CodeSchemaInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := AuditOptions{PackFile: writePack(t, tt.data()), RepoDir: g.Dir}
			if tt.policy != "" {
				opts.PolicyFile = policyFile(tt.policy)
			}
			v, err := Audit(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != audit.StatusFail || !strings.Contains(codes(v.Failed), tt.want) {
				t.Fatalf("failed = %s; want %s", codes(v.Failed), tt.want)
			}
			for _, c := range v.Failed {
				if strings.Contains(c.Message, "ghp_") {
					t.Fatalf("a check message holds the secret: %s", c.Message)
				}
			}
		})
	}
}

func TestCondensedSummaryPackAuditsClean(t *testing.T) {
	g := gittest.New(t)
	for i := 0; i < 600; i++ {
		g.Write(fmt.Sprintf("pkg/m%02d/f%03d.go", i%30, i), fmt.Sprintf("package m%02d\n\nfunc F%d() int { return %d }\n", i%30, i, i))
	}
	g.Commit("many files")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Tier: "cheap"})
	if err != nil {
		t.Fatal(err)
	}
	p := run.Result.Pack
	if p.Type != "summary" || p.Metadata.IndexCondensed == "" {
		t.Fatalf("type %s, condensed %q", p.Type, p.Metadata.IndexCondensed)
	}
	if run.Verdict.Status != audit.StatusPass {
		t.Fatalf("verdict = %+v", run.Verdict.Failed)
	}
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
	if err != nil || v.Status != audit.StatusPass {
		t.Fatalf("audit = %+v, %v", v, err)
	}
}

func TestPrePushPackAuditsClean(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("sub/x.go", "package sub\n")
	g.Write("sub/y.go", "package sub\n")
	base := g.Commit("base")
	g.Write("sub/x.go", "package sub\n\nfunc X() {}\n")
	g.Commit("change")
	repo, err := source.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	pusher, err := NewPusher(repo, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Resolve("HEAD")
	pr, err := pusher.Run(context.Background(), PushTarget{Head: head, Known: []source.ObjectID{source.ObjectID(base)}, Ref: "refs/heads/main"})
	if err != nil || pr.Run == nil {
		t.Fatalf("push run: %+v %v", pr, err)
	}
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, pr.Result.JSON), RepoDir: g.Dir})
	if err != nil || v.Status != audit.StatusPass {
		t.Fatalf("audit = %+v, %v", v, err)
	}
}

func TestForbiddenFileChangeIsListedNotSent(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("secret/plan.md", "# internal plan\n")
	g.Write(".ctxpack.yml", "egress:\n  forbid: [\"secret/**\"]\n") // the base's policy applies
	g.Commit("base")
	g.Write("util.go", "package main\n\nfunc util() int { return 1 }\n")
	g.Write("secret/plan.md", "# internal plan\n\nstep two\n")
	g.Commit("change")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	p := run.Result.Pack
	for _, e := range p.FileIndex {
		if e.Path == "secret/plan.md" && (e.Included || e.ExclusionReason != pack.ReasonPolicy) {
			t.Fatalf("index entry = %+v", e)
		}
	}
	found := false
	for _, c := range p.Changes {
		if c.Path == "secret/plan.md" {
			found = true
			if c.Diff != "" || c.DiffWithheld != pack.ReasonPolicy {
				t.Fatalf("change = %+v", c)
			}
		}
	}
	if !found || strings.Contains(string(run.Result.JSON), "step two") {
		t.Fatal("forbidden change missing, or its content leaked")
	}
	if run.Verdict.Status != audit.StatusPass {
		t.Fatalf("verdict = %+v", run.Verdict.Failed)
	}
}
