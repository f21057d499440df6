package action

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// CodeChangeListUnavailable is a skipped check: in a shallow checkout the
// changed files could not be listed through the API either.
const CodeChangeListUnavailable = "change_list_unavailable"

// shallowHint is the note a summary shows when history was not available.
const shallowHint = "History was not available: the commits of this change are not in the checkout (a shallow clone — actions/checkout's default fetch-depth: 1), so the changed files were listed through the GitHub API and packed from the head tree, and the per-commit secret scan was skipped. Set fetch-depth: 0 on actions/checkout to pack from git history."

type packed struct {
	run   *pipeline.Run
	notes []string
}

// pack runs the pipeline for the plan: from git history when the commits are
// in the checkout, else (shallow checkout) from the head tree with the
// change list from GitHub's API.
func (r *runner) pack(ctx context.Context) (*packed, error) {
	repo, err := source.Open(r.dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	if !repo.IsGit() {
		return nil, fmt.Errorf("%s is not a git repository: add actions/checkout before ctxpack (or set working-directory)", r.dir)
	}
	opts := pipeline.PackOptions{
		Dir:           r.dir,
		PolicyFile:    r.policyFile(),
		Type:          r.in.Type,
		Tier:          r.in.Tier,
		SecretsAction: r.in.SecretsAction,
		Trigger:       r.plan.Trigger,
	}
	p := r.plan
	switch p.Kind {
	case PlanRange:
		if repo.RangeAvailable(p.Base, p.Head) {
			opts.Base, opts.Head = p.Base, p.Head
			return r.execute(ctx, opts)
		}
		return r.fallback(ctx, repo, opts, PlanRange, p.Base)
	case PlanNewBranch:
		if p.DefaultBranch != "" && p.Ref != "refs/heads/"+p.DefaultBranch {
			for _, ref := range []string{"refs/remotes/origin/" + p.DefaultBranch, "refs/heads/" + p.DefaultBranch} {
				if !repo.HasCommit(ref) {
					continue
				}
				if repo.RangeAvailable(ref, p.Head) {
					b, _ := repo.Resolve(ref)
					opts.Base, opts.Head = b.String(), p.Head
					r.rep.infof("new branch: packing against the merge base with %s", ref)
					return r.execute(ctx, opts)
				}
			}
			if repo.Shallow() || !repo.CommitAvailable(p.Head) {
				return r.fallback(ctx, repo, opts, PlanNewBranch, p.DefaultBranch)
			}
		}
		r.rep.infof("new branch: no merge base with the default branch is known; packing the head commit alone")
		fallthrough
	default: // PlanCommit
		if repo.CommitAvailable(p.Head) {
			opts.Commit = p.Head
			if opts.Trigger == "" {
				opts.Trigger = "commit"
			}
			return r.execute(ctx, opts)
		}
		return r.fallback(ctx, repo, opts, PlanCommit, "")
	}
}

func (r *runner) execute(ctx context.Context, opts pipeline.PackOptions) (*packed, error) {
	run, err := pipeline.Execute(ctx, opts)
	if err != nil {
		return nil, err
	}
	run.Close() // everything it read is in the run
	return &packed{run: run}, nil
}

// policyFile resolves the policy input against the repository directory.
func (r *runner) policyFile() string {
	p := r.in.Policy
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(r.dir, p)
}

// fallback packs the head tree of a shallow checkout with the change list
// from GitHub's API: a pull request's files, a comparison, or one commit's
// files. The per-commit history scan is reported as skipped.
func (r *runner) fallback(ctx context.Context, repo *source.Repo, opts pipeline.PackOptions, kind, base string) (*packed, error) {
	p := r.plan
	notes := []string{shallowHint}
	head := p.Head
	if !repo.HasCommit(head) {
		if p.AltHead == "" || !repo.HasCommit(p.AltHead) {
			return nil, fmt.Errorf("commit %s is not in the checkout: check out the commit to pack (actions/checkout with ref: %s)", short(head), head)
		}
		head = p.AltHead
		notes = append(notes, fmt.Sprintf("The pull request's head %s is not in the checkout; its merge commit %s (what actions/checkout checks out) was packed instead.", short(p.Head), short(head)))
	}
	hc, err := repo.Resolve(head) // a tag object resolves to its commit
	if err != nil {
		return nil, err
	}
	headSHA := hc.String()
	var changes []pack.Change
	recordBase := ""
	gh, err := r.github()
	if err == nil {
		switch {
		case kind == PlanRange && p.PR != 0:
			changes, err = prFiles(ctx, gh, r.owner, r.repo, p.PR)
			recordBase = base
		case kind == PlanRange || kind == PlanNewBranch:
			var mb string
			changes, mb, err = compareFiles(ctx, gh, r.owner, r.repo, base, p.Head)
			recordBase = mb
			if recordBase == "" && kind == PlanRange {
				recordBase = base
			}
		default:
			changes, err = commitFiles(ctx, gh, r.owner, r.repo, headSHA)
		}
	}
	listed := err == nil
	var skipped []audit.Check
	if err != nil {
		changes = nil
		msg := "the changed files could not be listed: the base commit is not in the checkout and the GitHub API could not be asked (" + err.Error() + "); the head tree was packed with no change list"
		notes = append(notes, msg+".")
		skipped = append(skipped, audit.Check{Kind: audit.KindIntegrity, Code: CodeChangeListUnavailable, Message: msg,
			Details: map[string]any{"head": head, "base": base}})
	}
	skipped = append(skipped, audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistorySkipped,
		Message: "the per-commit secret scan did not run: the commits of this change are not in the checkout (shallow clone); set fetch-depth: 0 on actions/checkout",
		Details: map[string]any{"head": head, "base": base}})
	snapshot := func(pol *policy.Policy) (*pack.Snapshot, error) {
		scope := pol.Pack.Scope
		if !listed {
			scope = policy.ScopeTree // with no change list, the change scope would hide the change
		}
		return repo.TreeWithChanges(ctx, headSHA, recordBase, changes, scope)
	}
	r.rep.infof("shallow checkout: packing the tree of %s with %d changed files listed by the GitHub API", short(head), len(changes))
	run, err := pipeline.ExecuteSnapshot(ctx, repo, opts, snapshot, skipped)
	if err != nil {
		return nil, err
	}
	return &packed{run: run, notes: notes}, nil
}
