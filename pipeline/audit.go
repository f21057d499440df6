package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/transparency"
)

// AuditOptions say which pack to audit against what.
type AuditOptions struct {
	PackFile   string
	PolicyFile string
	// RepoDir, when set, is the repository the pack claims to describe: its
	// policy, gitleaks config and blobs are used.
	RepoDir string
	// RecordFile is the pack's transparency record, checked to be the
	// record of exactly this pack; "" means PackFile.record.json when it
	// exists.
	RecordFile string
	// Pack and Record, when not nil, are the bytes of the pack and of its
	// record, read by the caller (from standard input); PackFile and
	// RecordFile then only name them. A pack given as bytes has no record
	// beside it.
	Pack   []byte
	Record []byte
}

// Audit checks a pack file independently of how it was built.
func Audit(ctx context.Context, opts AuditOptions) (*audit.Verdict, error) {
	data := opts.Pack
	if data == nil {
		var err error
		if data, err = os.ReadFile(opts.PackFile); err != nil {
			return nil, fmt.Errorf("read pack: %w", err)
		}
	}
	var err error
	var repo *source.Repo
	var p *pack.Pack
	if opts.RepoDir != "" {
		if repo, err = source.Open(opts.RepoDir); err != nil {
			return nil, err
		}
		defer repo.Close()
		var parsed pack.Pack
		if json.Unmarshal(data, &parsed) == nil {
			p = &parsed
		}
	}
	var cfg *Config
	switch {
	case repo != nil && p != nil:
		if cfg, err = SourceConfig(ctx, repo, p.Source, PackOptions{PolicyFile: opts.PolicyFile}); err != nil {
			// A pack whose source names nothing readable fails below
			// (the repository state it describes cannot be read).
			if cfg, err = WorktreeConfig(repo, PackOptions{PolicyFile: opts.PolicyFile}); err != nil {
				return nil, err
			}
		}
	case repo != nil:
		if cfg, err = WorktreeConfig(repo, PackOptions{PolicyFile: opts.PolicyFile}); err != nil {
			return nil, err
		}
	case opts.PolicyFile != "":
		pol, err := policy.LoadFile(opts.PolicyFile)
		if err != nil {
			return nil, err
		}
		cfg = &Config{Policy: pol, PolicyFile: opts.PolicyFile, Gitleaks: &audit.GitleaksFiles{}}
	default:
		cfg = &Config{Policy: policy.Default(), Gitleaks: &audit.GitleaksFiles{}}
	}
	pol := cfg.Policy
	var scanner *audit.Scanner
	if repo != nil {
		scanner, err = NewScanner(ctx, repo, cfg)
	} else {
		// A pack of a change was built with its base's allow comments,
		// and the base's lines are not at hand: no comment can be told
		// from one the change brings, and none is honoured. The pack is
		// read for that only when a finding has a comment.
		fromBase := sync.OnceValue(func() bool { return baseConfigured(data) })
		scanner, err = audit.NewScanner(audit.ScannerOptions{Files: cfg.Gitleaks,
			InlineAllow: func(string, string) bool { return !fromBase() }})
	}
	if err != nil {
		v := audit.NewVerdict()
		v.Fail(audit.Check{Kind: audit.KindInternal, Code: audit.CodeInternal, Message: "the secret scanner could not start: " + err.Error()})
		return v, nil
	}
	in := audit.Input{Policy: pol, Scanner: scanner, Sensitive: audit.SensitiveFile}
	if repo != nil && p != nil {
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
		// The pack names files as the build redacted them.
		if _, err := pack.RedactNames(ctx, snap, scanner); err != nil {
			v := audit.NewVerdict()
			v.Fail(audit.Check{Kind: audit.KindInternal, Code: audit.CodeInternal,
				Message: "the file names of the repository state could not be scanned: " + err.Error()})
			return v, nil
		}
		in.Snapshot = snap
	}
	v, decoded, err := audit.PackDecoded(ctx, data, in)
	_ = scanner.Flush() // a cache that cannot be written only costs a rescan
	if err != nil {
		return nil, err
	}
	packID := "" // bytes that are not a pack document: their record cannot match
	if decoded != nil {
		packID = decoded.PackID
	}
	if c := recordCheck(data, packID, opts); c != nil {
		v.Fail(*c)
		v.Sort()
	}
	return v, nil
}

// baseConfigured reports whether a pack is of a change whose
// configuration is its base's, as SourceConfig reads it (a commit, range,
// push or pull request pack, unless its base's policy lets the head's
// apply), or cannot say: the audit then honours gitleaks:allow only on
// lines it knows the base has.
func baseConfigured(data []byte) bool {
	var p struct {
		Source pack.Source `json:"source"`
	}
	if json.Unmarshal(data, &p) != nil {
		return true
	}
	src := p.Source
	if src.Kind == "plain" || src.Trigger == "worktree" {
		return false
	}
	return src.Config == nil || src.Config.From != policy.ConfigFromHead
}

// recordCheck fails when the pack's record (named, or beside it) is not the
// record of these pack bytes, whose pack_id the audit decoded.
func recordCheck(data []byte, packID string, opts AuditOptions) *audit.Check {
	file := opts.RecordFile
	if file == "" && opts.Record == nil {
		if opts.Pack != nil {
			return nil
		}
		file = opts.PackFile + ".record.json"
		if _, err := os.Stat(file); err != nil {
			return nil
		}
	}
	fail := func(msg string) *audit.Check {
		return &audit.Check{Kind: audit.KindIntegrity, Code: audit.CodeRecordMismatch, Message: msg, Details: map[string]any{"record": file}}
	}
	rd := opts.Record
	if rd == nil {
		var err error
		if rd, err = fsutil.ReadFile(file, maxRecordBytes); err != nil {
			return fail("the record could not be read: " + err.Error())
		}
	}
	rec, err := transparency.ParseRecord(rd)
	if err != nil {
		return fail(file + " is not a transparency record: " + err.Error())
	}
	if err := transparency.CheckPair(rec, data, packID); err != nil {
		return fail(file + " is not this pack's record: " + err.Error())
	}
	return nil
}

// maxRecordBytes bounds a record read beside a pack.
const maxRecordBytes = 256 << 20

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

// SourceConfig re-derives the configuration a pack of src applied in repo:
// the work tree's for a work-tree pack, else the base's of the change it
// describes (or the head's, when the base's policy says so), exactly as
// the pack was built; the pack's own claim is not trusted.
func SourceConfig(ctx context.Context, repo *source.Repo, src pack.Source, opts PackOptions) (*Config, error) {
	switch {
	case src.Kind == "plain" || src.Trigger == "worktree":
		return WorktreeConfig(repo, opts)
	case src.Head == "":
		return nil, fmt.Errorf("the pack names no head commit")
	}
	var base string
	var err error
	switch {
	case src.Trigger == TriggerPrePush:
		base = src.Base
	case src.Base != "":
		base, err = repo.DiffBase("", src.Base, src.Head)
	default:
		base, err = repo.DiffBase(src.Head, "", "")
	}
	if err != nil {
		return nil, err
	}
	return ChangeConfig(ctx, opts, GitTree(repo, base), GitTree(repo, src.Head))
}
