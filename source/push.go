package source

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Push is what pushing one head publishes, ready to pack.
type Push struct {
	// Snapshot is the pushed change in its change scope (see ChangeScope),
	// with the lines every new commit added.
	Snapshot *pack.Snapshot
	// Commits is every new commit, oldest first, merges included (the
	// snapshot's per-commit patches leave merges out).
	Commits []string
	// Base is the diff base, "" when the whole tree is new.
	Base string
}

// Pushed snapshots what pushing head publishes to a remote that has the
// known commits: the change from the diff base (see Unpublished) to head, in
// its change scope, and the added lines of exactly the new commits. With no
// new commit, Snapshot is nil.
//
// The work is proportional to the push, not to the repository: the walk stops
// at the known commits, the tree diff skips unchanged subtrees, and only the
// files of the change scope are listed.
func (r *Repo) Pushed(ctx context.Context, head plumbing.Hash, known []plumbing.Hash) (*Push, error) {
	u, err := r.Unpublished(ctx, head, known)
	if err != nil {
		return nil, err
	}
	out := &Push{}
	if u.Base != nil {
		out.Base = u.Base.Hash.String()
	}
	if len(u.Commits) == 0 {
		return out, nil
	}
	for _, c := range u.Commits {
		out.Commits = append(out.Commits, c.Hash.String())
	}
	headCommit, err := r.commit(head)
	if err != nil {
		return nil, err
	}
	if out.Snapshot, err = r.treeSnapshot(ctx, u.Base, headCommit, u.Commits, policy.ScopeChange); err != nil {
		return nil, err
	}
	out.Snapshot.Source.Trigger = "push"
	return out, nil
}

// ChangeScope snapshots head against base (a range, not the commits of
// one), listing only the change scope of the head tree rather than all of
// it: the changed files, the repository's top-level files (where key files
// and manifests live) and the .ctxpackignore files of every directory on the
// way to a changed path (all that gitignore semantics consult for them). It
// is what the pre-push hook packs; a pack of it re-derives with this call.
func (r *Repo) ChangeScope(ctx context.Context, baseRev, headRev string) (*pack.Snapshot, error) {
	hh, err := r.Resolve(headRev)
	if err != nil {
		return nil, err
	}
	head, err := r.commit(hh)
	if err != nil {
		return nil, err
	}
	var base *object.Commit
	if baseRev != "" {
		bh, err := r.Resolve(baseRev)
		if err != nil {
			return nil, err
		}
		if base, err = r.commit(bh); err != nil {
			return nil, err
		}
	}
	snap, err := r.treeSnapshot(ctx, base, head, nil, policy.ScopeChange)
	if err != nil {
		return nil, err
	}
	snap.Source.Trigger = "range"
	snap.Source.Ref = headRev
	return snap, nil
}

// scopeFiles lists the change scope of tree for changes. Trees are walked by
// hand (not with Tree.FindEntry, which refuses some names git accepts).
func (r *Repo) scopeFiles(ctx context.Context, tree *object.Tree, changes []pack.Change) ([]pack.File, error) {
	dirs := map[string]bool{"": true}
	wanted := map[string]bool{}
	for _, c := range changes {
		if !TreePath(c.Path) || (c.OldPath != "" && !TreePath(c.OldPath)) {
			continue // no tree holds it (an API's list may name anything)
		}
		for _, p := range []string{c.Path, c.OldPath} {
			if p == "" {
				continue
			}
			for d := path.Dir(p); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
				dirs[d] = true
			}
		}
		if c.Status != "deleted" {
			wanted[c.Path] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	trees := map[string]*object.Tree{"": tree}
	var subtree func(d string) (*object.Tree, error)
	subtree = func(d string) (*object.Tree, error) {
		if t, ok := trees[d]; ok {
			return t, nil // nil: not a directory at head
		}
		parentDir := path.Dir(d)
		if parentDir == "." {
			parentDir = ""
		}
		parent, err := subtree(parentDir)
		if err != nil || parent == nil {
			trees[d] = nil
			return nil, err
		}
		var t *object.Tree
		if e := entryNamed(parent, path.Base(d)); e != nil && e.Mode == filemode.Dir {
			if t, err = r.git.TreeObject(e.Hash); err != nil {
				return nil, fmt.Errorf("read tree %s (%s): %w", e.Hash, d, err)
			}
		}
		trees[d] = t
		return t, nil
	}
	for d := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sub, err := subtree(d)
		if err != nil {
			return nil, err
		}
		if sub == nil {
			continue // the directory is gone at head (its files were deleted)
		}
		for _, e := range sub.Entries {
			if e.Mode != filemode.Dir && (d == "" || e.Name == pack.IgnoreFileName) {
				wanted[path.Join(d, safePath(e.Name))] = true
			}
		}
	}
	files := make([]pack.File, 0, len(wanted))
	for p := range wanted {
		d := path.Dir(p)
		if d == "." {
			d = ""
		}
		sub, err := subtree(d)
		if err != nil {
			return nil, err
		}
		var e *object.TreeEntry
		if sub != nil {
			e = entryNamed(sub, path.Base(p))
		}
		if e == nil || e.Mode == filemode.Dir {
			continue
		}
		f := pack.File{Path: p, Mode: modeOf(e.Mode), Blob: e.Hash.String()}
		if e.Mode != filemode.Submodule {
			if size, err := r.git.Storer.EncodedObjectSize(e.Hash); err == nil {
				f.Size = size
			}
		}
		if f.Mode == pack.ModeRegular || f.Mode == pack.ModeExecutable {
			f.Read = r.blobReader(e.Hash)
		}
		files = append(files, f)
	}
	sortFiles(files)
	return files, nil
}

// TreePath reports whether p can name an entry of a git tree: relative,
// slash-separated, with no empty, "." or ".." element and no NUL. A change
// list from elsewhere (GitHub's API) is checked with it before it is walked.
func TreePath(p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

// entryNamed finds the entry of t whose name is name, written as a snapshot
// writes names (see safePath).
func entryNamed(t *object.Tree, name string) *object.TreeEntry {
	for i := range t.Entries {
		if t.Entries[i].Name == name || safePath(t.Entries[i].Name) == name {
			return &t.Entries[i]
		}
	}
	return nil
}
