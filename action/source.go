package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
	"github.com/google/go-github/v60/github"
)

// CodeChangeListUnavailable is a skipped check: in a shallow checkout the
// changed files could not be listed through the API either.
const CodeChangeListUnavailable = "change_list_unavailable"

// apiHint is the note a summary shows when the commits were read from the
// API instead of git.
const apiHint = "History was not available: the commits of this change are neither in the checkout (a shallow clone — actions/checkout's default fetch-depth: 1) nor fetchable from its remote, so the changed files were listed and the commits' patches read through the GitHub API, and the head tree was packed. Set fetch-depth: 0 on actions/checkout to pack from git history."

type packed struct {
	run   *pipeline.Run
	notes []string
}

// change is what a plan packs, once resolved against the checkout.
type change struct {
	// Base is the range's base ("" for one commit against its parent).
	Base, Head string
	// Commit is true for one commit against its first parent.
	Commit bool
}

// pack runs the pipeline for the plan. The history of the change comes
// from the checkout, else from its own remote (fetched), else from GitHub's
// API (the change list and each commit's patches); when none of them has
// it, the per-commit scan is reported unavailable, which fails the verdict
// unless the policy downgrades it.
func (r *runner) pack(ctx context.Context) (*packed, error) {
	repo, err := source.Open(r.dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close() // what a run reads, it has read when it returns
	if !repo.IsGit() {
		return nil, fmt.Errorf("%s is not a git repository: add actions/checkout before ctxpack (or set working-directory)", r.dir)
	}
	repo.NameFromEnv(r.o.Getenv("GITHUB_REPOSITORY"))
	opts := pipeline.PackOptions{
		Repository:    r.o.Getenv("GITHUB_REPOSITORY"),
		Dir:           r.dir,
		Type:          r.in.Type,
		Tier:          r.in.Tier,
		SecretsAction: r.in.SecretsAction,
		Trigger:       r.plan.Trigger,
	}
	if opts.PolicyPath, err = r.policyPath(repo); err != nil {
		return nil, err
	}
	if r.plan.Kind == PlanPullNumber {
		if err := r.resolvePullNumber(ctx); err != nil {
			return nil, err
		}
	}
	opts.PullRequest = r.pullIntent(ctx)
	ch, notes := r.resolve(ctx, repo)
	if ch.available(repo) || r.fetch(ctx, repo, ch) {
		if err := r.prefetchBlobs(ctx, repo, ch); err != nil {
			r.rep.warnf("the blobs of the change could not be fetched in one request (%v); they are fetched one by one", err)
		}
		if ch.Commit {
			opts.Commit = ch.Head
			if opts.Trigger == "" {
				opts.Trigger = "commit"
			}
		} else {
			opts.Base, opts.Head = ch.Base, ch.Head
		}
		run, err := pipeline.Execute(ctx, opts)
		if err != nil {
			return nil, err
		}
		run.Close()
		return &packed{run: run, notes: notes}, nil
	}
	return r.fallback(ctx, repo, opts, ch, notes)
}

// resolvePullNumber turns a pull request known by number into a range.
func (r *runner) resolvePullNumber(ctx context.Context) error {
	gh, err := r.github()
	if err != nil {
		return fmt.Errorf("pull request #%d: its commits are asked of the GitHub API, which cannot be used: %w", r.plan.PR, err)
	}
	pr, err := prRefs(ctx, gh, r.owner, r.repo, r.plan.PR)
	if err != nil {
		return err
	}
	if err := checkSHA("pull request base", pr.Base.SHA); err != nil {
		return err
	}
	if err := checkSHA("pull request head", pr.Head.SHA); err != nil {
		return err
	}
	p := r.plan
	p.Kind, p.Base, p.Head, p.Ref = PlanRange, pr.Base.SHA, pr.Head.SHA, pr.Head.Ref
	p.Fork = !strings.EqualFold(pr.Head.Repo.FullName, pr.Base.Repo.FullName)
	r.rep.infof("pull request #%d: packing %s..%s from their merge base", p.PR, short(p.Base), short(p.Head))
	return nil
}

// resolve turns the plan into a change: a new branch (or a force push) is
// packed from its merge base with the default branch, which is fetched
// when the checkout lacks it.
func (r *runner) resolve(ctx context.Context, repo *source.Repo) (change, []string) {
	p := r.plan
	switch p.Kind {
	case PlanRange:
		return change{Base: p.Base, Head: p.Head}, nil
	case PlanNewBranch:
		if p.DefaultBranch == "" || p.Ref == "refs/heads/"+p.DefaultBranch {
			break
		}
		refs := []string{"refs/remotes/origin/" + p.DefaultBranch, "refs/heads/" + p.DefaultBranch}
		if !repo.HasCommit(refs[0]) && !repo.HasCommit(refs[1]) && repo.Remote() != "" {
			if err := repo.FetchBranch(ctx, p.DefaultBranch); err != nil {
				r.rep.warnf("the default branch %s could not be fetched: %v", p.DefaultBranch, err)
			}
		}
		for _, ref := range refs {
			if b, err := repo.Resolve(ref); err == nil {
				r.rep.infof("packing against the merge base with %s", ref)
				return change{Base: b.String(), Head: p.Head}, nil
			}
		}
		r.rep.infof("no merge base with the default branch %s is known; packing the head commit against its parent", p.DefaultBranch)
		return change{Head: p.Head, Commit: true}, []string{"The default branch " + p.DefaultBranch + " is not known to the checkout or its remote, so the head commit was packed against its parent only."}
	}
	return change{Head: p.Head, Commit: true}, nil
}

func (c change) available(repo *source.Repo) bool {
	if c.Commit {
		return repo.CommitAvailable(c.Head)
	}
	return repo.RangeAvailable(c.Base, c.Head)
}

// fetch brings the change's history from the checkout's own remote.
func (r *runner) fetch(ctx context.Context, repo *source.Repo, c change) bool {
	if repo.Remote() == "" {
		r.rep.infof("the commits of this change are not in the checkout, and it has no remote to fetch them from")
		return false
	}
	rep, err := repo.FetchHistory(ctx, c.Base, c.Head)
	if rep != nil {
		for _, cmd := range rep.Commands {
			r.rep.infof("fetching the history of the change: %s", cmd)
		}
	}
	if err != nil {
		r.rep.warnf("the history of the change could not be fetched from the checkout's remote: %v", err)
		return false
	}
	return c.available(repo)
}

// prefetchBlobs fetches, in one request, the blobs a partial clone lacks
// for the change (else each is fetched when it is read).
func (r *runner) prefetchBlobs(ctx context.Context, repo *source.Repo, c change) error {
	if !repo.Promisor() {
		return nil
	}
	n, err := repo.PrefetchChange(ctx, c.Base, c.Head)
	if n > 0 {
		r.rep.infof("fetched %d blobs of the change", n)
	}
	return err
}

// policyPath is the policy input relative to the repository root (it is
// read from the base of the change, like .ctxpack.yml).
func (r *runner) policyPath(repo *source.Repo) (string, error) {
	p := r.in.Policy
	if p == "" {
		return "", nil
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.dir, p)
	}
	rel, err := filepath.Rel(repo.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("input policy %q is not inside the repository: it is read from the base of the change, like .ctxpack.yml", clip(p, 200))
	}
	return filepath.ToSlash(rel), nil
}

// fallback packs the head tree with the change list and the commits'
// patches from GitHub's API; configuration comes from the base commit
// through the API too. What the API cannot give is reported.
func (r *runner) fallback(ctx context.Context, repo *source.Repo, opts pipeline.PackOptions, c change, notes []string) (*packed, error) {
	p := r.plan
	notes = append(notes, apiHint)
	head := c.Head
	if !repo.HasCommit(head) {
		if p.AltHead == "" || !repo.HasCommit(p.AltHead) {
			return nil, fmt.Errorf("commit %s is not in the checkout, nor fetchable from its remote: check out the commit to pack (actions/checkout with ref: %s)", short(head), head)
		}
		head = p.AltHead
		notes = append(notes, fmt.Sprintf("The pull request's head %s is not in the checkout; its merge commit %s (what actions/checkout checks out) was packed instead.", short(c.Head), short(head)))
	}
	hc, err := repo.Resolve(head) // a tag object resolves to its commit
	if err != nil {
		return nil, err
	}
	headSHA := hc.String()
	gh, ghErr := r.github()
	var changes []pack.Change
	var commitIDs []string
	complete := false
	recordBase, configBase := "", ""
	listErr := ghErr
	if ghErr == nil {
		switch {
		case !c.Commit && p.PR != 0:
			changes, listErr = prFiles(ctx, gh, r.owner, r.repo, p.PR)
			recordBase, configBase = c.Base, c.Base
			if cmp, err := compareFiles(ctx, gh, r.owner, r.repo, c.Base, c.Head); err == nil && cmp.MergeBase != "" {
				configBase = cmp.MergeBase
			}
			if listErr == nil {
				commitIDs, complete, listErr = prCommitIDs(ctx, gh, r.owner, r.repo, p.PR)
			}
		case !c.Commit:
			var cmp *comparison
			if cmp, listErr = compareFiles(ctx, gh, r.owner, r.repo, c.Base, c.Head); listErr == nil {
				changes, commitIDs, complete = cmp.Changes, cmp.Commits, cmp.Complete
				if cmp.FilesCut {
					notes = append(notes, fmt.Sprintf("The GitHub API lists at most %d files of a comparison: the change list may leave files out (each commit's patches, which the per-commit scan reads, are listed in full).", maxCompareFiles))
				}
				recordBase, configBase = cmp.MergeBase, cmp.MergeBase
				if recordBase == "" {
					recordBase, configBase = c.Base, c.Base
				}
			}
		default:
			var parent string
			changes, parent, listErr = commitFiles(ctx, gh, r.owner, r.repo, headSHA)
			commitIDs, complete, configBase = []string{headSHA}, true, parent
		}
	}
	listed := listErr == nil
	var notRun pipeline.NotRun
	history := &apiHistory{}
	switch {
	case !listed:
		changes = nil
		msg := "the changed files could not be listed: the base commit is neither in the checkout nor fetchable, and the GitHub API could not be asked (" + listErr.Error() + "); the head tree was packed with no change list"
		notes = append(notes, msg+".")
		notRun.Skipped = append(notRun.Skipped, audit.Check{Kind: audit.KindIntegrity, Code: CodeChangeListUnavailable, Message: msg,
			Details: map[string]any{"head": head, "base": c.Base}})
		history.Missing = append(history.Missing, "the commits of the change (the API could not be asked)")
	default:
		h, err := commitsPatches(ctx, gh, r.owner, r.repo, commitIDs)
		if err != nil {
			history.Missing = append(history.Missing, "the commits' patches: "+err.Error())
		} else {
			history = h
		}
		if !complete {
			history.Missing = append(history.Missing, fmt.Sprintf("commits beyond the %d the API lists", maxAPICommits))
		}
	}
	if len(history.Missing) > 0 {
		notRun.History = &audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistoryUnavailable,
			Message: "the per-commit secret scan could not read all of the change's commits: they are neither in the checkout nor fetchable from its remote, and the API did not give " + strings.Join(history.Missing, "; ") + "; set fetch-depth: 0 on actions/checkout",
			Details: map[string]any{"head": head, "base": c.Base, "missing": history.Missing}}
	}
	cfg, err := r.fallbackConfig(ctx, repo, opts, configBase, headSHA, listed)
	if err != nil {
		return nil, err
	}
	snapshot := func(pol *policy.Policy) (*pack.Snapshot, error) {
		scope := pol.Pack.Scope
		if !listed {
			scope = policy.ScopeTree // with no change list, the change scope would hide the change
		}
		snap, err := repo.TreeWithChanges(ctx, headSHA, recordBase, changes, scope)
		if err != nil {
			return nil, err
		}
		snap.Commits = history.Commits
		pipeline.ApplyIntent(snap, opts)
		return snap, nil
	}
	r.rep.infof("packing the tree of %s with %d changed files and %d commits' patches from the GitHub API", short(head), len(changes), len(history.Commits))
	run, err := pipeline.ExecuteSnapshot(ctx, repo, cfg, opts.Trigger, snapshot, notRun)
	if err != nil {
		return nil, err
	}
	return &packed{run: run, notes: notes}, nil
}

// fallbackConfig reads the configuration of a change whose base is not in
// the checkout: from the base commit through the API. Without a base to
// read (the API could not be asked), the configuration cannot be the
// base's, and the run stops.
func (r *runner) fallbackConfig(ctx context.Context, repo *source.Repo, opts pipeline.PackOptions, base, head string, listed bool) (*pipeline.Config, error) {
	headTree := pipeline.GitTree(repo, head)
	if base != "" && repo.HasCommit(base) {
		return pipeline.ChangeConfig(ctx, opts, pipeline.GitTree(repo, base), headTree)
	}
	if base == "" && listed {
		return pipeline.ChangeConfig(ctx, opts, pipeline.ConfigTree{}, headTree) // a root commit: the defaults
	}
	gh, err := r.github()
	if err != nil || base == "" {
		if err == nil {
			err = errors.New("the API did not name it")
		}
		return nil, fmt.Errorf("the base's configuration (.ctxpack.yml, .gitleaks.toml, .gitleaksignore) could not be read: the base commit is neither in the checkout nor fetchable, and the GitHub API could not be asked (%v); set fetch-depth: 0 on actions/checkout", err)
	}
	// A 404 is an absent file only when the base itself can be read (a
	// token without access gets 404s too).
	var rootErr error
	rootChecked := false
	baseTree := pipeline.ConfigTree{Commit: base, Read: func(ctx context.Context, p string, max int64) (source.Blob, error) {
		b, err := contentAt(ctx, gh, r.owner, r.repo, p, base, max)
		if err == nil && !b.Found() {
			if !rootChecked {
				rootChecked = true
				if _, _, _, err := gh.Repositories.GetContents(ctx, r.owner, r.repo, "", &github.RepositoryContentGetOptions{Ref: base}); err != nil {
					rootErr = apiErr("read the tree of the base "+short(base), err)
				}
			}
			err = rootErr
		}
		return b, err
	}}
	return pipeline.ChangeConfig(ctx, opts, baseTree, headTree)
}
