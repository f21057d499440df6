package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/filemode"
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
// Content a partial clone could not fetch is a *pack.Unavailable.
func (r *Repo) FileAt(ctx context.Context, commit, p string, max int64) (Blob, error) {
	if commit == "" {
		return Blob{}, nil
	}
	if err := ctx.Err(); err != nil {
		return Blob{}, err
	}
	if r.b == nil {
		return Blob{}, fmt.Errorf("%s is not a git repository", r.Root)
	}
	if !TreePath(p) {
		return Blob{}, fmt.Errorf("%q is not a path inside the repository", p)
	}
	c, err := r.commit(ctx, ObjectID(commit))
	if err != nil {
		return Blob{}, err
	}
	e, err := r.entryAt(ctx, c, p)
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
	if size, err := r.b.size(ctx, e.ID); err == nil && size > max {
		return Blob{}, fmt.Errorf("%s at %s is %d bytes, over the %d-byte limit for this file", p, short(commit), size, max)
	}
	data, err := r.blobReader(p, e.ID, c.ID)(ctx)
	if err != nil {
		return Blob{}, err
	}
	if int64(len(data)) > max {
		return Blob{}, fmt.Errorf("%s at %s is %d bytes, over the %d-byte limit for this file", p, short(commit), len(data), max)
	}
	return Blob{Data: data, ID: e.ID.String()}, nil
}

// DiffBase is the commit a snapshot diffs from, without taking it: for
// commit, its first parent ("" for a root commit); for base..head, their
// merge base as Range chooses it (base itself for unrelated histories).
// The configuration of a commit or range pack is read there.
func (r *Repo) DiffBase(commit, base, head string) (string, error) {
	ctx := context.Background()
	if commit != "" {
		h, err := r.Resolve(commit)
		if err != nil {
			return "", err
		}
		c, err := r.commit(ctx, h)
		if err != nil {
			return "", err
		}
		if len(c.Parents) == 0 {
			return "", nil
		}
		return c.Parents[0].String(), nil
	}
	bh, err := r.Resolve(base)
	if err != nil {
		return "", err
	}
	hh, err := r.Resolve(head)
	if err != nil {
		return "", err
	}
	mb, err := r.mergeBase(ctx, bh, hh)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", short(bh.String()), short(hh.String()), err)
	}
	if mb == nil {
		return bh.String(), nil
	}
	return mb.ID.String(), nil
}

func short(sha string) string { return ObjectID(sha).Short() }

// EntryID is the object id and mode of the entry at p in commit's tree,
// without reading it ("" when absent or when commit is ""). It tells
// whether a change edits a file.
func (r *Repo) EntryID(commit, p string) (string, error) {
	if commit == "" || !TreePath(p) {
		return "", nil
	}
	if r.b == nil {
		return "", errors.New("not a git repository")
	}
	ctx := context.Background()
	c, err := r.commit(ctx, ObjectID(commit))
	if err != nil {
		return "", err
	}
	e, err := r.entryAt(ctx, c, p)
	if err != nil || e == nil {
		return "", err
	}
	return e.Mode.String() + " " + e.ID.String(), nil
}
