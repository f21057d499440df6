package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxpack/ctxpack/source"
)

// maxRefFileBytes bounds a file read to resolve refs.
const maxRefFileBytes = 64 << 20

// RepoFiles reads the files of a git repository at a commit, or of its
// work tree, for ref resolution.
type RepoFiles struct {
	repo *source.Repo
	root string
}

// NewRepoFiles reads repo's commits (nil: none) and the work tree at root
// ("" for none, as in a bare repository).
func NewRepoFiles(repo *source.Repo, root string) *RepoFiles {
	return &RepoFiles{repo: repo, root: root}
}

// ReadFile implements Files.
func (f *RepoFiles) ReadFile(ctx context.Context, commit, p string) ([]byte, error) {
	if err := checkRefPath(p); err != nil {
		return nil, err
	}
	if commit == "" {
		return f.readWorktree(p)
	}
	if !hexRE().MatchString(commit) || (len(commit) != 40 && len(commit) != 64) {
		return nil, fmt.Errorf("the pack's commit %q is not a full commit id", clip(commit, 80))
	}
	if f.repo == nil || !f.repo.IsGit() {
		return nil, errors.New("no git repository at hand")
	}
	if !f.repo.HasCommit(commit) {
		return nil, fmt.Errorf("commit %s is not in this repository (git fetch it, or serve the store from a clone that has it)", short(commit))
	}
	b, err := f.repo.FileAt(ctx, commit, p, maxRefFileBytes)
	if err != nil {
		return nil, err
	}
	if !b.Found() {
		return nil, fmt.Errorf("%s at %s: %w", p, short(commit), ErrFileNotFound)
	}
	return b.Data, nil
}

// readWorktree reads p under the work tree without following a symlink
// (the repository owns its symlinks; a ref never resolves through one).
func (f *RepoFiles) readWorktree(p string) ([]byte, error) {
	if f.root == "" {
		return nil, errors.New("the pack describes a work tree and no work tree is at hand")
	}
	cur := f.root
	for _, part := range strings.Split(p, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s in the work tree: %w", p, ErrFileNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s in the work tree: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s in the work tree goes through a symlink", p)
		}
	}
	fi, err := os.Lstat(cur)
	if err != nil {
		return nil, fmt.Errorf("read %s in the work tree: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s in the work tree is not a regular file", p)
	}
	if fi.Size() > maxRefFileBytes {
		return nil, fmt.Errorf("%s in the work tree is over %d bytes", p, maxRefFileBytes)
	}
	return os.ReadFile(cur)
}
