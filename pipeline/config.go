package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// Whose configuration applies. For a commit, a range, a push and a pull
// request, the policy (.ctxpack.yml), the gitleaks config and
// .gitleaksignore are read from the base of the change — the merge base of
// a range, the first parent of a commit, the diff base of a push — never
// from the head: a change must not be able to loosen its own check (add
// `[allowlist] paths = [".*"]`, empty fail_on). A change that edits them is
// reported in the pack, the record and the summary. Only the base's policy
// can let the head's configuration apply (config_from: head). A work-tree
// pack reads the work tree's.

// Names of the repository's configuration files.
const (
	GitleaksConfigFile = ".gitleaks.toml"
	GitleaksIgnoreFile = ".gitleaksignore"
)

// Config is the configuration a run applies and where it was read.
type Config struct {
	Policy *policy.Policy
	// PolicyFile names the policy for messages ("" for the defaults).
	PolicyFile string
	// Gitleaks are the gitleaks files; nil means read them from the work
	// tree (a work-tree pack).
	Gitleaks *audit.GitleaksFiles
	// Origin is what the pack records (nil for a work-tree pack).
	Origin *pack.ConfigOrigin
}

// ConfigTree reads files of one commit's tree for configuration: absent is
// a Blob that is not Found.
type ConfigTree struct {
	// Commit is the commit read, "" for none (every file absent).
	Commit string
	// Read reads a file; nil when Commit is "".
	Read func(ctx context.Context, path string, max int64) (source.Blob, error)
}

// GitTree is a ConfigTree over a commit of repo.
func GitTree(repo *source.Repo, commit string) ConfigTree {
	if commit == "" {
		return ConfigTree{}
	}
	return ConfigTree{Commit: commit, Read: func(ctx context.Context, p string, max int64) (source.Blob, error) {
		return repo.FileAt(ctx, commit, p, max)
	}}
}

func (t ConfigTree) read(ctx context.Context, p string, max int64) (source.Blob, error) {
	if t.Commit == "" || t.Read == nil {
		return source.Blob{}, nil
	}
	return t.Read(ctx, p, max)
}

// WorktreeConfig is the configuration of a work-tree pack: the policy
// named by opts, else the work tree's .ctxpack.yml, and the work tree's
// gitleaks files.
func WorktreeConfig(repo *source.Repo, opts PackOptions) (*Config, error) {
	root := repo.Root
	if opts.PolicyFile == "" && opts.PolicyPath != "" {
		opts.PolicyFile = filepath.Join(root, filepath.FromSlash(opts.PolicyPath))
	}
	pol, file, err := LoadPolicy(root, opts)
	if err != nil {
		return nil, err
	}
	return &Config{Policy: pol, PolicyFile: file}, nil
}

// ChangeConfig is the configuration of a change from base to head (see the
// comment at the top of this file). A file that cannot be read as
// configuration (a symlink, over its size limit, not valid) is an error.
func ChangeConfig(ctx context.Context, opts PackOptions, base, head ConfigTree) (*Config, error) {
	policyPath := opts.PolicyPath
	if policyPath == "" {
		policyPath = policy.FileName
	}
	load := func(t ConfigTree) (*policy.Policy, string, error) {
		if opts.PolicyFile != "" {
			p, err := policy.LoadFile(opts.PolicyFile)
			return p, opts.PolicyFile, err
		}
		b, err := t.read(ctx, policyPath, fsutil.MaxPolicyBytes)
		if err != nil {
			return nil, "", fmt.Errorf("read policy: %w", err)
		}
		if !b.Found() {
			return policy.Default(), "", nil
		}
		name := policyPath + " at " + short(t.Commit)
		p, err := policy.Parse(name, b.Data)
		return p, name, err
	}
	basePol, baseFile, err := load(base)
	if err != nil {
		return nil, err
	}
	from, pol, file := base, basePol, baseFile
	origin := &pack.ConfigOrigin{From: policy.ConfigFromBase, Commit: base.Commit, OperatorPolicy: opts.PolicyFile != ""}
	if basePol.HeadConfig() {
		origin.From, origin.Commit, from = policy.ConfigFromHead, head.Commit, head
		if pol, file, err = load(head); err != nil {
			return nil, err
		}
	}
	gl, err := gitleaksAt(ctx, from, pol)
	if err != nil {
		return nil, err
	}
	// What the change edits: the policy, and the gitleaks files either side
	// would read.
	candidates := []string{GitleaksIgnoreFile, gitleaksPath(basePol)}
	if opts.PolicyFile == "" {
		candidates = append(candidates, policyPath)
	}
	if headPol, _, err := load(head); err == nil {
		candidates = append(candidates, gitleaksPath(headPol))
	}
	// And the file a gitleaks config's [extend] path names, either side.
	for _, c := range slices.Clone(candidates) {
		for _, t := range []ConfigTree{base, head} {
			if b, err := t.read(ctx, c, fsutil.MaxConfigBytes); err == nil && b.Found() {
				if p := audit.ExtendPath(b.Data); p != "" && source.TreePath(p) {
					candidates = append(candidates, p)
				}
			}
		}
	}
	sort.Strings(candidates)
	for _, p := range slices.Compact(candidates) {
		changed, err := differs(ctx, base, head, p)
		if err != nil {
			return nil, err
		}
		if changed {
			origin.Changed = append(origin.Changed, p)
		}
	}
	if len(origin.Changed) > 0 {
		origin.Note = "policy changed in this change (" + strings.Join(origin.Changed, ", ") + "); the base's applies"
		if origin.From == policy.ConfigFromHead {
			origin.Note = "policy changed in this change (" + strings.Join(origin.Changed, ", ") + "); the head's applies (config_from: head in the base's policy)"
		}
	}
	if err := applyOverrides(pol, opts); err != nil {
		return nil, &UsageError{err}
	}
	return &Config{Policy: pol, PolicyFile: file, Gitleaks: gl, Origin: origin}, nil
}

// gitleaksPath is the gitleaks config a policy names, else .gitleaks.toml.
func gitleaksPath(pol *policy.Policy) string {
	if pol.Secrets.Config != "" {
		return pol.Secrets.Config
	}
	return GitleaksConfigFile
}

// gitleaksAt reads the gitleaks files of tree t under policy pol.
func gitleaksAt(ctx context.Context, t ConfigTree, pol *policy.Policy) (*audit.GitleaksFiles, error) {
	cfgPath := gitleaksPath(pol)
	files := &audit.GitleaksFiles{ReadRelative: func(rel string) ([]byte, error) {
		b, err := t.read(ctx, rel, fsutil.MaxConfigBytes)
		if err != nil {
			return nil, err
		}
		if !b.Found() {
			return nil, fmt.Errorf("%s is not in %s", rel, orRoot(t.Commit))
		}
		return b.Data, nil
	}}
	b, err := t.read(ctx, cfgPath, fsutil.MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	if b.Found() {
		files.Config = &audit.ConfigFile{Name: cfgPath + " at " + short(t.Commit), Data: b.Data}
	} else if pol.Secrets.Config != "" {
		return nil, fmt.Errorf("gitleaks config: secrets.config names %s, which is not in %s", cfgPath, orRoot(t.Commit))
	}
	if b, err = t.read(ctx, GitleaksIgnoreFile, fsutil.MaxIgnoreBytes); err != nil {
		return nil, fmt.Errorf("gitleaks ignore file: %w", err)
	}
	if b.Found() {
		files.Ignore = &audit.ConfigFile{Name: GitleaksIgnoreFile + " at " + short(t.Commit), Data: b.Data}
	}
	return files, nil
}

// differs reports whether p is not the same file in base and head. A file
// that cannot be read on one side (a symlink, too large) differs from one
// that can.
func differs(ctx context.Context, base, head ConfigTree, p string) (bool, error) {
	a, aerr := base.read(ctx, p, fsutil.MaxIgnoreBytes)
	b, berr := head.read(ctx, p, fsutil.MaxIgnoreBytes)
	if aerr != nil && berr != nil {
		return false, nil
	}
	if errors.Is(aerr, context.Canceled) || errors.Is(berr, context.Canceled) {
		return false, context.Canceled
	}
	return (aerr == nil) != (berr == nil) || a.ID != b.ID, nil
}

func orRoot(commit string) string {
	if commit == "" {
		return "the base (there is none)"
	}
	return short(commit)
}
