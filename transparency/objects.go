package transparency

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ctxpack/ctxpack/source"
)

// Objects is what walking the chain of records reads: commits along first
// parents, and the notes ref with the trees, blobs and history of its
// commits. *source.Repo implements it with either of its backends (go-git,
// or the git CLI for sparse checkouts, partial clones and SHA-256
// repositories); GoGit adapts a go-git repository.
type Objects interface {
	// RefID is the object a full ref name points at; ok is false when
	// the ref does not exist.
	RefID(ctx context.Context, name string) (id source.ObjectID, ok bool, err error)
	ReadCommit(ctx context.Context, id source.ObjectID) (*source.Commit, error)
	ReadTree(ctx context.Context, id source.ObjectID) ([]source.TreeEntry, error)
	ReadBlob(ctx context.Context, id source.ObjectID) ([]byte, error)
}

// GoGit reads the chain from a go-git repository.
func GoGit(repo *git.Repository) Objects { return goGitObjects{repo} }

type goGitObjects struct{ repo *git.Repository }

func (g goGitObjects) RefID(_ context.Context, name string) (source.ObjectID, bool, error) {
	ref, err := g.repo.Reference(plumbing.ReferenceName(name), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", name, err)
	}
	return source.ObjectID(ref.Hash().String()), true, nil
}

func (g goGitObjects) ReadCommit(_ context.Context, id source.ObjectID) (*source.Commit, error) {
	c, err := g.repo.CommitObject(plumbing.NewHash(string(id)))
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", id, err)
	}
	out := &source.Commit{ID: id, Tree: source.ObjectID(c.TreeHash.String()), Committer: c.Committer.When, Message: c.Message}
	for _, p := range c.ParentHashes {
		out.Parents = append(out.Parents, source.ObjectID(p.String()))
	}
	return out, nil
}

func (g goGitObjects) ReadTree(_ context.Context, id source.ObjectID) ([]source.TreeEntry, error) {
	t, err := g.repo.TreeObject(plumbing.NewHash(string(id)))
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", id, err)
	}
	out := make([]source.TreeEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = source.TreeEntry{Name: e.Name, Mode: e.Mode, ID: source.ObjectID(e.Hash.String())}
	}
	return out, nil
}

func (g goGitObjects) ReadBlob(_ context.Context, id source.ObjectID) ([]byte, error) {
	return readBlob(g.repo, plumbing.NewHash(string(id)))
}
