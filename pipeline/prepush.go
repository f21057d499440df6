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
	"github.com/ctxpack/ctxpack/source"
)

// TriggerPrePush is the trigger of packs the pre-push hook builds.
const TriggerPrePush = "pre-push"

// Pusher runs the pipeline for the refs of one push. The repository is
// shared by every ref (go-git loads a pack's whole index on first use), and
// so is a secret scanner per distinct configuration (its gitleaks rules
// take ~0.1 s to build): each ref applies the configuration of its own diff
// base (see ChangeConfig).
type Pusher struct {
	Repo     *source.Repo
	opts     PackOptions
	scanners map[string]*audit.Scanner
}

// NewPusher prepares the runs of one push in an opened repository. Only
// PolicyFile, PolicyPath and the policy overrides of opts are used.
func NewPusher(repo *source.Repo, opts PackOptions) (*Pusher, error) {
	if opts.Commit != "" || opts.Base != "" || opts.Head != "" {
		return nil, &UsageError{errors.New("a push names its own commits: no --commit, --base or --head")}
	}
	if !repo.IsGit() {
		return nil, fmt.Errorf("%s is not a git repository", repo.Root)
	}
	if opts.PolicyFile != "" { // an operator's file: fail before any ref
		if _, _, err := LoadPolicy(repo.Root, opts); err != nil {
			return nil, err
		}
	}
	return &Pusher{Repo: repo, opts: opts, scanners: map[string]*audit.Scanner{}}, nil
}

// scanner returns the scanner of a configuration, built once.
func (p *Pusher) scanner(ctx context.Context, cfg *Config) (*audit.Scanner, error) {
	key := cfg.Policy.Digest() + gitleaksKey(cfg.Gitleaks)
	if o := cfg.Origin; o != nil {
		key += "\x00" + o.From + "\x00" + o.Commit // whose gitleaks:allow comments apply
	}
	if s, ok := p.scanners[key]; ok {
		return s, nil
	}
	s, err := NewScanner(ctx, p.Repo, cfg)
	if err != nil {
		return nil, err
	}
	p.scanners[key] = s
	return s, nil
}

// gitleaksKey identifies gitleaks files by content.
func gitleaksKey(g *audit.GitleaksFiles) string {
	if g == nil {
		return "|worktree"
	}
	h := sha256.New()
	for _, f := range []*audit.ConfigFile{g.Config, g.Ignore} {
		if f == nil {
			h.Write([]byte{0})
			continue
		}
		fmt.Fprintf(h, "%d:%s:%d:", len(f.Name), f.Name, len(f.Data))
		h.Write(f.Data)
	}
	return "|" + hex.EncodeToString(h.Sum(nil))
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
	// Built is PackOptions.Built for this ref's pack.
	Built func(*pack.Result)
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
	p.Repo.Prestart()
	Preload()
	// The configuration of the push's diff base bounds what its snapshot
	// reads, so the base is found first (the walk stops at known commits).
	u, err := p.Repo.Unpublished(ctx, t.Head, t.Known)
	if err != nil {
		return nil, err
	}
	base := ""
	if u.Base != nil {
		base = u.Base.ID.String()
	}
	cfg, err := ChangeConfig(ctx, p.opts, GitTree(p.Repo, base), GitTree(p.Repo, t.Head.String()))
	if err != nil {
		return nil, err
	}
	p.Repo.HistoryBlobLimit = historyBlobLimit(cfg.Policy)
	p.Repo.CommitsAside = true       // the build awaits them (pack.RedactNames)
	defer pauseGC(changeHeapLimit)() // a push packs commits
	// The scanner is built while the push is read, as packRepo does.
	var scanner *audit.Scanner
	var scanErr error
	built := make(chan struct{})
	go func() {
		defer close(built)
		scanner, scanErr = p.scanner(ctx, cfg)
	}()
	pushed, err := p.Repo.Pushed(ctx, t.Head, t.Known)
	<-built
	if err != nil {
		return nil, err
	}
	out := &PushRun{Commits: pushed.Commits, Base: pushed.Base}
	if pushed.Snapshot == nil {
		return out, nil
	}
	snap := pushed.Snapshot
	if scanErr != nil {
		snap.StopCommits()
		return nil, scanErr
	}
	snap.Source.Trigger = TriggerPrePush
	snap.Source.Ref = t.Ref
	snap.Source.Config = cfg.Origin
	o, err := build(ctx, p.Repo, snap, cfg, scanner)
	if err != nil {
		snap.StopCommits()
		return nil, err
	}
	o.built = t.Built
	if out.Run, err = complete(ctx, o, NotRun{}); err != nil {
		return nil, err
	}
	return out, nil
}

// PauseGC keeps the collector off while a push is planned and run, as a
// run keeps it off for itself (pauseGC, up to changeHeapLimit of heap): the
// pre-push hook reads the push's commits before its runs begin, and the
// first reads of a repository allocate (go-git's pack index and its
// offset map) beside the rules and patterns prepared on the other core.
func PauseGC() (resume func()) { return pauseGC(changeHeapLimit) }

// ShortSHA is the 12-character abbreviation used in hook messages and file names.
func ShortSHA(sha string) string { return short(strings.ToLower(sha)) }
