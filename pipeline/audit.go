package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// AuditOptions say which pack to audit against what.
type AuditOptions struct {
	PackFile   string
	PolicyFile string
	// RepoDir, when set, is the repository the pack claims to describe: its
	// policy, gitleaks config and blobs are used.
	RepoDir string
}

// Audit checks a pack file independently of how it was built.
func Audit(ctx context.Context, opts AuditOptions) (*audit.Verdict, error) {
	data, err := os.ReadFile(opts.PackFile)
	if err != nil {
		return nil, fmt.Errorf("read pack: %w", err)
	}
	var repo *source.Repo
	var pol *policy.Policy
	switch {
	case opts.PolicyFile != "":
		if pol, err = policy.LoadFile(opts.PolicyFile); err != nil {
			return nil, err
		}
	case opts.RepoDir != "":
		if repo, err = source.Open(opts.RepoDir); err != nil {
			return nil, err
		}
		if pol, _, err = policy.Find(repo.Root); err != nil {
			repo.Close()
			return nil, err
		}
	default:
		pol = policy.Default()
	}
	if repo == nil && opts.RepoDir != "" {
		if repo, err = source.Open(opts.RepoDir); err != nil {
			return nil, err
		}
	}
	defer repo.Close()
	var scanner *audit.Scanner
	if repo != nil {
		scanner, err = NewScanner(repo, pol)
	} else {
		scanner, err = audit.NewScanner(audit.ScannerOptions{})
	}
	if err != nil {
		v := audit.NewVerdict()
		v.Fail(audit.Check{Kind: audit.KindInternal, Code: audit.CodeInternal, Message: "the secret scanner could not start: " + err.Error()})
		return v, nil
	}
	in := audit.Input{Policy: pol, Scanner: scanner, Sensitive: audit.SensitiveFile}
	if repo != nil {
		var p pack.Pack
		if err := json.Unmarshal(data, &p); err == nil {
			snap, err := SnapshotOf(ctx, repo, p.Source)
			if err != nil {
				v := audit.NewVerdict()
				v.Fail(audit.Check{Kind: audit.KindIntegrity, Code: audit.CodeBlobMismatch,
					Message: "the repository state the pack describes could not be read: " + err.Error(),
					Details: map[string]any{"head": p.Source.Head, "base": p.Source.Base}})
				inner, aerr := audit.Pack(ctx, data, in)
				if aerr != nil {
					return nil, aerr
				}
				v.Merge(inner)
				v.Sort()
				return v, nil
			}
			in.Snapshot = snap
		}
	}
	v, err := audit.Pack(ctx, data, in)
	_ = scanner.Flush() // a cache that cannot be written only costs a rescan
	return v, err
}

// SnapshotOf re-reads the repository state a pack's source names.
func SnapshotOf(ctx context.Context, repo *source.Repo, src pack.Source) (*pack.Snapshot, error) {
	switch {
	case src.Kind == "plain" || src.Trigger == "worktree":
		return repo.Worktree(ctx)
	case src.Head == "":
		return nil, fmt.Errorf("the pack names no head commit")
	case src.Trigger == TriggerPrePush:
		// The hook diffs against the remote's commits, not a merge base.
		return repo.ChangeScope(ctx, src.Base, src.Head)
	case src.Base != "":
		return repo.Range(ctx, src.Base, src.Head, src.Scope)
	default:
		return repo.Commit(ctx, src.Head, src.Scope)
	}
}
