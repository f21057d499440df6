package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// allowEverything is what a hostile pull request brings: a gitleaks config
// that allowlists every path, and a policy that fails on nothing.
const allowEverything = "[extend]\nuseDefault = true\n[allowlist]\npaths = ['''.*''']\n"

// TestPullRequestCannotLoosenItsOwnCheck: a range that adds its own gitleaks
// allowlist (paths = [".*"]), a .gitleaksignore and a policy with an empty
// fail_on still fails on the secret it adds: the base's configuration
// applies, and the change to it is reported.
func TestPullRequestCannotLoosenItsOwnCheck(t *testing.T) {
	f := secrettest.Make(21)
	g := gittest.New(t)
	g.Write("app.go", "package app\n")
	base := g.Commit("base")
	g.Write(".gitleaks.toml", allowEverything)
	g.Write(".ctxpack.yml", "fail_on: []\nsecrets:\n  history: warn\n")
	g.Write("deploy.sh", "export GH_TOKEN="+f.GitHub+"\n")
	g.Commit("pull request")
	// The fingerprint of that finding, ignored by the head.
	g.Write(".gitleaksignore", "deploy.sh:github-pat:1\n")
	g.Commit("ignore it")

	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD", Trigger: "pull_request"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusFail || !strings.Contains(codes(run.Verdict.Failed), audit.CodeSecretInHistory) {
		t.Fatalf("verdict %+v", run.Verdict)
	}
	origin := run.Result.Pack.Source.Config
	if origin == nil || origin.From != policy.ConfigFromBase || origin.Commit != base ||
		!slices.Equal(origin.Changed, []string{".ctxpack.yml", ".gitleaks.toml", ".gitleaksignore"}) ||
		!strings.Contains(origin.Note, "policy changed in this change") || !strings.Contains(origin.Note, "the base's applies") {
		t.Fatalf("config origin %+v", origin)
	}
	if !strings.Contains(string(run.RecordJSON), "the base's applies") {
		t.Fatal("the record does not say whose configuration applied")
	}
	assertNoFragment(t, "pack", run.Result.JSON, []string{f.GitHub})
	// The audit with the repository re-derives the same configuration.
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
	if err != nil || v.Status != audit.StatusPass {
		t.Fatalf("audit %v %+v", err, v)
	}
}

// TestBasePolicyCanLetTheHeadApply: config_from: head in the base's policy
// is the only switch that lets a change's own configuration apply.
func TestBasePolicyCanLetTheHeadApply(t *testing.T) {
	f := secrettest.Make(22)
	g := gittest.New(t)
	g.Write("app.go", "package app\n")
	g.Write(".ctxpack.yml", "config_from: head\n")
	base := g.Commit("base trusts its changes")
	g.Write(".gitleaks.toml", allowEverything)
	g.Write(".ctxpack.yml", "config_from: head\nfail_on: [none]\n")
	g.Write("deploy.sh", "export GH_TOKEN="+f.GitHub+"\n")
	g.Commit("pull request")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	origin := run.Result.Pack.Source.Config
	if run.Verdict.Status != audit.StatusPass || origin.From != policy.ConfigFromHead || !strings.Contains(origin.Note, "the head's applies") {
		t.Fatalf("verdict %+v origin %+v", run.Verdict, origin)
	}
}

// TestConfigOfACommitAndTheWorkTree: a commit applies its parent's
// configuration; a work-tree pack the work tree's; a symlinked policy at
// the base is refused, not followed.
func TestConfigOfACommitAndTheWorkTree(t *testing.T) {
	g := gittest.New(t)
	g.Write("a.go", "package a\n")
	g.Write(".ctxpack.yml", "limits:\n  max_files: 7\n")
	g.Commit("one")
	g.Write(".ctxpack.yml", "limits:\n  max_files: 9\n")
	g.Commit("two")
	for _, c := range []struct {
		opts PackOptions
		want int
	}{{PackOptions{Dir: g.Dir, Commit: "HEAD"}, 7}, {PackOptions{Dir: g.Dir}, 9}, {PackOptions{Dir: g.Dir, Commit: "HEAD~1"}, 200}} {
		out, err := Pack(context.Background(), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if out.Policy.Limits.MaxFiles != c.want {
			t.Errorf("%+v: max_files %d, want %d", c.opts, out.Policy.Limits.MaxFiles, c.want)
		}
	}
	g.Remove(".ctxpack.yml")
	g.Symlink("/dev/zero", ".ctxpack.yml")
	g.Commit("symlinked policy")
	g.Write("b.go", "package a\n")
	g.Commit("four")
	if _, err := Pack(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD"}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a symlinked policy at the base: %v", err)
	}
	if _, err := Pack(context.Background(), PackOptions{Dir: g.Dir}); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("a symlinked policy in the work tree: %v", err)
	}
}

// TestHistoryScanReadsBoundedBlobs: a blob over
// secrets.history_max_blob_bytes is not read by the per-commit scan: it
// fails the verdict as a scan that could not run (history_blob_skipped),
// by commit and path, or is reported as skipped under
// secrets.history_unavailable: warn. The small file's secret is still
// found, and so is one in a file over limits.max_content_bytes (history
// is scanned, not sent) added and removed again.
func TestHistoryScanReadsBoundedBlobs(t *testing.T) {
	f := secrettest.Make(23)
	const bounds = "limits:\n  max_content_bytes: 4000\nsecrets:\n  history_max_blob_bytes: 9000\n"
	g := gittest.New(t)
	g.Write("app.go", "package app\n")
	g.Write(".ctxpack.yml", bounds)
	base := g.Commit("base")
	g.Write("big.sql", strings.Repeat("INSERT INTO t VALUES (1);\n", 400)+"-- "+f.GitHub+"\n")
	g.Write("small.env", "TOKEN="+f.Stripe+"\n")
	big := g.Commit("big dump")
	g.Write("medium.py", strings.Repeat("x = 1  # filler\n", 300)+"SLACK = \""+f.Slack+"\"\n")
	medium := g.Commit("medium file")
	g.Remove("medium.py")
	g.Commit("remove it")
	warn := filepath.Join(t.TempDir(), "warn.yml")
	if err := os.WriteFile(warn, []byte(bounds+"  history_unavailable: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A range and a single commit read the commit's blobs the same way.
	for _, opts := range []PackOptions{
		{Dir: g.Dir, Base: base, Head: "HEAD"},
		{Dir: g.Dir, Commit: big},
		{Dir: g.Dir, Base: base, Head: "HEAD", PolicyFile: warn},
	} {
		run, err := Execute(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		reported, other := run.Verdict.Failed, run.Verdict.Skipped
		if opts.PolicyFile != "" {
			reported, other = other, reported
		}
		var skipped []audit.Check
		for _, c := range reported {
			if c.Code == audit.CodeHistoryBlobSkipped {
				skipped = append(skipped, c)
			}
		}
		if len(skipped) != 1 || skipped[0].Details["path"] != "big.sql" || skipped[0].Details["commit"] != big || strings.Contains(codes(other), audit.CodeHistoryBlobSkipped) {
			t.Fatalf("%+v: failed %s, skipped %s", opts, codes(run.Verdict.Failed), codes(run.Verdict.Skipped))
		}
		for _, h := range run.History {
			if h.Path == "big.sql" {
				t.Fatalf("%+v: the big blob was scanned: %+v", opts, h)
			}
		}
		if !slices.ContainsFunc(run.History, func(h HistoryFinding) bool { return h.Path == "small.env" }) {
			t.Fatalf("%+v: the small file's secret was not found: %+v", opts, run.History)
		}
		if opts.Commit == "" && !slices.ContainsFunc(run.History, func(h HistoryFinding) bool { return h.Path == "medium.py" && h.Commit == medium }) {
			t.Fatalf("%+v: the secret of a file over max_content_bytes was not found: %+v", opts, run.History)
		}
	}
}

// TestGitleaksFilesThatLeaveTheRepository: a work tree's .gitleaks.toml or
// .gitleaksignore symlinked out of the repository is an error that says
// so, never silently ignored (nor followed).
func TestGitleaksFilesThatLeaveTheRepository(t *testing.T) {
	for _, name := range []string{".gitleaks.toml", ".gitleaksignore"} {
		g := gittest.New(t)
		g.Write("a.go", "package a\n")
		g.Symlink("/etc/hostname", name)
		g.Commit("x")
		_, err := Execute(context.Background(), PackOptions{Dir: g.Dir})
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "escapes") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestInlineAllowIsTheBases: a gitleaks:allow comment the change itself
// adds does not switch off the check of its own secret (it is
// configuration, like .gitleaksignore); one the base already has is
// honoured, so is any in a work-tree pack, and config_from: head in the
// base's policy lets the change's apply.
func TestInlineAllowIsTheBases(t *testing.T) {
	f := secrettest.Make(23)
	kept := "const fixture = \"" + f.Stripe + "\" // gitleaks:allow\n"
	added := "export GH_TOKEN=" + f.GitHub + " # gitleaks:allow\n"
	for _, tc := range []struct {
		name        string
		basePolicy  string
		opts        func(base string) PackOptions
		addedLeaves bool
	}{
		{"pull request", "", func(base string) PackOptions { return PackOptions{Base: base, Head: "HEAD", Trigger: "pull_request"} }, false},
		{"commit", "", func(string) PackOptions { return PackOptions{Commit: "HEAD"} }, false},
		{"work tree", "", func(string) PackOptions { return PackOptions{} }, true},
		{"base trusts the head", "config_from: head\n", func(base string) PackOptions { return PackOptions{Base: base, Head: "HEAD"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("fixtures.go", "package fixtures\n\n"+kept)
			if tc.basePolicy != "" {
				g.Write(".ctxpack.yml", tc.basePolicy)
			}
			base := g.Commit("base")
			g.Write("fixtures.go", "package fixtures\n\n"+kept+"\nconst other = 1\n")
			g.Write("deploy.sh", added)
			g.Commit("change")
			opts := tc.opts(base)
			opts.Dir, opts.Type, opts.Scope = g.Dir, "full", "tree"
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			data := string(run.Result.JSON)
			if !strings.Contains(data, f.Stripe) {
				t.Errorf("the base's gitleaks:allow line was not honoured: the fixture is not in the pack")
			}
			if got := strings.Contains(data, f.GitHub); got != tc.addedLeaves {
				t.Errorf("the change's own gitleaks:allow line left unredacted: %v, want %v", got, tc.addedLeaves)
			}
			if !tc.addedLeaves && !strings.Contains(data, "[REDACTED:github-pat]") {
				t.Errorf("the change's secret was not redacted")
			}
			// The audit honours the same comments with the repository at
			// hand; without it, a change's pack honours none (the base's
			// lines cannot be read), a work-tree pack all.
			file := writePack(t, run.Result.JSON)
			for _, dir := range []string{g.Dir, ""} {
				v, err := Audit(context.Background(), AuditOptions{PackFile: file, RepoDir: dir})
				if err != nil {
					t.Fatal(err)
				}
				found := strings.Contains(codes(v.Failed), audit.CodeSecretUnredacted)
				if want := dir == "" && !tc.addedLeaves; found != want {
					t.Errorf("audit (repository %q): secret_unredacted %v, want %v (%s)", dir, found, want, codes(v.Failed))
				}
			}
		})
	}
}

// TestBaseAllowLineInsideTheChangesSecret: a line of the base holding
// gitleaks:allow, copied by the change into the middle of its own private
// key, does not allow the key: the verdict fails on it, the pack holds none
// of it, and the audit of a pack that kept it (with the repository at hand
// or without it) finds it.
func TestBaseAllowLineInsideTheChangesSecret(t *testing.T) {
	f := secrettest.Make(25)
	allow := `password = "example-pass" # gitleaks:allow` + "\n"
	begin, body, _ := strings.Cut(f.RSAKey, "\n")
	for _, tc := range []struct {
		name string
		opts func(base string) PackOptions
	}{
		{"pull request", func(base string) PackOptions { return PackOptions{Base: base, Head: "HEAD", Trigger: "pull_request"} }},
		{"commit", func(string) PackOptions { return PackOptions{Commit: "HEAD"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("settings.py", allow)
			base := g.Commit("base")
			g.Write("settings.py", allow+begin+"\n"+allow+body+"\n")
			g.Commit("key")
			opts := tc.opts(base)
			opts.Dir = g.Dir
			ctx := context.Background()
			run, err := Execute(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict.Status != audit.StatusFail || !strings.Contains(codes(run.Verdict.Failed), audit.CodeSecretInHistory) {
				t.Errorf("verdict %s (%s), want a failure on the key", run.Verdict.Status, codes(run.Verdict.Failed))
			}
			assertNoFragment(t, "pack", run.Result.JSON, []string{body})
			// A pack that kept the key in settings.py's diff.
			var q pack.Pack
			if err := json.Unmarshal(run.Result.JSON, &q); err != nil {
				t.Fatal(err)
			}
			added := strings.ReplaceAll(begin+"\n"+allow+body, "\n", "\n+")
			forged := false
			for i := range q.Changes {
				if c := &q.Changes[i]; c.Path == "settings.py" && strings.Contains(c.Diff, "[REDACTED:private-key]") {
					c.Diff, c.Redactions, forged = strings.Replace(c.Diff, "[REDACTED:private-key]", added, 1), nil, true
				}
			}
			if !forged {
				t.Fatal("settings.py's diff with the key redacted is not in the pack")
			}
			auditFinds(t, refinalize(t, &q), g.Dir, "the key in settings.py's diff", func(c audit.Check) bool {
				return c.Code == audit.CodeSecretUnredacted && c.Details["where"] == "diff"
			})
		})
	}
}

// auditFinds audits the pack data with the repository at dir and without
// it, and fails t unless each verdict has a failed check found takes (what
// names it).
func auditFinds(t *testing.T, data []byte, dir, what string, found func(audit.Check) bool) {
	t.Helper()
	file := writePack(t, data)
	for _, repo := range []string{dir, ""} {
		v, err := Audit(context.Background(), AuditOptions{PackFile: file, RepoDir: repo})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(v.Failed, found) {
			t.Errorf("audit (repository %q): %s is not found: %s", repo, what, codes(v.Failed))
		}
	}
}

// TestIntentNeverHonoursInlineAllow: gitleaks:allow in the intent (a goal,
// a task, a commit message) allows nothing, in any pack: the intent is no
// file of the repository, whose configuration the comment would be. The
// builder redacts the token; the audit of a pack that kept it, with or
// without the repository, finds it among the pack's fields.
func TestIntentNeverHonoursInlineAllow(t *testing.T) {
	f := secrettest.Make(26)
	marked := f.GitHub + " gitleaks:allow"
	for _, tc := range []struct {
		name string
		opts func(base string) PackOptions
	}{
		{"work tree", func(string) PackOptions { return PackOptions{} }},
		{"commit", func(string) PackOptions { return PackOptions{Commit: "HEAD"} }},
		{"pull request", func(base string) PackOptions { return PackOptions{Base: base, Head: "HEAD", Trigger: "pull_request"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("app.go", "package app\n")
			base := g.Commit("base")
			g.Write("app.go", "package app\n\nconst v = 2\n")
			g.Commit("Rotate " + marked)
			opts := tc.opts(base)
			opts.Dir = g.Dir
			opts.Goal = marked
			opts.Task = &pack.Task{Title: "Rotate " + marked, Body: "# Rotate " + marked + "\n", Acceptance: []string{marked}}
			ctx := context.Background()
			run, err := Execute(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			assertNoFragment(t, "pack", run.Result.JSON, []string{f.GitHub})
			in := run.Result.Pack.Intent
			if in == nil || !strings.Contains(in.Goal, "[REDACTED:github-pat]") || in.Task == nil || !strings.Contains(in.Task.Title, "[REDACTED:github-pat]") {
				t.Fatalf("intent %+v: the token is not redacted", in)
			}
			// A pack that kept it in the goal.
			q := *run.Result.Pack
			kept := *in
			kept.Goal, q.Intent = marked, &kept
			auditFinds(t, refinalize(t, &q), g.Dir, "the token in the goal", func(c audit.Check) bool {
				return c.Code == audit.CodeSecretUnredacted && c.Details["path"] == "(pack fields)"
			})
		})
	}
}

// TestExtendedConfigChangeIsReported: a change to the file the base's
// gitleaks config extends is reported like a change to the config itself,
// and the base's copy of it applies.
func TestExtendedConfigChangeIsReported(t *testing.T) {
	f := secrettest.Make(24)
	g := gittest.New(t)
	g.Write(".gitleaks.toml", "[extend]\npath = \"extra.toml\"\n")
	g.Write("extra.toml", "[extend]\nuseDefault = true\n")
	g.Write("app.go", "package app\n")
	base := g.Commit("base")
	g.Write("extra.toml", allowEverything)
	g.Write("deploy.sh", "export GH_TOKEN="+f.GitHub+"\n")
	g.Commit("pull request")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD", Trigger: "pull_request"})
	if err != nil {
		t.Fatal(err)
	}
	origin := run.Result.Pack.Source.Config
	if origin == nil || !slices.Contains(origin.Changed, "extra.toml") || !strings.Contains(origin.Note, "extra.toml") {
		t.Fatalf("config origin %+v", origin)
	}
	if run.Verdict.Status != audit.StatusFail {
		t.Fatalf("the base's extended rules did not apply: %+v", run.Verdict)
	}
	assertNoFragment(t, "pack", run.Result.JSON, []string{f.GitHub})
}
