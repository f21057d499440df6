package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// prSecret is a realistic token the pull request adds in one commit and
// removes in the next: only a per-commit scan finds it.
func prSecret() string { return "GH_TOKEN=" + secrettest.Make(31).GitHub }

// recordVerdict reads the uploaded record's verdict.
func (h *harness) recordVerdict() audit.Verdict {
	h.t.Helper()
	var rec struct {
		Verdict audit.Verdict `json:"verdict"`
	}
	if err := json.Unmarshal(h.zip()["pack.record.json"], &rec); err != nil {
		h.t.Fatal(err)
	}
	return rec.Verdict
}

func failedCodes(v audit.Verdict) string {
	var out []string
	for _, c := range v.Failed {
		out = append(out, c.Code)
	}
	return strings.Join(out, ",")
}

// historyHit finds the secret_in_history check of commit at path:line.
func historyHit(v audit.Verdict, commit, path string, line int) bool {
	for _, c := range v.Failed {
		if c.Code == audit.CodeSecretInHistory && c.Details["commit"] == commit && c.Details["path"] == path && c.Details["line"] == float64(line) {
			return true
		}
	}
	return false
}

// TestShallowPullRequestFetchesItsHistory is actions/checkout's default for
// a pull request: a depth-1 clone of the merge commit. The history of the
// pull request is fetched from the checkout's own remote, and the secret an
// intermediate commit added (and the next removed) fails the verdict.
func TestShallowPullRequestFetchesItsHistory(t *testing.T) {
	pr := gittest.NewPullRequest(t, prSecret(), nil, nil)
	h := newHarness(t, pr.Checkout.Dir)
	h.event("pull_request", pr.Merge, prPayload("synchronize", 1, pr.Base, pr.Head, "octo/widgets"))
	res, err := h.run()
	if err != nil {
		t.Fatalf("%v\n%s", err, h.stdout.String())
	}
	if res.Verdict != "fail" || !res.Failed {
		t.Fatalf("result %+v\n%s", res, h.stdout.String())
	}
	v := h.recordVerdict()
	if !historyHit(v, pr.Adds, "config.env", 2) || len(v.Skipped) != 0 {
		t.Fatalf("verdict %+v", v)
	}
	if !strings.Contains(h.stdout.String(), "git fetch --no-tags") {
		t.Fatalf("no fetch logged:\n%s", h.stdout.String())
	}
	p := h.checkPack(pr.Origin.Dir)
	if p.Source.Head != pr.Head || p.Source.Base == "" || p.Source.Config == nil || p.Source.Config.From != "base" {
		t.Fatalf("source %+v", p.Source)
	}
	h.noSecretAnywhere(secrettest.Make(31).GitHub)
}

// breakRemote makes the checkout's remote unreachable, as for a checkout
// whose credentials were not persisted.
func breakRemote(t *testing.T, pr *gittest.PullRequest) {
	pr.Checkout.Git("remote", "set-url", "origin", "file://"+filepath.Join(t.TempDir(), "gone"))
}

// serveChange registers what GitHub's API says about a pull request of pr:
// its files, commits, each commit's patches, the comparison and the base's
// root.
func serveChange(t *testing.T, h *harness, pr *gittest.PullRequest, number int) string {
	o := pr.Origin
	mb := o.Git("merge-base", pr.Base, pr.Head)
	n := "/repos/octo/widgets/pulls/" + itoa(number)
	h.gh.files["GET "+n+"/files"] = apiFiles(t, o, pr.Base, pr.Head)
	var commits []map[string]any
	for _, c := range strings.Fields(o.Git("rev-list", "--reverse", mb+".."+pr.Head)) {
		commits = append(commits, map[string]any{"sha": c})
		h.gh.files["GET /repos/octo/widgets/commits/"+c] = apiFiles(t, o, c+"~1", c)
		h.gh.parents[c] = []string{o.Git("rev-parse", c+"~1")}
	}
	h.gh.files["GET "+n+"/commits"] = commits
	h.gh.files["GET /repos/octo/widgets/compare/"+pr.Base+"..."+pr.Head] = apiFiles(t, o, pr.Base, pr.Head)
	h.gh.mergeBase = mb
	h.gh.refs[mb] = true
	return mb
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestShallowPullRequestUsesAPIPatches: the remote cannot be fetched from,
// so the change list and every commit's patches come from the API; the
// intermediate commit's secret still fails the verdict.
func TestShallowPullRequestUsesAPIPatches(t *testing.T) {
	pr := gittest.NewPullRequest(t, prSecret(), nil, nil)
	breakRemote(t, pr)
	h := newHarness(t, pr.Checkout.Dir)
	serveChange(t, h, pr, 1)
	h.event("pull_request", pr.Merge, prPayload("synchronize", 1, pr.Base, pr.Head, "octo/widgets"))
	res, err := h.run()
	if err != nil {
		t.Fatalf("%v\n%s", err, h.stdout.String())
	}
	v := h.recordVerdict()
	if res.Verdict != "fail" || !historyHit(v, pr.Adds, "config.env", 2) {
		t.Fatalf("result %+v verdict %+v\n%s", res, v, h.stdout.String())
	}
	for _, c := range v.Failed {
		if c.Code == audit.CodeHistoryUnavailable {
			t.Fatalf("the API's patches were complete: %+v", c)
		}
	}
	p := h.checkPack(pr.Origin.Dir)
	if p.Source.Head != pr.Merge || p.Source.Base != pr.Base {
		t.Fatalf("source %+v", p.Source)
	}
	if sum := h.summary(); !strings.Contains(sum, "GitHub API") || !strings.Contains(sum, "merge commit") {
		t.Fatalf("summary:\n%s", sum)
	}
}

// TestHistoryUnavailableFailsUnlessDowngraded: the API gives no patch for a
// file of a commit, so the per-commit scan is incomplete: the verdict fails
// with history_scan_unavailable, unless the base's policy (read through the
// API) says secrets.history_unavailable: warn.
func TestHistoryUnavailableFailsUnlessDowngraded(t *testing.T) {
	pr := gittest.NewPullRequest(t, prSecret(), nil, nil)
	breakRemote(t, pr)
	for _, downgrade := range []bool{false, true} {
		h := newHarness(t, pr.Checkout.Dir)
		mb := serveChange(t, h, pr, 1)
		key := "GET /repos/octo/widgets/commits/" + pr.Adds
		for _, f := range h.gh.files[key] {
			delete(f, "patch") // too large for the API
		}
		if downgrade {
			h.gh.contents[mb+":.ctxpack.yml"] = "secrets:\n  history_unavailable: warn\n"
		}
		h.event("pull_request", pr.Merge, prPayload("synchronize", 1, pr.Base, pr.Head, "octo/widgets"))
		res, err := h.run()
		if err != nil {
			t.Fatalf("%v\n%s", err, h.stdout.String())
		}
		v := h.recordVerdict()
		var skipped string
		for _, c := range v.Skipped {
			skipped += c.Code
		}
		switch {
		case !downgrade && (res.Verdict != "fail" || !strings.Contains(failedCodes(v), audit.CodeHistoryUnavailable)):
			t.Fatalf("not downgraded: %+v", v)
		case downgrade && (res.Verdict != "pass" || skipped != audit.CodeHistoryUnavailable):
			t.Fatalf("downgraded: %s %+v\n%s", res.Verdict, v, h.stdout.String())
		}
		if !strings.Contains(h.summary(), "in commit") || !strings.Contains(h.summary(), "too large or binary") {
			t.Fatalf("the summary does not name what was not scanned:\n%s", h.summary())
		}
	}
}

// TestPullRequestBringsItsOwnConfig: a pull request that adds a gitleaks
// allowlist of every path and a policy with an empty fail_on still fails on
// its secret, and the comment says the base's configuration applied.
func TestPullRequestBringsItsOwnConfig(t *testing.T) {
	pr := gittest.NewPullRequest(t, prSecret(), nil, map[string]string{
		".gitleaks.toml": "[extend]\nuseDefault = true\n[allowlist]\npaths = ['''.*''']\n",
		".ctxpack.yml":   "fail_on: []\n",
		"keep.env":       prSecret() + "\n",
	})
	h := newHarness(t, pr.Checkout.Dir)
	h.event("pull_request", pr.Merge, prPayload("synchronize", 1, pr.Base, pr.Head, "octo/widgets"))
	res, err := h.run()
	if err != nil {
		t.Fatalf("%v\n%s", err, h.stdout.String())
	}
	if res.Verdict != "fail" || !historyHit(h.recordVerdict(), pr.Adds, "config.env", 2) {
		t.Fatalf("result %+v %+v", res, h.recordVerdict())
	}
	p := h.checkPack(pr.Origin.Dir)
	if c := p.Source.Config; c == nil || c.From != "base" || len(c.Changed) != 2 {
		t.Fatalf("config %+v", p.Source.Config)
	}
	comment := h.gh.ours(1)
	if len(comment) != 1 || !strings.Contains(comment[0].Body, "policy changed in this change") {
		t.Fatalf("comment %+v", comment)
	}
	h.noSecretAnywhere(secrettest.Make(31).GitHub)
}

// TestErrorPathPublishes: a run that cannot complete still writes the
// outputs (verdict error) and the job summary, and turns the pull
// request's comment from ✅ into ❌ with the error, then fails.
func TestErrorPathPublishes(t *testing.T) {
	g, base, head := prRepo(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.event("pull_request", zeroSHA[:39]+"1", prPayload("opened", 12, base, head, "octo/widgets"))
	if res := h.mustRun(); res.Verdict != "pass" {
		t.Fatalf("first run %+v", res)
	}
	if ours := h.gh.ours(12); len(ours) != 1 || !strings.Contains(ours[0].Body, "✅") {
		t.Fatalf("no ✅ comment: %+v", ours)
	}
	h.vars["INPUT_POLICY"] = "../outside.yml"
	if _, err := h.run(); err == nil || !strings.Contains(err.Error(), "not inside the repository") {
		t.Fatalf("err %v", err)
	}
	if out := h.outputs(); out["verdict"] != VerdictError || out["pack-id"] != "" {
		t.Fatalf("outputs %v", out)
	}
	if sum := h.summary(); !strings.Contains(sum, "❌") || !strings.Contains(sum, "not inside the repository") {
		t.Fatalf("summary:\n%s", sum)
	}
	ours := h.gh.ours(12)
	if len(ours) != 1 || h.gh.creates != 1 || !strings.HasPrefix(ours[0].Body, Marker) || !strings.Contains(ours[0].Body, "❌") || strings.Contains(ours[0].Body, "✅") {
		t.Fatalf("comment after the error: %+v", ours)
	}
}

// TestCommentCreationIsIdempotent: GitHub created the comment but the
// answer was a 502; the retry lists the comments, finds it and edits it,
// so there is one comment, not two.
func TestCommentCreationIsIdempotent(t *testing.T) {
	g, base, head := prRepo(t)
	ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
	h := newHarness(t, ws.Dir)
	h.gh.createThen502 = 1
	h.event("pull_request", zeroSHA[:39]+"1", prPayload("opened", 12, base, head, "octo/widgets"))
	res := h.mustRun()
	if ours := h.gh.ours(12); len(ours) != 1 || h.gh.creates != 1 || h.gh.edits != 1 || res.CommentURL == "" {
		t.Fatalf("%d comments, %d creates, %d edits, url %q", len(ours), h.gh.creates, h.gh.edits, res.CommentURL)
	}
}

// TestCommittedOutputDirIsNeverFollowed: a checkout that commits
// .ctxpack-action as a symlink out of the workspace, or a .gitignore
// symlink inside it, gets a fresh directory; nothing outside is written.
func TestCommittedOutputDirIsNeverFollowed(t *testing.T) {
	for _, layout := range []string{"dir symlink", "gitignore symlink"} {
		t.Run(layout, func(t *testing.T) {
			outside := t.TempDir()
			victim := filepath.Join(outside, "victim")
			os.WriteFile(victim, []byte("keep"), 0o644)
			g, a, _ := origin(t)
			if layout == "dir symlink" {
				g.Symlink(outside, OutDir)
			} else {
				g.Symlink(victim, OutDir+"/.gitignore")
			}
			c := g.Commit("hostile output dir")
			ws := g.Clone(filepath.Join(t.TempDir(), "widgets"))
			h := newHarness(t, ws.Dir)
			h.event("push", c, pushPayload("refs/heads/main", a, c, []string{c}, false, false))
			h.mustRun()
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Fatalf("the target outside the workspace was written: %q", b)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Fatalf("files written outside the workspace: %v", entries)
			}
			fi, err := os.Lstat(filepath.Join(ws.Dir, OutDir))
			if err != nil || !fi.IsDir() {
				t.Fatalf("%s is not a fresh directory: %v", OutDir, err)
			}
			for _, f := range []string{"pack.json", "pack.record.json", ".gitignore"} {
				if fi, err := os.Lstat(filepath.Join(ws.Dir, OutDir, f)); err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("%s: %v", f, err)
				}
			}
		})
	}
}
