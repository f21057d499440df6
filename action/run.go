// Package action is ctxpack's GitHub Actions glue: it reads the workflow
// event and the action's inputs, packs and audits the change (package
// pipeline), uploads pack and record as a workflow artifact (the v4 artifact
// protocol), keeps one pull request comment up to date with the reviewer
// summary, and writes the job summary, annotations, SARIF and step outputs.
//
// Everything it touches outside the process is injected (environment, HTTP
// client, clock, sleep, standard output), so it runs end to end in tests
// against httptest servers.
package action

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/google/go-github/v60/github"
)

// Options are the action's dependencies on the world.
type Options struct {
	// Getenv reads the environment (os.Getenv in a real run).
	Getenv func(string) string
	// Stdout receives log lines and workflow commands.
	Stdout io.Writer
	// HTTPClient makes every HTTP request (artifact service, blob storage,
	// GitHub REST); a client with a 2-minute timeout when nil.
	HTTPClient *http.Client
	// Sleep waits between retries (RealSleep when nil).
	Sleep Sleeper
	// Now is the clock (artifact expiry); time.Now when nil.
	Now func() time.Time
	// Rand draws the retry jitter in [0,1); math/rand when nil.
	Rand func() float64
	// BlockSize is the blob upload block size (DefaultBlockSize when 0).
	BlockSize int
}

// Result is what a run did.
type Result struct {
	// Verdict is pass, fail or skipped (nothing to pack).
	Verdict     string
	PackID      string
	PackPath    string // relative to the workspace
	RecordPath  string
	SummaryPath string
	SARIFPath   string
	ArtifactID  string
	ArtifactURL string
	CommentURL  string
	// Failed is true when the step must fail: the verdict failed with
	// fail-on-violation, or the artifact upload failed.
	Failed bool
	// Why says why the step fails.
	Why []string
}

// OutDir is where the action writes its files, relative to the workspace.
const OutDir = ".ctxpack-action"

type runner struct {
	o      Options
	rep    *reporter
	in     *Inputs
	plan   *Plan
	ws     string // workspace (absolute)
	dir    string // repository directory (absolute)
	relDir string // dir relative to ws, "" for ws itself
	owner  string
	repo   string
	retry  *retrier
	gh     *github.Client
	ghErr  error
}

// Run runs the action once. An error is a run that could not complete (bad
// input, unreadable payload, not a repository); a failing verdict is not an
// error but Result.Failed.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	}
	if o.Sleep == nil {
		o.Sleep = RealSleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	r := &runner{o: o, rep: newReporter(o.Getenv, o.Stdout)}
	r.retry = &retrier{sleep: o.Sleep, rand: o.Rand, logf: r.rep.infof}
	defer func() {
		if err != nil {
			err = redactErr(err)
			r.rep.errorf("ctxpack: %v", err)
			r.publishError(ctx, err)
		}
	}()
	if r.in, err = readInputs(r.rep.gha.GetInput); err != nil {
		return nil, err
	}
	r.rep.mask(r.in.GitHubToken)
	r.rep.mask(o.Getenv("ACTIONS_RUNTIME_TOKEN"))
	if err := r.locate(); err != nil {
		return nil, err
	}
	ev, err := ReadEvent(o.Getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return nil, err
	}
	if r.plan, err = PlanFor(o.Getenv("GITHUB_EVENT_NAME"), ev, o.Getenv("GITHUB_SHA")); err != nil {
		return nil, err
	}
	r.owner, r.repo, _ = strings.Cut(o.Getenv("GITHUB_REPOSITORY"), "/")
	r.rep.infof("ctxpack %s: %s", pipeline.Version, r.plan.Why)
	if r.plan.Kind == PlanSkip {
		return r.skip(), nil
	}
	return r.packAndPublish(ctx)
}

// publishError publishes a run that could not complete, so that nothing
// shows a stale result: the outputs (verdict error), the job summary, and
// on a pull request the sticky comment (❌ with the error). The caller then
// fails the step.
func (r *runner) publishError(ctx context.Context, err error) {
	msg := oneLine(redactText(err.Error()))
	r.rep.setOutputs(outputs(&Result{Verdict: VerdictError}, nil))
	body := "## ❌ ctxpack: the context pack could not be checked\n\n" +
		"**❌ error** — " + mdText(clip(msg, 2000)) + "\n\n" +
		"Nothing was packed or uploaded for this run; treat the change as failing until ctxpack passes.\n"
	if u := r.runURL(); u != "" {
		body += "\n[Workflow run](" + u + ")\n"
	}
	r.rep.stepSummary(body)
	if r.plan == nil || r.plan.PR == 0 || r.in == nil || !r.in.Comment {
		return
	}
	r.comment(ctx, Marker+"\n"+body) // a failure is warned about there
}

// VerdictError is the verdict output of a run that could not complete.
const VerdictError = "error"

// locate finds the workspace and the repository directory.
func (r *runner) locate() error {
	ws := r.o.Getenv("GITHUB_WORKSPACE")
	if ws == "" {
		ws = "."
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return fmt.Errorf("GITHUB_WORKSPACE %q: %w", ws, err)
	}
	r.ws, r.dir = abs, abs
	if wd := r.in.WorkingDirectory; wd != "" {
		if filepath.IsAbs(wd) {
			r.dir = filepath.Clean(wd)
		} else {
			r.dir = filepath.Join(abs, wd)
		}
	}
	if fi, err := os.Stat(r.dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("working-directory %q is not a directory in the workspace: check out the repository first (actions/checkout)", r.in.WorkingDirectory)
	}
	if rel, err := filepath.Rel(r.ws, r.dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		r.relDir = filepath.ToSlash(rel)
	}
	return nil
}

func (r *runner) skip() *Result {
	r.rep.noticef("%s", r.plan.Why)
	r.rep.stepSummary("## ctxpack: nothing to pack\n\n" + mdText(r.plan.Why) + ".\n")
	r.rep.setOutputs(outputs(&Result{Verdict: "skipped"}, nil))
	return &Result{Verdict: "skipped"}
}

// mdText escapes text for the job summary.
func mdText(s string) string {
	var b strings.Builder
	for _, c := range oneLine(s) {
		if c < 128 && strings.ContainsRune("\\`*_{}[]()#+-.!<>|&@~\"'", c) {
			fmt.Fprintf(&b, "&#%d;", c)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// github returns the REST client, made on first use.
func (r *runner) github() (*github.Client, error) {
	if r.gh != nil || r.ghErr != nil {
		return r.gh, r.ghErr
	}
	if r.in.GitHubToken == "" {
		r.ghErr = errors.New("no github-token input")
	} else if r.owner == "" || r.repo == "" {
		r.ghErr = errors.New("GITHUB_REPOSITORY is not set (owner/name)")
	} else {
		rt := &retryTransport{retry: r.retry, now: r.o.Now}
		r.gh, r.ghErr = newGitHub(r.o.Getenv("GITHUB_API_URL"), r.in.GitHubToken, r.o.HTTPClient, rt)
	}
	return r.gh, r.ghErr
}

func (r *runner) packAndPublish(ctx context.Context) (*Result, error) {
	pk, err := r.pack(ctx)
	if err != nil {
		return nil, err
	}
	run := pk.run
	res := &Result{Verdict: run.Verdict.Status, PackID: run.Result.Pack.PackID}
	notes := pk.notes
	for _, n := range notes {
		r.rep.warnf("%s", n)
	}

	// Files in the workspace, for later steps. The directory is made anew
	// by this run: a checkout can hold a .ctxpack-action of its own (a
	// symlink out of the workspace, a .gitignore symlink), never followed.
	out := filepath.Join(r.ws, OutDir)
	if err := fsutil.FreshDir(out, 0o755); err != nil {
		return nil, err
	}
	key, err := r.signingKey()
	if err != nil {
		return nil, err
	}
	att, err := run.Attestation("pack.json", key)
	if err != nil {
		return nil, err
	}
	runURL := r.runURL()
	fileSummary := transparency.Summary(run.Record, run.Result.Pack, transparency.SummaryOptions{RunURL: runURL, Notes: notes})
	files := []zipFile{
		{"pack.json", run.Result.JSON},
		{"pack.record.json", run.RecordJSON},
		{"pack.intoto.json", att},
		{"summary.md", []byte(fileSummary)},
	}
	if r.in.SARIF {
		sarif, err := SARIF(run.Verdict, pipeline.Version, r.relDir, sarifPolicy(r.in.Policy))
		if err != nil {
			return nil, err
		}
		files = append(files, zipFile{"ctxpack.sarif", sarif})
		res.SARIFPath = path.Join(OutDir, "ctxpack.sarif")
	}
	// One unit: the record names the pack's digest, the pack is renamed last.
	var batch fsutil.Batch
	batch.Add(filepath.Join(out, ".gitignore"), []byte("*\n"), 0o644)
	for i := len(files) - 1; i >= 0; i-- {
		batch.Add(filepath.Join(out, files[i].Name), files[i].Data, 0o644)
	}
	if err := batch.Commit(ctx); err != nil {
		return nil, err
	}
	res.PackPath = path.Join(OutDir, "pack.json")
	res.RecordPath = path.Join(OutDir, "pack.record.json")
	res.SummaryPath = path.Join(OutDir, "summary.md")
	r.rep.infof("pack %s (%s): %d files included, %d excluded, verdict %s; written to %s",
		res.PackID, run.Result.Pack.Type, run.Result.Pack.Metadata.FilesIncluded, run.Result.Pack.Metadata.FilesExcluded, res.Verdict, OutDir)

	// Artifact.
	mtime, _ := time.Parse(time.RFC3339, run.Result.Pack.Metadata.CreatedAt)
	if err := r.upload(ctx, files, mtime, run.Snapshot.Source.Head, res); err != nil {
		res.Failed = true
		res.Why = append(res.Why, "the artifact upload failed: "+redactText(err.Error()))
		r.rep.errorf("artifact upload failed: %v", err)
	}

	// Sticky comment.
	summaryNotes := append([]string(nil), notes...)
	if r.plan.PR != 0 && r.in.Comment {
		body := transparency.Summary(run.Record, run.Result.Pack, transparency.SummaryOptions{
			RunURL: runURL, ArtifactURL: res.ArtifactURL, Marker: Marker, Notes: notes})
		if u, note := r.comment(ctx, body); note != "" {
			summaryNotes = append(summaryNotes, note)
		} else {
			res.CommentURL = u
		}
	}

	// Job summary, annotations, SARIF, outputs.
	r.rep.stepSummary(transparency.Summary(run.Record, run.Result.Pack, transparency.SummaryOptions{
		RunURL: runURL, ArtifactURL: res.ArtifactURL, Notes: summaryNotes}))
	r.annotate(run.Verdict)
	if run.Verdict.Status != audit.StatusPass {
		msg := fmt.Sprintf("the context pack failed the policy: %d check(s) failed", len(run.Verdict.Failed))
		if r.in.FailOnViolation {
			res.Failed = true
			res.Why = append(res.Why, msg)
			r.rep.errorf("ctxpack: %s", msg)
		} else {
			r.rep.warnf("ctxpack: %s (fail-on-violation is false, so the step passes)", msg)
		}
	}
	r.rep.setOutputs(outputs(res, run))
	return res, nil
}

func outputs(res *Result, run *pipeline.Run) [][2]string {
	inc, exc, secrets := "", "", ""
	if run != nil {
		inc = strconv.Itoa(run.Result.Pack.Metadata.FilesIncluded)
		exc = strconv.Itoa(run.Result.Pack.Metadata.FilesExcluded)
		secrets = strconv.Itoa(len(run.Record.Secrets))
	}
	return [][2]string{
		{"pack-id", res.PackID},
		{"pack-path", res.PackPath},
		{"record-path", res.RecordPath},
		{"summary-path", res.SummaryPath},
		{"sarif-path", res.SARIFPath},
		{"verdict", res.Verdict},
		{"files-included", inc},
		{"files-excluded", exc},
		{"secrets-found", secrets},
		{"artifact-id", res.ArtifactID},
		{"artifact-url", res.ArtifactURL},
		{"comment-url", res.CommentURL},
	}
}

// signingKey reads CTXPACK_SIGNING_KEY (a PEM or a path), nil when unset.
func (r *runner) signingKey() (ed25519.PrivateKey, error) {
	v := r.o.Getenv("CTXPACK_SIGNING_KEY")
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	k, err := transparency.LoadPrivateKey(v)
	if err != nil {
		return nil, fmt.Errorf("CTXPACK_SIGNING_KEY: %w", err)
	}
	return k, nil
}

// runURL is the workflow run's page.
func (r *runner) runURL() string {
	server, repo, id := r.o.Getenv("GITHUB_SERVER_URL"), r.o.Getenv("GITHUB_REPOSITORY"), r.o.Getenv("GITHUB_RUN_ID")
	if server == "" {
		server = "https://github.com"
	}
	if repo == "" || id == "" {
		return ""
	}
	return strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + id
}

// upload zips the files and uploads them as the workflow artifact. Without
// the runtime variables it warns and skips.
func (r *runner) upload(ctx context.Context, files []zipFile, mtime time.Time, head string, res *Result) error {
	client, err := NewArtifactClient(r.o.Getenv, r.o.HTTPClient, r.retry)
	if errors.Is(err, ErrNoRuntime) {
		r.rep.warnf("artifact not uploaded: %v; the pack and record are in %s", err, OutDir)
		return nil
	}
	if err != nil {
		return err
	}
	client.BlockSize = r.o.BlockSize
	client.Mask = r.rep.mask
	client.Logf = r.rep.infof
	client.Now = r.o.Now
	client.UserAgent = "ctxpack/" + pipeline.Version
	name := r.in.ArtifactName
	if name == "" {
		name = "ctxpack-" + short(head)
		if n, _ := strconv.Atoi(r.o.Getenv("GITHUB_RUN_ATTEMPT")); n > 1 {
			name += "-attempt-" + strconv.Itoa(n)
		}
	}
	var expires *time.Time
	if days := r.in.RetentionDays; days > 0 {
		if max, err := strconv.Atoi(r.o.Getenv("GITHUB_RETENTION_DAYS")); err == nil && max > 0 && days > max {
			r.rep.warnf("retention-days %d is over the repository's limit of %d days; using %d", days, max, max)
			days = max
		}
		t := r.o.Now().Add(time.Duration(days) * 24 * time.Hour)
		expires = &t
	}
	data, err := zipFiles(files, mtime)
	if err != nil {
		return err
	}
	id, err := client.Upload(ctx, name, data, expires)
	if err != nil {
		return err
	}
	res.ArtifactID = id
	if u := r.runURL(); u != "" {
		res.ArtifactURL = u + "/artifacts/" + id
	}
	r.rep.infof("artifact %s uploaded (id %s, %d bytes)", name, id, len(data))
	return nil
}

// comment posts or edits the sticky comment. A failure is a warning and a
// note for the job summary, never a failed step.
func (r *runner) comment(ctx context.Context, body string) (string, string) {
	gh, err := r.github()
	if err != nil {
		note := "The pull request comment was not posted: " + err.Error() + "."
		r.rep.warnf("%s", note)
		return "", note
	}
	u, edited, err := upsertComment(ctx, gh, r.retry, r.owner, r.repo, r.plan.PR, body)
	if err != nil {
		why := apiErr("comment on pull request #"+strconv.Itoa(r.plan.PR), err).Error()
		if s := statusOf(err); s == http.StatusForbidden || s == http.StatusNotFound {
			if r.plan.Fork {
				why += ": a pull request from a fork gets a read-only token"
			} else {
				why += ": the token cannot write to pull requests (grant permissions: pull-requests: write)"
			}
		}
		note := "The pull request comment was not posted (" + why + "); this job summary holds the same report."
		r.rep.warnf("%s", note)
		return "", note
	}
	verb := "posted"
	if edited {
		verb = "updated"
	}
	r.rep.infof("pull request comment %s: %s", verb, u)
	return u, ""
}

// annotate issues one annotation per check: failed checks are errors,
// warnings warnings, skipped checks notices.
func (r *runner) annotate(v *audit.Verdict) {
	for _, set := range []struct {
		level  string
		checks []audit.Check
	}{{"error", v.Failed}, {"warning", v.Warnings}, {"notice", v.Skipped}} {
		for _, c := range set.checks {
			p, line := checkLocation(c)
			if p != "" {
				p = path.Join(r.relDir, p)
			}
			r.rep.annotate(set.level, p, line, "ctxpack "+c.Code, c.Message)
		}
	}
	r.rep.flushAnnotations()
}

// sarifPolicy is where SARIF results about the repository point: the policy
// input when it is a plain relative path, else .ctxpack.yml.
func sarifPolicy(p string) string {
	if p == "" || filepath.IsAbs(p) || !source.TreePath(filepath.ToSlash(p)) {
		return ".ctxpack.yml"
	}
	return filepath.ToSlash(p)
}
