package pack_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
)

// shopRepo is the multi-language fixture of testdata/summary_repo in a git
// repository: one commit with the tree, then a commit that changes it.
func shopRepo(t *testing.T, dir string) *gittest.Repo {
	t.Helper()
	g := gittest.Init(t, dir)
	root := filepath.Join("..", "lang", "testdata", "summary_repo")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		g.WriteBytes(filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Write(".env", "STRIPE_KEY=sk_live_do_not_send\n")
	g.Commit("shop")
	tls, _ := os.ReadFile(filepath.Join(root, "internal", "server", "tls.go"))
	g.Write("internal/server/tls.go", string(tls)+"\n// Insecure is true when verification is off.\nfunc Insecure() bool { return true }\n")
	g.Write("api/app/routers/coupons.py", "from fastapi import APIRouter\nfrom ..db import total\n\nrouter = APIRouter(prefix=\"/coupons\")\n\n\n@router.delete(\"/{code}\")\ndef revoke(code: str):\n    return {\"revoked\": code, \"total\": total(code)}\n")
	g.Remove("scripts/deploy.sh")
	g.Commit("coupons, insecure flag")
	return g
}

func pretty(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func golden(t *testing.T, name string, data []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got := pretty(t, data)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pack -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("pack differs from %s (run with -update and review the diff)", path)
	}
}

func TestGoldenSummaryPacks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	shopRepo(t, dir)
	out, p := build(t, pipeline.PackOptions{Dir: dir, Commit: "HEAD", Scope: "tree", Type: "summary"})
	golden(t, "summary_commit.golden.json", out.Result.JSON)
	if p.Type != "summary" || p.RepoSummary == nil || len(p.Contents)+len(p.KeyFiles) != 0 {
		t.Fatalf("not a summary pack: type %s", p.Type)
	}
	// A tight range pack: parts are dropped and counted, the index condensed.
	out, p = build(t, pipeline.PackOptions{Dir: dir, Base: "HEAD~1", Head: "HEAD", Scope: "tree", Type: "summary", MaxContentBytes: 9000})
	golden(t, "summary_range_tight.golden.json", out.Result.JSON)
	if len(out.Result.JSON) > 9000 || p.Budget.DroppedItems == 0 || !p.Budget.Truncated {
		t.Fatalf("tight pack: %d bytes, budget %+v", len(out.Result.JSON), p.Budget)
	}
	if len(p.Changes) != 3 {
		t.Fatalf("changes = %+v", p.Changes)
	}
}

// The summary's content, checked piece by piece on the commit pack.
func TestSummaryContent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	shopRepo(t, dir)
	_, p := build(t, pipeline.PackOptions{Dir: dir, Commit: "HEAD", Scope: "tree", Type: "summary"})

	// The changed files come first in key_files_summary, with their change.
	if len(p.KeyFilesSummary) < 2 || p.KeyFilesSummary[0].Path != "api/app/routers/coupons.py" || p.KeyFilesSummary[1].Path != "internal/server/tls.go" {
		t.Fatalf("key files summary starts with %+v", p.KeyFilesSummary[:2])
	}
	tls := p.KeyFilesSummary[1]
	if !strings.HasPrefix(tls.Summary, "Changed: modified, +3/-0 lines. Go file (package server), 18 lines") ||
		!equal(tls.Exports, []string{"var Client", "func Insecure"}) ||
		!equal(tls.NotableCode, []string{"line 12: disables TLS certificate verification (InsecureSkipVerify: true): TLSClientConfig: &tls.Config{InsecureSkipVerify: true},"}) {
		t.Errorf("tls.go summary = %+v", tls)
	}
	// Every changed file is in the changes, deleted ones included.
	st := map[string]string{}
	for _, c := range p.Changes {
		st[c.Path] = c.Status
	}
	if st["scripts/deploy.sh"] != "deleted" || st["api/app/routers/coupons.py"] != "added" || st["internal/server/tls.go"] != "modified" {
		t.Errorf("changes = %+v", p.Changes)
	}

	eps := map[string]pack.Entrypoint{}
	for _, e := range p.Entrypoints {
		eps[e.Path] = e
	}
	wantEps := map[string]struct {
		typ    string
		routes []string
	}{
		"cmd/shop/main.go":   {"cli", []string{"command shop: Run and maintain the shop", "command serve: Start the HTTP server", "command migrate: Apply database migrations"}},
		"api/app/main.py":    {"api", []string{"GET /health", "POST /quote"}},
		"engine/src/main.rs": {"web", []string{"GET /health", "POST /jobs", "GET /jobs", "MOUNT /admin"}},
		"billing/src/main/java/com/example/billing/BillingController.java":  {"api", []string{"GET /api/billing/{id}", "POST /api/billing", "PUT /api/billing/bulk", "PUT /api/billing/batch"}},
		"billing/src/main/java/com/example/billing/BillingApplication.java": {"web", nil},
		"api/app/routers/coupons.py":                                        {"api", []string{"DELETE /coupons/{code}"}},
	}
	for path, w := range wantEps {
		e, ok := eps[path]
		if !ok {
			t.Errorf("entrypoint %s missing", path)
			continue
		}
		if e.Type != w.typ || !equal(e.RoutesOrCommands, w.routes) {
			t.Errorf("entrypoint %s = %s %q, want %s %q", path, e.Type, e.RoutesOrCommands, w.typ, w.routes)
		}
	}

	hot := map[string][]string{}
	for _, h := range p.RiskHotspots {
		hot[h.RiskType+" "+h.Path] = h.Indicators
	}
	wantHot := map[string][]string{
		"security internal/store/store.go":                                          {"builds SQL by string concatenation at line 26", "builds SQL with fmt.Sprintf at line 36", "runs a shell command (exec.Command \"sh\") at line 43"},
		"complexity internal/store/store.go":                                        {"function Report is 211 lines (lines 71–281)", "function Report has cyclomatic complexity 70"},
		"performance internal/store/store.go":                                       {"loops nested 3 deep at line 51", "compiles a regular expression on every call of Validate (regexp.MustCompile) at line 61"},
		"coupling internal/store/":                                                  {"imported by 6 files in 2 directories (fan-in)"},
		"security api/app/db.py":                                                    {"builds SQL by string formatting at line 13", "deserializes YAML without SafeLoader (yaml.load) at line 19", "deserializes untrusted data (pickle.loads) at line 20", "runs a shell command (subprocess with shell=True) at line 21"},
		"security web/src/routes/users.ts":                                          {"builds SQL with template interpolation at line 9"},
		"security engine/src/jobs.rs":                                               {"builds SQL with format! at line 31", "unsafe block at line 38"},
		"security billing/src/main/java/com/example/billing/BillingController.java": {"builds SQL by string concatenation at line 16", "runs an OS command (Runtime.exec) at line 33"},
	}
	for k, w := range wantHot {
		if !equal(hot[k], w) {
			t.Errorf("hotspot %s = %q, want %q", k, hot[k], w)
		}
	}
	// The changed file's hotspot comes first.
	if h := p.RiskHotspots[0]; h.Path != "internal/server/tls.go" || h.RiskType != "security" {
		t.Errorf("first hotspot = %+v", h)
	}

	rs := p.RepoSummary
	if !strings.HasPrefix(rs.Description, "shop is a Go project built with go, tested with jest. Shop is a small multi-language demo store") ||
		strings.Count(rs.Description, "\n\n") != 2 ||
		!strings.Contains(rs.Description, "most imported: internal/store/ (by 6 files)") ||
		!strings.Contains(rs.Description, "This commit changes 3 files (+12/-5 lines)") {
		t.Errorf("description = %q", rs.Description)
	}
	if rs.ArchitecturePattern != "Go standard layout (cmd/, internal/) with 14 entry points" {
		t.Errorf("architecture = %q", rs.ArchitecturePattern)
	}
	for _, tech := range []string{"Go", "TypeScript", "Python", "Rust", "Java", "chi", "gin", "echo", "gorilla/mux", "cobra", "express", "fastapi", "flask", "axum", "spring"} {
		if !contains(rs.KeyTechnologies, tech) {
			t.Errorf("key technologies %q lack %s", rs.KeyTechnologies, tech)
		}
	}
	if !contains(rs.PotentialConcerns, "1 function over 80 lines") || !contains(rs.NotablePatterns, "command-line interface: 3 commands") {
		t.Errorf("patterns %q concerns %q", rs.NotablePatterns, rs.PotentialConcerns)
	}
	// Excluded files: path and reason only.
	if e := index(p)[".env"]; e.Included || e.ExclusionReason != pack.ReasonCredentials {
		t.Errorf(".env = %+v", e)
	}
	if bytes.Contains(mustJSON(t, p), []byte("sk_live")) {
		t.Error(".env content leaked into the summary")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// ghToken is a realistic fake GitHub token the real scanner detects.
func ghToken(seed uint64) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	b.WriteString("ghp_")
	for range 36 {
		b.WriteByte(alnum[r.IntN(len(alnum))])
	}
	return b.String()
}

// Nothing from file contents leaves unscanned: secrets in routes, exported
// names' lines, first lines and diffs are redacted; excluded files give
// nothing but their path.
func TestSummaryNeverLeaks(t *testing.T) {
	tok1, tok2, tok3 := ghToken(1), ghToken(2), ghToken(3)
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/leak\n")
	g.Write("hook.go", "package main\n\nimport \"net/http\"\n\nfunc main() {\n\thttp.HandleFunc(\"/hook/"+tok1+"\", nil)\n\tq := \"SELECT * FROM t WHERE token = '"+tok2+"' AND id = \" + id()\n\t_ = q\n}\n\nfunc id() string { return \"1\" }\n")
	g.Write("notes.txt", "token "+tok3+"\n")
	g.Write("secret/server.go", "package secret\n\nimport \"net/http\"\n\n// HiddenMarkerFunc must never appear.\nfunc HiddenMarkerFunc() { http.HandleFunc(\"/hidden-marker-route\", nil) }\n")
	g.Write(".ctxpackignore", "secret/\n")
	g.Commit("leaky")
	g.Write("notes.txt", "token "+tok3+"\nmore "+tok1+"\n")
	g.Commit("more")
	out, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: "tree", Type: "summary"})
	data := string(out.Result.JSON)
	for _, tok := range []string{tok1, tok2, tok3} {
		if strings.Contains(data, tok) || strings.Contains(data, tok[4:20]) {
			t.Fatalf("secret %s leaked:\n%s", tok[:8], data)
		}
	}
	for _, marker := range []string{"HiddenMarkerFunc", "hidden-marker-route", "must never appear"} {
		if strings.Contains(data, marker) {
			t.Errorf("excluded file contributed %q", marker)
		}
	}
	if !strings.Contains(data, "GET /hook/[REDACTED:") && !strings.Contains(data, "ANY /hook/[REDACTED:") {
		t.Errorf("the route is not listed redacted:\n%s", data)
	}
	if e := index(p)["secret/server.go"]; e.Included || e.ExclusionReason != pack.ReasonPatternMatch {
		t.Errorf("secret/server.go = %+v", e)
	}
	if len(out.Result.Secrets) == 0 {
		t.Error("no secret events recorded")
	}
}

func TestSummaryDeterministic(t *testing.T) {
	g := shopRepo(t, filepath.Join(t.TempDir(), "origin", "shop"))
	a := g.Clone(filepath.Join(t.TempDir(), "a", "deep", "shop")).Dir
	b := g.Clone(filepath.Join(t.TempDir(), "b", "shop")).Dir
	for _, opts := range []pipeline.PackOptions{
		{Commit: "HEAD", Scope: "tree", Type: "summary"},
		{Base: "HEAD~1", Head: "HEAD", Scope: "tree", Type: "summary", Tier: "cheap"},
		{Base: "HEAD~1", Head: "HEAD", Scope: "tree", Type: "summary", MaxContentBytes: 7000},
	} {
		oa, ob := opts, opts
		oa.Dir, ob.Dir = a, b
		ra, _ := build(t, oa)
		rb, _ := build(t, ob)
		if !bytes.Equal(ra.Result.JSON, rb.Result.JSON) {
			t.Errorf("%+v: packs differ between clones", opts)
		}
		again, _ := build(t, oa)
		if !bytes.Equal(ra.Result.JSON, again.Result.JSON) {
			t.Errorf("%+v: packs differ between runs", opts)
		}
	}
}

// bigRepo is a generated repository of n Go files in nested packages, with a
// last commit that changes a few of them.
func bigRepo(t *testing.T, n int) *gittest.Repo {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/big\n")
	g.Write("README.md", "# big\n\nBig is a generated repository.\n")
	for i := 0; i < n; i++ {
		dir := fmt.Sprintf("svc%02d/part%02d", i%12, i%7)
		g.Write(fmt.Sprintf("%s/f%04d.go", dir, i), fmt.Sprintf("package part%02d\n\nimport \"example.com/big/core\"\n\n// F%d does work.\nfunc F%d() int { return core.Base + %d }\n", i%7, i, i, i))
	}
	g.Write("core/core.go", "package core\n\n// Base is shared.\nconst Base = 1\n")
	g.Commit("generated")
	for i := 0; i < 3; i++ {
		dir := fmt.Sprintf("svc%02d/part%02d", i%12, i%7)
		g.Write(fmt.Sprintf("%s/f%04d.go", dir, i), fmt.Sprintf("package part%02d\n\nimport \"example.com/big/core\"\n\n// F%d does more work.\nfunc F%d() int { return core.Base * %d }\n", i%7, i, i, i))
	}
	g.Commit("change three")
	return g
}

// A change in a large tree: the change pack fits tier cheap by listing the
// files it leaves out by directory; a Summary pack asked for fits too, its
// index condensed. Both account for every file.
func TestLargeTreeFitsTheTier(t *testing.T) {
	g := bigRepo(t, 600)
	for _, typ := range []string{"auto", "summary"} {
		out, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: "tree", Tier: "cheap", Type: typ})
		want := map[string]string{"auto": "full", "summary": "summary"}[typ]
		if p.Type != want {
			t.Fatalf("%s: type %s, reason %q", typ, p.Type, p.Metadata.SelectionReason)
		}
		if n := utf8.RuneCount(out.Result.JSON); n > 25000 || n != p.Budget.UsedChars || p.Budget.MaxChars != 25000 {
			t.Fatalf("%s: %d characters, budget %+v", typ, n, p.Budget)
		}
		if p.Metadata.IndexCondensed == "" {
			t.Fatalf("%s: index not condensed: %d entries", typ, len(p.FileIndex))
		}
		var paths []string
		for _, f := range out.Snapshot.Files {
			paths = append(paths, f.Path)
		}
		for _, f := range out.Result.Added {
			paths = append(paths, f.Path)
		}
		if problems := pack.CheckIndex(p.FileIndex, paths); len(problems) > 0 {
			t.Errorf("%s: the condensed index does not account for the files: %q", typ, problems)
		}
		if len(p.Changes) != 3 {
			t.Errorf("%s: changes = %d", typ, len(p.Changes))
		}
		for _, c := range p.Changes {
			if e, ok := index(p)[c.Path]; !ok || !e.Included {
				t.Errorf("%s: changed file %s not listed individually: %+v", typ, c.Path, e)
			}
		}
	}
}

// Each selection constraint, through the pipeline: a change is a change
// pack within its limits unless a Summary is asked for; a tree without
// changes (a clean work tree) is selected by size as seed 000 says.
func TestSelectionConstraints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	shopRepo(t, dir)
	change := `^change pack of 3 changed files: intent, diff and the code around it in order of value, within 6,000 tokens \(sized to the change: 4,000 \+ 2 × its [\d,]+ diff tokens, within 6,000–20,000\)$`
	cases := []struct {
		opts   pipeline.PackOptions
		typ    string
		reason string
	}{
		{pipeline.PackOptions{Commit: "HEAD", Type: "summary"}, "summary", `^summary pack requested$`},
		{pipeline.PackOptions{Commit: "HEAD", Type: "full", MaxFiles: 2}, "full", change},
		{pipeline.PackOptions{Commit: "HEAD", MaxContentBytes: 1500}, "full", change},
		{pipeline.PackOptions{Commit: "HEAD", Tier: "cheap"}, "full", change},
		{pipeline.PackOptions{Commit: "HEAD"}, "full", change},
		{pipeline.PackOptions{Commit: "HEAD", MaxTokens: 9000}, "full", `within 9,000 tokens \(limits.max_tokens\)$`},
		{pipeline.PackOptions{MaxContentBytes: 15000}, "summary", `^full pack estimate [\d,]+ bytes exceeds max_content_bytes 15,000$`},
		{pipeline.PackOptions{MaxFiles: 10}, "summary", `^[\d,]+ packable files exceed max_files 10$`},
		{pipeline.PackOptions{Tier: "cheap"}, "summary", `^full pack estimate [\d,]+ characters exceeds tier cheap's ceiling of 25,000 characters$`},
		{pipeline.PackOptions{}, "full", `^full pack estimate [\d,]+ bytes in [\d,]+ files fits max_content_bytes 512,000 and max_files 200$`},
	}
	for _, c := range cases {
		opts := c.opts
		opts.Dir, opts.Scope = dir, "tree"
		out, p := build(t, opts)
		if p.Type != c.typ || !regexp.MustCompile(c.reason).MatchString(p.Metadata.SelectionReason) {
			t.Errorf("%+v: %s %q, want %s %s", c.opts, p.Type, p.Metadata.SelectionReason, c.typ, c.reason)
		}
		if limit := p.Budget.MaxChars; limit > 0 && utf8.RuneCount(out.Result.JSON) > limit {
			t.Errorf("%+v: over the tier", c.opts)
		}
		if p.Budget.MaxTokens > 0 && p.Budget.EstimatedTokens > p.Budget.MaxTokens {
			t.Errorf("%+v: %d tokens, over the budget of %d", c.opts, p.Budget.EstimatedTokens, p.Budget.MaxTokens)
		}
		if limit := opts.MaxContentBytes; limit > 0 && p.Budget.ContentBytes > limit {
			t.Errorf("%+v: %d content bytes", c.opts, p.Budget.ContentBytes)
		}
		if limit := opts.MaxFiles; limit > 0 && p.Type == "full" && len(p.Contents)+len(p.KeyFiles) > limit {
			files := map[string]bool{}
			for _, it := range append(p.KeyFiles, p.Contents...) {
				files[it.Path] = true
			}
			if len(files) > limit {
				t.Errorf("%+v: %d files with content", c.opts, len(files))
			}
		}
	}
}

func TestSummaryTooLargeFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shop")
	shopRepo(t, dir)
	_, err := pipeline.Pack(t.Context(), pipeline.PackOptions{Dir: dir, Commit: "HEAD", Scope: "tree", Type: "summary", MaxContentBytes: 1500})
	if err == nil || !strings.Contains(err.Error(), "max_content_bytes 1,500") || !strings.Contains(err.Error(), "changed files") {
		t.Fatalf("err = %v", err)
	}
}

// Full packs: the files the changed files import come right after the key
// files, with role related.
func TestFullPackRelatedFiles(t *testing.T) {
	g := gittest.New(t)
	g.Write("go.mod", "module example.com/rel\n")
	g.Write("aaa/first.go", "package aaa\n")
	g.Write("lib/util/util.go", "package util\n\n// Helper helps.\nfunc Helper() {}\n")
	g.Write("web/app.ts", "export const x = 1;\n")
	g.Write("web/helpers.ts", "export const h = 2;\n")
	g.Write("cmd/tool/tool.go", "package tool\n\nimport \"example.com/rel/lib/util\"\n\nfunc Run() { util.Helper() }\n")
	g.Commit("base")
	g.Write("cmd/tool/tool.go", "package tool\n\nimport \"example.com/rel/lib/util\"\n\nfunc Run() { util.Helper(); util.Helper() }\n")
	g.Write("web/page.ts", "import { h } from \"./helpers\";\nexport const p = h;\n")
	g.Commit("change")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Scope: "tree", Type: "full"})
	var order []string
	for _, it := range p.Contents {
		order = append(order, it.Path+":"+it.Role)
	}
	// The added file is its own diff (source, first); the changed function's
	// file next (its enclosing definition); then what it calls and imports,
	// then the rest.
	want := []string{"web/page.ts:primary", "cmd/tool/tool.go:primary", "lib/util/util.go:related", "web/helpers.ts:related", "aaa/first.go:related"}
	if !equal(order, want) {
		t.Fatalf("contents order = %q, want %q", order, want)
	}
}

func TestSummaryEdgeSources(t *testing.T) {
	g := gittest.New(t)
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Type: "summary"})
	if p.Type != "summary" || len(p.FileIndex) != 0 || p.RepoSummary == nil || p.RepoSummary.ArchitecturePattern == "" {
		t.Fatalf("empty repo summary = %+v", p.RepoSummary)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	pg := gittest.New(t)
	pg.Dir = plain
	pg.Write("tool.py", "import sys\n\nif __name__ == \"__main__\":\n    print(sys.argv)\n")
	_, p = build(t, pipeline.PackOptions{Dir: plain, Type: "summary"})
	if p.Source.Kind != "plain" || len(p.Entrypoints) != 1 || p.Entrypoints[0].Type != "script" {
		t.Fatalf("plain summary entrypoints = %+v", p.Entrypoints)
	}
	// A dirty working tree: the edit is the change.
	dir := filepath.Join(t.TempDir(), "shop")
	sg := shopRepo(t, dir)
	sg.Write("web/src/util/currency.ts", "export const RATES: Record<string, number> = { EUR: 1 };\nexport const BASE = \"EUR\";\n")
	_, p = build(t, pipeline.PackOptions{Dir: dir, Type: "summary", Tier: "cheap"})
	if len(p.Changes) != 1 || p.KeyFilesSummary[0].Path != "web/src/util/currency.ts" || !equal(p.KeyFilesSummary[0].Exports, []string{"const RATES", "const BASE"}) {
		t.Fatalf("worktree summary: changes %+v, first summary %+v", p.Changes, p.KeyFilesSummary[0])
	}
}

// A change whose listing alone (its changed files) is over the token budget
// falls back to a Summary pack, which condenses it, and says why.
func TestChangeListingOverBudgetIsSummarised(t *testing.T) {
	g := gittest.New(t)
	for i := range 400 {
		g.Write(fmt.Sprintf("pkg%02d/file%03d.go", i%20, i), fmt.Sprintf("package pkg%02d\n\nconst C%d = %d\n", i%20, i, i))
	}
	g.Commit("four hundred files")
	_, p := build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if p.Type != "summary" || !regexp.MustCompile(`^the change pack's listing alone \(file index, changes, manifest\) is [\d,]+ tokens, over its budget of [\d,]+$`).MatchString(p.Metadata.SelectionReason) {
		t.Fatalf("type %s, reason %q", p.Type, p.Metadata.SelectionReason)
	}
	if p.Intent == nil || len(p.Intent.Commits) != 1 || p.Intent.Commits[0].Subject != "four hundred files" {
		t.Fatalf("intent = %+v", p.Intent)
	}
	// Asked for a full pack, it is the listing and what fits, marked truncated.
	_, p = build(t, pipeline.PackOptions{Dir: g.Dir, Commit: "HEAD", Type: "full"})
	if p.Type != "full" || !p.Budget.Truncated {
		t.Fatalf("type %s, budget %+v", p.Type, p.Budget)
	}
}
