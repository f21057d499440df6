package action

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/transparency"
)

const zeroSHA = "0000000000000000000000000000000000000000"

// harness is one simulated job: a workspace, the runner's environment, and
// fake artifact and GitHub services.
type harness struct {
	t      *testing.T
	ws     string
	art    *fakeArtifacts
	gh     *fakeGitHub
	sleep  *fakeSleep
	vars   map[string]string
	stdout bytes.Buffer
	now    time.Time
}

func newHarness(t *testing.T, workspace string) *harness {
	t.Helper()
	token := runtimeToken()
	h := &harness{t: t, ws: workspace, sleep: &fakeSleep{}, now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	h.art = newFakeArtifacts(t, token)
	h.gh = newFakeGitHub(t)
	h.gh.now = func() time.Time { return h.now }
	dir := t.TempDir()
	h.vars = map[string]string{
		"GITHUB_ACTIONS":          "true",
		"GITHUB_WORKSPACE":        workspace,
		"GITHUB_REPOSITORY":       "octo/widgets",
		"GITHUB_SERVER_URL":       "https://github.com",
		"GITHUB_API_URL":          h.gh.srv.URL,
		"GITHUB_RUN_ID":           "9876",
		"GITHUB_RUN_ATTEMPT":      "1",
		"GITHUB_RETENTION_DAYS":   "90",
		"GITHUB_OUTPUT":           filepath.Join(dir, "output"),
		"GITHUB_STEP_SUMMARY":     filepath.Join(dir, "summary"),
		"GITHUB_EVENT_PATH":       filepath.Join(dir, "event.json"),
		"ACTIONS_RUNTIME_TOKEN":   token,
		"ACTIONS_RESULTS_URL":     h.art.srv.URL + "/",
		"INPUT_GITHUB-TOKEN":      "ghs_" + secrettest.NewGen(7).Str(secrettest.Alnum, 36),
		"INPUT_COMMENT":           "true",
		"INPUT_FAIL-ON-VIOLATION": "true",
	}
	return h
}

// event writes the payload and sets GITHUB_EVENT_NAME and GITHUB_SHA.
func (h *harness) event(name, sha string, payload map[string]any) {
	h.t.Helper()
	data, err := json.MarshalIndent(payload, "", "  ")
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.vars["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.vars["GITHUB_EVENT_NAME"] = name
	h.vars["GITHUB_SHA"] = sha
}

func (h *harness) run() (*Result, error) {
	h.t.Helper()
	h.stdout.Reset()
	for _, f := range []string{h.vars["GITHUB_OUTPUT"], h.vars["GITHUB_STEP_SUMMARY"]} {
		os.Remove(f)
	}
	return Run(context.Background(), Options{
		Getenv:     func(k string) string { return h.vars[k] },
		Stdout:     &h.stdout,
		HTTPClient: &http.Client{Timeout: time.Minute},
		Sleep:      h.sleep.sleep,
		Now:        func() time.Time { return h.now },
		Rand:       func() float64 { return 0.25 },
		BlockSize:  4096, // several blocks per zip
	})
}

func (h *harness) mustRun() *Result {
	h.t.Helper()
	res, err := h.run()
	if err != nil {
		h.t.Fatalf("run: %v\nstdout:\n%s", err, h.stdout.String())
	}
	return res
}

// outputs parses $GITHUB_OUTPUT (name<<delimiter … delimiter).
func (h *harness) outputs() map[string]string {
	h.t.Helper()
	data, err := os.ReadFile(h.vars["GITHUB_OUTPUT"])
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func (h *harness) summary() string {
	h.t.Helper()
	data, err := os.ReadFile(h.vars["GITHUB_STEP_SUMMARY"])
	if err != nil {
		h.t.Fatal(err)
	}
	return string(data)
}

// zip returns the uploaded artifact's entries.
func (h *harness) zip() map[string][]byte {
	h.t.Helper()
	h.art.mu.Lock()
	blob := h.art.blob
	h.art.mu.Unlock()
	zr, err := zip.NewReader(bytes.NewReader(blob), int64(len(blob)))
	if err != nil {
		h.t.Fatalf("uploaded blob is not a zip: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			h.t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = data
	}
	return out
}

// checkPack validates and audits the uploaded pack against repoDir.
func (h *harness) checkPack(repoDir string) *pack.Pack {
	h.t.Helper()
	files := h.zip()
	for _, name := range []string{"pack.json", "pack.record.json", "pack.intoto.json", "summary.md"} {
		if len(files[name]) == 0 {
			h.t.Fatalf("artifact lacks %s (has %v)", name, keys(files))
		}
	}
	data := files["pack.json"]
	if err := schema.ValidatePack(data); err != nil {
		h.t.Fatalf("uploaded pack does not validate: %v", err)
	}
	if err := schema.ValidateRecord(files["pack.record.json"]); err != nil {
		h.t.Fatalf("uploaded record does not validate: %v", err)
	}
	f := filepath.Join(h.t.TempDir(), "pack.json")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	v, err := pipeline.Audit(context.Background(), pipeline.AuditOptions{PackFile: f, RepoDir: repoDir})
	if err != nil {
		h.t.Fatal(err)
	}
	if v.Status != audit.StatusPass {
		h.t.Fatalf("uploaded pack does not audit clean: %+v", v.Failed)
	}
	var p pack.Pack
	if err := json.Unmarshal(data, &p); err != nil {
		h.t.Fatal(err)
	}
	return &p
}

// mdEsc is how the reviewer summary writes text: ASCII punctuation as
// character references.
func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// noSecretAnywhere checks that value reached no server (request bodies,
// URLs, headers, and the uploaded zip's entries) and no job file.
func (h *harness) noSecretAnywhere(value string) {
	h.t.Helper()
	for _, rc := range []*recorder{&h.art.recorder, &h.gh.recorder} {
		for _, r := range rc.all() {
			if strings.Contains(string(r.Body), value) || strings.Contains(r.URL, value) {
				h.t.Fatalf("the secret reached a server: %s %s", r.Method, r.URL)
			}
			for k, vs := range r.Header {
				for _, v := range vs {
					if strings.Contains(v, value) {
						h.t.Fatalf("the secret reached a server in header %s", k)
					}
				}
			}
		}
	}
	for name, data := range h.zip() {
		if bytes.Contains(data, []byte(value)) {
			h.t.Fatalf("the secret is in the uploaded %s", name)
		}
	}
	for _, f := range []string{h.vars["GITHUB_OUTPUT"], h.vars["GITHUB_STEP_SUMMARY"]} {
		if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(value)) {
			h.t.Fatalf("the secret is in %s", f)
		}
	}
	if strings.Contains(h.stdout.String(), value) {
		h.t.Fatal("the secret is in the job log")
	}
}

// payloads shaped like GitHub's webhook payloads.

func repoJSON() map[string]any {
	return map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "widgets", "full_name": "octo/widgets",
		"private": false, "owner": map[string]any{"login": "octo", "id": 1, "type": "Organization"},
		"html_url": "https://github.com/octo/widgets", "default_branch": "main", "master_branch": "main",
		"pushed_at": 1700000000, "visibility": "public",
	}
}

func pushPayload(ref, before, after string, commits []string, created, deleted bool) map[string]any {
	cs := []any{}
	for _, c := range commits {
		cs = append(cs, map[string]any{"id": c, "tree_id": c, "distinct": true, "message": "change", "timestamp": "2023-11-14T22:13:20Z",
			"author": map[string]any{"name": "Fixture Author", "email": "author@example.com"}, "added": []any{}, "removed": []any{}, "modified": []any{}})
	}
	var head any
	if len(cs) > 0 {
		head = cs[len(cs)-1]
	}
	return map[string]any{
		"ref": ref, "before": before, "after": after, "created": created, "deleted": deleted, "forced": false,
		"base_ref": nil, "compare": "https://github.com/octo/widgets/compare/" + short(before) + "..." + short(after),
		"commits": cs, "head_commit": head, "repository": repoJSON(),
		"pusher": map[string]any{"name": "octocat", "email": "octocat@example.com"},
		"sender": map[string]any{"login": "octocat", "id": 583231, "type": "User"},
	}
}

func prPayload(action string, number int, base, head, headRepo string) map[string]any {
	baseRepo := repoJSON()
	hr := repoJSON()
	hr["full_name"] = headRepo
	hr["fork"] = headRepo != "octo/widgets"
	pr := map[string]any{
		"url": "https://api.github.com/repos/octo/widgets/pulls/" + strconv.Itoa(number), "id": 1, "number": number,
		"state": "open", "title": "Add util", "user": map[string]any{"login": "contributor", "type": "User"},
		"html_url": "https://github.com/octo/widgets/pull/" + strconv.Itoa(number),
		"head":     map[string]any{"label": "contributor:feature", "ref": "feature", "sha": head, "repo": hr},
		"base":     map[string]any{"label": "octo:main", "ref": "main", "sha": base, "repo": baseRepo},
		"draft":    false, "merged": false, "commits": 2, "changed_files": 2,
	}
	return map[string]any{"action": action, "number": number, "pull_request": pr, "repository": baseRepo,
		"sender": map[string]any{"login": "contributor", "type": "User"}}
}

// origin makes the repository the workflow runs on: main with two commits.
func origin(t *testing.T) (*gittest.Repo, string, string) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() { println(util()) }\n")
	g.Write("README.md", "# widgets\n\nA tool.\n")
	g.Write("docs/old.md", "# old\n")
	a := g.Commit("init")
	g.Write("util.go", "package main\n\nfunc util() int { return 1 }\n")
	g.Remove("docs/old.md")
	c := g.Commit("util")
	return g, a, c
}

func TestPushToExistingBranch(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.vars["INPUT_RETENTION-DAYS"] = "7"
	h.vars["INPUT_SARIF"] = "true"
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	res := h.mustRun()
	if res.Failed || res.Verdict != "pass" {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	p := h.checkPack(ws.Dir)
	if p.Source.Base != a || p.Source.Head != c || p.Source.Trigger != "push" {
		t.Fatalf("source = %+v", p.Source)
	}
	var paths []string
	for _, ch := range p.Changes {
		paths = append(paths, ch.Status+" "+ch.Path)
	}
	if strings.Join(paths, ",") != "deleted docs/old.md,added util.go" {
		t.Fatalf("changes = %v", paths)
	}
	if h.art.name != "ctxpack-"+c[:7] {
		t.Fatalf("artifact name %q", h.art.name)
	}
	if want := h.now.Add(7 * 24 * time.Hour).Format(time.RFC3339); h.art.expiresAt != want {
		t.Fatalf("expires_at %q, want %q", h.art.expiresAt, want)
	}
	if len(h.art.blockIDs) < 2 {
		t.Fatalf("want several blocks, got %d", len(h.art.blockIDs))
	}
	out := h.outputs()
	want := map[string]string{
		"pack-id": p.PackID, "pack-path": ".ctxpack-action/pack.json", "record-path": ".ctxpack-action/pack.record.json",
		"verdict": "pass", "files-included": strconv.Itoa(p.Metadata.FilesIncluded), "files-excluded": strconv.Itoa(p.Metadata.FilesExcluded),
		"secrets-found": "0", "artifact-id": "42", "artifact-url": "https://github.com/octo/widgets/actions/runs/9876/artifacts/42",
		"comment-url": "", "sarif-path": ".ctxpack-action/ctxpack.sarif",
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("output %s = %q, want %q", k, out[k], v)
		}
	}
	// The files the outputs name exist and match the upload.
	onDisk, err := os.ReadFile(filepath.Join(ws.Dir, out["pack-path"]))
	if err != nil || !bytes.Equal(onDisk, h.zip()["pack.json"]) {
		t.Fatalf("pack-path does not hold the uploaded pack (%v)", err)
	}
	if st := ws.Git("status", "--porcelain"); st != "" {
		t.Fatalf("the action left the work tree dirty:\n%s", st)
	}
	sum := h.summary()
	for _, s := range []string{"ctxpack: context pack passed the policy", "<code>" + p.PackID + "</code>", "https://github.com/octo/widgets/actions/runs/9876/artifacts/42", "<code>util.go</code>"} {
		if !strings.Contains(sum, s) {
			t.Errorf("job summary lacks %q", s)
		}
	}
	if strings.Contains(sum, Marker) {
		t.Error("the job summary carries the comment marker")
	}
	var sarif map[string]any
	if err := json.Unmarshal(h.zip()["ctxpack.sarif"], &sarif); err != nil || sarif["version"] != "2.1.0" {
		t.Fatalf("sarif: %v %v", err, sarif["version"])
	}
	// No comment on a push; the token and the signature are masked, and the
	// signature is never logged in the clear.
	if len(h.gh.all()) != 0 {
		t.Fatalf("push made GitHub API calls: %v", h.gh.all())
	}
	log := h.stdout.String()
	if !strings.Contains(log, "::add-mask::"+h.vars["INPUT_GITHUB-TOKEN"]) {
		t.Error("the github-token was not masked")
	}
	if strings.Count(log, fakeSig) != strings.Count(log, "::add-mask::"+fakeSig) {
		t.Errorf("the signature appears in the log outside ::add-mask::\n%s", log)
	}
	if len(h.sleep.all()) != 0 {
		t.Fatalf("unexpected retries: %v", h.sleep.all())
	}
}

func TestNewBranchPushPacksAgainstDefaultBranchMergeBase(t *testing.T) {
	g, _, c := origin(t)
	g.Git("checkout", "-q", "-b", "feature")
	g.Write("feature.go", "package main\n\nfunc feature() {}\n")
	d := g.Commit("feature")
	g.Git("checkout", "-q", "main")
	g.Write("later.md", "# later on main\n")
	g.Commit("main moves on")
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	ws.Git("checkout", "-q", "feature")
	h := newHarness(t, ws.Dir)
	h.event("push", d, pushPayload("refs/heads/feature", zeroSHA, d, []string{d}, true, false))
	res := h.mustRun()
	if res.Verdict != "pass" || res.Failed {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	p := h.checkPack(ws.Dir)
	if p.Source.Base != c || p.Source.Head != d {
		t.Fatalf("want base = merge base %s, got %+v", c[:7], p.Source)
	}
	if len(p.Changes) != 1 || p.Changes[0].Path != "feature.go" {
		t.Fatalf("changes = %+v", p.Changes)
	}
}

func TestNewBranchWithoutDefaultBranchPacksHeadCommit(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	payload := pushPayload("refs/heads/main", zeroSHA, c, []string{c}, true, false)
	h.event("push", c, payload)
	res := h.mustRun()
	p := h.checkPack(ws.Dir)
	if res.Verdict != "pass" || p.Source.Head != c || p.Source.Base != a || len(p.Changes) != 2 {
		t.Fatalf("result %+v source %+v", res, p.Source)
	}
}

func TestBranchDeletionDoesNothing(t *testing.T) {
	g, _, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	payload := pushPayload("refs/heads/gone", c, zeroSHA, nil, false, true)
	if payload["head_commit"] != nil || len(payload["commits"].([]any)) != 0 {
		t.Fatal("deletion payload shape")
	}
	h.event("push", c, payload)
	res := h.mustRun()
	if res.Verdict != "skipped" || res.Failed {
		t.Fatalf("result %+v", res)
	}
	if out := h.outputs(); out["verdict"] != "skipped" || out["pack-id"] != "" {
		t.Fatalf("outputs %v", out)
	}
	if !strings.Contains(h.summary(), "nothing to pack") {
		t.Fatalf("summary %q", h.summary())
	}
	if n := len(h.art.all()) + len(h.gh.all()); n != 0 {
		t.Fatalf("a deletion made %d requests", n)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, OutDir)); err == nil {
		t.Fatal("a deletion wrote files")
	}
}

// prRepo is origin plus a feature branch with two commits.
func prRepo(t *testing.T) (*gittest.Repo, string, string) {
	g, _, c := origin(t)
	g.Git("checkout", "-q", "-b", "feature")
	g.Write("util.go", "package main\n\nfunc util() int { return 2 }\n")
	g.Commit("tweak util")
	g.Write("feature.go", "package main\n\nfunc feature() {}\n")
	e := g.Commit("feature")
	g.Git("checkout", "-q", "main")
	return g, c, e
}

func TestPullRequestStickyComment(t *testing.T) {
	g, base, head := prRepo(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	// 130 earlier comments (two pages), one by a person quoting the marker.
	for i := 0; i < 130; i++ {
		body := "looks good " + strconv.Itoa(i)
		if i == 5 {
			body = Marker + "\nI copied this from the bot"
		}
		h.gh.addComment(12, "reviewer", "User", body)
	}
	h.gh.rateLimitOnce = true
	h.event("pull_request", zeroSHA[:39]+"1", prPayload("opened", 12, base, head, "octo/widgets"))
	res := h.mustRun()
	if res.Verdict != "pass" || res.Failed || res.CommentURL == "" {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	p := h.checkPack(ws.Dir)
	if p.Source.Base != base || p.Source.Head != head || p.Source.Trigger != "pull_request" {
		t.Fatalf("source %+v", p.Source)
	}
	ours := h.gh.ours(12)
	if len(ours) != 1 || h.gh.creates != 1 {
		t.Fatalf("after one run: %d comments of ours, %d creates", len(ours), h.gh.creates)
	}
	first := ours[0].Body
	if !strings.HasPrefix(first, Marker) || !strings.Contains(first, "<code>"+p.PackID+"</code>") ||
		!strings.Contains(first, "/actions/runs/9876/artifacts/42") || len([]rune(first)) >= 65536 {
		t.Fatalf("comment body:\n%s", first)
	}
	// The rate limit was waited out (until X-RateLimit-Reset), not failed on.
	if w := h.sleep.all(); len(w) != 1 || w[0] < 30*time.Second || w[0] > 32*time.Second {
		t.Fatalf("waits %v", w)
	}
	if out := h.outputs(); out["comment-url"] != res.CommentURL || out["verdict"] != "pass" {
		t.Fatalf("outputs %v", out)
	}

	// A second run (synchronize) edits the same comment.
	h.event("pull_request", zeroSHA[:39]+"1", prPayload("synchronize", 12, base, head, "octo/widgets"))
	h.now = h.now.Add(time.Hour)
	res2 := h.mustRun()
	ours = h.gh.ours(12)
	if len(ours) != 1 || h.gh.creates != 1 || h.gh.edits != 1 || res2.CommentURL != res.CommentURL {
		t.Fatalf("after two runs: %d comments of ours, %d creates, %d edits", len(ours), h.gh.creates, h.gh.edits)
	}
	for _, c := range h.gh.comments[12] {
		if c.Login == "reviewer" && strings.HasPrefix(c.Body, Marker) && !strings.Contains(c.Body, "copied") {
			t.Fatal("the person's comment was edited")
		}
	}
}

func TestForkPullRequestWithSecretAndHostileNames(t *testing.T) {
	g, _, c := origin(t)
	token := secrettest.Make(42).GitHub
	g.Git("checkout", "-q", "-b", "feature")
	hostile := []string{
		"<img src=x onerror=alert(1)>.md",
		"@octo/admins see #1 [x](javascript:alert(1)).txt",
		"evil::error file=main.go::pwned%0A.txt",
		"a|b|c `code` **bold**.md",
	}
	for _, name := range hostile {
		g.Write(name, "harmless text\n")
	}
	// The secret sits in a file whose name tries to forge an annotation.
	secretFile := "deploy/x,y::error file=main.go::pwned.go"
	g.Write(secretFile, "package deploy\n\nconst apiToken = \""+token+"\"\n")
	g.Commit("fork change")
	g.Write("notes.md", "# notes\n")
	head := g.Commit("more")
	g.Git("checkout", "-q", "main")
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.gh.commentStatus = http.StatusForbidden
	h.event("pull_request", zeroSHA[:39]+"2", prPayload("synchronize", 31, c, head, "contributor/widgets"))
	res, err := h.run()
	if err != nil {
		t.Fatalf("a 403 on the comment must not error: %v", err)
	}
	// The secret in the fork's history fails the verdict (fail-on-violation);
	// the comment's 403 is only a warning.
	if res.Verdict != "fail" || !res.Failed || res.CommentURL != "" {
		t.Fatalf("result %+v", res)
	}
	for _, why := range res.Why {
		if strings.Contains(why, "comment") {
			t.Fatalf("the step fails because of the comment: %v", res.Why)
		}
	}
	log := h.stdout.String()
	if !strings.Contains(log, "::warning::The pull request comment was not posted") || !strings.Contains(log, "fork") {
		t.Fatalf("no warning about the comment:\n%s", log)
	}
	sum := h.summary()
	if !strings.Contains(sum, "The pull request comment was not posted") {
		t.Fatalf("the job summary does not say the comment failed:\n%s", sum)
	}
	// The pack itself is clean: redacted, valid, audits clean.
	p := h.checkPack(ws.Dir)
	redacted := false
	for _, it := range append(p.KeyFiles, p.Contents...) {
		if it.Path == secretFile && strings.Contains(it.Content, "[REDACTED:") {
			redacted = true
		}
	}
	for _, e := range p.FileIndex {
		if e.Path == secretFile && !e.Included {
			redacted = true // kept out is as good
		}
	}
	if !redacted {
		t.Fatal("the planted secret was neither redacted nor kept out")
	}
	h.noSecretAnywhere(token)
	out := h.outputs()
	if out["verdict"] != "fail" || out["secrets-found"] == "0" || out["artifact-id"] != "42" {
		t.Fatalf("outputs %v", out)
	}
	// The comment body the server refused, the summary and the log render
	// the hostile names harmlessly.
	var bodies []string
	for _, r := range h.gh.all() {
		if r.Method == http.MethodPost {
			var in struct{ Body string }
			json.Unmarshal(r.Body, &in)
			bodies = append(bodies, in.Body)
		}
	}
	if len(bodies) != 1 {
		t.Fatalf("want one comment attempt, got %d", len(bodies))
	}
	if os.Getenv("CTXPACK_DEBUG") != "" {
		t.Logf("comment:\n%s\nlog:\n%s", bodies[0], log)
	}
	// Markup only counts unescaped: "\](" is text, and GitHub links no
	// mention inside a code element.
	unescapedLink := regexp.MustCompile(`(^|[^\\])\]\(javascript`)
	codeElem := regexp.MustCompile(`<code>.*?</code>`)
	for _, doc := range []string{bodies[0], sum} {
		for _, bad := range []string{"<img", "**bold**", "|b|"} {
			if strings.Contains(doc, bad) {
				t.Errorf("rendered markdown holds %q", bad)
			}
		}
		if m := unescapedLink.FindString(doc); m != "" {
			t.Errorf("rendered markdown holds the link %q", m)
		}
		if outside := codeElem.ReplaceAllString(doc, ""); strings.Contains(outside, "@octo/admins") {
			t.Errorf("rendered markdown mentions @octo/admins outside code")
		}
		if !strings.Contains(doc, "@octo/admins") && !strings.Contains(doc, "@\u200docto/admins") {
			t.Errorf("the hostile name is not shown at all")
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "::error file=main.go::pwned") || strings.Contains(line, "pwned") && strings.HasPrefix(line, "::error file=main.go") {
			t.Fatalf("a file name injected a workflow command: %q", line)
		}
		if strings.HasPrefix(line, "::") {
			cmd, _, _ := strings.Cut(strings.TrimPrefix(line, "::"), "::")
			name, _, _ := strings.Cut(cmd, " ")
			switch name {
			case "add-mask", "warning", "error", "notice":
			default:
				t.Fatalf("unexpected workflow command %q", line)
			}
		}
	}
	if !strings.Contains(log, "::error file=deploy/x%2Cy%3A%3Aerror file=main.go%3A%3Apwned.go,line=3,title=ctxpack secret_in_history::") {
		t.Errorf("no annotation on the secret's line:\n%s", log)
	}
}

// apiFiles lists base...head like GitHub's API, from the origin repository.
func apiFiles(t *testing.T, g *gittest.Repo, base, head string) []map[string]any {
	t.Helper()
	mb := g.Git("merge-base", base, head)
	names := strings.Split(strings.Trim(g.Git("diff", "-z", "--name-status", "--no-renames", mb, head), "\x00"), "\x00")
	nums := map[string][2]int{}
	for _, rec := range strings.Split(strings.Trim(g.Git("diff", "-z", "--numstat", "--no-renames", mb, head), "\x00"), "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) == 3 {
			a, _ := strconv.Atoi(f[0])
			d, _ := strconv.Atoi(f[1])
			nums[f[2]] = [2]int{a, d}
		}
	}
	var out []map[string]any
	for i := 0; i+1 < len(names); i += 2 {
		st, path := names[i], names[i+1]
		status := map[string]string{"A": "added", "M": "modified", "D": "removed"}[st]
		patch := g.Git("--literal-pathspecs", "diff", mb, head, "--", path)
		if j := strings.Index(patch, "@@"); j >= 0 {
			patch = patch[j:]
		}
		out = append(out, map[string]any{"sha": "0", "filename": path, "status": status,
			"additions": nums[path][0], "deletions": nums[path][1], "changes": nums[path][0] + nums[path][1], "patch": patch})
	}
	return out
}

func TestArtifactRetriesThenSucceeds(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.art.camel = true
	h.art.fail["CreateArtifact"] = []int{http.StatusBadGateway}
	h.art.fail["PutBlock"] = []int{http.StatusServiceUnavailable}
	h.art.fail["FinalizeArtifact"] = []int{http.StatusTooManyRequests}
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	res := h.mustRun()
	if res.Failed || res.ArtifactID != "42" {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	h.checkPack(ws.Dir)
	waits := h.sleep.all()
	if len(waits) != 3 {
		t.Fatalf("want 3 retries, got %v", waits)
	}
	for _, w := range waits {
		// First retry: [3 s, 4.5 s), jitter 0.25 → 3.375 s.
		if w != 3375*time.Millisecond {
			t.Fatalf("wait %v, want the toolkit's first backoff", w)
		}
	}
	if h.art.calls["CreateArtifact"] != 2 || h.art.calls["FinalizeArtifact"] != 2 {
		t.Fatalf("calls %v", h.art.calls)
	}
}

func TestArtifactGivesUpAndFailsTheStep(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.art.fail["CreateArtifact"] = []int{500, 502, 503, 504, 500, 500}
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	res := h.mustRun()
	if !res.Failed || res.ArtifactID != "" || res.Verdict != "pass" {
		t.Fatalf("result %+v", res)
	}
	if h.art.calls["CreateArtifact"] != 5 || len(h.sleep.all()) != 4 {
		t.Fatalf("calls %v waits %v", h.art.calls, h.sleep.all())
	}
	// Outputs and summary are still written.
	if out := h.outputs(); out["verdict"] != "pass" || out["artifact-id"] != "" {
		t.Fatalf("outputs %v", out)
	}
	if !strings.Contains(h.stdout.String(), "::error::artifact upload failed") {
		t.Fatalf("log:\n%s", h.stdout.String())
	}
}

func TestArtifactNotRetriedOn4xx(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.art.fail["CreateArtifact"] = []int{http.StatusConflict}
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	res := h.mustRun()
	if !res.Failed || h.art.calls["CreateArtifact"] != 1 || len(h.sleep.all()) != 0 {
		t.Fatalf("result %+v calls %v", res, h.art.calls)
	}
	if !strings.Contains(strings.Join(res.Why, " "), "already exists") {
		t.Fatalf("why %v", res.Why)
	}
}

func TestOutsideActionsDegrades(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	for _, k := range []string{"ACTIONS_RUNTIME_TOKEN", "ACTIONS_RESULTS_URL", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} {
		delete(h.vars, k)
	}
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	res := h.mustRun()
	if res.Failed || res.Verdict != "pass" || res.ArtifactID != "" {
		t.Fatalf("result %+v", res)
	}
	log := h.stdout.String()
	for _, s := range []string{"artifact not uploaded", "GITHUB_OUTPUT is not set", "GITHUB_STEP_SUMMARY is not set", "pack-id=" + res.PackID} {
		if !strings.Contains(log, s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}
	if len(h.art.all()) != 0 {
		t.Fatal("requests to the artifact service without runtime variables")
	}
}

func TestFailOnViolationFalse(t *testing.T) {
	g, a, _ := origin(t)
	g.Write("deploy/config.go", "package deploy\n\nconst apiToken = \""+secrettest.Make(9).GitHub+"\"\n")
	c := g.Commit("oops")
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.vars["INPUT_FAIL-ON-VIOLATION"] = "false"
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	res := h.mustRun()
	if res.Failed || res.Verdict != "fail" {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(h.stdout.String(), "fail-on-violation is false") {
		t.Fatal("no warning")
	}
}

func TestDispatchAndTag(t *testing.T) {
	g, _, c := origin(t)
	g.Git("tag", "-a", "v1.0.0", "-m", "release")
	tagObj := g.Git("rev-parse", "v1.0.0")
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	for _, tc := range []struct {
		name    string
		sha     string
		payload map[string]any
	}{
		{"workflow_dispatch", c, map[string]any{"inputs": map[string]any{}, "ref": "refs/heads/main", "repository": repoJSON()}},
		{"schedule", c, map[string]any{"schedule": "0 0 * * *"}},
		{"push", c, pushPayload("refs/tags/v1.0.0", zeroSHA, tagObj, nil, true, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, ws.Dir)
			h.event(tc.name, tc.sha, tc.payload)
			res := h.mustRun()
			p := h.checkPack(ws.Dir)
			if res.Verdict != "pass" || p.Source.Head != c {
				t.Fatalf("result %+v source %+v", res, p.Source)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	tests := []struct {
		name string
		edit func(h *harness)
		want string
	}{
		{"missing payload", func(h *harness) { h.vars["GITHUB_EVENT_PATH"] = filepath.Join(t.TempDir(), "nope.json") }, "read the event payload"},
		{"unset payload", func(h *harness) { delete(h.vars, "GITHUB_EVENT_PATH") }, "GITHUB_EVENT_PATH is not set"},
		{"bad payload", func(h *harness) { os.WriteFile(h.vars["GITHUB_EVENT_PATH"], []byte("{oops"), 0o644) }, "not a JSON object"},
		{"bad boolean", func(h *harness) { h.vars["INPUT_COMMENT"] = "yes" }, "input comment"},
		{"bad type", func(h *harness) { h.vars["INPUT_TYPE"] = "tiny" }, "input type"},
		{"bad artifact name", func(h *harness) { h.vars["INPUT_ARTIFACT-NAME"] = "a/b" }, "forward slash"},
		{"bad retention", func(h *harness) { h.vars["INPUT_RETENTION-DAYS"] = "0" }, "retention-days"},
		{"not a repo", func(h *harness) { h.vars["GITHUB_WORKSPACE"] = t.TempDir() }, "not a git repository"},
		{"missing working dir", func(h *harness) { h.vars["INPUT_WORKING-DIRECTORY"] = "nope" }, "working-directory"},
		{"unknown commit", func(h *harness) {
			h.event("push", c, pushPayload("refs/heads/main", a, "1234567890123456789012345678901234567890", nil, false, false))
		}, "not in the checkout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, ws.Dir)
			h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
			tt.edit(h)
			_, err := h.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !strings.Contains(h.stdout.String(), "::error::ctxpack: ") {
				t.Fatalf("no error annotation:\n%s", h.stdout.String())
			}
		})
	}
}

func TestSignedAttestation(t *testing.T) {
	g, a, c := origin(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, ws.Dir)
	h.vars["CTXPACK_SIGNING_KEY"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
	h.mustRun()
	files := h.zip()
	if _, err := transparency.VerifyAttestation(files["pack.intoto.json"], files["pack.json"], priv.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("attestation: %v", err)
	}
	h.vars["CTXPACK_SIGNING_KEY"] = "not a key"
	if _, err := h.run(); err == nil || !strings.Contains(err.Error(), "CTXPACK_SIGNING_KEY") {
		t.Fatalf("err %v", err)
	}
}

// A pull request's title, body, labels and the issues it closes are the
// pack's intent: checklist items become acceptance criteria, paths the body
// names are prioritised, an issue the API cannot give is kept by number,
// and a secret in the body is redacted.
func TestPullRequestIntent(t *testing.T) {
	g, base, head := prRepo(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.gh.issues[7] = "util() should exist"
	token := secrettest.Make(7).GitHub
	payload := prPayload("opened", 12, base, head, "octo/widgets")
	pr := payload["pull_request"].(map[string]any)
	pr["title"] = "Add util for the main loop"
	pr["body"] = "Adds `util.go`.\n\nCloses #7, fixes #8\n\n- [ ] util returns 1\n- [x] main prints it\n\nDebug token: " + token + "\n"
	pr["labels"] = []any{map[string]any{"name": "enhancement"}}
	h.event("pull_request", zeroSHA[:39]+"1", payload)
	h.mustRun()
	p := h.checkPack(ws.Dir)
	in := p.Intent
	if in == nil || in.PullRequest == nil {
		t.Fatalf("no pull request intent: %+v", in)
	}
	if in.Goal != "Add util for the main loop" || in.PullRequest.Number != 12 || strings.Join(in.PullRequest.Labels, ",") != "enhancement" {
		t.Errorf("intent = %+v", in)
	}
	if len(in.PullRequest.Closes) != 2 || in.PullRequest.Closes[0] != (pack.IssueRef{Number: 7, Title: "util() should exist"}) || in.PullRequest.Closes[1] != (pack.IssueRef{Number: 8}) {
		t.Errorf("closes = %+v", in.PullRequest.Closes)
	}
	if strings.Join(in.Acceptance, "|") != "util returns 1|main prints it" {
		t.Errorf("acceptance = %q", in.Acceptance)
	}
	if strings.Join(in.Mentioned, ",") != "util.go" {
		t.Errorf("mentioned = %q", in.Mentioned)
	}
	if strings.Contains(in.PullRequest.Body, token) || len(in.Redactions) == 0 || in.Redactions[0].Field != "pull_request.body" {
		t.Errorf("the body's secret: redactions %+v", in.Redactions)
	}
	if len(in.Commits) == 0 {
		t.Error("commit messages missing")
	}
}

// partialClone is what actions/checkout makes with filter: blob:none (and
// sparse-checkout: when sparse names directories): a partial clone of g's
// branch, depth 0 (full history) unless depth is set.
func partialClone(t *testing.T, g *gittest.Repo, branch string, depth int, sparse ...string) string {
	t.Helper()
	g.Git("config", "uploadpack.allowFilter", "true")
	g.Git("config", "uploadpack.allowAnySHA1InWant", "true")
	dir := filepath.Join(t.TempDir(), "widgets")
	args := []string{"clone", "-q", "--filter=blob:none", "--branch", branch}
	if depth > 0 {
		args = append(args, "--depth", strconv.Itoa(depth))
	}
	if len(sparse) > 0 {
		args = append(args, "--sparse")
	}
	g.Git(append(args, "file://"+g.Dir, dir)...)
	if len(sparse) > 0 {
		g.At(dir).Git(append([]string{"sparse-checkout", "set"}, sparse...)...)
	}
	return dir
}

// A pull request checked out with filter: blob:none and sparse-checkout
// (fetch-depth: 0): packed from git history, the base's blobs fetched on
// demand; the pack audits clean against the partial clone itself.
func TestPartialSparseCheckoutPullRequest(t *testing.T) {
	g, base, head := prRepo(t)
	// The changed files (util.go, feature.go) are outside the sparse set.
	dir := partialClone(t, g, "feature", 0, "--no-cone", "/README.md")
	if _, err := os.Stat(filepath.Join(dir, "util.go")); !os.IsNotExist(err) {
		t.Fatalf("util.go is checked out: %v", err)
	}
	h := newHarness(t, dir)
	h.event("pull_request", head, prPayload("opened", 12, base, head, "octo/widgets"))
	res := h.mustRun()
	if res.Verdict != "pass" || res.Failed {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	for _, repoDir := range []string{dir, g.Dir} {
		p := h.checkPack(repoDir)
		if p.Source.Head != head || p.Source.Base != base || len(p.Changes) != 2 {
			t.Fatalf("source %+v changes %+v", p.Source, p.Changes)
		}
	}
	if strings.Contains(h.summary(), "History was not available") {
		t.Fatal("a full-history partial clone took the shallow path")
	}
}

// actions/checkout's default depth with filter: blob:none: shallow and
// partial; the history is fetched from the checkout's own remote and the
// blobs of the change in one request.
func TestShallowPartialPullRequestFetchesHistory(t *testing.T) {
	g, base, head := prRepo(t)
	dir := partialClone(t, g, "feature", 1)
	h := newHarness(t, dir)
	h.event("pull_request", head, prPayload("opened", 12, base, head, "octo/widgets"))
	res := h.mustRun()
	if res.Verdict != "pass" || res.Failed {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	for _, repoDir := range []string{dir, g.Dir} {
		p := h.checkPack(repoDir)
		if p.Source.Head != head || p.Source.Base != base || len(p.Changes) != 2 {
			t.Fatalf("source %+v changes %+v", p.Source, p.Changes)
		}
	}
	if out := h.stdout.String(); !strings.Contains(out, "fetching the history of the change") || !strings.Contains(out, "blobs of the change") {
		t.Fatalf("no fetch reported:\n%s", out)
	}
}

// A partial clone whose promisor remote cannot be reached: the changed
// files' base versions cannot be read, so the verdict fails and the step
// with it, saying which files and why.
func TestPartialCloneUnreachablePromisorFails(t *testing.T) {
	g, base, head := prRepo(t)
	dir := partialClone(t, g, "feature", 0)
	if err := os.Rename(g.Dir, g.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, dir)
	h.event("pull_request", head, prPayload("opened", 12, base, head, "octo/widgets"))
	res, err := h.run()
	if err != nil {
		t.Fatalf("%v\n%s", err, h.stdout.String())
	}
	if res.Verdict != "fail" || !res.Failed {
		t.Fatalf("result %+v", res)
	}
	if out := h.stdout.String(); !strings.Contains(out, "content_unavailable") || !strings.Contains(out, "util.go") {
		t.Fatalf("the failure does not name the unreadable change:\n%s", out)
	}
}
