package source

import (
	"context"
	"fmt"
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Blob is a file read from a commit's tree.
type Blob struct {
	Data []byte
	// ID is the git blob id, "" when the file is absent.
	ID string
}

// Found reports whether the file exists in the commit.
func (b Blob) Found() bool { return b.ID != "" }

// FileAt reads the file at p (slash-separated, relative to the root) in
// commit's tree, for configuration: an absent file is a Blob that is not
// Found; a symlink, a submodule or a directory at p is an error (the
// repository's configuration is read only from regular files), and so is a
// blob over max bytes. commit "" (no base: a root commit) has no files.
func (r *Repo) FileAt(ctx context.Context, commit, p string, max int64) (Blob, error) {
	if commit == "" {
		return Blob{}, nil
	}
	if err := ctx.Err(); err != nil {
		return Blob{}, err
	}
	if r.git == nil {
		return Blob{}, fmt.Errorf("%s is not a git repository", r.Root)
	}
	if !TreePath(p) {
		return Blob{}, fmt.Errorf("%q is not a path inside the repository", p)
	}
	c, err := r.commit(plumbing.NewHash(commit))
	if err != nil {
		return Blob{}, err
	}
	r.mu.Lock()
	tree, err := c.Tree()
	var e *object.TreeEntry
	if err == nil {
		e, err = lookupEntry(r, tree, p)
	}
	r.mu.Unlock()
	if err != nil {
		return Blob{}, fmt.Errorf("read %s at %s: %w", p, short(commit), err)
	}
	if e == nil {
		return Blob{}, nil
	}
	switch e.Mode {
	case filemode.Regular, filemode.Executable, filemode.Deprecated:
	case filemode.Symlink:
		return Blob{}, fmt.Errorf("%s at %s is a symbolic link: ctxpack reads configuration only from regular files", p, short(commit))
	default:
		return Blob{}, fmt.Errorf("%s at %s is not a file (mode %s)", p, short(commit), e.Mode)
	}
	if size, err := r.blobSize(e.Hash); err == nil && size > max {
		return Blob{}, fmt.Errorf("%s at %s is %d bytes, over the %d-byte limit for this file", p, short(commit), size, max)
	}
	data, err := r.readBlob(e.Hash)
	if err != nil {
		return Blob{}, err
	}
	if int64(len(data)) > max {
		return Blob{}, fmt.Errorf("%s at %s is %d bytes, over the %d-byte limit for this file", p, short(commit), len(data), max)
	}
	return Blob{Data: data, ID: e.Hash.String()}, nil
}

// lookupEntry walks tree to p by hand (Tree.FindEntry refuses some names git
// accepts). The caller holds r.mu.
func lookupEntry(r *Repo, tree *object.Tree, p string) (*object.TreeEntry, error) {
	dir, name := path.Split(p)
	t := tree
	if dir != "" {
		parent, err := lookupEntry(r, tree, path.Clean(dir))
		if err != nil || parent == nil || parent.Mode != filemode.Dir {
			return nil, err
		}
		if t, err = r.git.TreeObject(parent.Hash); err != nil {
			return nil, err
		}
	}
	return entryNamed(t, name), nil
}

// blobSize is a blob's size without reading it.
func (r *Repo) blobSize(h plumbing.Hash) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.git.Storer.EncodedObjectSize(h)
}

// DiffBase is the commit a snapshot diffs from, without taking it: for
// commit, its first parent ("" for a root commit); for base..head, their
// merge base as Range chooses it (base itself for unrelated histories).
// The configuration of a commit or range pack is read there.
func (r *Repo) DiffBase(commit, base, head string) (string, error) {
	if commit != "" {
		h, err := r.Resolve(commit)
		if err != nil {
			return "", err
		}
		c, err := r.commit(h)
		if err != nil {
			return "", err
		}
		if c.NumParents() == 0 {
			return "", nil
		}
		return c.ParentHashes[0].String(), nil
	}
	bh, err := r.Resolve(base)
	if err != nil {
		return "", err
	}
	hh, err := r.Resolve(head)
	if err != nil {
		return "", err
	}
	b, err := r.commit(bh)
	if err != nil {
		return "", err
	}
	hc, err := r.commit(hh)
	if err != nil {
		return "", err
	}
	mb, err := r.mergeBase(b, hc)
	if err != nil {
		return "", err
	}
	if mb == nil {
		return bh.String(), nil
	}
	return mb.Hash.String(), nil
}

// mergeBase is the merge base Range diffs from: the lowest hash of the best
// common ancestors, nil for unrelated histories.
func (r *Repo) mergeBase(base, head *object.Commit) (*object.Commit, error) {
	r.mu.Lock()
	mbs, err := head.MergeBase(base)
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", short(base.Hash.String()), short(head.Hash.String()), err)
	}
	if len(mbs) == 0 {
		return nil, nil
	}
	sort.Slice(mbs, func(i, j int) bool { return mbs[i].Hash.String() < mbs[j].Hash.String() })
	return mbs[0], nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// EntryID is the object id and mode of the entry at p in commit's tree,
// without reading it ("" when absent or when commit is ""). It tells
// whether a change edits a file.
func (r *Repo) EntryID(commit, p string) (string, error) {
	if commit == "" || !TreePath(p) {
		return "", nil
	}
	c, err := r.commit(plumbing.NewHash(commit))
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, err := c.Tree()
	if err != nil {
		return "", fmt.Errorf("read tree of %s: %w", short(commit), err)
	}
	e, err := lookupEntry(r, tree, p)
	if err != nil || e == nil {
		return "", err
	}
	return e.Mode.String() + " " + e.Hash.String(), nil
}
