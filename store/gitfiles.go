package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxRefFileBytes bounds a file read to resolve refs.
const maxRefFileBytes = 64 << 20

// RepoFiles reads the files of a git repository at a commit (go-git), or
// of its work tree, for ref resolution.
type RepoFiles struct {
	git  *git.Repository
	root string
	mu   sync.Mutex // a go-git Repository is not safe for concurrent use
}

// NewRepoFiles reads repo's commits and the work tree at root ("" for
// none, as in a bare repository).
func NewRepoFiles(repo *git.Repository, root string) *RepoFiles {
	return &RepoFiles{git: repo, root: root}
}

// ReadFile implements Files.
func (f *RepoFiles) ReadFile(ctx context.Context, commit, p string) ([]byte, error) {
	if err := checkRefPath(p); err != nil {
		return nil, err
	}
	if commit == "" {
		return f.readWorktree(p)
	}
	if !hexRE.MatchString(commit) || (len(commit) != 40 && len(commit) != 64) {
		return nil, fmt.Errorf("the pack's commit %q is not a full commit id", clip(commit, 80))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.git == nil {
		return nil, errors.New("no git repository at hand")
	}
	c, err := f.git.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("commit %s is not in this repository (git fetch it, or serve the store from a clone that has it): %w", short(commit), err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read the tree of %s: %w", short(commit), err)
	}
	file, err := tree.File(p)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, fmt.Errorf("%s at %s: %w", p, short(commit), ErrFileNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, short(commit), err)
	}
	if file.Mode != filemode.Regular && file.Mode != filemode.Executable {
		return nil, fmt.Errorf("%s at %s is not a regular file", p, short(commit))
	}
	if file.Size > maxRefFileBytes {
		return nil, fmt.Errorf("%s at %s is over %d bytes", p, short(commit), maxRefFileBytes)
	}
	r, err := file.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, short(commit), err)
	}
	defer r.Close()
	return io.ReadAll(r)
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
