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
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/transparency"
)

// outputs renders everything a run lets out: the pack in every format, the
// record, each read profile, the PR summary and the verdict's messages.
func outputs(t *testing.T, run *Run) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"pack": run.Result.JSON, "record": run.RecordJSON}
	for _, f := range []string{"markdown", "xml"} {
		b, err := transparency.Render(run.Result.Pack, f)
		if err != nil {
			t.Fatal(err)
		}
		out["pack."+f] = b
	}
	for _, profile := range transparency.ReadProfiles {
		s, err := transparency.Read(run.Result.Pack, run.Record, transparency.ReadOptions{Profile: profile, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		out["read "+profile] = []byte(s)
	}
	out["summary"] = []byte(transparency.Summary(run.Record, run.Result.Pack, transparency.SummaryOptions{}))
	var msgs strings.Builder
	for _, c := range append(append([]audit.Check{}, run.Verdict.Failed...), run.Verdict.Warnings...) {
		msgs.WriteString(c.Message + "\n")
	}
	out["verdict"] = []byte(msgs.String())
	return out
}

// TestSecretInFileNameNeverLeaves: a file named by a secret (class 5 of
// issue 13), in the head tree or only in an intermediate commit, is named
// by its redacted form everywhere, excluded (credentials) and reported; an
// audit against the repository accepts the redacted names.
func TestSecretInFileNameNeverLeaves(t *testing.T) {
	f := secrettest.Make(303)
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	base := g.Commit("base")
	keyFile := "keys/" + f.GitHub + ".json"
	g.Write(keyFile, "{\"kind\": \"deploy\"}\n")
	g.Write("tmp/"+f.AWSKeyID+".txt", "scratch\n")
	g.Write("main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	second := g.Commit("add keys")
	g.Remove("tmp/" + f.AWSKeyID + ".txt")
	g.Commit("drop scratch")
	secrets := []string{f.GitHub, f.AWSKeyID}

	for _, action := range []string{"redact", "exclude", "fail"} {
		for _, opts := range []PackOptions{{Base: base, Head: "HEAD"}, {Commit: "HEAD~1"}, {}} {
			opts.Dir, opts.SecretsAction = g.Dir, action
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			for where, data := range outputs(t, run) {
				assertNoFragment(t, action+" "+where, data, secrets)
			}
			redacted := "keys/[REDACTED:github-pat].json"
			var row *pack.LedgerRow
			for i := range run.Result.Ledger {
				if run.Result.Ledger[i].Path == redacted {
					row = &run.Result.Ledger[i]
				}
			}
			if row == nil || row.Included || row.Reason != pack.ReasonCredentials || row.Detail != "secret in the file name" {
				t.Fatalf("%s %+v: ledger row of the key file = %+v", action, opts, row)
			}
			var names []pack.SecretEvent
			for _, e := range run.Result.Secrets {
				if e.Where == pack.WhereName {
					names = append(names, e)
				}
			}
			if len(names) == 0 || names[0].Fingerprint != redacted+":github-pat:0" {
				t.Fatalf("%s %+v: name findings %+v", action, opts, names)
			}
			if opts.Base != "" {
				var hist *audit.Check
				for i, c := range run.Verdict.Failed {
					if c.Code == audit.CodeSecretInHistory && c.Details["commit"] == second {
						hist = &run.Verdict.Failed[i]
					}
				}
				if hist == nil || !strings.Contains(hist.Message, "tmp/[REDACTED:aws-access-token].txt") {
					t.Errorf("%s: the name only commit %s brings is not a history finding: %+v", action, second[:7], run.Verdict.Failed)
				}
			}
			if action == "fail" && run.Verdict.Status != audit.StatusFail {
				t.Errorf("fail %+v: verdict %s", opts, run.Verdict.Status)
			}
			// The independent audit against the repository accepts the
			// redacted names (no blob mismatch, every change accounted for).
			packFile := filepath.Join(t.TempDir(), "pack.json")
			if err := os.WriteFile(packFile, run.Result.JSON, 0o644); err != nil {
				t.Fatal(err)
			}
			v, err := Audit(context.Background(), AuditOptions{PackFile: packFile, RepoDir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range v.Failed {
				if c.Code == audit.CodeBlobMismatch || c.Code == audit.CodeChangeUnaccounted || c.Code == audit.CodeInternal {
					t.Errorf("%s %+v: audit --repo: %s", action, opts, c.Message)
				}
			}
		}
	}
}

// TestDiffFindingsCarryFileLines: a finding in a diff is reported at the
// file's line, with the fingerprint of that line, which .gitleaksignore
// accepts for the content and the diff alike. (The ignore file is read
// from the base: the range from before it reports, the commit after it
// does not.)
func TestDiffFindingsCarryFileLines(t *testing.T) {
	f := secrettest.Make(404)
	g := gittest.New(t)
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, "line "+strings.Repeat("x", i%7))
	}
	g.Write("app/config.py", strings.Join(lines, "\n")+"\n")
	first := g.Commit("base")
	g.Write(".gitleaksignore", "app/config.py:github-pat:30\n")
	g.Commit("ignore the token line")
	lines[29] = "GITHUB_TOKEN = \"" + f.GitHub + "\""
	g.Write("app/config.py", strings.Join(lines, "\n")+"\n")
	g.Commit("token on line 30")

	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: first, Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range run.Result.Secrets {
		if e.Path != "app/config.py" {
			continue
		}
		seen[e.Where]++
		if e.StartLine != 30 || e.Fingerprint != "app/config.py:"+e.RuleID+":30" {
			t.Errorf("%s finding at line %d, fingerprint %s; want line 30", e.Where, e.StartLine, e.Fingerprint)
		}
	}
	if seen["diff"] == 0 || seen["content"] == 0 {
		t.Fatalf("want a content and a diff finding: %+v", run.Result.Secrets)
	}
	run, err = Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range run.Result.Secrets {
		if e.Path == "app/config.py" && e.RuleID == "github-pat" {
			t.Errorf("ignored fingerprint still reported in %s at line %d", e.Where, e.StartLine)
		}
	}
}

// TestAuditFindsSecretInName: the independent audit reads a pack's file
// names the way the builder does (a token before ".json" is found) and
// fails a pack that names a file by a secret, without repeating the name.
func TestAuditFindsSecretInName(t *testing.T) {
	f := secrettest.Make(606)
	g := gittest.New(t)
	g.Write("main.go", "package main\n")
	g.Commit("x")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	p := run.Result.Pack
	p.FileIndex = append(p.FileIndex, pack.IndexEntry{Path: "keys/" + f.Stripe + ".json", Type: pack.TypeText, Category: pack.CatConfig,
		ExclusionReason: pack.ReasonCredentials})
	data, err := pack.Finalize(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, data)})
	if err != nil {
		t.Fatal(err)
	}
	hit := false
	for _, c := range v.Failed {
		if c.Code == audit.CodeSecretUnredacted && c.Details["where"] == "name" {
			hit = true
		}
		assertNoFragment(t, "audit message", []byte(c.Message+fmt.Sprint(c.Details)), []string{f.Stripe})
	}
	if !hit {
		t.Fatalf("no secret_unredacted check for the name: %+v", v.Failed)
	}
}
