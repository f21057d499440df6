package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/transparency"
	"github.com/go-git/go-git/v5/plumbing"
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
	opts       PackOptions
}

// NewPusher opens opts.Dir and loads its policy and scanner. Only Dir,
// PolicyFile and the policy overrides of opts are used.
func NewPusher(opts PackOptions) (*Pusher, error) {
	if opts.Commit != "" || opts.Base != "" || opts.Head != "" {
		return nil, &UsageError{errors.New("a push names its own commits: no --commit, --base or --head")}
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	repo, err := source.Open(dir)
	if err != nil {
		return nil, err
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
	return &Pusher{Repo: repo, Policy: pol, PolicyFile: file, Scanner: scanner, opts: opts}, nil
}

// PushTarget is one ref of a push.
type PushTarget struct {
	// Head is the commit the ref will point to.
	Head plumbing.Hash
	// Known are commits the remote has: the ref's old value for an update,
	// the remote's tracking refs for a new ref.
	Known []plumbing.Hash
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
	res, err := pack.Build(ctx, snap, pack.Options{
		Policy:      p.Policy,
		Scanner:     p.Scanner,
		Sensitive:   audit.SensitiveFile,
		ToolVersion: Version,
	})
	if err != nil {
		return nil, err
	}
	o := &Outcome{Repo: p.Repo, Policy: p.Policy, PolicyFile: p.PolicyFile, Snapshot: snap, Result: res, Scanner: p.Scanner}
	if out.Run, err = complete(ctx, o); err != nil {
		return nil, err
	}
	return out, nil
}

// complete runs the stages after the build, as Execute does: history scan,
// verdict, record.
func complete(ctx context.Context, out *Outcome) (*Run, error) {
	history, herr := ScanHistory(ctx, out.Scanner, out.Snapshot)
	v, err := Judge(ctx, out, history, herr)
	if err != nil {
		return nil, err
	}
	run := &Run{Outcome: out, History: history, Verdict: v}
	previous, err := run.previousDigest()
	if err != nil {
		return nil, err
	}
	historyAction := "warn"
	if out.Policy.Secrets.History == "fail" {
		historyAction = "fail"
	}
	sum := sha256.Sum256(out.Result.JSON)
	run.Record = transparency.Build(transparency.BuildInput{
		Result:          out.Result,
		PackSHA256:      hex.EncodeToString(sum[:]),
		PolicyDigest:    out.Policy.Digest(),
		ToolVersion:     Version,
		GitleaksVersion: out.Scanner.Version(),
		GitleaksRules:   out.Scanner.RuleCount(),
		RulesDigest:     out.Scanner.RulesDigest(),
		History:         history,
		HistoryAction:   historyAction,
		Verdict:         v,
		Previous:        previous,
	})
	if run.RecordJSON, err = run.Record.JSON(); err != nil {
		return nil, err
	}
	return run, nil
}

// ShortSHA is the 12-character abbreviation used in hook messages and file names.
func ShortSHA(sha string) string { return short(strings.ToLower(sha)) }
