package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// TriggerPrePush is the trigger of packs the pre-push hook builds.
const TriggerPrePush = "pre-push"

// Pusher runs the pipeline for the refs of one push. The repository, the
// policy and the secret scanner (its gitleaks rules take ~0.1 s to build)
// are shared by every ref.
type Pusher struct {
	Repo       *source.Repo
	Policy     *policy.Policy
	PolicyFile string
	Scanner    *audit.Scanner
}

// NewPusher loads the policy and scanner of an opened repository (reusing
// it: go-git loads a pack's whole index on first use, the git CLI backend
// starts its cat-file process). Only PolicyFile and
// the policy overrides of opts are used.
func NewPusher(repo *source.Repo, opts PackOptions) (*Pusher, error) {
	if opts.Commit != "" || opts.Base != "" || opts.Head != "" {
		return nil, &UsageError{errors.New("a push names its own commits: no --commit, --base or --head")}
	}
	if !repo.IsGit() {
		return nil, fmt.Errorf("%s is not a git repository", repo.Root)
	}
	pol, file, err := LoadPolicy(repo.Root, opts)
	if err != nil {
		return nil, err
	}
	scanner, err := NewScanner(repo, pol)
	if err != nil {
		return nil, err
	}
	return &Pusher{Repo: repo, Policy: pol, PolicyFile: file, Scanner: scanner}, nil
}

// PushTarget is one ref of a push.
type PushTarget struct {
	// Head is the commit the ref will point to.
	Head source.ObjectID
	// Known are commits the remote has: the ref's old value for an update,
	// the remote's tracking refs for a new ref.
	Known []source.ObjectID
	// Ref is the remote ref being updated (refs/heads/main, refs/tags/v1).
	Ref string
}

// PushRun is the outcome of one ref: Run is nil when the push publishes no
// new commit.
type PushRun struct {
	*Run
	// Commits are the new commits, oldest first.
	Commits []string
	// Base is the diff base, "" when the whole tree is new.
	Base string
}

// Run packs, scans, audits and records what pushing t publishes: the change
// from the diff base to the head in its change scope (source.ChangeScope),
// with every new commit's added lines scanned.
func (p *Pusher) Run(ctx context.Context, t PushTarget) (*PushRun, error) {
	pushed, err := p.Repo.Pushed(ctx, t.Head, t.Known)
	if err != nil {
		return nil, err
	}
	out := &PushRun{Commits: pushed.Commits, Base: pushed.Base}
	if pushed.Snapshot == nil {
		return out, nil
	}
	snap := pushed.Snapshot
	snap.Source.Trigger = TriggerPrePush
	snap.Source.Ref = t.Ref
	o, err := build(ctx, p.Repo, snap, p.Policy, p.PolicyFile, p.Scanner)
	if err != nil {
		return nil, err
	}
	if out.Run, err = complete(ctx, o, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// ShortSHA is the 12-character abbreviation used in hook messages and file names.
func ShortSHA(sha string) string { return short(strings.ToLower(sha)) }
